import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Accessibility and motion (issue 28): the step action and what it announces, modality independent
// of the dimmer, and reduced motion carried by the laws. In process.

extension ServiceIntegration {
    @Suite struct AccessibilityTests {}
}

/// One step and what it must answer.
struct StepRow: Sendable, CustomTestStringConvertible {
    let direction: String
    let detent: String
    let announcement: String
    let value: String
    /// The page behind takes input there (`interactiveUpThrough: half`).
    let interactive: Bool
    let rule: String

    var testDescription: String { rule }
}

extension ServiceIntegration.AccessibilityTests {
    /// A fluid sheet resting at tip, stepped through every detent and past both ends; the page
    /// behind is interactive at half and below.
    static let steps: [StepRow] = [
        StepRow(
            direction: "expand", detent: "half", announcement: "Expanded to half, 2 of 3", value: "half, 2 of 3",
            interactive: true, rule: "up one detent; half is the limit of interaction, still interactive"),
        StepRow(
            direction: "expand", detent: "full", announcement: "Expanded to full, 1 of 3", value: "full, 1 of 3",
            interactive: false, rule: "up to the top-most; above the limit the sheet is modal"),
        StepRow(
            direction: "expand", detent: "full", announcement: "Already at full, 1 of 3", value: "full, 1 of 3",
            interactive: false, rule: "at the top-most a step up moves nothing, and says so"),
        StepRow(
            direction: "collapse", detent: "half", announcement: "Collapsed to half, 2 of 3", value: "half, 2 of 3",
            interactive: true, rule: "down one detent"),
        StepRow(
            direction: "collapse", detent: "tip", announcement: "Collapsed to tip, 3 of 3", value: "tip, 3 of 3",
            interactive: true, rule: "down to the lowest"),
        StepRow(
            direction: "collapse", detent: "hidden", announcement: "Dismissed", value: "hidden", interactive: true,
            rule: "from the lowest, where the card can hide, a step down dismisses"),
        StepRow(
            direction: "collapse", detent: "hidden", announcement: "Already hidden", value: "hidden", interactive: true,
            rule: "hidden: a step down moves nothing"),
        StepRow(
            direction: "expand", detent: "tip", announcement: "Shown at tip, 3 of 3", value: "tip, 3 of 3",
            interactive: true, rule: "hidden: a step up presents the card at its show default"),
    ]

    @Test func stepsThroughEveryDetentInOrder() throws {
        let c = try InProcessService()
        let put = try c.put(
            "a",
            #"{"preset": "fluid", "options": {"interactiveUpThrough": "half"}, "initialDetent": "tip", "clock": "client"}"#
        )
        #expect(put.json?["backgroundInteractive"] as? Bool == true, "\(put.text)")
        for (i, row) in Self.steps.enumerated() {
            // Each step once the previous has settled (a spring lasts well under 10 s).
            let r = try c.request(
                "POST", "/sessions/a/step?frames=10",
                json: #"{"direction": "\#(row.direction)", "time": \#(10 * (i + 1))}"#)
            #expect(r.status == 200, "\(row.rule): \(r.text)")
            #expect(r.json?["announcement"] as? String == row.announcement, "\(row.rule): \(r.text)")
            #expect(r.json?["value"] as? String == row.value, "\(row.rule): \(r.text)")
            #expect(r.json?["detent"] as? String == row.detent, "\(row.rule): \(r.text)")
            // Where the move ends (its last frame), or where the card stays.
            let end = (r.json?["frames"] as? [[String: Any]])?.last ?? r.json
            #expect(end?["backgroundInteractive"] as? Bool == row.interactive, "\(row.rule): \(r.text)")
        }
    }

    /// Every frame of an animation says whether the page behind takes input: across the limit it
    /// flips exactly where the constant passes the threshold the law publishes.
    @Test func framesSayWhenTheBackgroundBecomesInteractive() throws {
        let c = try InProcessService()
        let put = try c.put(
            "m",
            #"{"preset": "fluid", "options": {"interactiveUpThrough": "half"}, "initialDetent": "full", "clock": "client"}"#
        )
        let threshold = try #require(obj(obj(put.json?["modality"]))?["interactiveFrom"].flatMap(num), "\(put.text)")
        #expect(threshold == 398.5)
        let r = try c.request("POST", "/sessions/m/step?frames=60", json: #"{"direction": "collapse", "time": 1}"#)
        let frames = try #require(r.json?["frames"] as? [[String: Any]], "\(r.text)")
        var flips = 0
        var last: Bool?
        for f in frames {
            let interactive = try #require(f["backgroundInteractive"] as? Bool)
            #expect(interactive == ((num(f["constant"]) ?? .nan) >= threshold), "\(f)")
            if let last, last != interactive { flips += 1 }
            last = interactive
        }
        #expect(flips >= 1 && last == true, "\(frames.count) frames, \(flips) flips")
    }

    /// Reduced motion (per session, and changed live by a layout event as the platform's setting
    /// changes): the laws carry a jump, so every move has no intermediate frame.
    @Test func reducedMotionJumps() throws {
        let c = try InProcessService()
        let put = try c.put(
            "r", #"{"preset": "fluid", "reducedMotion": true, "initialDetent": "tip", "clock": "client"}"#)
        #expect(put.json?["reducedMotion"] as? Bool == true, "\(put.text)")
        let motions = obj(put.json?["releaseLaw"])?["motions"] as? [[String: Any]]
        #expect(obj(motions?.first?["curve"])?["duration"].flatMap(num) == 0, "\(put.text)")
        let stepped = try c.request("POST", "/sessions/r/step?frames=30", json: #"{"direction": "expand", "time": 1}"#)
        let frames = try #require(stepped.json?["frames"] as? [[String: Any]], "\(stepped.text)")
        #expect(frames.allSatisfy { num($0["constant"]) == 398.5 }, "no intermediate frame: \(frames)")
        // A layout event's own motion jumps too.
        let lifted = try c.pan(
            "r",
            #"{"phase": "layout", "keyboardInset": 291, "motion": {"curve": "easeOut", "duration": 0.25}, "time": 2}"#)
        #expect(obj(lifted.json?["animation"])?["duration"].flatMap(num) == 0, "\(lifted.text)")
        // The setting goes off: the spring is back, with the next revision's laws.
        let off = try c.pan("r", #"{"phase": "layout", "reducedMotion": false, "time": 3}"#)
        let curve = obj((obj(off.json?["releaseLaw"])?["motions"] as? [[String: Any]])?.first?["curve"])
        #expect(curve?["name"] as? String == "spring" && off.json?["reducedMotion"] == nil, "\(off.text)")
    }

    /// A step the session cannot take is a problem naming why, and nothing changes.
    @Test func refusedSteps() throws {
        let c = try InProcessService()
        #expect(try c.put("x", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        expectProblem(
            try c.request("POST", "/sessions/x/step", json: #"{"direction": "sideways", "time": 1}"#), status: 400,
            code: "invalid-value")
        #expect(try c.pan("x", #"{"phase": "began", "time": 2}"#).status == 200)
        expectProblem(
            try c.request("POST", "/sessions/x/step", json: #"{"direction": "expand", "time": 3}"#), status: 409,
            code: "conflict")
        let after = try c.get("/sessions/x")
        #expect(after.json?["state"] as? String == "dragging", "\(after.text)")
    }
}
