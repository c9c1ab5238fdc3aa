import Foundation
import PhysicsCheckValues
import SheetdTesting
import Testing

@testable import SheetService

// Reduced motion per request (issue 28): a request's own `reducedMotion` on the motion it starts,
// over HTTP: what the answer says it applied, that the session's setting stays, and the refusals.
// In process.

extension ServiceIntegration {
    @Suite struct RequestMotionTests {}
}

extension MotionCheck {
    /// The route and JSON body the row's request goes as (`time` 5; a release or cancel as a
    /// batch: `began` at 5, the event at 5.1, with the request's own `reducedMotion`).
    var http: (route: String, body: String) {
        let asked = self.asked.map { #", "reducedMotion": \#($0)"# } ?? ""
        switch request {
        case .show(let detent): return ("show", #"{"detent": "\#(detent)"\#(asked), "time": 5}"#)
        case .dismiss: return ("dismiss", #"{"time": 5\#(asked)}"#)
        case .step(let expand):
            return ("step", #"{"direction": "\#(expand ? "expand" : "collapse")"\#(asked), "time": 5}"#)
        case .release(let velocity):
            return (
                "pan",
                #"{"events": [{"phase": "began", "time": 5}, {"phase": "ended", "velocity": \#(velocity)\#(asked), "time": 5.1}]}"#
            )
        case .cancel:
            return (
                "pan", #"{"events": [{"phase": "began", "time": 5}, {"phase": "cancelled"\#(asked), "time": 5.1}]}"#
            )
        }
    }
}

extension ServiceIntegration.RequestMotionTests {
    /// The check values of docs/PHYSICS.md (PhysicsCheckValues, the rows the engine's own test
    /// runs), over HTTP: what the answer says it applied, and the session's setting unchanged.
    @Test(arguments: CheckValues.motions)
    func answersWhatItApplied(_ row: MotionCheck) throws {
        let c = try InProcessService()
        _ = try c.put(
            "m", #"{"preset": "fluid", "reducedMotion": \#(row.session), "initialDetent": "tip", "clock": "client"}"#)
        let (route, body) = row.http
        let r = try c.request("POST", "/sessions/m/\(route)?frames=60", json: body)
        #expect(r.status == 200, "\(row.rule): \(r.text)")
        let snap = r.json?["snap"] as? [String: Any]
        #expect(snap?["reducedMotion"] as? Bool == row.applied, "\(row.rule): \(r.text)")
        let animation = r.json?["animation"] as? [String: Any]
        #expect(animation?["curve"] as? String == row.curve, "\(row.rule): \(r.text)")
        #expect(animation?["detent"] as? String == row.detent, "\(row.rule): \(r.text)")
        #expect(animation?["to"] as? Double == row.constant, "\(row.rule): \(r.text)")
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
