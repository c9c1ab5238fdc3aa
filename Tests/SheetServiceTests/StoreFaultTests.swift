import Foundation
import RedisClient
import SheetdTesting
import Synchronization
import Testing

@testable import SheetService

// What an acknowledgement means with a store, and what the store's own failures do: a creation,
// replacement or deletion is in Redis before its answer leaves (so it survives the instance),
// one the store does not confirm is 503, and a Redis that comes back empty gets back every session
// an instance holds. Real redis-server, real servers on port 0; verdicts on what Redis and the
// clients saw, never on how long anything took.

extension ServiceIntegration.StoreIntegration {
    @Suite struct StoreFaultTests {}
}

extension ServiceIntegration.StoreIntegration.StoreFaultTests {
    private static let key = RedisSessionStore.keyPrefix

    /// A server on `redis`'s store, with a short deadline so refusals come quickly.
    private func startServer(on redis: RedisServer, deadline: Double = 1) throws -> SheetServer {
        try SheetServiceTests.startServer {
            $0.store = redis.url()
            $0.storeDeadline = deadline
        }
    }

    /// The archive's document at `id`, read straight from Redis.
    private func stored(_ id: String, in redis: RedisServer) throws -> [String: Any]? {
        let connection = try RedisConnection(endpoint: try RedisEndpoint(url: redis.url()))
        guard let bytes = try connection.get(Self.key + id) else { return nil }
        return try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    /// Every acknowledged change is in Redis the moment its answer arrives: read right after the
    /// answer, with no wait (write-behind alone left the last ones out: a `kill -9` then lost them).
    @Test func anAcknowledgedChangeIsInTheStoreWhenItsAnswerArrives() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let server = try startServer(on: redis)
            defer { server.stop() }
            let c = try HTTPConnection(port: server.port)
            for round in 0..<40 {
                // POST /sessions: the new id's session is stored, at rest where it was configured.
                let created = try c.request("POST", "/sessions", json: #"{"initialDetent": "normal"}"#)
                #expect(created.status == 201)
                let id = try #require(created.json?["id"] as? String)
                let first = try #require(try stored(id, in: redis), "POST \(round)")
                #expect(first["deleted"] == nil)
                // PUT of a new id: stored.
                #expect(try c.put("put-\(round)", #"{"initialDetent": "expanded"}"#).status == 201)
                #expect(try stored("put-\(round)", in: redis)?["config"] != nil, "PUT \(round)")
                // PUT over it: the replacement is stored, with a newer version.
                let before = try #require(try stored("put-\(round)", in: redis)?["version"] as? Int)
                #expect(try c.put("put-\(round)", #"{"initialDetent": "hidden"}"#).status == 200)
                let replaced = try #require(try stored("put-\(round)", in: redis))
                #expect((replaced["version"] as? Int ?? 0) > before, "replace \(round)")
                // DELETE: a tombstone is stored.
                #expect(try c.request("DELETE", "/sessions/\(id)").status == 204)
                #expect(try stored(id, in: redis)?["deleted"] as? Bool == true, "DELETE \(round)")
            }
        }
    }

