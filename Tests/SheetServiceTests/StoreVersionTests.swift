import Foundation
import RedisClient
import SheetdTesting
import Synchronization
import Testing

@testable import SheetService

// Ordered writes: a session's version only increases (it counts writes and takes, never time), the
// store keeps the newest whatever order writes arrive in, a stale writer loses and is told (counted,
// its copy dropped), a restart carries the version on, and a version read back that cannot be
// compared is a counted 503 or is replaced, never a crash. Real redis-server, real servers on
// port 0; verdicts on what Redis holds, what the servers answered and counted.

extension ServiceIntegration.StoreIntegration {
    @Suite struct StoreVersionTests {}
}

extension ServiceIntegration.StoreIntegration.StoreVersionTests {
    private static let key = RedisSessionStore.keyPrefix

    private func startServer(on redis: RedisServer, tokens: Bool = false) throws -> SheetServer {
        try SheetServiceTests.startServer {
            $0.store = redis.url()
            $0.sessionTokens = tokens
        }
    }

    private func connection(_ redis: RedisServer) throws -> RedisConnection {
        try RedisConnection(endpoint: try RedisEndpoint(url: redis.url()))
    }

    /// The record at `id`, read straight from Redis.
    private func stored(_ id: String, in redis: RedisServer) throws -> [String: Any]? {
        guard let bytes = try connection(redis).get(Self.key + id) else { return nil }
        return try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    private func version(_ id: String, in redis: RedisServer) throws -> Int {
        try #require(try stored(id, in: redis)?["version"] as? Int)
    }

    /// The record at `id` as stored, its version replaced by `version`: another instance's write
    /// of the same state, made after it took the session.
    private func restamp(_ id: String, _ version: Int, in redis: RedisServer) throws {
        let bytes = try #require(try connection(redis).get(Self.key + id))
        let text = String(decoding: bytes, as: UTF8.self)
        let rest = try #require(text.firstRange(of: #","config""#))
        try connection(redis).set(
            Self.key + id, Array((#"{"v":1,"version":\#(version)"# + text[rest.lowerBound...]).utf8), ttlSeconds: 600)
    }

    private func metric(_ name: String, _ c: HTTPConnection) throws -> Double {
        let text = try c.get("/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ")[1]) ?? .nan
        }
        return .nan
    }

    /// Two writers (two stores, as two instances) write one session with versions that cross:
    /// the store keeps the newest, and the writer that loses is told (its watch hears `outdated`)
    /// and counts it; a record whose version cannot be read is replaced and told (`repaired`).
    @Test func theNewestVersionWinsWhateverOrderWritesArriveIn() throws {
        let redis = try RedisServer()
        func store() throws -> RedisSessionStore {
            try RedisSessionStore(
                url: redis.url(), ttlSeconds: 60, deadline: 5, backlogBytes: 1 << 20, logger: .init(label: "test"))
        }
        let first = try store()
        let second = try store()
        let heard = Mutex<[StoreChange]>([])
        second.watch { change in heard.withLock { $0.append(change) } }
        defer {
            first.stopListening()
            second.stopListening()
        }
        /// A record; `wall`: with the writer's clocks at the end, as ArchiveCodec writes them.
        func record(_ version: Int, _ mark: String, wall: Double? = nil) -> [UInt8] {
            let clocks = wall.map { #","wall":\#($0),"server":\#($0 - 1.7e9)"# } ?? ""
            return Array(#"{"v":1,"version":\#(version),"mark":"\#(mark)"\#(clocks)}"#.utf8)
        }
        /// What is stored first: a record written through the first store, or bytes set as they are.
        enum Stored {
            case record(Int, String, wall: Double? = nil)
            case raw(String)
        }
        struct Row {
            let first: Stored
            let second: (version: Int, mark: String, wall: Double?)
            let kept: String
            let heard: StoreChange?
        }
        let rows = [
            // Newer: written.
            Row(first: .record(10, "first"), second: (11, "second", nil), kept: "second", heard: nil),
            // Older (it left its instance first and arrived last): refused, told.
            Row(
                first: .record(11, "first"), second: (10, "second", nil), kept: "first",
                heard: .outdated(id: "s1", version: 10, storedVersion: 11)),
            // As new, another state (two copies that took the same version): the first kept.
            Row(
                first: .record(10, "first"), second: (10, "second", nil), kept: "first",
                heard: .outdated(id: "s2", version: 10, storedVersion: 10)),
            // As new, the same bytes: this write again (its answer was lost), written.
            Row(first: .record(10, "second"), second: (10, "second", nil), kept: "second", heard: nil),
            // As new, the same state encoded at another moment (only the trailing clocks differ:
            // this copy's write-back after an outage beside its writer's write): written.
            Row(
                first: .record(10, "second", wall: 1_795_000_000.25), second: (10, "second", 1_795_000_003.5),
                kept: "second", heard: nil),
            // As new, another state with other clocks: still another copy's, the first kept.
            Row(
                first: .record(10, "first", wall: 1_795_000_000.25), second: (10, "second", 1_795_000_003.5),
                kept: "first", heard: .outdated(id: "s5", version: 10, storedVersion: 10)),
            // A stored version that cannot be compared: the record is replaced, and that is told.
            Row(
                first: .raw(#"{"v":1,"version":-3,"mark":"first"}"#), second: (4, "second", nil), kept: "second",
                heard: .repaired(id: "s6", version: 4)),
            Row(
                first: .raw(#"{"v":1,"version":1e300,"mark":"first"}"#), second: (4, "second", nil), kept: "second",
                heard: .repaired(id: "s7", version: 4)),
            Row(
                first: .raw(#"{"v":1,"version":99999999999999999999,"mark":"first"}"#), second: (4, "second", nil),
                kept: "second", heard: .repaired(id: "s8", version: 4)),
            Row(
                first: .raw("not a record"), second: (4, "second", nil), kept: "second",
                heard: .repaired(id: "s9", version: 4)),
        ]
        for (n, row) in rows.enumerated() {
            let id = "s\(n)"
            switch row.first {
            case let .record(version, mark, wall):
                let ticket = first.saveTracked(id, record(version, mark, wall: wall), version: version)
                #expect(first.confirm(ticket, timeout: 30) == .written)
            case .raw(let text):
                try connection(redis).set(Self.key + id, Array(text.utf8), ttlSeconds: 60)
            }
            second.save(
                id, record(row.second.version, row.second.mark, wall: row.second.wall), version: row.second.version)
            #expect(second.flush(timeout: 30))
            #expect(try stored(id, in: redis)?["mark"] as? String == row.kept, "row \(n)")
            let told = heard.withLock { all in
                all.filter {
                    switch $0 {
                    case .outdated(id, _, _), .repaired(id, _): true
                    default: false
                    }
                }
            }
            #expect(told == (row.heard.map { [$0] } ?? []), "row \(n): \(told)")
        }
        #expect(second.statistics.stale == 3)
        #expect(second.statistics.reset == 4)
    }

    /// Two instances hold one session while it moves: A's copy, and B's taken from the store
    /// after it. B's take outranks every write of A's copy, however many events A accepts
    /// meanwhile; A's next write loses, is counted (`sheetd_store_stale_total`), and A drops its
    /// copy: its next request loads B's. (A never hears B's notice here: B's write is made to the
    /// store directly, as a notice lost in flight would leave it.)
    @Test func aStaleCopyLosesItsWriteAndIsDropped() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try startServer(on: redis)
            defer { a.stop() }
            let c = try HTTPConnection(port: a.port)
            #expect(try c.put("moving", #"{"clock": "client", "initialDetent": "normal"}"#).status == 201)
            let created = try version("moving", in: redis)
            let began = try c.pan("moving", #"{"phase": "began", "time": 1}"#)
            #expect(began.status == 200)
            #expect(a.responder.store?.flush(timeout: 30) == true)
            // B took the session at A's `began` and wrote it (its take's first write, above every
            // write of A's copy): the drag's start, as B holds it.
            let taken = StoreVersion.take(after: try version("moving", in: redis)) + 1
            try restamp("moving", taken, in: redis)
            // A's copy goes on: its `changed` is answered (written behind), and its write is stale.
            let changed = try c.pan("moving", #"{"phase": "changed", "translation": -40, "time": 1.1}"#)
            #expect(changed.status == 200)
            #expect(a.responder.store?.flush(timeout: 30) == true)
            #expect(try version("moving", in: redis) == taken)
            #expect(try metric("sheetd_store_stale_total", c) == 1)
            // A dropped its copy: the next read loads B's, where the card is at the drag's start.
            #expect(eventually { a.responder.table.get("moving") == nil })
            let read = try c.get("/sessions/moving")
            #expect(read.status == 200)
            #expect(num(read.json?["constant"]) == num(began.json?["constant"]), "\(read.text)")
            #expect(num(read.json?["constant"]) != num(changed.json?["constant"]), "\(read.text)")
            #expect(created < taken)
        }
    }

    /// A replacement or a deletion asked of an instance whose copy is out of date (the store holds
    /// a newer version another instance wrote) wins over it: written again above that version
    /// before it is answered. Also a PUT that creates (no copy here) over a stored session, and,
    /// with session tokens, a creation over a newer tombstone.
    @Test(arguments: ["replace", "delete", "put-over-stored", "create-over-tombstone"])
    func aReplacementOrDeletionWinsOverANewerVersion(_ kind: String) throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try startServer(on: redis, tokens: kind == "create-over-tombstone")
            defer { a.stop() }
            let c = try HTTPConnection(port: a.port)
            let newer = 1 << 40
            switch kind {
            case "replace", "delete":
                #expect(try c.put("s", #"{"initialDetent": "normal"}"#).status == 201)
                try restamp("s", newer, in: redis)
                if kind == "replace" {
                    #expect(try c.put("s", #"{"initialDetent": "expanded"}"#).status == 200)
                    #expect(try stored("s", in: redis)?["deleted"] == nil)
                } else {
                    #expect(try c.request("DELETE", "/sessions/s").status == 204)
                    #expect(try stored("s", in: redis)?["deleted"] as? Bool == true)
                }
            case "put-over-stored":
                // Stored by another instance, never held here.
                let other = try startServer(on: redis)
                #expect(try HTTPConnection(port: other.port).put("s", #"{"initialDetent": "normal"}"#).status == 201)
                other.stop()
                try restamp("s", newer, in: redis)
                #expect(try c.put("s", #"{"initialDetent": "expanded"}"#).status == 201)
            default:
                try connection(redis).set(
                    Self.key + "s", Array(#"{"v":1,"version":\#(newer),"deleted":true}"#.utf8), ttlSeconds: 600)
                #expect(try c.put("s", #"{"initialDetent": "normal"}"#).status == 201)
                #expect(try stored("s", in: redis)?["deleted"] == nil)
            }
            #expect(try version("s", in: redis) > newer, "\(kind)")
        }
    }

    /// The version survives its instance: written, drained, and loaded by the next instance (a
    /// restart), whose writes go on above it; and a store that came back empty is refilled with
    /// the version held, which the next write continues.
    @Test func aRestartCarriesTheVersionOn() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let first = try startServer(on: redis)
            let c1 = try HTTPConnection(port: first.port)
            #expect(try c1.put("kept", #"{"clock": "client", "initialDetent": "normal"}"#).status == 201)
            for step in 1...3 {
                #expect(try c1.pan("kept", #"{"phase": "began", "time": \#(step)}"#).status == 200)
                #expect(try c1.pan("kept", #"{"phase": "ended", "velocity": 0, "time": \#(step).5}"#).status == 200)
            }
            first.stop()
            let before = try version("kept", in: redis)
            let second = try startServer(on: redis)
            defer { second.stop() }
            let c2 = try HTTPConnection(port: second.port)
            #expect(try c2.pan("kept", #"{"phase": "began", "time": 4}"#).status == 200)
            #expect(second.responder.store?.flush(timeout: 30) == true)
            let after = try version("kept", in: redis)
            #expect(after == StoreVersion.take(after: before) + 1, "\(before) → \(after)")
            // Redis restarted empty: the instance writes back what it holds, at its version.
            redis.stop()
            try redis.start()
            #expect(eventually(within: 30) { (try? stored("kept", in: redis))??["version"] as? Int == after })
            #expect(try c2.pan("kept", #"{"phase": "ended", "velocity": 0, "time": 4.5}"#).status == 200)
            #expect(second.responder.store?.flush(timeout: 30) == true)
            #expect(try version("kept", in: redis) == after + 1)
        }
    }

    /// A stored record whose version cannot be compared (out of range, not an integer, missing)
    /// is not a session: a load of it is 503 `store-unavailable`, counted, and the server goes on.
    @Test(arguments: [
        #""version":-1"#, #""version":1e300"#, #""version":"7""#, #""version":18014398509481984"#, #""versio":7"#,
    ])
    func aVersionThatCannotBeReadIs503(_ field: String) throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try startServer(on: redis)
            defer { a.stop() }
            let c = try HTTPConnection(port: a.port)
            #expect(try c.put("good", #"{"initialDetent": "normal"}"#).status == 201)
            let good = try #require(try connection(redis).get(Self.key + "good"))
            let text = String(decoding: good, as: UTF8.self)
            let rest = try #require(text.firstRange(of: #","config""#))
            try connection(redis).set(
                Self.key + "bad", Array(("{\"v\":1,\(field)" + text[rest.lowerBound...]).utf8), ttlSeconds: 600)
            let errors = try metric("sheetd_store_errors_total", c)
            let r = try c.get("/sessions/bad")
            #expect(r.status == 503, "\(field): \(r.text)")
            #expect(r.json?["code"] as? String == "store-unavailable")
            #expect(try metric("sheetd_store_errors_total", c) == errors + 1)
            #expect(try c.get("/sessions/good").status == 200)
        }
    }
}
