/// fluid, our own: named detents from options, an optional hidden one, momentum projection to
/// the nearest detent, removal by velocity, a rubber band past the ends, a physical spring, and
/// the scroll hand-off to content at the top-most detent.
enum Fluid: Preset {
    static let summary = "Modern sheet: momentum, rubber band"
    static let constraint = ConstraintKind.top
    static let capabilities: Set<PresetCapability> = [.scrollHandOff, .keyboard, .contentFit]

    /// The detents without the option: full 18 pt from the top, half at H/2, tip 69 pt high.
    static let defaultDetents: [(key: String, value: OptionValue)] = [
        ("full", .object([("fromTop", .number(18))])),
        ("half", .object([("fraction", .number(0.5))])),
        ("tip", .object([("height", .number(69))])),
    ]

    /// The most detents a configuration may name, and the longest name, in UTF-8 bytes.
    /// What a detent spec may be, for the message refusing another.
    static let detentShapes =
        "expected exactly one of {\"fromTop\": pt}, {\"fraction\": f}, {\"height\": pt}, {\"content\": pt}, {\"contentAnchor\": pt} (with an optional \"offset\": pt)"
    static let maxDetents = 16
    static let maxDetentName = 32

    static func options(on geometry: Geometry) -> [OptionInfo] {
        [
            OptionInfo(
                "detents", "object",
                .object(defaultDetents),
                "name → {\"fromTop\": pt} | {\"fraction\": f} | {\"height\": pt} | {\"content\": pt} (shows contentHeight + pt) | {\"contentAnchor\": pt, \"offset\": pt} (shows the content down to that point, and offset more), 1 to 16 of them, names of 1 to 32 bytes; \"hidden\" is reserved"
            ),
            OptionInfo("hideable", "boolean", .bool(true), "adds the hidden detent at H"),
            OptionInfo("rubberBand", "boolean", .bool(true), "resist over-drag instead of clamping"),
            OptionInfo("decelerationRate", "number", .number(0.998), "momentum projection rate r, (0, 1)"),
            OptionInfo("removalVelocity", "number", .number(5.5), "v / distance to hidden (1/s) that dismisses"),
            OptionInfo("skipDetents", "boolean", .bool(false), "let a fling pass more than one detent"),
            OptionInfo(
                "undimmedDetent", "string", .string("tip"), fixed: false,
                "largest detent with no dimming (default: the lowest visible)"),
            OptionInfo(
                "maxDimAlpha", "number", .number(0.3), "dimmer alpha at and above the detent over the undimmed one"),
            OptionInfo("response", "number", .number(0.4), "spring response, s"),
            OptionInfo("dampingRatio", "number", .number(1.0), "spring damping ratio"),
            OptionInfo(
                "keyboard", "string", .string("lift"),
                "while the keyboard is up: lift (detents ride up by its inset), extend (to the top-most and back), none"
            ),
            OptionInfo("keyboardDrag", "boolean", .bool(true), "a drag may begin while the keyboard is up"),
            OptionInfo(
                "layoutMotion", "string", .string("release"),
                "how a layout change moves the card: release (the release law's spring) or none (a jump)"),
            OptionInfo(
                "contentScrollsAt", "string|array", .string("topMost"),
                "where the content scrolls: topMost, everywhere, or an array of detent names"),
            OptionInfo(
                "dragFirst", "string", .string("content"),
                "at a detent where the content scrolls, who takes an upward drag first: content, or sheet (it grows to the top-most first)"
            ),
            OptionInfo(
                "dismissFrom", "string", .string("any"),
                "where a release may remove the card: any detent, or only the lowest (never skip a detent on the way out)"
            ),
            OptionInfo(
                "thresholds", "object|null", .null,
                "{\"expand\": f, \"collapse\": f, \"dismiss\": f}, each in (0, 1]: a release moves to the next detent once the projection passed that fraction of the way (null: the nearest detent to the projection)"
            ),
            OptionInfo(
                "momentumHandOff", "boolean", .bool(false),
                "a release spring that reaches the top-most detent with velocity left hands it to the content (scrollFling)"
            ),
            OptionInfo(
                "interactiveUpThrough", "string|null", .null,
                "the detent up through which the page behind takes input (at it and below), whatever the dimmer; null: modal while on screen"
            ),
            OptionInfo(
                "recede", "object", RecedeLaw.standard(ProgressScale(low: 1, top: 0)).option,
                "what the card does to the sheet it is stacked on (its parent) at its top-most detent, in proportion to its progress: {\"scale\": (0, 1], \"lift\": pt, \"cornerRadius\": pt, \"alpha\": shade [0, 1], \"backdrop\": a root sheet recedes the page behind too}; members not sent take these defaults"
            ),
            OptionInfo(
                "edge", "string", .string("bottom"),
                "the edge the card comes from: bottom, top, left, right (left and right need geometry.width)"),
        ]
    }

