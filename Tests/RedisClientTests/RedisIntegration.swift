import Foundation
import SheetdTesting
import Testing

@testable import RedisClient

/// Every RedisClient test runs in this suite, one at a time: each starts a redis-server of its
/// own (SheetdTesting's RedisServer) and several stop, restart or pause it. Their verdicts are what
/// the client and Redis saw (errors, whether a call tried Redis again, the connections Redis
/// accepted, expiry times on Redis's own clock), never how long something took.
@Suite(.serialized) enum RedisIntegration {}

extension RedisServer {
    /// This server as an endpoint (database 0, or `database`).
    func endpoint(database: Int = 0) -> RedisEndpoint {
        try! RedisEndpoint(url: url(database: database))
    }
}

/// Runs `body`, which should fail: the `RedisError` it threw (nil if none) and the seconds it took
/// (only ever compared with a lower bound, or with a timeout many times what the call needs).
func failure(of body: () throws -> Void) -> (error: RedisError?, seconds: Double) {
    let start = Monotonic.now()
    var caught: RedisError?
    do {
        try body()
    } catch {
        caught = error as? RedisError
    }
    return (caught, Monotonic.now() - start)
}

/// A suite whose every test gets a redis-server of its own (swift-testing makes an instance per
/// test), stopped when the test ends.
class RedisServerSuite {
    let server: RedisServer

    init() throws { server = try RedisServer() }
}

/// What a redis-server saw, asked on a connection of its own (which it counts too).
struct RedisView {
    let redis: RedisConnection

    init(_ server: RedisServer) throws { redis = try RedisConnection(endpoint: server.endpoint()) }

    /// Redis's clock (TIME), milliseconds since the epoch, rounded down.
    func now() throws -> Int64 {
        guard case .array(let parts) = try redis.command(["TIME"]), parts.count == 2,
            case .bulk(let seconds) = parts[0], case .bulk(let micros) = parts[1],
            let s = Int64(String(decoding: seconds, as: UTF8.self)),
            let us = Int64(String(decoding: micros, as: UTF8.self))
        else { throw RedisViewError("TIME did not answer two integers") }
        return s * 1000 + us / 1000
    }

    /// When `key` expires (PEXPIRETIME): milliseconds since the epoch on Redis's clock; -1 for a
    /// key without expiry, -2 for no key.
    func expiresAt(_ key: String) throws -> Int64 {
        guard case .integer(let at) = try redis.command(["PEXPIRETIME", key]) else {
            throw RedisViewError("PEXPIRETIME did not answer an integer")
        }
        return at
    }

    /// Connections this redis-server accepted since it started (INFO stats:
    /// total_connections_received), this view's own included.
    func connectionsReceived() throws -> Int {
        guard case .bulk(let info) = try redis.command(["INFO", "stats"]) else {
            throw RedisViewError("INFO stats did not answer a bulk string")
        }
        let line = String(decoding: info, as: UTF8.self).split(whereSeparator: \.isNewline)
            .first { $0.hasPrefix("total_connections_received:") }
        guard let count = line.flatMap({ Int($0.split(separator: ":").last ?? "") }) else {
            throw RedisViewError("INFO stats has no total_connections_received")
        }
        return count
    }
}

/// Keeps Redis busy for ARGV[1] seconds (by its own clock), then returns 1: Redis runs one script at
/// a time, so every other call waits for it, or is refused (BUSY) past `busy-reply-threshold`.
let busyScript = """
    local t = redis.call('TIME')
    local start = t[1] + t[2] / 1e6
    repeat
      t = redis.call('TIME')
    until t[1] + t[2] / 1e6 - start >= tonumber(ARGV[1])
    return 1
    """

/// A redis-server answered a diagnostic command in an unexpected way.
struct RedisViewError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
