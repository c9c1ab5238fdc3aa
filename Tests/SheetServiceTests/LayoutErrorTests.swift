import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Bad layout and fling events: each a 400 or 409 problem naming its field, and the session exactly
// as it was (its card, its detents, its laws' revision). In process.

extension ServiceIntegration {
    @Suite struct LayoutErrorTests {}
}

/// One refused event.
struct RefusedEvent: Sendable, CustomTestStringConvertible {
    let name: String
    /// The session it is sent to: `f` (fluid, resting at half) or `b` (facebook).
    let session: String
    let body: String
    let status: Int
    let code: String
    var field: String?

    var testDescription: String { name }
}

extension ServiceIntegration.LayoutErrorTests {
    static let rows: [RefusedEvent] = [
        // A keyboard cannot cover a negative height.
        RefusedEvent(
            name: "negative inset", session: "f", body: #"{"phase": "layout", "keyboardInset": -1, "time": 2}"#,
            status: 400, code: "invalid-value", field: "keyboardInset"),
        // An inset is a number of points.
        RefusedEvent(
            name: "inset not a number", session: "f", body: #"{"phase": "layout", "keyboardInset": null, "time": 2}"#,
            status: 400, code: "invalid-value", field: "keyboardInset"),
        // Numbers are numbers.
        RefusedEvent(
            name: "content height not a number", session: "f",
            body: #"{"phase": "layout", "contentHeight": "tall", "time": 2}"#, status: 400, code: "invalid-value",
            field: "contentHeight"),
        // A typo never passes silently.
        RefusedEvent(
            name: "unknown field", session: "f", body: #"{"phase": "layout", "keyboardInsets": 10, "time": 2}"#,
            status: 400, code: "unknown-field", field: "keyboardInsets"),
        // A layout event changes something.
        RefusedEvent(
            name: "nothing to change", session: "f", body: #"{"phase": "layout", "motion": "none", "time": 2}"#,
            status: 400, code: "invalid-value"),
        // The motion is one of the documented ones, a timing curve with its duration.
        RefusedEvent(
            name: "curve without duration", session: "f",
            body: #"{"phase": "layout", "keyboardInset": 10, "motion": {"curve": "easeOut"}, "time": 2}"#,
            status: 400, code: "invalid-value", field: "motion"),
        // Options are checked as at creation, named with their path.
        RefusedEvent(
            name: "bad option", session: "f",
            body: #"{"phase": "layout", "options": {"keyboard": "float"}, "time": 2}"#, status: 400,
            code: "invalid-value", field: "options.keyboard"),
        // A rotation to a geometry that is not one.
        RefusedEvent(
            name: "bad geometry", session: "f",
            body: #"{"phase": "layout", "geometry": {"height": -5}, "time": 2}"#, status: 400, code: "bad-geometry",
            field: "geometry"),
        // facebook has no keyboard policy: the inset is an unknown field there.
        RefusedEvent(
            name: "inset on a preset without the keyboard", session: "b",
            body: #"{"phase": "layout", "keyboardInset": 10}"#, status: 400, code: "unknown-field",
            field: "keyboardInset"),
        // A fling's velocity is the content's, downward.
        RefusedEvent(
            name: "fling upward", session: "f", body: #"{"phase": "fling", "velocity": -10, "time": 2}"#,
            status: 400, code: "invalid-value", field: "velocity"),
        // The content scrolls at the top-most detent only (the default): not at half.
        RefusedEvent(
            name: "fling where the content does not scroll", session: "f",
            body: #"{"phase": "fling", "velocity": 900, "time": 2}"#, status: 409, code: "conflict"),
        // facebook has no scroll hand-off: fling is not one of its phases.
        RefusedEvent(
            name: "fling on a preset without scroll hand-off", session: "b",
            body: #"{"phase": "fling", "velocity": 900}"#, status: 400, code: "invalid-value", field: "phase"),
        // In a batch, the refused event is named and none of the batch is applied.
        RefusedEvent(
            name: "batch with a bad layout", session: "f",
            body:
                #"{"events": [{"phase": "layout", "keyboardInset": 291, "time": 2}, {"phase": "layout", "contentHeight": -4, "time": 3}]}"#,
            status: 400, code: "invalid-value", field: "events[1].contentHeight"),
    ]

    @Test(arguments: rows)
    func refusedAndUnchanged(_ row: RefusedEvent) throws {
        let c = try InProcessService()
        #expect(try c.put("f", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        #expect(try c.pan("f", #"{"phase": "layout", "keyboardInset": 0, "time": 1}"#).status == 200)
        #expect(try c.put("b", #"{"preset": "facebook", "initialDetent": "normal"}"#).status == 201)
        let before = try c.get("/sessions/\(row.session)")
        let r = try c.pan(row.session, row.body)
        let json = expectProblem(r, status: row.status, code: row.code)
        if let field = row.field { #expect(json["field"] as? String == field, "\(r.text)") }
        let after = try c.get("/sessions/\(row.session)")
        for key in ["state", "detent", "constant", "revision", "keyboardInset"] {
            #expect("\(after.json?[key] ?? "–")" == "\(before.json?[key] ?? "–")", "\(key): \(after.text)")
        }
        let detents = { (r: Response) in (obj(r.json?["detents"]) ?? [:]).mapValues { num($0) ?? .nan } }
        #expect(detents(after) == detents(before), "\(after.text)")
    }
}
