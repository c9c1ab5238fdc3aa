import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Requests whose head is still arriving, and the deadline each must meet.
///
/// libmicrohttpd calls nothing between a request line and the end of its head, and its timeout
/// counts inactivity, which a client trickling header bytes keeps resetting (slowloris): such a
/// connection would hold its slot for ever. A request is entered here when its line is parsed and
/// leaves when its head is complete or libmicrohttpd ends it; a thread shuts down, four times a
/// second, the sockets of those past their deadline. libmicrohttpd then reads end-of-file and
/// closes the connection itself.
///
/// The socket is shut down, never closed (libmicrohttpd owns it), and only while the request is
/// entered: the completed callback removes it under the same lock before libmicrohttpd closes the
/// socket, so a number reused by a later connection is never touched.
final class HeadWatch: Sendable {
    private struct Entry {
        let socket: Int32
        let deadline: ContinuousClock.Instant
        let target: String
    }

    private let entries = Mutex<[UInt: Entry]>([:])
    private let running = Atomic(true)
    /// How long a head may take, from its request line.
    let deadline: Duration

    init(deadline: Duration) { self.deadline = deadline }

    /// Enters the request of `connection` (its line was just parsed).
    func enter(_ connection: OpaquePointer, target: String) {
        let socket = cmhd_connection_fd(connection)
        guard socket >= 0 else { return }
        let entry = Entry(socket: socket, deadline: .now + deadline, target: target)
        entries.withLock { $0[UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))] = entry }
    }

    /// The head of `connection`'s request is complete, or the request is over.
    func leave(_ connection: OpaquePointer) {
        _ = entries.withLock { $0.removeValue(forKey: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))) }
    }

    /// Runs the watch on a thread of its own until `stop()`; `cutOff` hears of each request cut.
    func start(cutOff: @escaping @Sendable (String) -> Void) {
        detachThread { [self] in
            while running.load(ordering: .relaxed) {
                Sleep.milliseconds(250)
                let now = ContinuousClock.Instant.now
                let late: [String] = entries.withLock { table in
                    var targets: [String] = []
                    for (key, entry) in table where entry.deadline < now {
                        shutdown(entry.socket, Int32(SHUT_RDWR))
                        table.removeValue(forKey: key)
                        targets.append(entry.target)
                    }
                    return targets
                }
                for target in late { cutOff(target) }
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
