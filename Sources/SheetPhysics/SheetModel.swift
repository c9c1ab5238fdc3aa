/// A session's resolved configuration: the preset with its options applied to a geometry. Where
/// the card can stop (detents), how it is dimmed, and the rules that move it. Immutable and
/// shared by reference, so a session carries one pointer to it.
public final class SheetModel: Sendable {
    public let preset: PresetName
    public let geometry: Geometry
    /// Detents ordered from the top-most (most open, smallest constant) down.
    public let detents: [Detent]
    /// Where a hidden card sits.
    public let hiddenConstant: Double
    /// The dimmer's position rule (the drag law's).
    public var dimmer: DimmerCurve { dragLaw.dimmer }
    /// What a drag does with the finger: the engine's own rule, as data a client can evaluate.
    public let dragLaw: DragLaw
    /// Where a release sends the card and how it moves there: the engine's own rule, as data a
    /// client can evaluate.
    public let releaseLaw: ReleaseLaw
    /// The detent `show` uses when it names none.
    public let showDefault: Detent
    /// Where `dismiss` sends the card.
    public let dismissTarget: Detent
    /// The options in effect, defaults filled in, in catalog order.
    public let effectiveOptions: [(key: String, value: OptionValue)]

    var progressScale: ProgressScale { dragLaw.progress }
    let rule: SnapRule
    /// The seed presets animate the dimmer with the card; fluid and transition follow position.
    let alphaRule: AlphaRule

    /// The constraint system of the constant.
    public var constraint: ConstraintKind { preset.constraint }

    /// Resolves `options` (as sent: unknown keys are errors naming them) for `preset` on `geometry`.
    public init(
        preset: PresetName, geometry: Geometry = .standard,
        options: [(key: String, value: OptionValue)] = []
    ) throws(ConfigurationError) {
        self.preset = preset
        self.geometry = geometry
        let h = geometry.height
        let S = geometry.safeAreaHeight
        let H = geometry.availableHeight
        var reader = OptionReader(options, preset: preset)
        let parts: Parts
        switch preset {
        case .facebook:
            let E = try reader.number("expandedOffset", default: 30, in: 0...H)
            guard E < H / 2 else {
                throw .invalidOption(
                    field: "options.expandedOffset",
                    reason: "must be less than the normal detent H/2 = \(Format.number(H / 2))")
            }
            let expanded = Detent(name: "expanded", constant: E)
            let normal = Detent(name: "normal", constant: H / 2)
            let hidden = Detent(name: "hidden", constant: H, isHidden: true)
            parts = Parts(
                detents: [expanded, normal, hidden], hidden: H,
                dimmer: DimmerCurve(full: 0.7, fullAt: H / 2, clearAt: H), show: normal, dismiss: hidden,
                // The seed skips updates at or above E; we clamp.
                lower: E, upper: nil,
                options: [("expandedOffset", .number(E))], rule: .facebook(expandedOffset: E),
                alphaRule: .interpolate)
        case .twitter:
            let ratio = try reader.number("cardHeightRatio", default: 0.75, in: 0...1, open: true)
            let maxDim = try reader.number("maxDimAlpha", default: 0.7, in: 0...1)
            let C = h * ratio
            let open = Detent(name: "open", constant: 0)
            let hidden = Detent(name: "hidden", constant: C, isHidden: true)
            parts = Parts(
                detents: [open, hidden], hidden: C, dimmer: DimmerCurve(full: maxDim, fullAt: 0, clearAt: C),
                show: open, dismiss: hidden, lower: nil, upper: nil,  // unbounded: may be pulled above open
                options: [("cardHeightRatio", .number(ratio)), ("maxDimAlpha", .number(maxDim))],
                rule: .twitter(cardHeight: C), alphaRule: .interpolate)
        case .glide:
            parts = try Self.glide(&reader, geometry: geometry)
        case .transition:
            let mini = try reader.number("miniHeight", default: 60, in: 0...(h - geometry.safeAreaBottom))
            let threshold: Double?
            switch reader.take("finishThreshold") {
            case nil: threshold = 0.8
            case .null?: threshold = nil
            case let value?:
                threshold = try OptionReader.number(
                    value, path: "options.finishThreshold", in: 0...1, openLower: true)
            }
            let duration = try reader.number("duration", default: 0.35, in: 0...60, open: true)
            let speed = try reader.number("completionSpeed", default: 0.75, in: 0...100, open: true)
            let miniY = h - geometry.safeAreaBottom - mini
            guard miniY > 0 else {
                throw .invalidOption(
                    field: "options.miniHeight", reason: "leaves no room: the mini card must sit below y = 0")
            }
            let large = Detent(name: "large", constant: 0)
            let miniDetent = Detent(name: "mini", constant: miniY)
            parts = Parts(
                detents: [large, miniDetent], hidden: h,
                dimmer: DimmerCurve(full: 0.7, fullAt: 0, clearAt: miniY), show: large, dismiss: miniDetent,
                lower: 0, upper: miniY, finishThreshold: threshold,
                options: [
                    ("miniHeight", .number(mini)), ("finishThreshold", threshold.map { .number($0) } ?? .null),
                    ("duration", .number(duration)), ("completionSpeed", .number(speed)),
                ],
                rule: .transition(duration: duration, completionSpeed: speed),
                alphaRule: .position)
        case .swipeCell:
            let d = try reader.number("swipeDistance", default: 80, in: 0...h, open: true)
            let top = Detent(name: "top", constant: -d)
            let initial = Detent(name: "initial", constant: 0)
            parts = Parts(
                detents: [top, initial], hidden: 0, dimmer: .none, show: top, dismiss: initial, lower: -d, upper: 0,
                options: [("swipeDistance", .number(d))], rule: .swipeCell(distance: d), alphaRule: .interpolate)
        case .fluid:
            parts = try Self.fluid(&reader, geometry: geometry)
        }
        try reader.finish()
        _ = S
        detents = parts.detents
        hiddenConstant = parts.hidden
        showDefault = parts.show
        dismissTarget = parts.dismiss
        effectiveOptions = parts.options
        rule = parts.rule
        alphaRule = parts.alphaRule
        // progress: 0 at hidden (or the lowest detent where there is no hidden), 1 at the top-most.
        let low = parts.detents.first(where: \.isHidden)?.constant ?? parts.detents.last!.constant
        dragLaw = DragLaw(
            lower: parts.lower, upper: parts.upper, rubberBand: parts.rubberBand, dimmer: parts.dimmer,
            progress: ProgressScale(low: low, top: parts.detents[0].constant), finishThreshold: parts.finishThreshold)
        releaseLaw = Self.releaseLaw(
            rule: parts.rule, detents: parts.detents, geometry: geometry, alphaRule: parts.alphaRule)
    }

