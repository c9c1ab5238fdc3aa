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
        /// Redis refused the command for good (e.g. WRONGTYPE, OOM, a script error): repeating it
        /// unchanged meets the same refusal. The connection is still good.
        case errorReply
        /// Redis cannot serve the command now but will (a temporary error reply: LOADING, READONLY,
        /// NOREPLICAS, MASTERDOWN, BUSY, TRYAGAIN, or a fenced script's EXPIRED), or the server is a replica where the primary
        /// was asked for (checked with ROLE after connecting). Nothing was done: the same call may
        /// succeed later, or on the server that is the primary then. The connection was dropped,
        /// so the next call connects again and checks the role again.
        case unavailable
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
    /// The error code Redis put first in its error reply ("LOADING", "OOM", "WRONGTYPE", "ERR" …),
    /// "ROLE" when the client refused a server whose ROLE is not the one asked for, "FAILOVER" when
    /// it held a call while the Sentinels fail the primary over; nil for failures that are not
    /// Redis's answer. A label for counting refusals by cause.
    public let code: String?

    /// An error of `kind` from `function`, explained by `reason`, with Redis's error `code` if any.
    public init(_ kind: Kind, function: String, reason: String, code: String? = nil) {
        self.kind = kind
        self.function = function
        self.reason = reason
        self.code = code
    }

    /// "function failed: reason".
    public var description: String { "\(function) failed: \(reason)" }
}

extension RedisError {
    /// The codes of Redis's temporary error replies: the server refused the command without
    /// doing anything, for a state that passes without anyone changing the data. Anything else
    /// (WRONGTYPE, OOM under `noeviction`, MISCONF, a script error, a syntax error) is final.
    /// - LOADING: the server is reading its RDB or append-only file after a start.
    /// - READONLY: a replica (a primary demoted, or reached by mistake) refuses a write.
    /// - NOREPLICAS: fewer replicas than `min-replicas-to-write` acknowledge the primary.
    /// - MASTERDOWN: a replica with `replica-serve-stale-data no` lost its primary.
    /// - BUSY: a script or function ran past `busy-reply-threshold` and still runs.
    /// - TRYAGAIN: a cluster slot is migrating under a multi-key command.
    /// - EXPIRED: this client's own, from a fenced script (`RedisScript`): the server took the
    ///   call after its deadline (it had stopped or stalled), so it did nothing.
    static let temporaryCodes: Set<String> = [
        "LOADING", "READONLY", "NOREPLICAS", "MASTERDOWN", "BUSY", "TRYAGAIN", "EXPIRED",
    ]

    /// The code of an error reply: its first word ("LOADING Redis is loading …" → "LOADING").
    static func code(of message: String) -> String {
        String(message.prefix { $0 != " " })
    }

    /// The error for Redis's error reply `message` to `command` from `endpoint`: `.unavailable`
    /// for a temporary code, `.errorReply` for the others.
    static func replied(_ message: String, to command: String, by endpoint: RedisEndpoint) -> RedisError {
        let code = code(of: message)
        return RedisError(
            temporaryCodes.contains(code) ? .unavailable : .errorReply, function: command,
            reason: "\(endpoint.address) replied \"\(message)\"", code: code)
    }
}
