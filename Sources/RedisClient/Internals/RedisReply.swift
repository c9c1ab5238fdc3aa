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
    /// True for an error reply.
    var isError: Bool {
        if case .error = self { return true }
        return false
    }

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
    /// For EVALSHA: the script it calls, so that the connection can load it first, send it whole
    /// where the server lost it, and add a fenced script's deadline when it sends the call.
    var script: RedisScript?

    init(arguments: [[UInt8]], script: RedisScript? = nil) {
        self.arguments = arguments
        self.script = script
    }

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

    /// EVALSHA of `script` on `keys` with `arguments` (a fenced script's deadline is added as the
    /// call is sent).
    static func evaluate(_ script: RedisScript, keys: [String], arguments: [[UInt8]]) -> RedisCommand {
        var all: [[UInt8]] = []
        all.reserveCapacity(3 + keys.count + arguments.count)
        all.append(evalsha)
        all.append(script.digestBytes)
        all.append(keys.count == 1 ? oneKey : Array(String(keys.count).utf8))
        for key in keys { all.append(Array(key.utf8)) }
        all.append(contentsOf: arguments)
        return RedisCommand(arguments: all, script: script)
    }

    private static let evalsha = Array("EVALSHA".utf8)
    private static let oneKey = Array("1".utf8)

    /// This EVALSHA call as EVAL with the script's source, for a server that answered NOSCRIPT
    /// (EVAL also puts the script back in its cache).
    var withSource: RedisCommand {
        guard let script, arguments.count >= 2 else { return self }
        return RedisCommand(
            arguments: [Array("EVAL".utf8), Array(script.source.utf8)] + arguments.dropFirst(2), script: script)
    }
}
