import SheetPhysics
import Testing

// Geometry and option validation: bad configuration is a typed error naming the field, never a crash.

struct GeometryRow: Sendable, CustomTestStringConvertible {
    let height: Double
    let top: Double
    let bottom: Double
    let valid: Bool
    let rule: String
    var testDescription: String { rule }
}

@Test(arguments: [
    GeometryRow(height: 844, top: 47, bottom: 34, valid: true, rule: "the default"),
    GeometryRow(height: 1, top: 0, bottom: 0, valid: true, rule: "tiny but valid"),
    GeometryRow(height: 0, top: 0, bottom: 0, valid: false, rule: "h > 0"),
    GeometryRow(height: -5, top: 0, bottom: 0, valid: false, rule: "h > 0, negative"),
    GeometryRow(height: 844, top: -1, bottom: 0, valid: false, rule: "st ≥ 0"),
    GeometryRow(height: 844, top: 0, bottom: -1, valid: false, rule: "sb ≥ 0"),
    GeometryRow(height: 100, top: 50, bottom: 50, valid: false, rule: "st + sb < h"),
    GeometryRow(height: .nan, top: 0, bottom: 0, valid: false, rule: "finite: NaN"),
    GeometryRow(height: .infinity, top: 0, bottom: 0, valid: false, rule: "finite: infinity"),
])
func geometryValidation(_ row: GeometryRow) {
    do {
        let g = try Geometry(height: row.height, safeAreaTop: row.top, safeAreaBottom: row.bottom)
        #expect(row.valid)
        #expect(g.availableHeight == row.height - row.top)
    } catch {
        #expect(!row.valid)
        #expect(error.field == "geometry")
    }
}

struct OptionRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let field: String?
    let rule: String
    var testDescription: String { "\(preset): \(rule)" }
}

