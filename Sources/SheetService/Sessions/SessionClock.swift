/// Which clock a session's times are on.
public enum SessionClock: String, Sendable {
    /// The server's monotonic clock (receive times).
    case server
    /// The client's monotonic clock: every mutating request carries `time`.
    case client
}
