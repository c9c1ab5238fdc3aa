import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Idempotent events (`seq`): a retried request is answered with its first answer and applied once,
// here and, through the store, on another instance. In process, and on a real redis-server.

extension ServiceIntegration {
    @Suite struct SequenceTests {}
}

extension ServiceIntegration.SequenceTests {
    /// A drag released with `seq`: the retry of the release gets the same bytes, marked, and no
    /// second animation starts.
    @Test func retryIsAnsweredWithTheFirstAnswer() throws {
        let c = try InProcessService()
        #expect(try c.put("q", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        #expect(try c.pan("q", #"{"phase": "began", "time": 1, "seq": 1}"#).status == 200)
        #expect(try c.pan("q", #"{"phase": "changed", "translation": -50, "time": 1.05, "seq": 2}"#).status == 200)
        let first = try c.pan("q", #"{"phase": "ended", "velocity": -900, "time": 1.1, "seq": 3}"#)
        let again = try c.pan("q", #"{"phase": "ended", "velocity": -900, "time": 1.1, "seq": 3}"#)
        #expect(first.status == 200 && first.headers["Sheetd-Replay"] == nil, "\(first)")
        #expect(again.status == 200 && again.headers["Sheetd-Replay"] == "true", "\(again)")
        #expect(again.text == first.text)
        let now = try c.get("/sessions/q")
        #expect(obj(now.json?["animation"])?["id"].flatMap(num) == 1, "one animation: \(now.text)")
    }

    /// Each row: what the session answers a `seq` it has seen, or one it cannot take.
    @Test func sequenceRules() throws {
        let c = try InProcessService()
        #expect(try c.put("r", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        #expect(try c.pan("r", #"{"phase": "layout", "keyboardInset": 291, "time": 1, "seq": 5}"#).status == 200)
        // An older seq: a request answered already, never applied again.
        expectProblem(
            try c.pan("r", #"{"phase": "layout", "keyboardInset": 0, "time": 2, "seq": 4}"#), status: 409,
            code: "stale-sequence")
        // A refused request does not take its seq: the retry is refused the same way.
        for _ in 0..<2 {
            expectProblem(
                try c.pan("r", #"{"phase": "changed", "translation": 3, "time": 3, "seq": 6}"#), status: 409,
                code: "conflict")
        }
        // Not an integer from 1 to 2^53: a 400 naming it.
        for bad in ["0", "1.5", "\"7\"", "1e300"] {
            let r = try c.pan("r", #"{"phase": "began", "time": 4, "seq": \#(bad)}"#)
            let problem = expectProblem(r, status: 400, code: "invalid-value")
            #expect(problem["field"] as? String == "seq", "\(r.text)")
        }
        // A batch and show, dismiss and step are sequenced alike.
        let batch =
            #"{"events": [{"phase": "began", "time": 5}, {"phase": "ended", "velocity": 100, "time": 5.1}], "seq": 6}"#
        let b1 = try c.pan("r", batch)
        let b2 = try c.pan("r", batch)
        #expect(b1.status == 200 && b2.text == b1.text && b2.headers["Sheetd-Replay"] == "true", "\(b2)")
        for (route, body, seq) in [
            ("show", #"{"detent": "full", "time": 10"#, 7), ("step", #"{"direction": "collapse", "time": 20"#, 8),
            ("dismiss", #"{"time": 30"#, 9),
        ] {
            let once = try c.request("POST", "/sessions/r/\(route)", json: body + #", "seq": \#(seq)}"#)
            let twice = try c.request("POST", "/sessions/r/\(route)", json: body + #", "seq": \#(seq)}"#)
            #expect(
                once.status == 200 && twice.text == once.text && twice.headers["Sheetd-Replay"] == "true", "\(route)")
        }
        let metrics = try c.get("/metrics").text
        #expect(
            metrics.contains("sheetd_replays_total 4"),
            "\(metrics.split(separator: "\n").filter { $0.contains("replays") })")
    }
}

extension ServiceIntegration.StoreIntegration.StoreTests {
    /// The answer to a `seq` travels with the session: the retry that reaches another instance (the
    /// first one died after applying it) is answered from the store, not applied again.
    @Test func retryOnAnotherInstanceIsAnsweredFromTheStore() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try SheetServiceTests.startServer { $0.store = redis.url() }
            let b = try SheetServiceTests.startServer { $0.store = redis.url() }
            defer {
                a.stop()
                b.stop()
            }
            let ca = try HTTPConnection(port: a.port)
            let cb = try HTTPConnection(port: b.port)
            #expect(try ca.put("s", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
            #expect(try ca.pan("s", #"{"phase": "began", "time": 1, "seq": 1}"#).status == 200)
            let first = try ca.pan("s", #"{"phase": "ended", "velocity": 1200, "time": 1.1, "seq": 2}"#)
            #expect(a.responder.store?.flush(timeout: 30) == true)
            let retried = try cb.pan("s", #"{"phase": "ended", "velocity": 1200, "time": 1.1, "seq": 2}"#)
            #expect(retried.status == 200 && retried.headers["Sheetd-Replay"] == "true", "\(retried)")
            #expect(retried.text == first.text)
        }
    }
}
