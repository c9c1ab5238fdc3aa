import Foundation
import SheetdTesting
import Testing

@testable import RedisClient

// Which server a connection to a Sentinel endpoint writes to when the Sentinels disagree: one that
// has not heard of a failover yet still names the old primary, which still answers ROLE as a
// primary until the Sentinels reconfigure it. Two real redis-servers (both primaries in their own
// eyes: the old and the new) and fake Sentinels that say what each row needs; the verdict is the
// server that holds the write.

extension RedisIntegration {
    @Suite final class RedisSentinelChoiceTests {
        /// What one Sentinel of a row says: the old or the new primary, in which configuration
        /// epoch; nil for a Sentinel that is down (nothing listens on its port).
        struct View {
            let new: Bool
            let epoch: Int
        }

        struct Row {
            let sentinels: [View?]
            /// Whether a Sentinel announced the switch (`+switch-master`, old → new) first.
            let announced: Bool
            /// Whether the write must land on the new primary (else on the old one).
            let onNew: Bool
        }

        static let rows = [
            // The first Sentinel asked has not heard of the failover: a majority is asked, and the
            // newest epoch wins (the first answer alone wrote to the old primary).
            Row(
                sentinels: [View(new: false, epoch: 0), View(new: true, epoch: 1), View(new: true, epoch: 1)],
                announced: false, onNew: true),
            // One Sentinel down: the two others are the majority.
            Row(
                sentinels: [nil, View(new: false, epoch: 0), View(new: true, epoch: 1)], announced: false, onNew: true),
            // A majority has not heard yet, and neither has this process: the old one (the limit of
            // asking; Redis's min-replicas-to-write refuses the old primary's writes then).
            Row(
                sentinels: [View(new: false, epoch: 0), View(new: false, epoch: 0), View(new: true, epoch: 1)],
                announced: false, onNew: false),
            // The same, but the switch was announced: its new primary, whatever the majority says.
            Row(
                sentinels: [View(new: false, epoch: 0), View(new: false, epoch: 0), View(new: true, epoch: 1)],
                announced: true, onNew: true),
        ]

        /// (Its Sentinel subscribers are threads that other tests count: held exclusively.)
        @Test(arguments: 0..<rows.count) func theNewestPrimaryIsWrittenTo(row n: Int) throws {
            try ProcessResource.redisSubscriberThreads.exclusively { try write(Self.rows[n], n) }
        }

        private func write(_ row: Row, _ n: Int) throws {
            let old = try RedisServer()
            let new = try RedisServer()
            let fakes = try row.sentinels.map { view in
                try view.map {
                    try FakeSentinel(primary: ("127.0.0.1", Int($0.new ? new.port : old.port)), epoch: $0.epoch)
                }
            }
            let addresses = try fakes.map { try $0?.address ?? "127.0.0.1:\(freeLoopbackPort())" }
            // A group of its own per row: the switches heard are counted per group and process.
            let group = "choice\(n)"
            let endpoint = try RedisEndpoint(url: "redis+sentinel://\(addresses.joined(separator: ","))/\(group)")
            let switches = PrimarySwitches.shared(for: try #require(endpoint.sentinel), timeout: 1)
            #expect(eventually { fakes.allSatisfy { ($0?.subscribers ?? 1) >= 1 } })
            if row.announced {
                let announcer = try #require(fakes.compactMap { $0 }.first)
                announcer.announce(
                    group: group, from: ("127.0.0.1", Int(old.port)), to: ("127.0.0.1", Int(new.port)))
                #expect(eventually { switches.announced >= 1 })
            }
            let connection = try RedisConnection(endpoint: endpoint)
            try connection.set("probe", [1], ttlSeconds: nil)
            let target = row.onNew ? new : old
            let other = row.onNew ? old : new
            #expect(try RedisConnection(endpoint: target.endpoint(), role: .any).get("probe") == [1], "row \(n)")
            #expect(try RedisConnection(endpoint: other.endpoint(), role: .any).get("probe") == nil, "row \(n)")
            withExtendedLifetime(switches) {}
        }
    }
}