@Test(arguments: [
    OptionRow(
        preset: .facebook, options: [("expandedOfset", .number(30))], field: "options.expandedOfset",
        rule: "a typo is an unknown option, named"),
    OptionRow(
        preset: .facebook, options: [("expandedOffset", .string("30"))], field: "options.expandedOffset",
        rule: "wrong type"),
    OptionRow(
        preset: .facebook, options: [("expandedOffset", .number(500))], field: "options.expandedOffset",
        rule: "below normal"),
    OptionRow(preset: .facebook, options: [("expandedOffset", .number(0))], field: nil, rule: "0 is allowed"),
    OptionRow(
        preset: .facebook, options: [("cardHeightRatio", .number(0.5))], field: "options.cardHeightRatio",
        rule: "another preset's option"),
    OptionRow(
        preset: .twitter, options: [("cardHeightRatio", .number(0))], field: "options.cardHeightRatio",
        rule: "(0, 1]: 0 is out"),
    OptionRow(preset: .twitter, options: [("cardHeightRatio", .number(1))], field: nil, rule: "(0, 1]: 1 is in"),
    OptionRow(
        preset: .twitter, options: [("maxDimAlpha", .number(1.5))], field: "options.maxDimAlpha", rule: "alpha ≤ 1"),
    OptionRow(
        preset: .glide, options: [("segmentHeights", .object([("open", .number(100)), ("compressed", .number(200))]))],
        field: "options.segmentHeights", rule: "open ≥ compressed ≥ closed"),
    OptionRow(
        preset: .glide, options: [("segmentHeights", .object([("middle", .number(100))]))],
        field: "options.segmentHeights.middle", rule: "unknown segment"),
    OptionRow(
        preset: .glide, options: [("concreteDimension", .string("quarter"))], field: "options.concreteDimension",
        rule: "unknown dimension"),
    OptionRow(
        preset: .glide,
        options: [("concreteDimension", .object([("custom", .number(2000))])), ("segmented", .bool(false))], field: nil,
        rule: "custom above h clamps to full"),
    OptionRow(
        preset: .glide, options: [("concreteDimension", .object([("costum", .number(200))]))],
        field: "options.concreteDimension", rule: "custom misspelt"),
    OptionRow(
        preset: .glide, options: [("grabber", .number(1))], field: "options.grabber", rule: "grabber is a boolean"),
    OptionRow(
        preset: .transition, options: [("finishThreshold", .null)], field: nil, rule: "null disables the threshold"),
    OptionRow(
        preset: .transition, options: [("finishThreshold", .number(0))], field: "options.finishThreshold",
        rule: "(0, 1]"),
    OptionRow(
        preset: .transition, options: [("completionSpeed", .number(0))], field: "options.completionSpeed",
        rule: "speed > 0"),
    OptionRow(
        preset: .transition, options: [("miniHeight", .number(900))], field: "options.miniHeight",
        rule: "mini card on screen"),
    OptionRow(
        preset: .swipeCell, options: [("swipeDistance", .number(-5))], field: "options.swipeDistance",
        rule: "distance > 0"),
    OptionRow(
        preset: .fluid, options: [("detents", .object([("hidden", .object([("fraction", .number(0.2))]))]))],
        field: "options.detents.hidden", rule: "hidden is reserved"),
    OptionRow(
        preset: .fluid, options: [("detents", .object([]))], field: "options.detents", rule: "at least one detent"),
    OptionRow(
        preset: .fluid,
        options: [("detents", .object([("a", .object([("fraction", .number(0.2)), ("height", .number(5))]))]))],
        field: "options.detents.a", rule: "exactly one spec per detent"),
    OptionRow(
        preset: .fluid, options: [("detents", .object([("a", .object([("percent", .number(20))]))]))],
        field: "options.detents.a.percent", rule: "unknown spec"),
    OptionRow(
        preset: .fluid, options: [("detents", .object([("a", .object([("fraction", .number(1.2))]))]))],
        field: "options.detents.a.fraction", rule: "fraction in [0, 1]"),
    OptionRow(
        preset: .fluid, options: [("detents", .object([("buy", .object([("contentAnchor", .number(-1))]))]))],
        field: "options.detents.buy.contentAnchor", rule: "an anchor is a point in the content: ≥ 0"),
    OptionRow(
        preset: .fluid,
        options: [
            ("detents", .object([("buy", .object([("contentAnchor", .number(300)), ("offset", .number(-62))]))]))
        ],
        field: "options.detents.buy.offset", rule: "an anchor's offset is ≥ 0 points"),
    OptionRow(
        preset: .fluid,
        options: [("detents", .object([("a", .object([("height", .number(300)), ("offset", .number(62))]))]))],
        field: "options.detents.a", rule: "offset belongs to contentAnchor only"),
    OptionRow(
        preset: .fluid,
        options: [
            (
                "detents",
                .object([
                    ("buy", .object([("contentAnchor", .number(300)), ("offset", .number(1)), ("x", .number(1))]))
                ])
            )
        ],
        field: "options.detents.buy", rule: "an anchor takes its offset and nothing else"),
    OptionRow(
        preset: .fluid,
        options: [
            (
                "detents",
                .object([("a", .object([("fraction", .number(0.2))])), ("a", .object([("height", .number(50))]))])
            )
        ], field: "options.detents.a", rule: "unique names"),
    OptionRow(
        preset: .fluid, options: [("undimmedDetent", .string("middle"))], field: "options.undimmedDetent",
        rule: "undimmed detent must exist"),
    OptionRow(preset: .fluid, options: [("response", .number(0))], field: "options.response", rule: "response > 0"),
    OptionRow(
        preset: .fluid, options: [("decelerationRate", .number(1))], field: "options.decelerationRate", rule: "r < 1"),
    OptionRow(
        preset: .fluid, options: [("dampingRatio", .number(.nan))], field: "options.dampingRatio", rule: "finite"),
    OptionRow(
        preset: .fluid,
        options: [
            (
                "detents",
                .object([("peek", .object([("height", .number(100))])), ("max", .object([("fromTop", .number(0))]))])
            ), ("dampingRatio", .number(0.6)),
        ], field: nil, rule: "custom detents, underdamped"),
])
func optionValidation(_ row: OptionRow) {
    do {
        let model = try SheetModel(preset: row.preset, options: row.options)
        #expect(row.field == nil)
        // The effective options name every option of the catalog.
        #expect(model.effectiveOptions.map(\.key) == row.preset.optionNames)
    } catch {
        #expect(error.field == row.field, "\(error)")
        #expect(!error.description.isEmpty)
    }
}