    /// Concurrent creations and replacements from many connections (their connections suspended
    /// while the store's writer writes them together): each is in Redis the moment its own
    /// answer arrives.
    @Test func concurrentPutsAreEachInTheStoreWhenAnswered() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let server = try startServer(on: redis)
            defer { server.stop() }
            let missing = Mutex<[String]>([])
            let url = redis.url()
            DispatchQueue.concurrentPerform(iterations: 8) { client in
                guard let c = try? HTTPConnection(port: server.port) else {
                    missing.withLock { $0.append("client \(client) did not connect") }
                    return
                }
                for round in 0..<25 {
                    let id = "c\(client)-\(round % 5)"
                    let detent = round.isMultiple(of: 2) ? "expanded" : "hidden"
                    let status = (try? c.put(id, #"{"initialDetent": "\#(detent)"}"#).status) ?? 0
                    let record = try? RedisConnection(endpoint: RedisEndpoint(url: url)).get(Self.key + id)
                    let document = record.flatMap {
                        try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]
                    }
                    let held = (document?["config"] as? [String: Any])?["initialDetent"] as? String
                    if ![200, 201].contains(status) || held != detent {
                        missing.withLock { $0.append("\(id) round \(round): \(status), stored \(held ?? "nothing")") }
                    }
                }
            }
            #expect(missing.withLock { $0 } == [])
        }
    }

    /// A store that does not answer: a creation is 503 `store-unavailable` and leaves nothing
    /// behind; a replacement is 503 too (its change queued, said so), and reaches Redis once it
    /// answers again; events on a session held here go on.
    @Test func anUnconfirmedChangeIs503() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let server = try startServer(on: redis, deadline: 0.3)
            defer { server.stop() }
            let c = try HTTPConnection(port: server.port)
            #expect(try c.put("held", #"{"initialDetent": "normal"}"#).status == 201)
            // SIGSTOP: connections are accepted, nothing answers (a hung or overloaded Redis).
            redis.pause()
            let cases: [(method: String, target: String, body: String?, undone: Bool)] = [
                // A new session nobody knows the id of: not created.
                ("POST", "/sessions", #"{"initialDetent": "normal"}"#, true),
                // A replacement: made here and queued, not acknowledged.
                ("PUT", "/sessions/held", #"{"initialDetent": "expanded"}"#, false),
            ]
            for row in cases {
                let r = try c.request(row.method, row.target, body: row.body.map { Array($0.utf8) })
                let problem = expectProblem(r, status: 503, code: "store-unavailable")
                #expect(r.headers.contains("Retry-After"))
                let detail = problem["detail"] as? String ?? ""
                #expect(detail.contains(row.undone ? "did not happen" : "queued"), "\(row.method): \(detail)")
            }
            // The creation left no session: only "held" lives.
            #expect(try metric("sheetd_sessions_live", c) == 1)
            // Events on the held session go on without the store.
            #expect(try c.pan("held", #"{"phase": "began"}"#).status == 200)
            redis.resume()
            // The queued replacement reaches Redis, and a repeated PUT is acknowledged.
            #expect(
                eventually {
                    (try? stored("held", in: redis)?["config"] as? [String: Any])?["initialDetent"] as? String
                        == "expanded"
                })
            // (The write that timed out may reach Redis first: a stopped Redis still reads what its
            // socket received.) Once the writer has nothing left, its connection works again.
            #expect(eventually(within: 20) { (try? metric("sheetd_store_pending", c)) == 0 })
            #expect(try c.put("held", #"{"initialDetent": "expanded"}"#).status == 200)
            // Counted: the two unconfirmed writes and the `began`'s look at the store's version.
            #expect(try metric("sheetd_store_errors_total", c) == 3)
        }
    }

    /// Redis restarted without persistence comes back empty: every session an instance holds is
    /// written back (and a restarted Redis is seen even when no write failed meanwhile).
    @Test func sessionsHeldComeBackWhenTheStoreRestartsEmpty() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let server = try startServer(on: redis)
            defer { server.stop() }
            let c = try HTTPConnection(port: server.port)
            let ids = (0..<30).map { "held-\($0)" }
            for id in ids { #expect(try c.put(id, #"{"initialDetent": "normal"}"#).status == 201) }
            #expect(try c.pan("held-0", #"{"phase": "began"}"#).status == 200)
            redis.stop()
            try redis.start()
            #expect(eventually(within: 20) { ids.allSatisfy { (try? stored($0, in: redis)) != nil } })
            // The one dragged is stored mid-drag, as held here.
            #expect((try stored("held-0", in: redis)?["sheet"] as? [String: Any])?["phase"] as? String == "dragging")
            #expect(try metric("sheetd_store_returns_total", c) >= 1)
            // The dragged one's queued `began` may reach the new Redis first (the writer retries
            // at once), and is then as new there as held here: the write-back leaves it be.
            // (Counted once the whole write-back is done, a moment after its keys are visible.)
            #expect(eventually { (try? metric("sheetd_sessions_rewritten_total", c)) ?? 0 >= Double(ids.count - 1) })
        }
    }

    /// Writing back never overwrites a newer version: another instance may have moved on with a
    /// session while this one held an older copy.
    @Test func writingBackKeepsNewerVersions() throws {
        let redis = try RedisServer()
        let store = try RedisSessionStore(
            url: redis.url(), ttlSeconds: 60, deadline: 1, backlogBytes: 1 << 20, logger: .init(label: "test"))
        defer { store.stopListening() }
        let connection = try RedisConnection(endpoint: try RedisEndpoint(url: redis.url()))
        try connection.set(Self.key + "s", Array(#"{"v":1,"version":100,"mark":"stored"}"#.utf8), ttlSeconds: nil)
        let cases: [(version: Int, written: Int, mark: String)] = [
            // Older than the stored one: left.
            (99, 0, "stored"),
            // As new: left (the same write, from another holder).
            (100, 0, "stored"),
            // Newer: written.
            (101, 1, "v101"),
        ]
        for row in cases {
            let bytes = Array(#"{"v":1,"version":\#(row.version),"mark":"v\#(row.version)"}"#.utf8)
            #expect(try store.rewrite([(id: "s", bytes: bytes, version: row.version)]) == row.written)
            #expect(try stored("s", in: redis)?["mark"] as? String == row.mark, "\(row.version)")
        }
        // A key the store lost is written, with the idle TTL.
        #expect(try store.rewrite([(id: "lost", bytes: Array(#"{"v":1,"version":5}"#.utf8), version: 5)]) == 1)
        #expect(try stored("lost", in: redis)?["version"] as? Int == 5)
    }

    /// What a crash can leave of a session's events: the store holds, at every moment, the state
    /// after a prefix of the events the session accepted (never a state no such prefix gives),
    /// and the prefix only grows. Redis is read in a tight loop while a client drags; each stored
    /// state is matched to the answer of the event with its time (client clock, times k/64 s,
    /// exact in JSON).
    @Test func theStoreAlwaysHoldsAPrefixOfTheAcceptedEvents() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let server = try startServer(on: redis)
            defer { server.stop() }
            let c = try HTTPConnection(port: server.port)
            #expect(try c.put("prefix", #"{"clock": "client", "initialDetent": "normal"}"#).status == 201)
            let observed = Mutex<[[UInt8]]>([])
            let done = Atomic(false)
            let poller = try RedisConnection(endpoint: try RedisEndpoint(url: redis.url()))
            let reading = Thread {
                while !done.load(ordering: .relaxed) {
                    if let bytes = try? poller.get(Self.key + "prefix") { observed.withLock { $0.append(bytes) } }
                }
            }
            reading.start()
            // Gestures of 1 began, 8 changed and 1 ended, 24 times: (time, state, constant) of
            // each accepted event, by the time's 64ths.
            var answers: [Int: (state: String, constant: Double)] = [:]
            var tick = 64
            for gesture in 0..<24 {
                var events = [#"{"phase": "began", "time": \#(Double(tick) / 64)}"#]
                for step in 1...8 {
                    events.append(
                        #"{"phase": "changed", "translation": \#(-12 * step), "time": \#(Double(tick + step) / 64)}"#)
                }
                events.append(
                    #"{"phase": "ended", "velocity": \#(gesture % 2 == 0 ? -900 : 900), "time": \#(Double(tick + 9) / 64)}"#
                )
                for (offset, body) in events.enumerated() {
                    let r = try c.pan("prefix", body)
                    #expect(r.status == 200, "\(body): \(r)")
                    answers[tick + offset] = (r.json?["state"] as? String ?? "?", num(r.json?["constant"]) ?? .nan)
                }
                tick += 16
            }
            let last = tick - 16 + 9
            #expect(
                eventually(within: 10) {
                    (try? stored("prefix", in: redis)?["sheet"] as? [String: Any])?["lastTime"] as? Double == Double(
                        last) / 64
                })
            done.store(true, ordering: .relaxed)
            while !reading.isFinished { Thread.sleep(forTimeInterval: 0.001) }
            // The poller may stop before it read the last write (on a loaded machine its thread may
            // not run between that write and `done`): the store's state now, which `eventually`
            // saw hold the last event, closes the observations.
            if let bytes = try poller.get(Self.key + "prefix") { observed.withLock { $0.append(bytes) } }
            var previous = 0
            let observations = observed.withLock { $0 }
            for bytes in observations {
                let document = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
                let sheet = try #require(document["sheet"] as? [String: Any])
                // Before any event: the state the PUT created.
                guard let time = sheet["lastTime"] as? Double else {
                    #expect(previous == 0, "the created state came back after events")
                    continue
                }
                let k = Int((time * 64).rounded())
                let answer = try #require(answers[k], "a stored time no accepted event had: \(time)")
                #expect(Double(k) / 64 == time)
                #expect(k >= previous, "the stored prefix went back from \(previous) to \(k)")
                #expect(sheet["phase"] as? String == answer.state, "state after event \(k)")
                if answer.state == "dragging" {
                    let drag = sheet["drag"] as? [String: Any]
                    #expect(num(drag?["constant"]) == answer.constant, "constant after event \(k)")
                }
                previous = k
            }
            #expect(previous == last)
        }
    }

    /// A metric's value from /metrics.
    private func metric(_ name: String, _ c: HTTPConnection) throws -> Double {
        let text = try c.get("/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ")[1]) ?? .nan
        }
        return .nan
    }
}
