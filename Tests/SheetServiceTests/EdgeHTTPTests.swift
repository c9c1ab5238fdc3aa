// Every edge through HTTP (docs/PHYSICS.md, "Every edge"): what a configuration or a layout event
// may not do with `edge` and the side geometry (a 400 problem naming the field, and nothing
// changes), and a side drawer's rotation. Answered in process.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

/// A request the edge rules refuse: the configuration (or, with `layout`, the layout event sent to
/// a session created with `configuration`), the code and field it names.
struct EdgeRefusal: Sendable, CustomTestStringConvertible {
    let name: String
    let configuration: String
    var layout: String?
    let code: String
    let field: String

    var testDescription: String { name }
}

private let leftDrawer =
    #"{"preset": "fluid", "geometry": {"height": 390, "width": 844, "safeAreaLeft": 47, "safeAreaRight": 47}, "options": {"edge": "left"}}"#

private let edgeRefusals: [EdgeRefusal] = [
    // Only fluid takes an edge: another preset's options do not have it.
    EdgeRefusal(
        name: "facebook from the left", configuration: #"{"preset": "facebook", "options": {"edge": "left"}}"#,
        code: "unknown-option", field: "options.edge"),
    // The edge is one of four names.
    EdgeRefusal(
        name: "a diagonal edge", configuration: #"{"preset": "fluid", "options": {"edge": "diagonal"}}"#,
        code: "invalid-value", field: "options.edge"),
    // A left sheet's main dimension is the width: without it nothing can be placed.
    EdgeRefusal(
        name: "left without a width", configuration: #"{"preset": "fluid", "options": {"edge": "left"}}"#,
        code: "bad-geometry", field: "geometry.width"),
    // The same for the right edge, whatever else the geometry gives.
    EdgeRefusal(
        name: "right without a width",
        configuration:
            #"{"preset": "fluid", "geometry": {"height": 600, "safeAreaLeft": 10}, "options": {"edge": "right"}}"#,
        code: "bad-geometry", field: "geometry.width"),
    // A width is > 0 (whatever the edge: it is checked as part of the geometry).
    EdgeRefusal(
        name: "a width of 0", configuration: #"{"preset": "fluid", "geometry": {"width": 0}}"#,
        code: "bad-geometry", field: "geometry.width"),
    // The side insets leave some width.
    EdgeRefusal(
        name: "side insets wider than the screen",
        configuration: #"{"preset": "fluid", "geometry": {"width": 100, "safeAreaLeft": 60, "safeAreaRight": 40}}"#,
        code: "bad-geometry", field: "geometry.width"),
    // A side inset is ≥ 0.
    EdgeRefusal(
        name: "a negative left inset", configuration: #"{"preset": "fluid", "geometry": {"safeAreaLeft": -1}}"#,
        code: "bad-geometry", field: "geometry.safeAreaLeft"),
    // A rotation of a side drawer must say the new width: the geometry replaces the old one.
    EdgeRefusal(
        name: "a side drawer's rotation without a width", configuration: leftDrawer,
        layout: #"{"phase": "layout", "geometry": {"height": 844}}"#, code: "bad-geometry", field: "geometry.width"),
    // Turning a bottom sheet into a side one needs a width too.
    EdgeRefusal(
        name: "edge changed to right without a width", configuration: #"{"preset": "fluid"}"#,
        layout: #"{"phase": "layout", "options": {"edge": "right"}}"#, code: "bad-geometry", field: "geometry.width"),
]

extension ServiceIntegration {
    @Suite struct EdgeHTTPTests {
        @Test(arguments: edgeRefusals)
        func refused(_ row: EdgeRefusal) throws {
            let c = try InProcessService()
            let r: Response
            var before: Response?
            if let layout = row.layout {
                #expect(try c.put("e", row.configuration).status == 201)
                before = try c.get("/sessions/e")
                r = try c.pan("e", layout)
            } else {
                r = try c.put("e", row.configuration)
            }
            #expect(r.status == 400, "\(r.text)")
            #expect(r.json?["code"] as? String == row.code, "\(r.text)")
            #expect(r.json?["field"] as? String == row.field, "\(r.text)")
            // Nothing changes: no session, or the session as it was (same revision and detents).
            let after = try c.get("/sessions/e")
            if let before {
                #expect(num(after.json?["revision"]) == num(before.json?["revision"]))
                #expect(obj(after.json?["detents"])?.keys.sorted() == obj(before.json?["detents"])?.keys.sorted())
                #expect(num(after.json?["constant"]) == num(before.json?["constant"]))
            } else {
                #expect(after.status == 404, "\(after.text)")
            }
        }

        /// A left drawer rotated from landscape (w 844) to portrait (w 390): the detents follow the
        /// width, the laws keep the edge; the answer's geometry keeps
        /// the side members for the store to rebuild the model from.
        @Test func aSideDrawerRotates() throws {
            let c = try InProcessService()
            let put = try c.put("r", leftDrawer)
            #expect(put.status == 201, "\(put.text)")
            #expect(obj(put.json?["detents"])?["half"].flatMap(num) == 398.5, "\(put.text)")
            let r = try c.pan(
                "r",
                #"{"phase": "layout", "geometry": {"height": 844, "safeAreaTop": 47, "safeAreaBottom": 34, "width": 390}}"#
            )
            #expect(r.status == 200, "\(r.text)")
            // w = 390, no side insets: H = 390; half at 195, tip at 321, hidden at 390.
            let detents = try #require(obj(r.json?["detents"]), "\(r.text)")
            #expect(detents["half"].flatMap(num) == 195 && detents["tip"].flatMap(num) == 321)
            #expect(detents["hidden"].flatMap(num) == 390)
            #expect(obj(r.json?["dragLaw"])?["axis"] as? String == "x")
            #expect(obj(r.json?["layoutLaw"])?["edge"] as? String == "left")
            let geometry = try #require(obj(r.json?["geometry"]), "\(r.text)")
            #expect(num(geometry["width"]) == 390 && num(geometry["safeAreaLeft"]) == 0)
            let now = try c.get("/sessions/r")
            #expect(obj(now.json?["options"])?["edge"] as? String == "left", "\(now.text)")
            #expect(num(now.json?["revision"]) == 1, "\(now.text)")
        }
    }
}

/// A pointer that moves the same distance toward closing on each edge: a client maps it by the
/// drag law it holds and every edge answers the bottom sheet's constant.
@Test(arguments: Edge.allCases)
func aClientMapsThePointerOnce(_ edge: Edge) throws {
    let c = try InProcessService()
    let config =
        #"{"preset": "fluid", "geometry": {"height": 844, "safeAreaTop": 40, "safeAreaBottom": 40, "width": 844, "safeAreaLeft": 40, "safeAreaRight": 40}, "options": {"edge": "\#(edge.rawValue)"}, "initialDetent": "half"}"#
    let put = try c.put("p", config)
    #expect(put.status == 201, "\(put.text)")
    let law = try ClientLaw(json: try JSONReader.parse(Array(put.text.utf8))["dragLaw"] ?? .null)
    // 120 pt toward closing on screen: down, up, left, right.
    let (dx, dy): (Double, Double) =
        switch edge {
        case .bottom: (0, 120)
        case .top: (0, -120)
        case .left: (-120, 0)
        case .right: (120, 0)
        }
    #expect(law.translation(dx: dx, dy: dy) == 120)
    #expect(try c.pan("p", #"{"phase": "began"}"#).status == 200)
    let moved = try c.pan("p", #"{"phase": "changed", "translation": \#(law.translation(dx: dx, dy: dy))}"#)
    // H = 844 − 40 = 804 on every edge: half at 402, 120 further toward closing.
    #expect(num(moved.json?["constant"]) == 522, "\(moved.text)")
}
