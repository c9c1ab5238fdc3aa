/// A session's resolved configuration: the preset with its options applied to a geometry. Where
/// the card can stop (detents), how it is dimmed, and the rules that move it. Immutable and
/// shared by reference, so a session carries one pointer to it.
public final class SheetModel: Sendable {
    /// The preset it was built from.
    public let preset: PresetName
    /// The screen it was built for.
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

    /// Where a new session that names no detent rests (the preset's `initialDetent`); nil: it
    /// starts hidden.
    let initialDetent: Detent?
    /// Whether a drag may hand the movement to an inner scroll view, and pan answers say who
    /// took it (the preset's `scrollHandOff` capability).
    let scrollHandOff: Bool

    var progressScale: ProgressScale { dragLaw.progress }
    /// How the dimmer moves during an animation (the release law's).
    var alphaRule: AlphaRule { releaseLaw.alphaRule }

    /// The constraint system of the constant.
    public var constraint: ConstraintKind { preset.constraint }

    /// The top-most detent (the most open: the smallest constant).
    var topMost: Detent { detents[0] }

    /// Resolves `options` (as sent: unknown keys are errors naming them) for `preset` on `geometry`.
    public init(
        preset: PresetName, geometry: Geometry = .standard,
        options: [(key: String, value: OptionValue)] = []
    ) throws(ConfigurationError) {
        self.preset = preset
        self.geometry = geometry
        var reader = OptionReader(options, preset: preset)
        let configuration = try preset.definition.configuration(&reader, on: geometry)
        try reader.finish()
        detents = configuration.detents
        hiddenConstant = configuration.hiddenConstant
        showDefault = configuration.showDefault
        dismissTarget = configuration.dismissTarget
        initialDetent = preset.initialDetent.flatMap { name in configuration.detents.first { $0.name == name } }
        scrollHandOff = preset.has(.scrollHandOff)
        effectiveOptions = configuration.effectiveOptions
        dragLaw = configuration.dragLaw
        releaseLaw = configuration.releaseLaw
    }

    /// The position of `detent` in `detents` (detents are compared by name, which is unique).
    func index(of detent: Detent) -> Int {
        detents.firstIndex { $0.name == detent.name } ?? 0
    }

    /// transition, whose two detents are each other's counterpart: the index of the detent a drag
    /// from the detent at `origin` heads for.
    @inline(__always) func counterpart(of origin: Int) -> Int { 1 - origin }

    /// The detent named `name`, if the preset has it.
    public func detent(named name: String) -> Detent? { detents.first { $0.name == name } }

    /// Dimmer alpha at `constant` by the position rule.
    @inline(__always) public func alpha(at constant: Double) -> Double { dimmer.alpha(at: constant) }

    /// How open the card is at `constant`: 0 at hidden (or the lowest detent), 1 at the top-most.
    @inline(__always) public func progress(at constant: Double) -> Double { progressScale.progress(of: constant) }

    /// transition: the fraction of the way from the detent at `origin` toward its counterpart.
    func transitionPercent(constant c: Double, origin: Int) -> Double {
        DragFinish.percent(at: c, from: detents[origin].constant, toward: detents[counterpart(of: origin)].constant)
    }

    /// The drag segment that starts at `start` with the finger at `base`, from the detent at
    /// `origin` (an index into `detents`).
    func dragSegment(start: Double, base: Double, origin: Int, contentCanScroll: Bool) -> DragSegment {
        var finish: DragFinish?
        if let threshold = dragLaw.finishThreshold {
            // transition, the one preset with a finish: toward the origin's counterpart.
            let other = detents[counterpart(of: origin)]
            finish = DragFinish(
                from: detents[origin].constant, toward: other.constant, threshold: threshold, detent: other)
        }
        return DragSegment(
            start: start, base: base, origin: detents[origin], contentCanScroll: scrollHandOff && contentCanScroll,
            finish: finish)
    }

    /// What moves the card from `from` to `to`: the release law's motion (twitter shows with its
    /// spring: `releasedAbove` never applies to a show).
    func animationCurve(
        from: Double, to target: Detent, velocity v: Double, isShow: Bool
    ) -> (curve: AnimationCurve, duration: Double) {
        releaseLaw.motion(from: from, to: target, velocity: v, isShow: isShow)
    }
}
