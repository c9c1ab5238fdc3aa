extension HiredisContext {
    /// Where the Sentinels of `sentinel` say its primary is: each is asked in turn (SENTINEL
    /// get-master-addr-by-name, on a connection of its own within `timeout` seconds), and the first
    /// answer wins; `endpoint`'s database goes with it. Throws `.unreachable` when no Sentinel
    /// answered with an address, saying what each one did.
    static func primary(
        of sentinel: RedisEndpoint.Sentinel, for endpoint: RedisEndpoint, timeout: Double
    ) throws(RedisError) -> RedisEndpoint {
        let command = RedisCommand.text(["SENTINEL", "get-master-addr-by-name", sentinel.name])
        var failures: [String] = []
        for candidate in sentinel.sentinels {
            do throws(RedisError) {
                let reply = try connect(to: candidate, timeout: timeout).pipeline([command])[0]
                if case .array(let parts) = reply, parts.count == 2, case .bulk(let host) = parts[0],
                    case .bulk(let port) = parts[1], let number = Int(String(decoding: port, as: UTF8.self)),
                    (1...65_535).contains(number)
                {
                    return endpoint.server(host: String(decoding: host, as: UTF8.self), port: number)
                }
                failures.append("\(candidate.address) answered \(reply.summary)")
            } catch {
                failures.append("\(candidate.address): \(error.reason)")
            }
        }
        throw RedisError(
            .unreachable, function: "SENTINEL get-master-addr-by-name",
            reason: "no Sentinel named the primary \"\(sentinel.name)\": \(failures.joined(separator: "; "))")
    }
}
