import Synchronization

/// What libmicrohttpd's callbacks need of a server, passed to them through `void *` (retained by
/// `RunningDaemon` for exactly as long as the daemon runs).
final class ServerCore: Sendable {
    let responder: any HTTPResponder
    /// The largest request body accepted, in bytes.
    let maxBodyBytes: Int
    /// Whether chunked request bodies are read (else refused 411).
    let chunkedBodies: Bool
    /// How long a request may take from its request line to its last body byte (nil: no limit).
    let requestDeadline: Duration?
    /// The same in nanoseconds, for `RequestState`'s deadline on the `BootClock`.
    let requestDeadlineNanoseconds: Int64?
    /// The streams currently bound to a connection of this server, so that stopping can end them.
    let streams = Mutex(StreamRegistry())
    /// Whether new connections are taken; cleared by `HTTPServer.quiesce()`, read by the accept
    /// policy callback for every new connection (a relaxed load: a connection accepted an instant
    /// after quiescing is served normally, which is harmless).
    let isAccepting = Atomic(true)
    /// Requests between their request line and libmicrohttpd's completed callback (answered and
    /// sent, or aborted): what stopping waits for so that no answer already made is cut off.
    let inFlight = Atomic(0)

    init(configuration: HTTPServer.Configuration, responder: any HTTPResponder) {
        self.responder = responder
        self.maxBodyBytes = configuration.maxBodyBytes
        self.chunkedBodies = configuration.chunkedBodies
        self.requestDeadline = configuration.requestDeadline > .zero ? configuration.requestDeadline : nil
        self.requestDeadlineNanoseconds = requestDeadline.map(BootClock.nanoseconds(of:))
        self.headWatch = requestDeadline.map { _ in HeadWatch() }
    }

    /// Requests still arriving, watched for their deadline (nil: no request deadline).
    let headWatch: HeadWatch?

    /// Whether `request`'s deadline has passed (false when there is none).
    func deadlinePassed(_ request: RequestState) -> Bool {
        guard let deadline = request.deadline else { return false }
        return BootClock.nanoseconds() > deadline
    }

    /// Whether every answer closes its connection (draining: clients move to new connections).
    let closesAfterAnswer = Atomic(false)

    /// Refuses new connections from now on (see `HTTPServer.quiesce()`).
    func quiesce() {
        closesAfterAnswer.store(true, ordering: .relaxed)
        isAccepting.store(false, ordering: .relaxed)
    }

    /// Records a stream that is about to be queued; if the server is already stopping, the stream
    /// is ended at once (it will send what it has, then end) instead of being parked forever.
    func register(_ stream: HTTPStream) {
        let stopping = streams.withLock { registry in
            if !registry.stopping { registry.open[ObjectIdentifier(stream)] = stream }
            return registry.stopping
        }
        if stopping { stream.endForServerStop() }
    }

