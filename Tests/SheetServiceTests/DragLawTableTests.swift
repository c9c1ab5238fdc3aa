// Each preset's default drag law, and typical drag segments, literally, on the standard geometry.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - 2. Each preset's law, literally

/// A configuration on the standard geometry (844 × (47, 34): H = 797) and the law it sends.
struct DefaultLawRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let law: JSONValue

    init(_ preset: PresetName, _ options: [(key: String, value: OptionValue)] = [], law: JSONValue) {
        self.preset = preset
        self.options = options
        self.law = law
    }

    var testDescription: String { "\(preset.rawValue) \(describe(options, .standard))" }
}

private let defaultLaws: [DefaultLawRow] = [
    DefaultLawRow(
        .facebook,
        law: [
            "lower": 30, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 398.5, "clearAt": 797],
            "progress": ["low": 797, "top": 30], "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // clamps at expandedOffset 30 above, free below; dimmer 0.7 at normal H/2, clear at hidden H
    DefaultLawRow(
        .twitter,
        law: [
            "lower": nil, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 0, "clearAt": 633],
            "progress": ["low": 633, "top": 0], "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // unbounded both ways (may be pulled above open); card C = 0.75·844 = 633
    DefaultLawRow(
        .glide,
        law: [
            "lower": 0, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 398.5, "clearAt": 717],
            "progress": ["low": 717, "top": 44], "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // clamps at 0 above, free below; no hidden detent: progress 0 at closed 797 − 80
    DefaultLawRow(
        .glide, [("segmented", .bool(false))],
        law: [
            "lower": 0, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 422, "clearAt": 797],
            "progress": ["low": 797, "top": 422], "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // unsegmented: opens at h/2 = 422 (half), closes at H − headerHeight 0
    DefaultLawRow(
        .transition,
        law: [
            "lower": 0, "upper": 750, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 0, "clearAt": 750],
            "progress": ["low": 750, "top": 0], "finishThreshold": 0.8, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // clamps between large 0 and mini 844 − 34 − 60; finishes 80 % of the way
    DefaultLawRow(
        .transition, [("finishThreshold", .null)],
        law: [
            "lower": 0, "upper": 750, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 0, "clearAt": 750],
            "progress": ["low": 750, "top": 0], "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // finishThreshold null: a drag never finishes by itself
    DefaultLawRow(
        .swipeCell,
        law: [
            "lower": -80, "upper": 0, "rubberBand": nil, "dimmer": ["full": 0, "fullAt": 0, "clearAt": 0],
            "progress": ["low": 0, "top": -80], "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // clamps between top −swipeDistance and initial 0; never dims
    DefaultLawRow(
        .fluid,
        law: [
            "lower": 18, "upper": 797, "rubberBand": ["coefficient": 0.55, "dimension": 844],
            "dimmer": ["full": 0.3, "fullAt": 398.5, "clearAt": 728], "progress": ["low": 797, "top": 18],
            "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // free from full 18 to hidden H, rubber band (0.55, h) past both; dims above tip 797 − 69
    DefaultLawRow(
        .fluid, [("rubberBand", .bool(false)), ("hideable", .bool(false))],
        law: [
            "lower": 18, "upper": 728, "rubberBand": nil, "dimmer": ["full": 0.3, "fullAt": 398.5, "clearAt": 728],
            "progress": ["low": 728, "top": 18], "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // no band: clamps at full and at tip, the lowest detent without hidden; progress 0 at tip
    DefaultLawRow(
        .fluid, [("undimmedDetent", .string("full"))],
        law: [
            "lower": 18, "upper": 797, "rubberBand": ["coefficient": 0.55, "dimension": 844],
            "dimmer": ["full": 0, "fullAt": 0, "clearAt": 0], "progress": ["low": 797, "top": 18],
            "finishThreshold": nil, "edge": "bottom", "axis": "y", "sign": 1,
        ]),  // undimmed at the top-most detent: never dims
    DefaultLawRow(
        .fluid, [("edge", .string("top"))],
        law: [
            "lower": 18, "upper": 810, "rubberBand": ["coefficient": 0.55, "dimension": 844],
            "dimmer": ["full": 0.3, "fullAt": 405, "clearAt": 741], "progress": ["low": 810, "top": 18],
            "finishThreshold": nil, "edge": "top", "axis": "y", "sign": -1,
        ]),  // a top sheet: the far inset is sb 34, so H = 844 − 34 = 810 (half 405, tip 741); upward drags close (sign −1)
]

/// A drag begun on the standard geometry and the segment `began` answers.
struct BeganSegmentRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let detent: String
    let translation: Double?
    let segment: JSONValue

    init(
        _ preset: PresetName, _ options: [(key: String, value: OptionValue)] = [], from detent: String,
        at translation: Double? = nil, segment: JSONValue
    ) {
        self.preset = preset
        self.options = options
        self.detent = detent
        self.translation = translation
        self.segment = segment
    }

    var testDescription: String { "\(preset.rawValue) from \(detent)" }
}

private let beganSegments: [BeganSegmentRow] = [
    BeganSegmentRow(
        .facebook, from: "normal",
        segment: [
            "start": 398.5, "base": 0, "origin": "normal", "contentCanScroll": false, "contentFirst": true,
            "finish": nil,
        ]
    ),  // starts at the detent, base 0 for a began with no translation
    BeganSegmentRow(
        .glide, from: "compressed", at: 12,
        segment: [
            "start": 398.5, "base": 12, "origin": "compressed", "contentCanScroll": false, "contentFirst": true,
            "finish": nil,
        ]
    ),  // the began's translation is the base
    BeganSegmentRow(
        .transition, from: "mini",
        segment: [
            "start": 750, "base": 0, "origin": "mini", "contentCanScroll": false, "contentFirst": true,
            "finish": ["from": 750, "toward": 0, "threshold": 0.8, "detent": "large"],
        ]),  // finishes 80 % of the way from mini toward large
    BeganSegmentRow(
        .transition, [("finishThreshold", .number(0.5))], from: "mini", at: -3,
        segment: [
            "start": 750, "base": -3, "origin": "mini", "contentCanScroll": false, "contentFirst": true,
            "finish": ["from": 750, "toward": 0, "threshold": 0.5, "detent": "large"],
        ]),  // the configured threshold
    BeganSegmentRow(
        .transition, [("finishThreshold", .null)], from: "mini",
        segment: [
            "start": 750, "base": 0, "origin": "mini", "contentCanScroll": false, "contentFirst": true, "finish": nil,
        ]
    ),  // no threshold, no finish
    BeganSegmentRow(
        .swipeCell, from: "initial",
        segment: [
            "start": 0, "base": 0, "origin": "initial", "contentCanScroll": false, "contentFirst": true, "finish": nil,
        ]
    ),  // the cell at rest
    BeganSegmentRow(
        .fluid, from: "full",
        segment: [
            "start": 18, "base": 0, "origin": "full", "contentCanScroll": true, "contentFirst": true, "finish": nil,
        ]
    ),  // fluid at its top-most detent: the content may take the movement
    BeganSegmentRow(
        .fluid, from: "half", at: 1e6,
        segment: [
            "start": 398.5, "base": 1e6, "origin": "half", "contentCanScroll": false, "contentFirst": true,
            "finish": nil,
        ]
    ),  // any finite base, as sent
]

@Suite struct DragLawTableTests {
    @Test("each preset's law as JSON", arguments: defaultLaws)
    func defaultLaw(_ row: DefaultLawRow) throws {
        let model = try SheetModel(preset: row.preset, options: row.options)
        let law = try rendered(model.dragLaw)
        #expect(law == row.law, "\(law)")
        // The snapshot's constant members carry the same law.
        let profile = SessionProfile(model: model, clock: .client)
        let snapshot = try JSONReader.parse([0x7B] + profile.staticMembers + [0x2C] + profile.lawMembers + [0x7D])
        #expect(snapshot["dragLaw"] == row.law)
    }

    @Test("the segment began answers", arguments: beganSegments)
    func beganSegment(_ row: BeganSegmentRow) throws {
        let model = try SheetModel(preset: row.preset, options: row.options)
        var session = try SheetSession(model: model, initialDetent: row.detent)
        let began = session.handle(.pan(PanEvent(phase: .began, translation: row.translation)), at: 0)
        let drag = try #require(began.drag)
        #expect(try rendered(drag) == row.segment)
        #expect(session.dragSegment == drag)
        // A changed moves the card and starts no segment.
        let changed = session.handle(.pan(PanEvent(phase: .changed, translation: (row.translation ?? 0) + 1)), at: 1)
        #expect(changed.drag == nil)
    }
}
