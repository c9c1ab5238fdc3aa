/// Lua scripts and the server's identity: what a client needs to write conditionally (a value
/// only where the stored one is older) and to notice that Redis was replaced (restarted, or a
/// replica promoted), which a connection that simply reconnects would not show.
extension RedisConnection {
    /// EVAL `script` once per call, pipelined (one round trip for all): each call's integer reply,
    /// or nil where the script returned nil. Every call is attempted; if Redis refused some (an
    /// error reply: a script error or OOM, `.errorReply`; BUSY, NOREPLICAS …, `.unavailable`), the
    /// first refusal is thrown after the rest were read.
    public func evaluate(_ script: String, _ calls: [(keys: [String], arguments: [[UInt8]])])
        throws(RedisError) -> [Int64?]
    {
        if calls.isEmpty { return [] }
        let name = Array("EVAL".utf8)
        let body = Array(script.utf8)
        let commands = calls.map { call in
            RedisCommand(
                arguments: [name, body, Array(String(call.keys.count).utf8)] + call.keys.map { Array($0.utf8) }
                    + call.arguments)
        }
        var results: [Int64?] = []
        results.reserveCapacity(calls.count)
        var firstFailure: RedisError?
        for (command, reply) in zip(commands, try execute(commands)) {
            switch reply {
            case .integer(let value): results.append(value)
            case .null: results.append(nil)
            case let other:
                results.append(nil)
                if firstFailure == nil { firstFailure = unexpected(other, to: command) }
            }
        }
        if let firstFailure { throw firstFailure }
        return results
    }

    /// EVALSHA of `script` once per call, pipelined (one round trip for all; the script is loaded
    /// on this connection first if it was not, in the same write, and sent whole where the server
    /// answers NOSCRIPT): each call's outcome, in order. For a script that writes a versioned
    /// value, `.stale` is a refusal the caller expects, not a failure. Every call is attempted; if
    /// Redis refused some otherwise (an error reply: `.errorReply` for a final one, `.unavailable`
    /// for a temporary one, EXPIRED from a fenced script included), or answered one with neither an
    /// integer nor STALE, the first such failure is thrown after the rest were read.
    public func run(_ script: RedisScript, _ calls: [(keys: [String], arguments: [[UInt8]])])
        throws(RedisError) -> [ScriptOutcome]
    {
        if calls.isEmpty { return [] }
        let commands = calls.map { RedisCommand.evaluate(script, keys: $0.keys, arguments: $0.arguments) }
        var outcomes: [ScriptOutcome] = []
        outcomes.reserveCapacity(calls.count)
        var firstFailure: RedisError?
        for (command, reply) in zip(commands, try execute(commands)) {
            if let outcome = ScriptOutcome(reply) {
                outcomes.append(outcome)
            } else if firstFailure == nil {
                firstFailure = unexpected(reply, to: command)
            }
        }
        if let firstFailure { throw firstFailure }
        return outcomes
    }

    /// The `run_id` of the server answering (INFO server): 40 random hex digits Redis draws each
    /// time it starts, so a different one means a restarted or a different server.
    public func serverRunID() throws(RedisError) -> String {
        let command = RedisCommand.text(["INFO", "server"])
        let reply = try execute([command])[0]
        let text: String
        switch reply {
        case .bulk(let bytes): text = String(decoding: bytes, as: UTF8.self)
        default: throw unexpected(reply, to: command)
        }
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("run_id:") {
            return String(line.dropFirst("run_id:".count))
        }
        throw RedisError(
            .unexpectedReply, function: "INFO", reason: "\(endpoint.address) sent no run_id in INFO server")
    }
}
