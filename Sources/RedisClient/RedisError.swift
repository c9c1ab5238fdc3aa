/// A Redis call that failed: which call, what kind of failure, and why.
public struct RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for callers that react differently (retry later, or give up).
    public enum Kind: Sendable, Hashable {
        /// A bad URL or timeout was given; nothing was sent.
        case invalidArgument
        /// No connection could be made (refused, unknown host, connect timeout).
        case unreachable
        /// Redis did not answer within the timeout; the connection is dropped. Or the call waited
        /// a whole timeout for its turn on a shared connection behind slow calls; nothing was sent.
        case timedOut
        /// The connection broke during a command (closed by Redis, reset, an I/O or protocol error).
        case disconnected
        /// Redis answered with an error (e.g. WRONGTYPE, OOM); the connection is still good.
        case errorReply
        /// Redis answered, but not with a reply of the type the command returns.
        case unexpectedReply
    }

    /// What went wrong.
    public let kind: Kind
    /// The hiredis function that failed (e.g. "redisConnectWithTimeout", "redisGetReply"), the Redis
    /// command Redis refused (e.g. "SET"), or the initializer given a bad argument.
    public let function: String
    /// Why, with the endpoint or the command where that helps (hiredis's own message for C failures).
    public let reason: String

    /// An error of `kind` from `function`, explained by `reason`.
    public init(_ kind: Kind, function: String, reason: String) {
        self.kind = kind
        self.function = function
        self.reason = reason
    }

    /// "function failed: reason".
    public var description: String { "\(function) failed: \(reason)" }
}