    /// Forgets a stream whose response libmicrohttpd has freed.
    func unregister(_ stream: HTTPStream) {
        _ = streams.withLock { $0.open.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Ends every open stream and wakes the parked ones, so that no connection is left suspended
    /// when `MHD_stop_daemon` runs (that would abort the process in libmicrohttpd 0.9.75).
    func endStreams() {
        // Streams are ended outside the registry lock: one registered after this sees `stopping`
        // and ends itself, and one freed meanwhile is detached, which ending leaves alone.
        let ended: [HTTPStream] = streams.withLock { registry in
            registry.stopping = true
            return Array(registry.open.values)
        }
        for stream in ended { stream.endForServerStop() }
    }

    /// Waits (sleeping 1 ms at a time) until no request is in flight or `timeout` has passed.
    /// After `quiesce` every answer carries `Connection: close`, so keep-alive clients leave
    /// after their current request and the count falls to zero.
    ///
    /// The count must stay at zero for `quiet` before this returns: a client whose connection was
    /// accepted just before quiescing may still be sending its request line (measured by
    /// IntegrationTests/drain-test: requests read a few ms after the count first fell to zero were cut).
    func waitForRequests(timeout: Duration, quiet: Duration = .milliseconds(50)) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var quietSince: ContinuousClock.Instant?
        while clock.now < deadline {
            if inFlight.load(ordering: .relaxed) > 0 {
                quietSince = nil
            } else if let since = quietSince {
                if clock.now - since >= quiet { return }
            } else {
                quietSince = clock.now
            }
            Sleep.milliseconds(1)
        }
    }

    /// Waits (sleeping 1 ms at a time) until every stream has flushed and been freed, or until
    /// `timeout` has passed; this gives ended streams the chance to send their terminator.
    func waitForStreams(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while streams.withLock({ !$0.open.isEmpty }) && ContinuousClock.now < deadline {
            Sleep.milliseconds(1)
        }
    }
}

/// The open streams of one server.
struct StreamRegistry {
    /// Set once by `endStreams()`; from then on new streams are ended as they are registered.
    var stopping = false
    var open: [ObjectIdentifier: HTTPStream] = [:]
}

/// Per-request state, created by the URI log callback and released in the completed callback.
/// Touched by the one libmicrohttpd thread that serves the request's connection, except the
/// `watch…` fields, which only `HeadWatch` touches, under its lock (hence `@unchecked`).
final class RequestState: @unchecked Sendable {
    /// Where the request is in libmicrohttpd's multi-call protocol.
    enum Phase {
        /// Headers parsed, the access handler has not been called yet.
        case awaitingHead
        /// Screened and accepted; body bytes may come.
        case readingBody
        /// A chunked body passed the limit. libmicrohttpd 0.9.75 cannot queue a response while a
        /// body is arriving, so the rest is read and dropped (up to `allowance` more bytes) and the
        /// 413 goes out when the body ends; past the allowance the connection is closed instead.
        case discardingBody(allowance: Int)
        /// A response is queued (or the request was refused); any further body bytes are dropped.
        case answered
    }

    /// The raw request target, captured before libmicrohttpd splits or unescapes it.
    let target: String
    /// The bytes of the target as libmicrohttpd's C string had them (−1: unknown).
    let targetLength: Int
    // Touched only by the one thread serving the connection, in turn (see above), so the dynamic
    // exclusivity checks of class properties are left out (a begin and an end access per use,
    // ≈ 400 instructions a request).
    @exclusivity(unchecked) var phase = Phase.awaitingHead
    @exclusivity(unchecked) var head: HTTPRequestHead?
    @exclusivity(unchecked) var body: [UInt8] = []
    /// The body's length as its Content-Length declared it (0: none).
    @exclusivity(unchecked) var declaredBodyBytes = 0
    /// When the request line was parsed (this object is made right then).
    let receivedAt: ContinuousClock.Instant
    /// The same instant in `BootClock` nanoseconds.
    let receivedNanoseconds: Int64
    /// When the request must have arrived whole, in `BootClock` nanoseconds (nil: no deadline);
    /// computed once, so that the checks compare two integers.
    let deadline: Int64?

    /// The connection's socket, while the request is watched for its deadline.
    var watchSocket: Int32 = -1
    /// Whether the request is in the watch's list.
    var isWatched = false
    /// The neighbours in the watch's list (unretained: the completed callback leaves the list
    /// before it releases the state).
    var watchPrevious: Unmanaged<RequestState>?
    var watchNext: Unmanaged<RequestState>?

    /// `deadline`: how long the request may take, in nanoseconds (nil: no limit).
    init(target: String, targetLength: Int, deadline: Int64?) {
        self.target = target
        self.targetLength = targetLength
        self.receivedAt = .now
        let now = BootClock.nanoseconds()
        self.receivedNanoseconds = now
        self.deadline = deadline.map { now &+ $0 }
    }
}
