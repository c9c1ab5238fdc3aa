import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Requests still arriving, and the deadline each must meet.
///
/// libmicrohttpd calls nothing between a request line and the end of its head, and its timeout
/// counts inactivity, which a client trickling bytes keeps resetting (slowloris, slow bodies):
/// such a connection would hold its slot for ever. A request is entered here when its line is
/// parsed and leaves when it is answered (its head and body are in) or libmicrohttpd ends it; a
/// thread shuts down, four times a second, the sockets of those past their deadline.
/// libmicrohttpd then reads end-of-file and closes the connection itself.
///
/// The socket is shut down, never closed (libmicrohttpd owns it), and only while the request is
/// entered: the completed callback removes it under the same lock before libmicrohttpd closes the
/// socket, so a number reused by a later connection is never touched.
///
/// The requests form an intrusive doubly linked list through their `RequestState`s: entering and
/// leaving are a lock and a few pointer writes, with no hashing and no allocation (a dictionary
/// keyed by connection cost ≈ 1,500 instructions per request, measured with callgrind).
final class HeadWatch: Sendable {
    /// The first request of the list (unretained, as are the links).
    private struct List: @unchecked Sendable {
        var first: Unmanaged<RequestState>?
    }

    private let list = Mutex(List())
    private let running = Atomic(true)

    /// Enters `request`, whose line was just parsed, on `socket`.
    func enter(_ request: RequestState, socket: Int32) {
        guard socket >= 0 else { return }
        let entry = Unmanaged.passUnretained(request)
        list.withLock { list in
            request.watchSocket = socket
            request.watchPrevious = nil
            request.watchNext = list.first
            list.first?.takeUnretainedValue().watchPrevious = entry
            list.first = entry
            request.isWatched = true
        }
    }

    /// `request` has arrived whole and awaits `deferred`: at its deadline the watch answers it
    /// (`.answerTimeout`) rather than shut its socket down. Harmless when it is not entered.
    func awaitAnswer(_ request: RequestState, _ deferred: DeferredResponse) {
        list.withLock { _ in
            if request.isWatched { request.watchDeferred = deferred }
        }
    }

    /// `request` has arrived whole, or is over; harmless when it is not entered.
    func leave(_ request: RequestState) {
        list.withLock { list in Self.unlink(request, from: &list) }
    }

    private static func unlink(_ request: RequestState, from list: inout List) {
        guard request.isWatched else { return }
        let previous = request.watchPrevious
        let next = request.watchNext
        if let previous {
            previous.takeUnretainedValue().watchNext = next
        } else {
            list.first = next
        }
        next?.takeUnretainedValue().watchPrevious = previous
        request.watchPrevious = nil
        request.watchNext = nil
        if request.watchDeferred != nil { request.watchDeferred = nil }
        request.isWatched = false
    }

    /// Runs the watch on a thread of its own until `stop()`; `cutOff` hears of each request cut.
    func start(cutOff: @escaping @Sendable (String) -> Void) {
        detachThread { [self] in
            while running.load(ordering: .relaxed) {
                Sleep.milliseconds(250)
                let now = BootClock.nanoseconds()
                let (late, unanswered) = list.withLock { list in
                    var targets: [String] = []
                    var unanswered: [DeferredResponse] = []
                    var cursor = list.first
                    while let entry = cursor {
                        let request = entry.takeUnretainedValue()
                        cursor = request.watchNext
                        guard let deadline = request.deadline, deadline < now else { continue }
                        if let deferred = request.watchDeferred {
                            // Arrived whole, its answer still awaited: answered, not cut off.
                            unanswered.append(deferred)
                        } else {
                            shutdown(request.watchSocket, Int32(SHUT_RDWR))
                            targets.append(request.target)
                        }
                        Self.unlink(request, from: &list)
                    }
                    return (targets, unanswered)
                }
                for target in late { cutOff(target) }
                for deferred in unanswered {
                    _ = deferred.give(
                        .refusal(
                            HTTPRefusal(
                                .answerTimeout, "The answer was not ready by the request deadline; retry shortly.")
                        ))
                }
            }
        }
    }

    /// Ends the thread (within 250 ms).
    func stop() { running.store(false, ordering: .relaxed) }
}

/// Runs `body` on a new detached POSIX thread (MicroHTTP does without Foundation's Thread).
func detachThread(_ body: @escaping @Sendable () -> Void) {
    final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
    if started == 0 {
        pthread_detach(thread)
    } else {
        Unmanaged<Body>.fromOpaque(context).release()
    }
}