    static func configuration(
        _ reader: inout OptionReader, in layout: Layout
    ) throws(ConfigurationError) -> PresetConfiguration {
        // Every length below is along the edge's axis (Geometry.along): H, the hidden constant
        // and the rubber band's dimension are the bottom sheet's of the main dimension.
        let edge = try reader.choice("edge", default: Edge.bottom)
        let geometry = try layout.geometry.along(edge)
        let H = geometry.availableHeight
        var specs = defaultDetents
        if let value = reader.take("detents") {
            guard case let .object(members) = value else {
                throw .invalidOption(
                    field: "options.detents", reason: "expected an object of name → spec, got \(value.typeName)")
            }
            guard !members.isEmpty else {
                throw .invalidOption(field: "options.detents", reason: "at least one detent is needed")
            }
            // A session's cost grows with its detents (each is in its laws and their pre-rendered
            // JSON: 480 detents cost ≈ 133 KiB a session); 16 bound it, and no sheet needs more.
            guard members.count <= Self.maxDetents else {
                throw .invalidOption(
                    field: "options.detents", reason: "at most \(Self.maxDetents) detents, got \(members.count)")
            }
            specs = members
        }
        var detentRules: [DetentRule] = []
        for (name, spec) in specs {
            let path = "options.detents.\(name)"
            guard name != "hidden" else {
                throw .invalidOption(field: path, reason: "\"hidden\" is reserved: use hideable")
            }
            guard !name.isEmpty, !detentRules.contains(where: { $0.name == name }) else {
                throw .invalidOption(field: path, reason: "detent names must be unique and non-empty")
            }
            // Names are repeated in the laws and every answer: bounded like the detents' count.
            guard name.utf8.count <= Self.maxDetentName else {
                throw .invalidOption(field: path, reason: "detent names are at most \(Self.maxDetentName) bytes")
            }
            // One member names the kind; a contentAnchor may add its `offset`.
            guard case let .object(members) = spec, !members.isEmpty else {
                throw .invalidOption(field: path, reason: Self.detentShapes)
            }
            let anchored = members.contains { $0.key == DetentRule.Kind.contentAnchor.rawValue }
            var kv = members
            var offsetValue: OptionValue?
            if anchored, let k = kv.firstIndex(where: { $0.key == "offset" }) {
                offsetValue = kv.remove(at: k).value
            }
            guard kv.count == 1 else { throw .invalidOption(field: path, reason: Self.detentShapes) }
            guard let kind = DetentRule.Kind(rawValue: kv[0].key) else {
                throw .unknownOption(field: "\(path).\(kv[0].key)", preset: .fluid)
            }
            // Points are bounded, not by H: the layout may change (a rotation), and a constant
            // outside [0, H] on some layout is clamped to it there (LayoutLaw step 1).
            let range: ClosedRange<Double> = kind == .fraction ? 0...1 : 0...1e6
            let value = try OptionReader.number(kv[0].value, path: "\(path).\(kind.rawValue)", in: range)
            let offset = try offsetValue.map { v throws(ConfigurationError) in
                try OptionReader.number(v, path: "\(path).offset", in: 0...1e6)
            }
            detentRules.append(DetentRule(name: name, kind: kind, value: value, offset: offset ?? 0))
        }
        let hideable = try reader.bool("hideable", default: true)
        let keyboard = try reader.choice("keyboard", default: KeyboardPolicy.lift)
        let keyboardDrag = try reader.bool("keyboardDrag", default: true)
        let motionName = try reader.string("layoutMotion") ?? "release"
        guard motionName == "release" || motionName == "none",
            let motion = LayoutMotion.named(motionName, duration: nil)
        else {
            throw .invalidOption(
                field: "options.layoutMotion",
                reason:
                    "must be \"release\" or \"none\" (a layout event may name a timing curve), got \"\(motionName)\"")
        }
        let contentScroll: ContentScroll
        switch reader.take("contentScrollsAt") {
        case nil, .string("topMost")?: contentScroll = .topMost
        case .string("everywhere")?: contentScroll = .everywhere
        case let .array(items)? where !items.isEmpty && items.count <= Self.maxDetents:
            var names: [String] = []
            for (k, item) in items.enumerated() {
                guard case let .string(name) = item, detentRules.contains(where: { $0.name == name }) else {
                    throw .invalidOption(
                        field: "options.contentScrollsAt[\(k)]",
                        reason: "must name a detent of this session: \(detentRules.map(\.name).joined(separator: ", "))"
                    )
                }
                names.append(name)
            }
            contentScroll = .detents(names)
        case let value?:
            throw .invalidOption(
                field: "options.contentScrollsAt",
                reason:
                    "must be \"topMost\", \"everywhere\" or an array of 1 to \(Self.maxDetents) detent names, got \(value.typeName)"
            )
        }
        let dragFirst = try reader.string("dragFirst") ?? "content"
        guard dragFirst == "content" || dragFirst == "sheet" else {
            throw .invalidOption(
                field: "options.dragFirst", reason: "must be \"content\" or \"sheet\", got \"\(dragFirst)\"")
        }
        let momentumHandOff = try reader.bool("momentumHandOff", default: false)
        let upThrough = try reader.take("interactiveUpThrough").flatMap { v throws(ConfigurationError) -> String? in
            if v == .null { return nil }
            guard case let .string(name) = v, detentRules.contains(where: { $0.name == name }) else {
                throw .invalidOption(
                    field: "options.interactiveUpThrough",
                    reason:
                        "must name a detent of this session (\(detentRules.map(\.name).joined(separator: ", "))) or be null"
                )
            }
            return name
        }
        let dismissFrom = try reader.string("dismissFrom") ?? "any"
        guard dismissFrom == "any" || dismissFrom == "lowest" else {
            throw .invalidOption(
                field: "options.dismissFrom", reason: "must be \"any\" or \"lowest\", got \"\(dismissFrom)\"")
        }
        let thresholds = try ReleaseThresholds(reader.take("thresholds"))
        let layoutLaw = LayoutLaw(
            detents: detentRules, hideable: hideable, keyboard: keyboard, keyboardDrag: keyboardDrag, motion: motion,
            edge: edge)
        let (placed, unreachable) = layoutLaw.resolve(layout)
        let visible = placed.filter { !$0.isHidden }
        guard !visible.isEmpty else {
            throw .invalidOption(
                field: layout.contentHeight == nil ? "contentHeight" : "options.detents",
                reason: layout.contentHeight == nil
                    ? "every detent fits the content: send contentHeight (points) so that they can be placed"
                    : "no detent is reachable")
        }
        let rubberBand = try reader.bool("rubberBand", default: true)
        let rate = try reader.number("decelerationRate", default: 0.998, in: 0...0.9999, open: true)
        let removal = try reader.number("removalVelocity", default: 5.5, in: 0...1e6)
        let skip = try reader.bool("skipDetents", default: false)
        let lowestVisible = visible[visible.count - 1]
        let undimmedName = try reader.string("undimmedDetent") ?? lowestVisible.name
        guard detentRules.contains(where: { $0.name == undimmedName }) else {
            throw .unknownDetent(field: "options.undimmedDetent", name: undimmedName, known: detentRules.map(\.name))
        }
        // An undimmed detent the content cannot reach: the lowest reachable one is undimmed.
        let undimmedIndex = visible.firstIndex { $0.name == undimmedName } ?? visible.count - 1
        let maxDim = try reader.number("maxDimAlpha", default: 0.3, in: 0...1)
        let response = try reader.number("response", default: 0.4, in: 0.01...10)
        let zeta = try reader.number("dampingRatio", default: 1.0, in: 0.05...10)
        // alpha: 0 at and below the undimmed detent, maxDim at and above the next detent up.
        let dimmer =
            undimmedIndex == 0
            ? DimmerCurve.none
            : DimmerCurve(
                full: maxDim, fullAt: visible[undimmedIndex - 1].constant, clearAt: visible[undimmedIndex].constant)
        let detents = placed
        let hidden = Detent(name: "hidden", constant: H, isHidden: true)
        // Over-drag past the top-most and the lowest detent: resisted (f(x) = (1 − 1/(x·0.55/h + 1))·h,
        // UIScrollView's band) or clamped.
        let dragLaw = DragLaw(
            lower: visible[0].constant, upper: detents[detents.count - 1].constant,
            rubberBand: rubberBand ? RubberBand(coefficient: 0.55, dimension: geometry.height) : nil, dimmer: dimmer,
            progress: ProgressScale(spanning: detents), edge: edge)
        let recede = try recede(reader.take("recede"), progress: dragLaw.progress)
        let rules = releaseRules(
            visible: visible, hidden: hideable ? hidden : nil, removal: removal, skip: skip,
            sequential: dismissFrom == "lowest", thresholds: thresholds)
        let releaseLaw = ReleaseLaw(
            projection: MomentumProjection(decelerationRate: rate), rules: rules,
            motions: [MotionRule([], .spring(response: response, dampingRatio: zeta))], alphaRule: .position,
            handOff: momentumHandOff && contentScroll.scrolls(at: visible[0], topMost: visible[0]) ? visible[0] : nil)
        return PresetConfiguration(
            detents: detents, hiddenConstant: H, showDefault: lowestVisible,
            dismissTarget: hideable ? hidden : lowestVisible, dragLaw: dragLaw,
            releaseLaw: releaseLaw, layoutLaw: layoutLaw,
            // A detent the content cannot reach is above every reachable one (or not placed yet):
            // the page takes input at every detent.
            interactiveFrom: upThrough.map { name in placed.first { $0.name == name }?.constant ?? visible[0].constant
            },
            contentScroll: contentScroll,
            contentFirst: dragFirst == "content", unreachable: unreachable, recede: recede,
            effectiveOptions: [
                ("detents", .object(specs)), ("hideable", .bool(hideable)), ("rubberBand", .bool(rubberBand)),
                ("decelerationRate", .number(rate)), ("removalVelocity", .number(removal)),
                ("skipDetents", .bool(skip)), ("undimmedDetent", .string(undimmedName)),
                ("maxDimAlpha", .number(maxDim)), ("response", .number(response)), ("dampingRatio", .number(zeta)),
                ("keyboard", .string(keyboard.rawValue)), ("keyboardDrag", .bool(keyboardDrag)),
                ("layoutMotion", .string(motion.name)), ("contentScrollsAt", contentScroll.option),
                ("dragFirst", .string(dragFirst)), ("dismissFrom", .string(dismissFrom)),
                ("thresholds", thresholds?.option ?? .null), ("momentumHandOff", .bool(momentumHandOff)),
                ("interactiveUpThrough", upThrough.map { .string($0) } ?? .null),
                ("recede", recede.option), ("edge", .string(edge.rawValue)),
            ])
    }
}
