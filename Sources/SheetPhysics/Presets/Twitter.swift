/// twitter: a card of height C = h · ratio, open at 0 or hidden at C (the constant pushes the card
/// down from the view's bottom), released by direction and speed.
enum Twitter: Preset {
    static let summary = "Action menu pinned to the bottom"
    static let constraint = ConstraintKind.bottom

    static func options(on geometry: Geometry) -> [OptionInfo] {
        [
            OptionInfo(
                "cardHeightRatio", "number", .number(0.75), "card height C as a fraction of the screen height, (0, 1]"),
            OptionInfo("maxDimAlpha", "number", .number(0.7), "dimmer alpha with the card open, [0, 1]"),
        ]
    }

    static func configuration(
        _ reader: inout OptionReader, in layout: Layout
    ) throws(ConfigurationError) -> PresetConfiguration {
        let geometry = layout.geometry
        let ratio = try reader.number("cardHeightRatio", default: 0.75, in: 0...1, open: true)
        let maxDim = try reader.number("maxDimAlpha", default: 0.7, in: 0...1)
        let C = geometry.height * ratio
        let open = Detent(name: "open", constant: 0)
        let hidden = Detent(name: "hidden", constant: C, isHidden: true)
        let detents = [open, hidden]
        // Unbounded: the card may be pulled above open.
        let dragLaw = DragLaw(
            lower: nil, upper: nil, dimmer: DimmerCurve(full: maxDim, fullAt: 0, clearAt: C),
            progress: ProgressScale(spanning: detents))
        // The seed compares Int(constant): truncation toward zero.
        let t: @Sendable (ReleaseFacts) -> String = { f in Format.number(f.constant.rounded(.towardZero)) }
        let releaseLaw = ReleaseLaw(
            rules: [
                ReleaseRule([.compare(.truncatedConstant, .less, 0)], .detent(open)) {
                    "pulled above open (trunc \(t($0)) < 0)"
                },
                ReleaseRule(
                    [
                        .compare(.velocity, .greater, 0), .compare(.velocity, .less, 300),
                        .compare(.truncatedConstant, .less, 180),
                    ], .detent(open)
                ) {
                    "slow downward release (velocity \(Format.number($0.velocity)) < 300) near open (trunc \(t($0)) < 180)"
                },
                ReleaseRule([.compare(.velocity, .greater, 0)], .detent(hidden)) {
                    "downward release (velocity \(Format.number($0.velocity)) > 0)"
                },
                ReleaseRule([], .detent(open)) {
                    "upward or still release (velocity \(Format.number($0.velocity)) ≤ 0)"
                },
            ],
            motions: [
                MotionRule([.toHidden], .durationSpring(dampingRatio: 0.9, initialVelocity: 0.6, duration: 0.5)),
                MotionRule([.releasedAbove(0)], .timed(.easeInOut, duration: 0.2)),
                MotionRule([], .durationSpring(dampingRatio: 0.9, initialVelocity: 3, duration: 0.3)),
            ], alphaRule: .interpolate)
        return PresetConfiguration(
            detents: detents, hiddenConstant: C, showDefault: open, dismissTarget: hidden, dragLaw: dragLaw,
            releaseLaw: releaseLaw,
            effectiveOptions: [("cardHeightRatio", .number(ratio)), ("maxDimAlpha", .number(maxDim))])
    }
}
