import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// The optional Redis session store (--store): sessions survive a process and move between
// instances with their whole state. Real redis-server, real servers on port 0.

extension ServiceIntegration.StoreIntegration {
    @Suite struct StoreTests {}
}

extension ServiceIntegration.StoreIntegration.StoreTests {
    /// The fields of a snapshot that must be equal wherever the session is read.
    private func state(_ r: Response) -> [String] {
        ["state", "detent", "constant", "dimmerAlpha", "progress"].map { "\(r.json?[$0] ?? "nil")" }
            + ["\(obj(r.json?["animation"])?["id"] ?? "nil")"]
    }

    /// A JSON value as text with sorted keys (two parses of one document compare equal).
    private func canonical(_ value: Any?) -> String {
        guard let value, let data = try? JSONSerialization.data(withJSONObject: ["v": value], options: [.sortedKeys])
        else { return "nil" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A server on `redis`'s store.
    private func startServer(on redis: RedisServer) throws -> SheetServer {
        try SheetServiceTests.startServer { $0.store = redis.url() }
    }

    /// A store and two instances on it, both stopped when `body` returns.
    private func withTwoInstances(_ body: (RedisServer, SheetServer, SheetServer) throws -> Void) throws {
        let redis = try RedisServer()
        let a = try startServer(on: redis)
        let b = try startServer(on: redis)
        defer {
            a.stop()
            b.stop()
        }
        try body(redis, a, b)
    }

    /// A session created and released on A carries on, drained or not, on B: same snapshot, the
    /// same next answer as A would have given, and a stream resumed by Last-Event-ID.
    @Test func sessionMovesToAnotherInstanceWithItsState() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            try withTwoInstances { _, a, b in
                let ca = try HTTPConnection(port: a.port)
                let cb = try HTTPConnection(port: b.port)
                // client clock: replayable, so B's answers can be compared with A's exactly.
                #expect(
                    try ca.put("moving", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status
                        == 201)
                #expect(try ca.pan("moving", #"{"phase": "began", "time": 1}"#).status == 200)
                #expect(try ca.pan("moving", #"{"phase": "changed", "translation": -120, "time": 1.05}"#).status == 200)
                let released = try ca.pan("moving", #"{"phase": "ended", "velocity": -900, "time": 1.1}"#)
                #expect(released.status == 200)
                // The release is written behind: A's writer is flushed, so the store has it (else B
                // could load an earlier version, and A, dropping its copy on B's notice, reload that
                // one too: what each then answers would depend on how soon the write left). B, which
                // never saw the session, loads it.
                #expect(a.responder.store?.flush(timeout: 30) == true)
                #expect(try eventually(within: 30) { try cb.get("/sessions/moving").status == 200 })
                #expect(
                    try eventually(within: 30) {
                        state(try cb.get("/sessions/moving")) == state(try ca.get("/sessions/moving"))
                    })
                // The next event gives the same answer on both (A's copy and B's restored one).
                let grabA = try ca.pan("moving", #"{"phase": "began", "time": 1.2}"#)
                let grabB = try cb.pan("moving", #"{"phase": "began", "time": 1.2}"#)
                #expect(grabA.text == grabB.text)
            }
        }
    }

    /// A session whose layout changed (the keyboard, the content's height, `extend`'s way back)
    /// carries on on B with that layout: the same detents, laws and revision, and the same next
    /// answers as A's.
    @Test func relaidSessionMovesWithItsLayout() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            try withTwoInstances { _, a, b in
                let ca = try HTTPConnection(port: a.port)
                let cb = try HTTPConnection(port: b.port)
                let config =
                    #"{"preset": "fluid", "contentHeight": 300, "options": {"detents": {"full": {"fromTop": 18}, "fit": {"content": 40}, "tip": {"height": 69}}, "keyboard": "extend"}, "initialDetent": "tip", "clock": "client"}"#
                #expect(try ca.put("relaid", config).status == 201)
                #expect(try ca.pan("relaid", #"{"phase": "layout", "contentHeight": 120, "time": 1}"#).status == 200)
                let up = try ca.pan("relaid", #"{"phase": "layout", "keyboardInset": 291, "time": 2}"#)
                #expect(up.json?["revision"] as? Double == 2, "\(up.text)")
                #expect(a.responder.store?.flush(timeout: 30) == true)
                #expect(try eventually(within: 30) { try cb.get("/sessions/relaid").status == 200 })
                let onA = try ca.get("/sessions/relaid")
                let onB = try cb.get("/sessions/relaid")
                for key in [
                    "detents", "unreachable", "revision", "dragLaw", "releaseLaw", "layoutLaw", "keyboardInset",
                ] {
                    #expect(canonical(onA.json?[key]) == canonical(onB.json?[key]), "\(key): \(onB.text)")
                }
                #expect(state(onA) == state(onB))
                // The keyboard goes: both send the card back to tip, where extend took it from.
                let downA = try ca.pan("relaid", #"{"phase": "layout", "keyboardInset": 0, "time": 3}"#)
                let downB = try cb.pan("relaid", #"{"phase": "layout", "keyboardInset": 0, "time": 3}"#)
                #expect(obj(downB.json?["snap"])?["detent"] as? String == "tip", "\(downB.text)")
                // Decided on what B answered from: its restored copy (revision 2 → 3, A's answer
                // exactly), or, when A's notice of its own change reached B first, A's copy
                // (revision 3 → 4: the same event once more, the card already on its way to tip).
                let revisionA = downA.json?["revision"] as? Double
                if downB.json?["revision"] as? Double == revisionA {
                    #expect(downA.text == downB.text)
                } else {
                    #expect(downB.json?["revision"] as? Double == revisionA.map { $0 + 1 }, "\(downB.text)")
                    // (A new animation to the same place from the same instant: only its id differs.)
                    #expect(state(downB).dropLast() == state(downA).dropLast(), "\(downB.text)")
                }
            }
        }
    }

    /// Drain writes sessions mid-drag too; a new process started on the same store carries on
    /// with the drag where it was, and resumes a stream's animation by Last-Event-ID.
    @Test func drainWritesEverySessionAndARestartCarriesOn() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let first = try startServer(on: redis)
            let c = try HTTPConnection(port: first.port)
            #expect(try c.put("drag", #"{"preset": "facebook", "initialDetent": "normal"}"#).status == 201)
            #expect(try c.pan("drag", #"{"phase": "began"}"#).status == 200)
            #expect(try c.pan("drag", #"{"phase": "changed", "translation": -50}"#).status == 200)
            #expect(try c.put("anim", #"{"preset": "twitter", "initialDetent": "open"}"#).status == 201)
            let dismissed = try c.dismiss("anim")
            let animationID = int(obj(dismissed.json?["animation"])?["id"]) ?? 0
            let before = try c.get("/sessions/drag")
            c.close()
            first.drain()

            let second = try startServer(on: redis)
            defer { second.stop() }
            let d = try HTTPConnection(port: second.port)
            let after = try d.get("/sessions/drag")
            #expect(after.json?["state"] as? String == "dragging")
            #expect(num(after.json?["constant"]) == num(before.json?["constant"]))
            // The drag goes on from there: 30 more points up.
            let moved = try d.pan("drag", #"{"phase": "changed", "translation": -80}"#)
            #expect(num(moved.json?["constant"]) == (num(before.json?["constant"]) ?? 0) - 30)
            // A stream that saw frame 0 of the dismiss resumes after it (or gets its settled).
            let stream = try SSEClient(
                port: second.port, path: "/sessions/anim/frames?pace=instant",
                headers: [("Last-Event-ID", "\(animationID):0")])
            let events = try stream.collect(timeout: 5) { $0.type == "settled" }
            #expect(events.last?.type == "settled")
            #expect(events.allSatisfy { $0.id == nil || $0.id!.hasPrefix("\(animationID):") })
            #expect(!events.contains { $0.id == "\(animationID):0" })
        }
    }

    /// A copy held elsewhere never answers for a session that went on in another instance: it is
    /// dropped when that instance announces it took the session over, and a gesture starts from
    /// the store's newer state.
    @Test func staleRestoredCopyIsReplacedAtTheNextGesture() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            try withTwoInstances { redis, a, b in
                let seed = try startServer(on: redis)
                let s = try HTTPConnection(port: seed.port)
                #expect(try s.put("k", #"{"preset": "facebook", "initialDetent": "normal"}"#).status == 201)
                seed.drain()
                let ca = try HTTPConnection(port: a.port)
                let cb = try HTTPConnection(port: b.port)
                #expect(try ca.get("/sessions/k").json?["detent"] as? String == "normal")  // A restores it
                #expect(try cb.show("k", #"{"detent": "expanded"}"#).status == 200)  // B restores it, moves it on
                // B announced that it took k over: A dropped its copy (a stream A had of it would have
                // got `closed` "moved"). B's show is written behind: B's writer is flushed, so the
                // store has it; and its 0.25 s animation is over (a busy machine only waits longer).
                #expect(eventually(within: 30) { a.responder.table.get("k") == nil })
                #expect(b.responder.store?.flush(timeout: 30) == true)
                Thread.sleep(forTimeInterval: 0.4)
                #expect(try ca.get("/sessions/k").json?["detent"] as? String == "expanded")
                // A's next gesture starts from there: the card at expanded (30 pt).
                let grab = try ca.pan("k", #"{"phase": "began"}"#)
                #expect(grab.status == 200, "\(grab)")
                #expect(num(grab.json?["constant"]) == 30)
            }
        }
    }

    /// A session deleted on one instance is gone on another that still holds a copy, and a drain
    /// there does not write it back.
    @Test func deletionReachesCopiesElsewhere() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try startServer(on: redis)
            let b = try startServer(on: redis)
            defer { b.stop() }
            let ca = try HTTPConnection(port: a.port)
            let cb = try HTTPConnection(port: b.port)
            #expect(try ca.put("gone", #"{"initialDetent": "normal"}"#).status == 201)
            #expect(try eventually(within: 30) { try cb.get("/sessions/gone").status == 200 })  // B holds a copy
            // B hears notices once its subscription is made (a thread of its own; under load it
            // came after the deletion, and B never heard of it).
            #expect(eventually(within: 30) { (b.responder.store as? RedisSessionStore)?.isListening == true })
            #expect(try ca.request("DELETE", "/sessions/gone").status == 204)
            // A's notice reaches B, which drops its copy.
            #expect(eventually(within: 30) { b.responder.table.get("gone") == nil })
            #expect(try cb.get("/sessions/gone").status == 404)
            #expect(try cb.pan("gone", #"{"phase": "began"}"#).status == 404)
            a.drain()
            #expect(try cb.get("/sessions/gone").status == 404)
        }
    }

    /// A store that cannot be reached answers 503 with Retry-After for sessions it would have to
    /// load; sessions in memory keep working.
    @Test func unreachableStoreIs503ForLoadsOnly() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try startServer(on: redis)
            defer { a.stop() }
            let c = try HTTPConnection(port: a.port)
            #expect(try c.put("here", #"{"initialDetent": "normal"}"#).status == 201)
            redis.stop()
            #expect(try c.pan("here", #"{"phase": "began"}"#).status == 200)
            let missing = try c.get("/sessions/elsewhere")
            #expect(missing.status == 503, "\(missing)")
            #expect(missing.headers.contains("Retry-After"))
        }
    }

    /// A store URL that is not redis:// or cannot be reached stops the server from starting.
    @Test(arguments: ["redis://127.0.0.1:1", "redis://[::1", "http://127.0.0.1:6379"])
    func badStoreRefusesToStart(url: String) {
        #expect(throws: (any Error).self) { _ = try SheetServiceTests.startServer { $0.store = url } }
    }
}

extension ServiceIntegration.StoreIntegration.StoreTests {
    /// A stream on the instance that loses a session gets `closed` "moved" with a short retry, so
    /// it reconnects to where the session is now.
    @Test func streamOfATakenOverSessionIsClosedAsMoved() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            try withTwoInstances { _, a, b in
                let ca = try HTTPConnection(port: a.port)
                #expect(try ca.put("watched", #"{"initialDetent": "normal"}"#).status == 201)
                let stream = try SSEClient(port: a.port, path: "/sessions/watched/frames")
                #expect(stream.status == 200)
                #expect(a.responder.store?.flush(timeout: 30) == true)  // the creation is in the store
                #expect(try HTTPConnection(port: b.port).show("watched", #"{"detent": "expanded"}"#).status == 200)
                let events = try stream.collect(timeout: 30) { $0.type == "closed" }
                let closed = try #require(events.last)
                #expect(closed.type == "closed")
                #expect(closed.json?["reason"] as? String == "moved")
                #expect(closed.retry == 250, "the retry travels in the `closed` block: \(closed)")
            }
        }
    }
}
