import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import RedisClient

// The client behind Sentinel, against real processes on loopback (SheetdTesting's RedisSentinels:
// a primary, a replica, three Sentinels): it finds the primary by asking the Sentinels, and after
// a forced failover its connections, its writer and its subscriber move to the new primary without
// being restarted. Verdicts rest on what each server holds, which server the process is connected
// to (its sockets), and what the Sentinels say; never on how long the failover took.

extension RedisIntegration {
    @Suite final class RedisSentinelTests {
        let group: RedisSentinels

        /// The group, once every Sentinel knows the replica and the two other Sentinels (a
        /// failover needs both).
        init() throws {
            group = try RedisSentinels()
            for port in group.sentinelPorts {
                let sentinel = try RedisConnection(
                    endpoint: RedisEndpoint(url: "redis://127.0.0.1:\(port)"), role: .any)
                func known(_ what: String) throws -> Int {
                    guard case .array(let items) = try sentinel.command(["SENTINEL", what, group.name]) else {
                        return 0
                    }
                    return items.count
                }
                #expect(try eventually(every: 0.05) { try known("REPLICAS") == 1 && known("SENTINELS") == 2 })
            }
        }

        /// The Sentinel at `index`, as a plain connection.
        private func sentinel(_ index: Int) throws -> RedisConnection {
            try RedisConnection(
                endpoint: RedisEndpoint(url: "redis://127.0.0.1:\(group.sentinelPorts[index])"), role: .any)
        }

        /// The port the Sentinels name as the primary now.
        private func primaryPort() throws -> Int? {
            guard
                case .array(let parts) = try sentinel(0).command(["SENTINEL", "get-master-addr-by-name", group.name]),
                parts.count == 2, case .bulk(let port) = parts[1]
            else { return nil }
            return Int(String(decoding: port, as: UTF8.self))
        }

        /// A failover: what starts it, what happens once the switch is announced, and whether
        /// writes the old primary took while it ran may be lost.
        private struct Failover {
            let name: String
            let start: (RedisSentinels) throws -> Void
            var afterSwitch: (RedisSentinels) throws -> Void = { _ in }
            let windowLossAllowed: Bool
        }

        /// The failovers the client follows, each on a group of its own.
        private static var failovers: [Failover] {
            [
                // Forced (`SENTINEL FAILOVER`): the old primary stays up and answers as a primary for
                // seconds, so nothing may be written to it once the failover begins.
                Failover(
                    name: "forced",
                    start: { group in
                        let sentinel = try RedisConnection(
                            endpoint: RedisEndpoint(url: "redis://127.0.0.1:\(group.sentinelPorts[0])"), role: .any)
                        #expect(try sentinel.command(["SENTINEL", "FAILOVER", group.name]) == .status("OK"))
                    }, windowLossAllowed: false),
                // The primary killed (SIGKILL): what it took and had not sent its replica yet is lost
                // (the replication lag, counted, not judged); what the writer holds is not.
                Failover(name: "kill -9", start: { group in group.primary.stop() }, windowLossAllowed: true),
                // The primary killed, and back at its address (empty, and a primary by its own
                // word) once the replica was promoted: nothing is written to it.
                Failover(
                    name: "kill -9, back", start: { group in group.primary.stop() },
                    afterSwitch: { group in try group.primary.start() }, windowLossAllowed: true),
                // The primary stopped (SIGSTOP): it accepts connections and never answers; resumed
                // after the switch, it answers as a primary until the Sentinels reconfigure it.
                Failover(
                    name: "SIGSTOP", start: { group in group.primary.pause() },
                    afterSwitch: { group in group.primary.resume() }, windowLossAllowed: true),
            ]
        }

        /// A failover while a writer writes 50 keys every 50 ms and a round key each round:
        /// afterwards every key holds its last value on the new primary, every round key written
        /// after the switch was announced is there (and, for a forced failover, every one written
        /// while it ran), nothing was refused or dropped, the subscriber gets what is published on
        /// the new primary, and the process holds no connection to the old one. When the
        /// connections are gone, so are the threads that listened to the Sentinels.
        @Test(arguments: 0..<failovers.count) func aFailoverIsFollowedWithoutRestarting(row: Int) throws {
            let failover = Self.failovers[row]
            try ProcessResource.redisSubscriberThreads.exclusively {
                try follow(failover)
                #expect(eventually { threads(named: "redis-sentinel") == 0 }, "\(threads(named: "redis-sentinel"))")
            }
        }

