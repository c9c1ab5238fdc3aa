import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// The deferred answers requests await (`DeferredResponse`), so that stopping can answer them.
    let deferredAnswers = Mutex(DeferredRegistry())
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
        self.streamSendBuffer = configuration.streamSendBuffer
    }

    /// A stream connection's kernel send buffer in bytes (`HTTPServer.Configuration`); nil: the kernel's.
    let streamSendBuffer: Int?

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

/// Per-request state, taken from the thread's `RequestStatePool` by the URI log callback and given
/// back in the completed callback. Touched by the one libmicrohttpd thread that serves the
/// request's connection, except the `watch…` fields, which only `HeadWatch` touches, under its
/// lock, and `target` and `deadline`, which it reads there while the request is watched (they are
/// set before the request enters the watch; hence `@unchecked`).
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
        /// Its whole body in, the request waits for its deferred answer (`deferredAnswer`), its
        /// connection suspended. (The handle is a field of its own: a reference in a case would
        /// make every assignment of the phase release the old one, on every request.)
        case deferred
        /// A response is queued (or the request was refused); any further body bytes are dropped.
        case answered
    }

    // Touched only by the one thread serving the connection, in turn (see above), so the dynamic
    // exclusivity checks of class properties are left out (a begin and an end access per use,
    // ≈ 400 instructions a request).

    /// The raw request target, captured before libmicrohttpd splits or unescapes it.
    @exclusivity(unchecked) private(set) var target: String
    /// The bytes of the target as libmicrohttpd's C string had them (−1: unknown).
    @exclusivity(unchecked) private(set) var targetLength: Int
    @exclusivity(unchecked) var phase = Phase.awaitingHead
    @exclusivity(unchecked) var head: HTTPRequestHead?
    /// The deferred answer the request waits for, in phase `.deferred`.
    @exclusivity(unchecked) var deferredAnswer: DeferredResponse?
    /// The body as it arrives; its buffer is kept for the next request (a request's body shares it
    /// until that request is over).
    @exclusivity(unchecked) var body: [UInt8] = []
    /// The body's length as its Content-Length declared it (0: none).
    @exclusivity(unchecked) var declaredBodyBytes = 0
    /// The head's fields of the last request, kept to be emptied and filled again by the next
    /// (`takeFieldBuffer`; the head shares it until its request is over).
    @exclusivity(unchecked) var fieldBuffer = HTTPHeaders()
    /// When the request line was parsed (`start` runs right then).
    @exclusivity(unchecked) private(set) var receivedAt: ContinuousClock.Instant
    /// The same instant in `BootClock` nanoseconds.
    @exclusivity(unchecked) private(set) var receivedNanoseconds: Int64
    /// When the request must have arrived whole, in `BootClock` nanoseconds (nil: no deadline);
    /// computed once, so that the checks compare two integers.
    @exclusivity(unchecked) private(set) var deadline: Int64?

    /// The connection's socket, while the request is watched for its deadline.
    var watchSocket: Int32 = -1
    /// Whether the request is in the watch's list.
    var isWatched = false
    /// The deferred answer the request awaits while it is watched: at the deadline the watch
    /// gives the answer (a refusal) instead of shutting the socket down.
    var watchDeferred: DeferredResponse?
    /// The neighbours in the watch's list (unretained: the completed callback leaves the list
    /// before it gives the state back).
    var watchPrevious: Unmanaged<RequestState>?
    var watchNext: Unmanaged<RequestState>?

    /// The largest field or body buffer kept for the next request, in bytes (a larger one, from
    /// a rare large request, is freed with it).
    static let keptBufferBytes = 4096

    /// `deadline`: how long the request may take, in nanoseconds (nil: no limit).
    init(target: String, targetLength: Int, deadline: Int64?) {
        self.target = target
        self.targetLength = targetLength
        self.receivedAt = .now
        let now = BootClock.nanoseconds()
        self.receivedNanoseconds = now
        self.deadline = deadline.map { now &+ $0 }
    }

    /// A new request in this state, whose previous request is over (as `init`), keeping the
    /// buffers of its fields and body.
    func restart(target: String, targetLength: Int, deadline: Int64?) {
        self.target = target
        self.targetLength = targetLength
        receivedAt = .now
        let now = BootClock.nanoseconds()
        receivedNanoseconds = now
        self.deadline = deadline.map { now &+ $0 }
        phase = .awaitingHead
        declaredBodyBytes = 0
    }

    /// The request is over: what it holds is let go of, but for the buffers small enough to keep
    /// (emptied for the next request).
    func finish() {
        // An answered request's head was taken (or never kept); one that ended otherwise (the
        // client left mid-body) may still hold it. (Setting it to nil anyway copies and destroys
        // the large optional: ≈ 140 instructions.)
        if case .answered = phase {} else { head = nil }
        if body.capacity > Self.keptBufferBytes { body = [] } else { body.removeAll(keepingCapacity: true) }
        if fieldBuffer.bytesAllocated > Self.keptBufferBytes { fieldBuffer = HTTPHeaders() }
    }

    /// The fields' buffer to fill with this request's head: the last request's, emptied, when
    /// nothing holds it any more (its head is gone); else a new one with room for a typical head.
    func takeFieldBuffer(reservingBytes bytes: Int, fields: Int) -> HTTPHeaders {
        var buffer = fieldBuffer
        fieldBuffer = HTTPHeaders()
        buffer.removeAll(keepingRoomFor: bytes, fields: fields)
        return buffer
    }
}

/// Request states no request is using, kept for the next requests of the thread that finished
/// them: a request's state, its fields' buffer and its body's buffer are made once and filled
/// again, request after request (making and freeing the three, with the state's own deinit, was
/// ≈ 800 instructions a request). libmicrohttpd calls a request's callbacks on its connection's
/// thread, one at a time; a pool is that thread's alone (a thread-local), so it takes no lock.
final class RequestStatePool {
    /// States ready for a request (the last given back on top). Only the pool's thread touches
    /// it, so its dynamic exclusivity checks are left out.
    @exclusivity(unchecked) private var spare: [RequestState] = []

    /// The most states kept (one per connection a thread serves at once is all it can use).
    static let limit = 64

    /// A state for a new request, from the pool when it has one.
    func take(target: String, targetLength: Int, deadline: Int64?) -> RequestState {
        guard let state = spare.popLast() else {
            return RequestState(target: target, targetLength: targetLength, deadline: deadline)
        }
        state.restart(target: target, targetLength: targetLength, deadline: deadline)
        return state
    }

    /// Takes back the state of a request that is over (the completed callback's; out of the
    /// deadline watch). Kept when nothing else holds it and the pool has room.
    func give(_ state: consuming RequestState) {
        var state = state
        guard spare.count < Self.limit, isKnownUniquelyReferenced(&state) else { return }
        state.finish()
        spare.append(state)
    }

    /// The calling thread's pool.
    static var mine: RequestStatePool {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<RequestStatePool>.fromOpaque(pointer).takeUnretainedValue()
        }
        let pool = RequestStatePool()
        // Retained by the thread's key; released when the thread ends (the key's destructor).
        pthread_setspecific(key, Unmanaged.passRetained(pool).toOpaque())
        return pool
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<RequestStatePool>.fromOpaque(pointer).release() }
        }
        return key
    }()
}
