/// facebook: a card with three detents (expanded at E from the top, normal at H/2, hidden at H),
/// released by velocity first, then by position.
enum Facebook: Preset {
    static let summary = "Share sheet: expanded, normal, hidden"
    static let constraint = ConstraintKind.top

    static func options(on geometry: Geometry) -> [OptionInfo] {
        [
            OptionInfo(
                "expandedOffset", "number", .number(30),
                "constant of the expanded detent (card top to safe-area top), pt")
        ]
    }

    static func configuration(
        _ reader: inout OptionReader, in layout: Layout
    ) throws(ConfigurationError) -> PresetConfiguration {
        let geometry = layout.geometry
        let H = geometry.availableHeight
        let S = geometry.safeAreaHeight
        let E = try reader.number("expandedOffset", default: 30, in: 0...H)
        guard E < H / 2 else {
            throw .invalidOption(
                field: "options.expandedOffset",
                reason: "must be less than the normal detent H/2 = \(Format.number(H / 2))")
        }
        let expanded = Detent(name: "expanded", constant: E)
        let normal = Detent(name: "normal", constant: H / 2)
        let hidden = Detent(name: "hidden", constant: H, isHidden: true)
        let detents = [expanded, normal, hidden]
        // The seed skips updates at or above E; we clamp. No lower limit.
        let dragLaw = DragLaw(
            lower: E, upper: nil, dimmer: DimmerCurve(full: 0.7, fullAt: H / 2, clearAt: H),
            progress: ProgressScale(spanning: detents))
        let releaseLaw = ReleaseLaw(
            rules: [
                ReleaseRule([.compare(.velocity, .greater, 1500)], .detent(hidden)) {
                    "velocity \(Format.number($0.velocity)) > 1500"
                },
                ReleaseRule([.compare(.constant, .less, 0.25 * H)], .detent(expanded)) {
                    "constant \(Format.number($0.constant)) < 0.25·H = \(Format.number(0.25 * H))"
                },
                ReleaseRule([.compare(.constant, .less, S - 70)], .detent(normal)) {
                    "constant \(Format.number($0.constant)) < S − 70 = \(Format.number(S - 70))"
                },
                ReleaseRule([], .detent(hidden)) {
                    "constant \(Format.number($0.constant)) ≥ S − 70 = \(Format.number(S - 70))"
                },
            ],
            motions: [MotionRule([], .timed(.easeIn, duration: 0.25))], alphaRule: .interpolate)
        return PresetConfiguration(
            detents: detents, hiddenConstant: H, showDefault: normal, dismissTarget: hidden, dragLaw: dragLaw,
            releaseLaw: releaseLaw, effectiveOptions: [("expandedOffset", .number(E))])
    }
}