        private func follow(_ failover: Failover) throws {
            let name = failover.name
            let endpoint = try RedisEndpoint(url: group.url)
            let redis = try RedisConnection(endpoint: endpoint)
            let writer = RedisWriter(connection: try RedisConnection(endpoint: endpoint))
            defer { writer.close() }
            let received = Mutex<[[UInt8]]>([])
            let subscriber = RedisSubscriber(endpoint: endpoint, channels: ["notices"]) { _, message in
                received.withLock { $0.append(message) }
            }
            defer { subscriber.close() }
            let switches = PrimarySwitches.shared(for: try #require(endpoint.sentinel), timeout: 1)
            #expect(eventually { subscriber.isSubscribed && switches.isListening }, "\(name)")

            // Found by asking the Sentinels: the first primary.
            try redis.set("found", [1], ttlSeconds: nil)
            #expect(try RedisConnection(endpoint: group.primary.endpoint(), role: .any).get("found") == [1], "\(name)")

            var round = 0
            func writeRound() {
                for key in 0..<50 { writer.set("key:\(key)", [UInt8(round % 256)], ttlSeconds: nil) }
                writer.set("round:\(round)", [1], ttlSeconds: nil)
                round += 1
                Thread.sleep(forTimeInterval: 0.05)
            }
            for _ in 0..<10 { writeRound() }
            #expect(writer.flush(timeout: 60), "\(name)")

            // Timed for the report only (printed, never judged).
            let failedAt = Monotonic.now()
            try failover.start(group)
            let failoverRound = round
            // Writing on while the failover runs, until the Sentinels name the replica and the
            // client has heard it announced (bounded only for a failing test: 60 s of rounds).
            while round < failoverRound + 1200
                && (switches.announced == 0 || (try? primaryPort()) != Int(group.replica.port))
            {
                writeRound()
            }
            let announcedRound = round
            let announcedAfter = Monotonic.now() - failedAt
            try failover.afterSwitch(group)
            for _ in 0..<10 { writeRound() }
            #expect(writer.flush(timeout: 60), "\(name)")

            let next = try RedisConnection(endpoint: group.replica.endpoint())
            let values = try next.get((0..<50).map { "key:\($0)" })
            let lost = values.count { $0 != [UInt8((round - 1) % 256)] }
            #expect(lost == 0, "\(name): \(lost) of 50 keys without their last value on the new primary")
            let rounds = try next.get((0..<round).map { "round:\($0)" })
            let missingAfter = rounds[announcedRound...].count { $0 == nil }
            #expect(missingAfter == 0, "\(name): \(missingAfter) round keys written after the switch are missing")
            let missingWindow = rounds[..<announcedRound].count { $0 == nil }
            if !failover.windowLossAllowed {
                #expect(
                    missingWindow == 0, "\(name): \(missingWindow) round keys written during the failover are missing")
            }
            let s = writer.statistics
            #expect(s.refused == 0 && s.dropped == 0 && s.pending == 0, "\(name): \(s)")

            // The connection and the subscriber moved too.
            try redis.set("after", [2], ttlSeconds: nil)
            #expect(try next.get("after") == [2], "\(name)")
            #expect(
                try eventually {
                    _ = try next.publish("notices", [3])
                    return received.withLock { $0.contains([3]) }
                },
                "\(name)")
            #expect(subscriber.reconnections >= 1, "\(name)")
            // Nothing in this process is connected to the old primary any more.
            #expect(eventually { socketsConnected(toPort: group.primary.port) == 0 }, "\(name)")
            print(
                "sentinel \(name): switch heard after \(String(format: "%.2f", announcedAfter)) s; rounds \(failoverRound)..<\(announcedRound) while failing over, \(round - announcedRound) after; \(missingWindow) round keys lost (written before the switch); deferred \(s.deferredByCode); switches announced \(switches.announced)"
            )
        }
    }
}
