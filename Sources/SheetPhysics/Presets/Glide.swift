/// glide: a card with three positions (open, compressed, closed) or, not segmented, two (open
/// and closed); a release goes by where the card is against the threshold K and the safe-area
/// height S, then by its direction.
enum Glide: Preset {
    static let summary = "Three-state ride card"
    static let constraint = ConstraintKind.top

    static func options(on geometry: Geometry) -> [OptionInfo] {
        let H = geometry.availableHeight
        return [
            OptionInfo("segmented", "boolean", .bool(true), "three states (open, compressed, closed) instead of two"),
            OptionInfo(
                "segmentHeights", "object",
                .object([("open", .number(H - 44)), ("compressed", .number(H / 2)), ("closed", .number(80))]),
                fixed: false,
                "visible heights of the segmented states, pt (defaults H − 44, H/2, 80)"),
            OptionInfo(
                "concreteDimension", "string|object", .string("half"),
                "open position when not segmented: fullScreen, half, oneFourth, oneThird or {\"custom\": pt}"),
            OptionInfo("navigationBar", "boolean", .bool(true), "fullScreen leaves 44 pt for a navigation bar"),
            OptionInfo(
                "headerHeight", "number", .number(0), "visible height of the closed card when not segmented, pt"),
            OptionInfo("grabber", "boolean", .bool(true), "draw the grabber (echoed for front ends)"),
        ]
    }

    static func configuration(
        _ reader: inout OptionReader, in layout: Layout
    ) throws(ConfigurationError) -> PresetConfiguration {
        let geometry = layout.geometry
        let h = geometry.height
        let H = geometry.availableHeight
        let segmented = try reader.bool("segmented", default: true)
        var heights = (open: H - 44, compressed: H / 2, closed: 80.0)
        if let value = reader.take("segmentHeights") {
            guard case let .object(members) = value else {
                throw .invalidOption(
                    field: "options.segmentHeights", reason: "expected an object, got \(value.typeName)")
            }
            var sub = OptionReader(members, prefix: "options.segmentHeights", preset: .glide)
            heights.open = try sub.number("open", default: heights.open, in: 0...H)
            heights.compressed = try sub.number("compressed", default: heights.compressed, in: 0...H)
            heights.closed = try sub.number("closed", default: heights.closed, in: 0...H)
            try sub.finish()
            guard heights.open >= heights.compressed, heights.compressed >= heights.closed else {
                throw .invalidOption(
                    field: "options.segmentHeights", reason: "heights must satisfy open ≥ compressed ≥ closed")
            }
        }
        var dimension: OptionValue = .string("half")
        var openConstant = h / 2
        let navigationBar = try reader.bool("navigationBar", default: true)
        if let value = reader.take("concreteDimension") {
            dimension = value
        }
        switch dimension {
        case .string("fullScreen"): openConstant = navigationBar ? 44 : 0
        case .string("half"): openConstant = h / 2
        case .string("oneFourth"): openConstant = 3 * h / 4
        case .string("oneThird"): openConstant = 2 * h / 3
        case let .object(members):
            var sub = OptionReader(members, prefix: "options.concreteDimension", preset: .glide)
            guard let x = sub.take("custom") else {
                throw .invalidOption(
                    field: "options.concreteDimension", reason: "an object form must be {\"custom\": height in pt}")
            }
            let custom = try OptionReader.number(x, path: "options.concreteDimension.custom", in: 0...1e6)
            try sub.finish()
            openConstant = max(h - custom, 0)  // the seed hides the card for x > h; we clamp to full
        default:
            throw .invalidOption(
                field: "options.concreteDimension",
                reason: "expected fullScreen, half, oneFourth, oneThird or {\"custom\": pt}")
        }
        let headerHeight = try reader.number("headerHeight", default: 0, in: 0...H)
        let grabber = try reader.bool("grabber", default: true)
        let open: Detent
        let compressed: Detent
        let closed: Detent
        if segmented {
            open = Detent(name: "open", constant: H - heights.open)
            compressed = Detent(name: "compressed", constant: H - heights.compressed)
            closed = Detent(name: "closed", constant: H - heights.closed)
        } else {
            let closedConstant = H - headerHeight
            guard openConstant <= closedConstant else {
                throw .invalidOption(
                    field: "options.concreteDimension",
                    reason:
                        "opens at \(Format.number(openConstant)), below the closed position \(Format.number(closedConstant))"
                )
            }
            open = Detent(name: "open", constant: openConstant)
            compressed = Detent(name: "compressed", constant: openConstant)
            closed = Detent(name: "closed", constant: closedConstant)
        }
        // K: the compressed constant when segmented, else the open one.
        let K = segmented ? compressed.constant : open.constant
        let S = geometry.safeAreaHeight
        let detents = [open, compressed, closed]
        let dragLaw = DragLaw(
            lower: 0, upper: nil, dimmer: DimmerCurve(full: 0.7, fullAt: K, clearAt: closed.constant),
            progress: ProgressScale(spanning: detents))
        let up: @Sendable (ReleaseFacts) -> String = { f in f.velocity > 0 ? "down" : "up (velocity 0 counts as up)" }
        let above: @Sendable (ReleaseFacts) -> String = { f in
            "above the threshold (\(Format.number(f.constant)) < \(Format.number(K))), moving \(up(f))"
        }
        let between: @Sendable (ReleaseFacts) -> String = { f in
            "between the threshold and S (\(Format.number(f.constant)) < \(Format.number(S))), moving \(up(f))"
        }
        let releaseLaw = ReleaseLaw(
            rules: [
                ReleaseRule(
                    [.compare(.constant, .less, K), .compare(.velocity, .greater, 0)],
                    .detent(segmented ? compressed : open), because: above),
                ReleaseRule([.compare(.constant, .less, K)], .detent(open), because: above),
                ReleaseRule(
                    [.compare(.constant, .less, S), .compare(.velocity, .greater, 0)], .detent(closed),
                    because: between),
                ReleaseRule([.compare(.constant, .less, S)], .detent(segmented ? compressed : open), because: between),
                ReleaseRule([], .detent(closed)) {
                    "below S (\(Format.number($0.constant)) ≥ \(Format.number(S)))"
                },
            ],
            motions: [MotionRule([], .durationSpring(dampingRatio: 0.8, initialVelocity: nil, duration: 0.4))],
            alphaRule: .interpolate)
        return PresetConfiguration(
            detents: detents, hiddenConstant: H, showDefault: segmented ? compressed : open, dismissTarget: closed,
            dragLaw: dragLaw, releaseLaw: releaseLaw,
            effectiveOptions: [
                ("segmented", .bool(segmented)),
                (
                    "segmentHeights",
                    .object([
                        ("open", .number(heights.open)), ("compressed", .number(heights.compressed)),
                        ("closed", .number(heights.closed)),
                    ])
                ),
                ("concreteDimension", dimension), ("navigationBar", .bool(navigationBar)),
                ("headerHeight", .number(headerHeight)), ("grabber", .bool(grabber)),
            ])
    }
}
