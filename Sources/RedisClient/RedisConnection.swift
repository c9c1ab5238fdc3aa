import Foundation
import Synchronization

/// A synchronous connection to one Redis server, safe to share between threads: one hiredis
/// context behind a mutex, so concurrent callers take turns.
///
/// Every call is bounded: connecting and each socket read or write give up after `timeout`
/// seconds, so a dead or stalled Redis costs a caller about one timeout (two when a stale
/// connection is replaced and the new one stalls too), never a hang. A broken connection (Redis
/// restarted, the connection was reset) is replaced once, transparently, and the call repeated;
/// after a timeout the connection is dropped and the next call connects again.
///
/// Callers queued on the mutex behind a call that failed do not each wait a timeout in turn: for
/// `timeout` seconds after a failure to reach Redis, calls fail at once with that error, then
/// the next call tries to connect again. Nor do they wait behind a line of slow calls that each
/// answer within the timeout: a caller that has not had its turn within `timeout` seconds fails
/// (`.timedOut`, nothing sent), so a call takes at most one timeout waiting for its turn and its
/// own bound after that.
///
/// A temporary error reply (`RedisError.Kind.unavailable`: LOADING, READONLY, NOREPLICAS …) drops
/// the connection, so the next call connects again and, for a `.primary` connection, asks the
/// server's ROLE before sending anything: a primary demoted to a replica is not written to.
///
/// With a Sentinel endpoint (`redis+sentinel://…`) every connect asks the Sentinels where the
/// primary is (a majority of them, the newest answer by configuration epoch) and checks its ROLE
/// (whatever `role` says), and the connection follows their `+switch-master` announcements: the
/// first call after one connects to the primary it named. While they fail the primary over (from
/// `+try-failover` to its end) calls fail at once with `.unavailable` (code "FAILOVER"), nothing
/// sent: the old primary still answers then, and what it takes is lost.
///
/// Scripts (`run`) go by their digest, loaded once per connection; a fenced one carries a deadline
/// on the server's clock (read with ROLE on connecting), so that a server that takes it after the
/// caller gave up does nothing (`RedisScript`).
public final class RedisConnection: Sendable {
    /// Which server a connection will talk to, checked with ROLE after every connect.
    public enum Role: Sendable, Hashable {
        /// Only a primary (ROLE "master"): a replica (or a sentinel) fails the call with
        /// `.unavailable` (code "ROLE") before anything is sent. For every connection that writes.
        case primary
        /// Any server, unchecked (diagnostics, reading a replica on purpose).
        case any
    }

    /// The server this connection talks to.
    public let endpoint: RedisEndpoint
    /// Seconds allowed for connecting and for each socket read or write.
    public let timeout: Double
    /// Which server this connection talks to (see `Role`).
    public let role: Role
    private let link: Mutex<Link>
    /// Held for a whole call, taken with a deadline (Mutex has none), so that the line of callers
    /// is bounded in time; `link` is then never contended.
    private let turn = NSLock()
    /// The announced switches of the primary, for a Sentinel endpoint.
    private let switches: PrimarySwitches?

    /// The connection's state, behind the mutex.
    private struct Link {
        /// The live context, or nil after a failure until the next call connects again.
        var context: HiredisContext?
        /// The last failure and when it happened, while no context replaced the failed one.
        var failure: (error: RedisError, at: ContinuousClock.Instant)?
        /// For a Sentinel endpoint: the switches announced when `context` was connected.
        var switchesAnnounced = 0
    }

    /// Connects to `endpoint` (and selects its database), failing with `.unreachable` when that is
    /// not possible within `timeout` seconds; `timeout` must be at least 0.001. With `role`
    /// `.primary` (the default), a server whose ROLE is not "master" fails it with `.unavailable`.
    public init(endpoint: RedisEndpoint, timeout: Double = 1.0, role: Role = .primary) throws(RedisError) {
        guard timeout.isFinite, timeout >= 0.001 else {
            throw RedisError(
                .invalidArgument, function: "RedisConnection(endpoint:timeout:)",
                reason: "the timeout must be at least 0.001 seconds, not \(timeout)")
        }
        self.endpoint = endpoint
        self.timeout = timeout
        self.role = role
        switches = endpoint.sentinel.map { PrimarySwitches.shared(for: $0, timeout: timeout) }
        let announcement = switches?.announcement
        link = Mutex(
            Link(
                context: try Self.connect(
                    to: endpoint, timeout: timeout, role: role, announced: announcement?.primary),
                switchesAnnounced: announcement?.count ?? 0))
    }

