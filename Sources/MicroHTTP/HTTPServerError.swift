#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A C call (or a use of the server) that failed, naming the function.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function that failed (e.g. "MHD_start_daemon", "inet_pton"), or the `HTTPServer`
    /// method that was misused.
    public let function: String
    /// `errno` right after the failing call when it sets one (e.g. EADDRINUSE), otherwise 0.
    public let errno: Int32
    /// What was being attempted.
    public let reason: String

    /// An error for `function`, with the `errno` it left (0 if none) and what was attempted.
    public init(function: String, errno: Int32, reason: String) {
        self.function = function
        self.errno = errno
        self.reason = reason
    }

    /// "function failed: reason (errno N: message)".
    public var description: String {
        var text = "\(function) failed: \(reason)"
        if errno != 0, let message = strerror(errno) {
            text += " (errno \(errno): \(String(cString: message)))"
        }
        return text
    }
}
