/// transition: a full-screen card (large, at y = 0) and a mini card docked above the bottom
/// safe area. A release past half of the way goes on, else back; a drag past the finish
/// threshold completes the transition by itself.
enum Transition: Preset {
    static let summary = "Mini player ↔ full player"
    static let constraint = ConstraintKind.frameY
    static let capabilities: Set<PresetCapability> = [.dragFinish]

    static func options(on geometry: Geometry) -> [OptionInfo] {
        [
            OptionInfo("miniHeight", "number", .number(60), "height of the docked mini card, pt"),
            OptionInfo(
                "finishThreshold", "number|null", .number(0.8),
                "fraction of the way at which a drag finishes the transition at once; null disables"),
            OptionInfo("duration", "number", .number(0.35), "duration of a whole transition, s"),
            OptionInfo("completionSpeed", "number", .number(0.75), "speed factor of the remaining animation"),
        ]
    }

    static func configuration(
        _ reader: inout OptionReader, in layout: Layout
    ) throws(ConfigurationError) -> PresetConfiguration {
        let geometry = layout.geometry
        let h = geometry.height
        let mini = try reader.number("miniHeight", default: 60, in: 0...(h - geometry.safeAreaBottom))
        let threshold: Double?
        switch reader.take("finishThreshold") {
        case nil: threshold = 0.8
        case .null?: threshold = nil
        case let value?:
            threshold = try OptionReader.number(value, path: "options.finishThreshold", in: 0...1, openLower: true)
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
        // Exactly two detents: `SheetModel.counterpart(of:)` relies on it for the finish.
        let detents = [large, miniDetent]
        let dragLaw = DragLaw(
            lower: 0, upper: miniY, dimmer: DimmerCurve(full: 0.7, fullAt: 0, clearAt: miniY),
            progress: ProgressScale(spanning: detents), finishThreshold: threshold)
        // From either detent, past half of the way to the other goes there, else back.
        let percent: @Sendable (ReleaseFacts) -> String = { f in
            let other = f.origin.name == large.name ? miniDetent : large
            return Format.number(
                DragFinish.percent(at: f.constant, from: f.origin.constant, toward: other.constant), decimals: 3)
        }
        let releaseLaw = ReleaseLaw(
            rules: [
                ReleaseRule(
                    [
                        .origin(large.name),
                        .compare(.fraction(from: large.constant, toward: miniDetent.constant), .greater, 0.5),
                    ], .detent(miniDetent)
                ) { "percent \(percent($0)) > 0.5" },
                ReleaseRule([.origin(large.name)], .detent(large)) { "percent \(percent($0)) ≤ 0.5: back" },
                ReleaseRule(
                    [.compare(.fraction(from: miniDetent.constant, toward: large.constant), .greater, 0.5)],
                    .detent(large)
                ) { "percent \(percent($0)) > 0.5" },
                ReleaseRule([], .detent(miniDetent)) { "percent \(percent($0)) ≤ 0.5: back" },
            ],
            motions: [
                MotionRule(
                    [],
                    .timedRemaining(
                        .easeInOut, whole: duration, span: abs(miniDetent.constant - large.constant), speed: speed))
            ], alphaRule: .position)
        return PresetConfiguration(
            detents: detents, hiddenConstant: h, showDefault: large, dismissTarget: miniDetent, dragLaw: dragLaw,
            releaseLaw: releaseLaw,
            effectiveOptions: [
                ("miniHeight", .number(mini)), ("finishThreshold", threshold.map { .number($0) } ?? .null),
                ("duration", .number(duration)), ("completionSpeed", .number(speed)),
            ])
    }
}