    /// PING: throws unless Redis answers PONG.
    public func ping() throws(RedisError) {
        let command = RedisCommand.text(["PING"])
        let reply = try execute([command])[0]
        guard reply == .status("PONG") else { throw unexpected(reply, to: command) }
    }

    /// GET: the value stored at `key` (any bytes, including NUL), or nil when there is none.
    public func get(_ key: String) throws(RedisError) -> [UInt8]? {
        let command = RedisCommand(arguments: [Array("GET".utf8), Array(key.utf8)])
        switch try execute([command])[0] {
        case .bulk(let value): return value
        case .null: return nil
        case let reply: throw unexpected(reply, to: command)
        }
    }

    /// MGET: the value stored at each of `keys` (nil where there is none), in one round trip, as
    /// Redis saw them at one instant.
    public func get(_ keys: [String]) throws(RedisError) -> [[UInt8]?] {
        if keys.isEmpty { return [] }
        let command = RedisCommand(arguments: [Array("MGET".utf8)] + keys.map { Array($0.utf8) })
        let reply = try execute([command])[0]
        guard case .array(let values) = reply, values.count == keys.count else { throw unexpected(reply, to: command) }
        var found: [[UInt8]?] = []
        found.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .bulk(let bytes): found.append(bytes)
            case .null: found.append(nil)
            default: throw unexpected(reply, to: command)
            }
        }
        return found
    }

    /// SET: stores `value` (any bytes) at `key`, expiring after `ttlSeconds` (which must be positive)
    /// or never when nil. Replaces any earlier value and expiry.
    public func set(_ key: String, _ value: [UInt8], ttlSeconds: Int?) throws(RedisError) {
        let command = RedisCommand.set(key, value, ttlSeconds: ttlSeconds)
        try expectOK(try execute([command])[0], to: command)
    }

    /// DEL: removes `key`; removing a missing key is not an error.
    public func delete(_ key: String) throws(RedisError) {
        let command = RedisCommand.delete(key)
        let reply = try execute([command])[0]
        guard case .integer = reply else { throw unexpected(reply, to: command) }
    }

    /// SET for every item, pipelined: all commands in one write, then all replies. Every item is
    /// attempted; if Redis refused some, the first refusal is thrown after the rest were read.
    public func setMany(_ items: [(key: String, value: [UInt8])], ttlSeconds: Int?) throws(RedisError) {
        if items.isEmpty { return }
        let commands = items.map { RedisCommand.set($0.key, $0.value, ttlSeconds: ttlSeconds) }
        var firstFailure: RedisError?
        for (command, reply) in zip(commands, try execute(commands)) {
            do throws(RedisError) {
                try expectOK(reply, to: command)
            } catch {
                if firstFailure == nil { firstFailure = error }
            }
        }
        if let firstFailure { throw firstFailure }
    }

    /// PUBLISH: sends `message` (any bytes) to the clients subscribed to `channel` right now (see
    /// `RedisSubscriber`) and returns how many there were; nothing is kept for later subscribers.
    /// Like every call, a PUBLISH that meets a connection Redis had closed is repeated once on a
    /// new one, so in the rare case that the first one reached Redis it is delivered twice.
    public func publish(_ channel: String, _ message: [UInt8]) throws(RedisError) -> Int {
        let command = RedisCommand(arguments: [Array("PUBLISH".utf8), Array(channel.utf8), message])
        let reply = try execute([command])[0]
        guard case .integer(let receivers) = reply else { throw unexpected(reply, to: command) }
        return Int(receivers)
    }

    /// Any command, e.g. `["TTL", key]`, for tests and diagnostics; error replies are returned.
    func command(_ arguments: [String]) throws(RedisError) -> RedisReply {
        try execute([.text(arguments)])[0]
    }

    /// Sends `commands` pipelined and returns one reply each (error replies included). Connects
    /// first when there is no connection; replaces a broken reused connection once and repeats.
    /// Within `timeout` seconds of a failure, fails at once with that failure instead.
    func execute(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply] {
        guard turn.lock(before: Date(timeIntervalSinceNow: timeout)) else {
            throw RedisError(
                .timedOut, function: commands.first?.name ?? "",
                reason: "\(endpoint.address): not sent, the connection was busy with earlier calls for \(timeout) s")
        }
        defer { turn.unlock() }
        return try link.withLock { (link: inout Link) throws(RedisError) -> [RedisReply] in
            // The Sentinels announced another primary since this connection was made: connect to
            // it now, rather than write to the old one until it is reconfigured.
            let announcement = switches?.announcement
            if let announcement, announcement.count != link.switchesAnnounced {
                link.context = nil
                link.failure = nil
                link.switchesAnnounced = announcement.count
            }
            if let switches, switches.isFailingOver {
                throw RedisError(
                    .unavailable, function: commands.first?.name ?? "",
                    reason: "not sent: the Sentinels are failing \(endpoint.address) over", code: "FAILOVER")
            }
            if link.context == nil, let failure = link.failure {
                let elapsed = failure.at.duration(to: .now)
                if elapsed < .seconds(timeout) {
                    throw RedisError(
                        failure.error.kind, function: failure.error.function,
                        reason: "\(failure.error.reason) (not tried again within \(timeout) s of that failure)",
                        code: failure.error.code)
                }
            }
            do throws(RedisError) {
                let replies = try Self.execute(
                    commands, on: &link.context, endpoint: endpoint, timeout: timeout, role: role,
                    announced: announcement?.primary)
                link.failure = nil
                // A temporary refusal may mean the server changed role (READONLY, MASTERDOWN) or
                // is restarting: the next call connects again, and checks ROLE again.
                if replies.contains(where: \.isTemporaryError) { link.context = nil }
                return replies
            } catch {
                link.failure = (error, .now)
                throw error
            }
        }
    }

    /// `execute` on `context`, which is replaced when missing or broken and left nil on failure.
    private static func execute(
        _ commands: [RedisCommand], on context: inout HiredisContext?, endpoint: RedisEndpoint, timeout: Double,
        role: Role, announced: PrimaryAddress?
    ) throws(RedisError) -> [RedisReply] {
        let reused = context != nil
        let current: HiredisContext
        if let context {
            current = context
        } else {
            current = try connect(to: endpoint, timeout: timeout, role: role, announced: announced)
        }
        context = current
        do throws(RedisError) {
            return try current.pipeline(commands)
        } catch {
            context = nil
            // A reused connection Redis closed while idle (a restart, a client timeout) is worth
            // one more try; a fresh one that broke, or a timeout, is not.
            guard reused, error.kind == .disconnected else { throw error }
        }
        let replacement = try connect(to: endpoint, timeout: timeout, role: role, announced: announced)
        context = replacement
        do throws(RedisError) {
            return try replacement.pipeline(commands)
        } catch {
            context = nil
            throw error
        }
    }

    /// A new context, checked to be a primary when `role` asks for one: ROLE is the first command
    /// on it, so nothing is written to a server that is not the primary.
    private static func connect(
        to endpoint: RedisEndpoint, timeout: Double, role: Role, announced: PrimaryAddress?
    ) throws(RedisError) -> HiredisContext {
        let context = try HiredisContext.connect(to: endpoint, timeout: timeout, announced: announced)
        // A Sentinel endpoint's connect checked it already.
        if role == .primary && endpoint.sentinel == nil { try context.requirePrimary() }
        return context
    }

    /// Throws unless `reply` is +OK.
    private func expectOK(_ reply: RedisReply, to command: RedisCommand) throws(RedisError) {
        guard reply == .status("OK") else { throw unexpected(reply, to: command) }
    }

    /// The error for a reply a command does not return: Redis's own error, or a type mismatch.
    func unexpected(_ reply: RedisReply, to command: RedisCommand) -> RedisError {
        if case .error(let message) = reply { return .replied(message, to: command.name, by: endpoint) }
        return RedisError(
            .unexpectedReply, function: command.name, reason: "\(endpoint.address) replied with \(reply.summary)")
    }
}