@Test func initialDetentStartsRestingThere() throws {
    let model = try SheetModel(preset: .facebook)
    let s = try SheetSession(model: model, initialDetent: "expanded")
    let snap = s.snapshot(at: 0)
    #expect(snap.state == .resting)
    #expect(snap.constant == 30)
    #expect(snap.dimmerAlpha == 0.7)
    #expect(
        throws: ConfigurationError.unknownDetent(
            field: "initialDetent", name: "full", known: ["expanded", "normal", "hidden"])
    ) {
        try SheetSession(model: model, initialDetent: "full")
    }
}

struct StartRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let state: SheetState
    let constant: Double
    let progress: Double
    var testDescription: String { "\(preset)" }
}

@Test(arguments: [
    StartRow(preset: .facebook, state: .hidden, constant: 797, progress: 0),  // hidden at H
    StartRow(preset: .twitter, state: .hidden, constant: 633, progress: 0),  // hidden at C
    StartRow(preset: .glide, state: .hidden, constant: 797, progress: -80.0 / 673),  // below closed
    StartRow(preset: .transition, state: .hidden, constant: 844, progress: -94.0 / 750),  // frameY = h
    StartRow(preset: .swipeCell, state: .resting, constant: 0, progress: 0),  // created resting at initial
    StartRow(preset: .fluid, state: .hidden, constant: 797, progress: 0),  // hidden at H
])
func startingPoints(_ row: StartRow) throws {
    let s = try SheetSession(model: SheetModel(preset: row.preset))
    let snap = s.snapshot(at: 0)
    #expect(snap.state == row.state)
    #expect(snap.constant == row.constant)
    #expect(close(snap.progress, row.progress, 1e-12))
    #expect(snap.dimmerAlpha == 0)
}

@Test func detentsPerPreset() throws {
    // Default geometry: H = 797, h = 844.
    let table: [(PresetName, [String: Double])] = [
        (.facebook, ["expanded": 30, "normal": 398.5, "hidden": 797]),
        (.twitter, ["open": 0, "hidden": 633]),
        (.glide, ["open": 44, "compressed": 398.5, "closed": 717]),
        (.transition, ["large": 0, "mini": 750]),
        (.swipeCell, ["top": -80, "initial": 0]),
        (.fluid, ["full": 18, "half": 398.5, "tip": 728, "hidden": 797]),
    ]
    for (preset, detents) in table {
        let model = try SheetModel(preset: preset)
        #expect(Dictionary(uniqueKeysWithValues: model.detents.map { ($0.name, $0.constant) }) == detents, "\(preset)")
        #expect(model.progress(at: model.detents[0].constant) == 1)
    }
    // glide, not segmented: every concrete dimension against P = h.
    let dims: [(OptionValue, Bool, Double)] = [
        (.string("fullScreen"), true, 44), (.string("fullScreen"), false, 0), (.string("half"), true, 422),
        (.string("oneFourth"), true, 633), (.string("oneThird"), true, 2 * 844 / 3.0),
        (.object([("custom", .number(300))]), true, 544), (.object([("custom", .number(900))]), true, 0),
    ]
    for (dim, nav, open) in dims {
        let model = try SheetModel(
            preset: .glide,
            options: [
                ("segmented", .bool(false)), ("concreteDimension", dim), ("navigationBar", .bool(nav)),
                ("headerHeight", .number(60)),
            ])
        #expect(model.detent(named: "open")?.constant == open)
        #expect(model.detent(named: "compressed")?.constant == open)
        #expect(model.detent(named: "closed")?.constant == 737)
    }
}
