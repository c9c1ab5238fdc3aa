/// swipeCell: content that slides up by d (top at −d) and back (initial at 0); a session starts
/// resting at initial, and a release goes by the sign of the velocity.
enum SwipeCell: Preset {
    static let summary = "A cell that slides up over actions"
    static let constraint = ConstraintKind.offset
    static let initialDetent: String? = "initial"

    static func options(on geometry: Geometry) -> [OptionInfo] {
        [OptionInfo("swipeDistance", "number", .number(80), "how far the content slides up, pt")]
    }

    static func configuration(
        _ reader: inout OptionReader, in layout: Layout
    ) throws(ConfigurationError) -> PresetConfiguration {
        let geometry = layout.geometry
        let d = try reader.number("swipeDistance", default: 80, in: 0...geometry.height, open: true)
        let top = Detent(name: "top", constant: -d)
        let initial = Detent(name: "initial", constant: 0)
        let detents = [top, initial]
        let dragLaw = DragLaw(lower: -d, upper: 0, dimmer: .none, progress: ProgressScale(spanning: detents))
        let releaseLaw = ReleaseLaw(
            rules: [
                ReleaseRule([.compare(.velocity, .less, 0)], .detent(top)) {
                    "velocity \(Format.number($0.velocity)) < 0"
                },
                ReleaseRule([.compare(.velocity, .greater, 0)], .detent(initial)) {
                    "velocity \(Format.number($0.velocity)) > 0"
                },
                // At rest: the nearer one; a tie goes to initial (listed first).
                ReleaseRule(
                    [], .nearest(candidates: [initial, top], toProjection: false, clampToNeighbours: false)
                ) { _ in "at rest: nearer detent" },
            ],
            motions: [MotionRule([], .timed(.easeOut, duration: 0.25))], alphaRule: .interpolate)
        return PresetConfiguration(
            detents: detents, hiddenConstant: 0, showDefault: top, dismissTarget: initial,
            dragLaw: dragLaw, releaseLaw: releaseLaw, effectiveOptions: [("swipeDistance", .number(d))])
    }
}
