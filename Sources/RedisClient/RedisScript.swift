/// A Lua script that Redis runs by its SHA-1 digest (EVALSHA). A connection sends the source once
/// (SCRIPT LOAD, in the same pipeline as the script's first call on that connection, so it costs
/// no round trip of its own) and sends it whole again (EVAL) for a call the server answers
/// `NOSCRIPT` (its script cache was flushed).
///
/// A **fenced** script is a write that must never take effect after its writer gave up on it. The
/// connection adds one last argument to each call: a deadline on the server's clock, in
/// microseconds since 1970, which is the moment the call is sent plus the connection's timeout
/// (the connection measures the server's TIME when it connects, and again every
/// `RedisConnection.clockRefresh` seconds). Before anything else the script compares it with the
/// server's TIME and, past it, refuses: the error reply `EXPIRED`, a temporary refusal
/// (`RedisError.temporaryCodes`), after which the caller tries again on a new connection. A server
/// that held the call past the deadline (stopped with SIGSTOP, stalled, behind a partition) does
/// not execute it when it resumes: meanwhile the writer timed out, and it may have been failed over
/// and be a demoted primary that still calls itself one. The fence holds when the Sentinels take
/// longer than the connection's timeout to fail a primary over (`down-after-milliseconds` above
/// the store's deadline), and it costs one TIME call in the script.
public final class RedisScript: Sendable, Hashable {
    /// The Lua source as Redis runs it (for a fenced script, with the deadline check first).
    public let source: String
    /// Whether calls carry the deadline that the script checks first.
    public let isFenced: Bool
    /// The SHA-1 digest of `source`, in hex: the script's name in EVALSHA and SCRIPT LOAD.
    let digest: String
    /// `digest` as the bytes sent (made once: every call sends them).
    let digestBytes: [UInt8]

    /// A script whose body is `body`. With `fenced`, the body sees its own arguments only (the
    /// deadline is taken off `ARGV` before it runs), and never runs once the deadline has passed.
    public init(_ body: String, fenced: Bool = false) {
        source = fenced ? Self.fence + body : body
        isFenced = fenced
        digest = SHA1.hex(Array(source.utf8))
        digestBytes = Array(digest.utf8)
    }

    // A class (one reference in every call of a batch, where a struct's three strings were retained
    // and released per call); equal when the sources are.
    public static func == (a: RedisScript, b: RedisScript) -> Bool { a.digest == b.digest }
    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    /// The deadline check a fenced script starts with: the last argument, in microseconds of the
    /// server's clock (TIME's seconds and microseconds; both below 2^53, exact in Lua's numbers).
    static let fence = """
        local fence_deadline = tonumber(table.remove(ARGV))
        local fence_clock = redis.call('TIME')
        if not fence_deadline or tonumber(fence_clock[1]) * 1000000 + tonumber(fence_clock[2]) > fence_deadline then
          return redis.error_reply('EXPIRED the call reached the server after its deadline: its writer had given up on it')
        end

        """
}

/// What a call of a script that writes a versioned value did (`RedisConnection.run`,
/// `RedisWriter.set(_:_:ttlSeconds:version:)`).
public enum ScriptOutcome: Sendable, Hashable {
    /// The script's integer reply.
    case integer(Int64)
    /// The script wrote nothing: the stored value's version, which it answered as the error reply
    /// `STALE <version>`, is at least as new as the one given.
    case stale(storedVersion: Int)

    /// The largest version a stale reply may name: versions are integers below 2^53, exact in Lua.
    public static let maxVersion = 1 << 53

    /// The outcome `reply` stands for, or nil for any other reply (an error reply that is not
    /// STALE, a reply of another type, or a STALE reply without a version in range).
    init?(_ reply: RedisReply) {
        switch reply {
        case .integer(let value): self = .integer(value)
        case .error(let message) where RedisError.code(of: message) == "STALE":
            let digits = message.dropFirst("STALE ".count).prefix { $0 != " " }
            guard (1...16).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let version = Int(digits), version <= Self.maxVersion
            else { return nil }
            self = .stale(storedVersion: version)
        default: return nil
        }
    }
}