    private struct Parts {
        var detents: [Detent]
        var hidden: Double
        var dimmer: DimmerCurve
        var show: Detent
        var dismiss: Detent
        /// The drag's free range and what happens past it (see `DragLaw`).
        var lower: Double?
        var upper: Double?
        var rubberBand: RubberBand? = nil
        var finishThreshold: Double? = nil
        var options: [(key: String, value: OptionValue)]
        var rule: SnapRule
        var alphaRule: AlphaRule
    }

    private static func glide(_ reader: inout OptionReader, geometry: Geometry) throws(ConfigurationError) -> Parts {
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
        return Parts(
            detents: [open, compressed, closed], hidden: H,
            dimmer: DimmerCurve(full: 0.7, fullAt: K, clearAt: closed.constant),
            show: segmented ? compressed : open, dismiss: closed, lower: 0, upper: nil,
            options: [
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
            ],
            rule: .glide(segmented: segmented, threshold: K), alphaRule: .interpolate)
    }

    private static func fluid(_ reader: inout OptionReader, geometry: Geometry) throws(ConfigurationError) -> Parts {
        let H = geometry.availableHeight
        var specs: [(key: String, value: OptionValue)] = [
            ("full", .object([("fromTop", .number(18))])),
            ("half", .object([("fraction", .number(0.5))])),
            ("tip", .object([("height", .number(69))])),
        ]
        if let value = reader.take("detents") {
            guard case let .object(members) = value else {
                throw .invalidOption(
                    field: "options.detents", reason: "expected an object of name → spec, got \(value.typeName)")
            }
            guard !members.isEmpty else {
                throw .invalidOption(field: "options.detents", reason: "at least one detent is needed")
            }
            specs = members
        }
        var visible: [Detent] = []
        for (name, spec) in specs {
            let path = "options.detents.\(name)"
            guard name != "hidden" else {
                throw .invalidOption(field: path, reason: "\"hidden\" is reserved: use hideable")
            }
            guard !name.isEmpty, !visible.contains(where: { $0.name == name }) else {
                throw .invalidOption(field: path, reason: "detent names must be unique and non-empty")
            }
            guard case let .object(kv) = spec, kv.count == 1 else {
                throw .invalidOption(
                    field: path,
                    reason: "expected exactly one of {\"fromTop\": pt}, {\"fraction\": f}, {\"height\": pt}")
            }
            let constant: Double
            switch kv[0].key {
            case "fromTop": constant = try OptionReader.number(kv[0].value, path: path + ".fromTop", in: 0...H)
            case "fraction":
                constant = H - H * (try OptionReader.number(kv[0].value, path: path + ".fraction", in: 0...1))
            case "height": constant = H - (try OptionReader.number(kv[0].value, path: path + ".height", in: 0...H))
            default:
                throw .unknownOption(field: "\(path).\(kv[0].key)", preset: .fluid)
            }
            visible.append(Detent(name: name, constant: constant))
        }
        visible.sort { $0.constant < $1.constant }
        let hideable = try reader.bool("hideable", default: true)
        let rubberBand = try reader.bool("rubberBand", default: true)
        let rate = try reader.number("decelerationRate", default: 0.998, in: 0...0.9999, open: true)
        let removal = try reader.number("removalVelocity", default: 5.5, in: 0...1e6)
        let skip = try reader.bool("skipDetents", default: false)
        let lowestVisible = visible[visible.count - 1]
        let undimmedName = try reader.string("undimmedDetent") ?? lowestVisible.name
        guard let undimmedIndex = visible.firstIndex(where: { $0.name == undimmedName }) else {
            throw .unknownDetent(field: "options.undimmedDetent", name: undimmedName, known: visible.map(\.name))
        }
        let maxDim = try reader.number("maxDimAlpha", default: 0.3, in: 0...1)
        let response = try reader.number("response", default: 0.4, in: 0.01...10)
        let zeta = try reader.number("dampingRatio", default: 1.0, in: 0.05...10)
        // alpha: 0 at and below the undimmed detent, maxDim at and above the next detent up.
        let dimmer =
            undimmedIndex == 0
            ? DimmerCurve.none
            : DimmerCurve(
                full: maxDim, fullAt: visible[undimmedIndex - 1].constant, clearAt: visible[undimmedIndex].constant)
        var detents = visible
        let hidden = Detent(name: "hidden", constant: H, isHidden: true)
        if hideable { detents.append(hidden) }
        // Over-drag past the top-most and the lowest detent: resisted (f(x) = (1 − 1/(x·0.55/h + 1))·h,
        // UIScrollView's band) or clamped.
        return Parts(
            detents: detents, hidden: H, dimmer: dimmer, show: lowestVisible,
            dismiss: hideable ? hidden : lowestVisible, lower: visible[0].constant,
            upper: detents[detents.count - 1].constant,
            rubberBand: rubberBand ? RubberBand(coefficient: 0.55, dimension: geometry.height) : nil,
            options: [
                ("detents", .object(specs)), ("hideable", .bool(hideable)), ("rubberBand", .bool(rubberBand)),
                ("decelerationRate", .number(rate)), ("removalVelocity", .number(removal)),
                ("skipDetents", .bool(skip)), ("undimmedDetent", .string(undimmedName)),
                ("maxDimAlpha", .number(maxDim)), ("response", .number(response)), ("dampingRatio", .number(zeta)),
            ],
            rule: .fluid(
                FluidBehaviour(
                    hideable: hideable, rubberBand: rubberBand, decelerationRate: rate, removalVelocity: removal,
                    skipDetents: skip, response: response, dampingRatio: zeta)),
            alphaRule: .position)
    }

    /// The position of `detent` in `detents` (detents are compared by name, which is unique).
    func index(of detent: Detent) -> Int {
        detents.firstIndex { $0.name == detent.name } ?? 0
    }

    /// The detent named `name`, if the preset has it.
    public func detent(named name: String) -> Detent? { detents.first { $0.name == name } }

    /// Dimmer alpha at `constant` by the position rule.
    @inline(__always) public func alpha(at constant: Double) -> Double { dimmer.alpha(at: constant) }

    /// How open the card is at `constant`: 0 at hidden (or the lowest detent), 1 at the top-most.
    @inline(__always) public func progress(at constant: Double) -> Double { progressScale.progress(of: constant) }
}
