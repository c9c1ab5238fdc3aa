import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Reduced motion per request (issue 28): a request's own `reducedMotion` on the motion it starts,
// over HTTP: what the answer says it applied, that the session's setting stays, and the refusals.
// In process.

extension ServiceIntegration {
    @Suite struct RequestMotionTests {}
}

/// One request on a fluid session resting at tip, and the motion it must answer.
struct RequestMotionRow: Sendable, CustomTestStringConvertible {
    /// The session's own setting.
    let session: Bool
    let route: String
    /// The body, before `time`.
    let body: String
    /// `snap.reducedMotion` in the answer.
    let applied: Bool
    /// The answer's `animation.curve`, its target and duration (seconds).
    let curve: String
    let detent: String
    let duration: Double
    let rule: String

    var testDescription: String { rule }
}

extension ServiceIntegration.RequestMotionTests {
    static let rows: [RequestMotionRow] = [
        RequestMotionRow(
            session: false, route: "show", body: #""detent": "full", "reducedMotion": true"#, applied: true,
            curve: "linear", detent: "full", duration: 0,
            rule: "a show that asks for reduced motion jumps on a session with motion"),
        RequestMotionRow(
            session: false, route: "show", body: #""detent": "full""#, applied: false, curve: "spring", detent: "full",
            duration: 0.662,
            rule: "a request that says nothing takes the session's motion"),
        RequestMotionRow(
            session: true, route: "show", body: #""detent": "full", "reducedMotion": false"#, applied: false,
            curve: "spring", detent: "full", duration: 0.662,
            rule: "reducedMotion false animates one show on a session under reduced motion"),
        RequestMotionRow(
            session: true, route: "show", body: #""detent": "full""#, applied: true, curve: "linear", detent: "full",
            duration: 0,
            rule: "the session's reduced motion otherwise"),
        RequestMotionRow(
            session: false, route: "dismiss", body: #""reducedMotion": true"#, applied: true, curve: "linear",
            detent: "hidden", duration: 0,
            rule: "a dismiss jumps"),
        RequestMotionRow(
            session: false, route: "step", body: #""direction": "expand", "reducedMotion": true"#, applied: true,
            curve: "linear", detent: "half", duration: 0, rule: "a step jumps"),
        RequestMotionRow(
            session: true, route: "step", body: #""direction": "expand", "reducedMotion": false"#, applied: false,
            curve: "spring", detent: "half", duration: 0.608, rule: "a step animates on a reduced session"),
        RequestMotionRow(
            session: false, route: "pan",
            body:
                #""events": [{"phase": "began", "time": 5}, {"phase": "ended", "velocity": -3000, "reducedMotion": true"#,
            applied: true, curve: "linear", detent: "half", duration: 0,
            rule: "an ended in a batch jumps to where the release law sends it"),
        RequestMotionRow(
            session: true, route: "pan",
            body: #""events": [{"phase": "began", "time": 5}, {"phase": "cancelled", "reducedMotion": false"#,
            applied: false, curve: "spring", detent: "tip", duration: 0,
            rule: "a cancelled animates back on a reduced session"),
    ]

    @Test(arguments: rows)
    func answersWhatItApplied(_ row: RequestMotionRow) throws {
        let c = try InProcessService()
        _ = try c.put(
            "m", #"{"preset": "fluid", "reducedMotion": \#(row.session), "initialDetent": "tip", "clock": "client"}"#)
        // A batch's last event carries the time; other bodies end with it.
        let body = row.route == "pan" ? "{\(row.body), \"time\": 5.1}]}" : "{\(row.body), \"time\": 5}"
        let r = try c.request("POST", "/sessions/m/\(row.route)?frames=60", json: body)
        #expect(r.status == 200, "\(row.rule): \(r.text)")
        let snap = r.json?["snap"] as? [String: Any]
        #expect(snap?["reducedMotion"] as? Bool == row.applied, "\(row.rule): \(r.text)")
        let animation = r.json?["animation"] as? [String: Any]
        #expect(animation?["curve"] as? String == row.curve, "\(row.rule): \(r.text)")
        #expect(animation?["detent"] as? String == row.detent, "\(row.rule): \(r.text)")
        #expect(animation?["duration"] as? Double == row.duration, "\(row.rule): \(r.text)")
        if row.applied {
            // No intermediate frame: every frame at the target.
            let frames = r.json?["frames"] as? [[String: Any]] ?? []
            let to = animation?["to"] as? Double
            #expect(!frames.isEmpty && frames.allSatisfy { $0["constant"] as? Double == to }, "\(row.rule)")
        }
        // The session's own setting is unchanged, and so are its laws.
        let after = try c.request("GET", "/sessions/m")
        #expect((after.json?["reducedMotion"] as? Bool ?? false) == row.session, "\(row.rule): \(after.text)")
        let law = after.json?["releaseLaw"] as? [String: Any]
        #expect(law?["reducedMotion"] as? Bool == row.session, "\(row.rule): \(after.text)")
        #expect((law?["requestOverride"] as? [String: Any])?["reducedMotion"] as? Bool == !row.session)
    }

    /// Bad requests: 400 naming the field, and the session unchanged.
    static let refusals: [(route: String, body: String, field: String, rule: String)] = [
        ("pan", #"{"phase": "ended", "reducedMotion": "no", "time": 5}"#, "reducedMotion", "a boolean on a pan event"),
        ("show", #"{"reducedMotion": "yes", "time": 5}"#, "reducedMotion", "a boolean"),
        ("dismiss", #"{"reducedMotion": 1, "time": 5}"#, "reducedMotion", "a boolean on dismiss"),
        (
            "pan",
            #"{"events": [{"phase": "began", "time": 5}, {"phase": "ended", "reducedMotion": null, "time": 6}]}"#,
            "events[1].reducedMotion", "null is not a boolean; the batch names the event"
        ),
    ]

    @Test func refusedRequestsNameTheFieldAndChangeNothing() throws {
        let c = try InProcessService()
        _ = try c.put("m", #"{"preset": "fluid", "initialDetent": "tip", "clock": "client"}"#)
        let before = try c.request("GET", "/sessions/m").text
        for row in Self.refusals {
            let r = try c.request("POST", "/sessions/m/\(row.route)", json: row.body)
            #expect(r.status == 400, "\(row.rule): \(r.text)")
            #expect(r.json?["field"] as? String == row.field, "\(row.rule): \(r.text)")
            #expect(r.headers["content-type"]?.hasPrefix("application/problem+json") == true, "\(row.rule)")
        }
        #expect(try c.request("GET", "/sessions/m").text == before)
    }
}
