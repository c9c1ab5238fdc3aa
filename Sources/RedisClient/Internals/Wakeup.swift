#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Wakes a thread waiting in poll(2) from another thread: a pipe whose read end the waiter polls
/// along with its socket. The only owner of both ends, closed in deinit. Each C call is behind one
/// method here.
///
/// `signal()` writes one byte that is never read, so the read end stays readable and every wait
/// from then on returns at once: a wake-up cannot be missed, whether it comes before the wait or
/// during it. Writing cannot raise SIGPIPE: the read end is open for as long as anyone can call
/// `signal()`.
///
/// When no pipe could be made (no file descriptors left), `failure` says why and `signal()` does
/// nothing: poll(2) ignores the missing descriptor, so the waiter must give its waits a limit.
final class Wakeup: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    /// Why pipe(2) failed, or nil.
    let failure: RedisError?

    /// What ended a wait.
    enum Event: Equatable {
        /// `signal()` was called (now or before).
        case signalled
        /// The socket has something to read, or reports an error or the end of the connection (a
        /// read will say which).
        case readable
        /// Neither, within the time given (or a signal handler interrupted the wait).
        case timedOut
    }

    /// pipe: both ends, or -1 and `failure`.
    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            failure = nil
        } else {
            let reason = String(cString: strerror(errno))
            failure = RedisError(
                .unreachable, function: "pipe", reason: "no wake-up pipe for the subscriber: \(reason)")
            ends = [-1, -1]
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// write: one byte to the pipe, which wakes the current wait and every later one.
    func signal() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        while write(writeEnd, &byte, 1) == -1 && errno == EINTR {}
    }

    /// poll: waits up to `seconds` (rounded up to whole milliseconds; nil: no limit) for `signal()`
    /// or, when a socket is given, for it to become readable. A signal wins over a readable socket.
    func wait(seconds: Double?, orReadable socket: Int32?) -> Event {
        var descriptors = [
            pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: socket ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds = seconds.map { Int32(min(max(($0 * 1000).rounded(.up), 0), Double(Int32.max))) } ?? -1
        guard poll(&descriptors, nfds_t(descriptors.count), milliseconds) > 0 else { return .timedOut }
        if descriptors[0].revents != 0 { return .signalled }
        return descriptors[1].revents != 0 ? .readable : .timedOut
    }
}
