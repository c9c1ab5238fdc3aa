/// One reply from Redis, copied out of hiredis's `redisReply` (which is freed at once).
enum RedisReply: Sendable, Equatable {
    /// A simple string, e.g. "OK" or "PONG".
    case status(String)
    /// An error reply, e.g. "WRONGTYPE Operation against a key holding the wrong kind of value".
    case error(String)
    /// An integer, e.g. the number of keys DEL removed.
    case integer(Int64)
    /// A bulk string: binary-safe bytes.
    case bulk([UInt8])
    /// The nil reply, e.g. GET of a missing key.
    case null
    /// An array of replies.
    case array([RedisReply])
}

extension RedisReply {
    /// True for an error reply whose code is temporary (`RedisError.temporaryCodes`).
    var isTemporaryError: Bool {
        guard case .error(let message) = self else { return false }
        return RedisError.temporaryCodes.contains(RedisError.code(of: message))
    }

    /// The kind of reply and its size, for messages; never the bytes (they may be session data).
    var summary: String {
        switch self {
        case .status(let text): "the status \"\(text.prefix(40))\""
        case .error(let text): "the error \"\(text.prefix(200))\""
        case .integer(let value): "the integer \(value)"
        case .bulk(let bytes): "a bulk string of \(bytes.count) bytes"
        case .null: "nil"
        case .array(let elements): "an array of \(elements.count) replies"
        }
    }
}

/// One command: its name and arguments as the bytes sent (binary-safe).
struct RedisCommand: Sendable {
    /// The command name first, then its arguments.
    let arguments: [[UInt8]]

    /// The command name, for messages.
    var name: String { arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// The number of argument bytes, for sizing pipelines.
    var byteCount: Int { arguments.reduce(0) { $0 + $1.count } }

    /// SET key value [EX ttlSeconds].
    static func set(_ key: String, _ value: [UInt8], ttlSeconds: Int?) -> RedisCommand {
        var arguments = [Array("SET".utf8), Array(key.utf8), value]
        if let ttlSeconds { arguments += [Array("EX".utf8), Array(String(ttlSeconds).utf8)] }
        return RedisCommand(arguments: arguments)
    }

    /// DEL key.
    static func delete(_ key: String) -> RedisCommand {
        RedisCommand(arguments: [Array("DEL".utf8), Array(key.utf8)])
    }

    /// Any command from text arguments, e.g. ["TTL", key].
    static func text(_ arguments: [String]) -> RedisCommand {
        RedisCommand(arguments: arguments.map { Array($0.utf8) })
    }
}
