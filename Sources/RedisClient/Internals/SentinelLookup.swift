extension HiredisContext {
    /// Where the Sentinels of `sentinel` say its primary is, `endpoint`'s database with it. They
    /// are asked in turn (SENTINEL MASTER, on a connection of its own within `timeout` seconds)
    /// until a majority of them answered, and the answer with the highest configuration epoch wins:
    /// a Sentinel learns of a failover another one led only from its next hello (every 2 s), and
    /// until then names the old primary, which may still answer as a primary (the first answer
    /// alone sent writes there after a switch). Throws `.unreachable` when no Sentinel answered with
    /// an address, saying what each one did.
    static func primary(
        of sentinel: RedisEndpoint.Sentinel, for endpoint: RedisEndpoint, timeout: Double
    ) throws(RedisError) -> RedisEndpoint {
        let command = RedisCommand.text(["SENTINEL", "MASTER", sentinel.name])
        let majority = sentinel.sentinels.count / 2 + 1
        var answers: [SentinelAnswer] = []
        var failures: [String] = []
        for candidate in sentinel.sentinels where answers.count < majority {
            do throws(RedisError) {
                let reply = try connect(to: candidate, timeout: timeout).pipeline([command])[0]
                if let answer = SentinelAnswer(reply) {
                    answers.append(answer)
                } else {
                    failures.append("\(candidate.address) answered \(reply.summary)")
                }
            } catch {
                failures.append("\(candidate.address): \(error.reason)")
            }
        }
        // The first of the newest: with equal epochs the Sentinels agree.
        guard let newest = answers.max(by: { $0.epoch < $1.epoch }) else {
            throw RedisError(
                .unreachable, function: "SENTINEL MASTER",
                reason: "no Sentinel named the primary \"\(sentinel.name)\": \(failures.joined(separator: "; "))")
        }
        return endpoint.server(host: newest.primary.host, port: newest.primary.port)
    }
}

/// A server's address as the Sentinels name it: a host name or IP address, and a port.
struct PrimaryAddress: Sendable, Hashable {
    let host: String
    let port: Int

    /// The address in `host` and `port` as Redis sends them (text), or nil unless the port is
    /// 1...65535 and the host is non-empty and printable.
    init?(host: [UInt8], port: [UInt8]) {
        guard let number = Int(String(decoding: port, as: UTF8.self)), (1...65_535).contains(number),
            !host.isEmpty, host.count <= 255, host.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        self.host = String(decoding: host, as: UTF8.self)
        self.port = number
    }
}

/// One Sentinel's view of the primary: its address and the configuration epoch it knows it in.
struct SentinelAnswer {
    let primary: PrimaryAddress
    let epoch: Int64

    /// From SENTINEL MASTER's reply (field names and values, in turn), or nil without an address
    /// and an epoch that read as such.
    init?(_ reply: RedisReply) {
        guard case .array(let items) = reply, items.count % 2 == 0 else { return nil }
        var fields: [String: [UInt8]] = [:]
        for i in stride(from: 0, to: items.count, by: 2) {
            guard case .bulk(let name) = items[i], case .bulk(let value) = items[i + 1] else { continue }
            fields[String(decoding: name, as: UTF8.self)] = value
        }
        guard let host = fields["ip"], let port = fields["port"],
            let primary = PrimaryAddress(host: host, port: port),
            let epoch = fields["config-epoch"].flatMap({ Int64(String(decoding: $0, as: UTF8.self)) }), epoch >= 0
        else { return nil }
        self.primary = primary
        self.epoch = epoch
    }
}
