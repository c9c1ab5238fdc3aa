/// A session's resolved configuration: the preset with its options applied to a geometry. Where
/// the card can stop (detents), how it is dimmed, and the rules that move it. Immutable and
/// shared by reference, so a session carries one pointer to it.
public final class SheetModel: Sendable {
    /// The preset it was built from.
    public let preset: PresetName
    /// The layout it was built for: the screen, the keyboard and the content's height.
    public let layout: Layout
    /// The screen it was built for.
    public var geometry: Geometry { layout.geometry }
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
    /// The options as the client sent them (a layout event's `options` change these).
    public let sentOptions: [(key: String, value: OptionValue)]
    /// fluid: where the detents are on any layout and what the keyboard does; nil for the presets
    /// whose detents follow their own formulas of the geometry.
    public let layoutLaw: LayoutLaw?
    /// The detents the content cannot reach on this layout (left out of `detents`).
    public let unreachable: [String]
    /// Whether the page behind takes input, by the card's constant.
    public let modality: ModalityLaw
    /// What the card does to the sheet it is stacked on (and, with `backdrop`, to the page
    /// behind a root card), by the card's constant.
    public let recede: RecedeLaw
    /// Where the content scrolls (scroll hand-off presets).
    public let contentScroll: ContentScroll
    /// At a detent where the content scrolls, whether the content takes an upward drag before the
    /// sheet grows to the top-most detent.
    public let contentFirst: Bool

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

    /// Resolves `options` (as sent: unknown keys are errors naming them) for `preset` on `geometry`
    /// with no keyboard and no content height.
    public convenience init(
        preset: PresetName, geometry: Geometry = .standard,
        options: [(key: String, value: OptionValue)] = []
    ) throws(ConfigurationError) {
        try self.init(preset: preset, layout: Layout(geometry: geometry), options: options)
    }

    /// Resolves `options` (as sent: unknown keys are errors naming them) for `preset` on `layout`.
    public init(
        preset: PresetName, layout: Layout, options: [(key: String, value: OptionValue)]
    ) throws(ConfigurationError) {
        self.preset = preset
        self.layout = layout
        self.sentOptions = options
        var reader = OptionReader(options, preset: preset)
        let configuration = try preset.definition.configuration(&reader, in: layout)
        try reader.finish()
        // Reduced motion: every motion jumps, and the laws say so (a client predicts the jump).
        layoutLaw = layout.reducedMotion ? configuration.layoutLaw?.jumping : configuration.layoutLaw
        unreachable = configuration.unreachable
        modality = ModalityLaw(interactiveFrom: configuration.interactiveFrom ?? configuration.hiddenConstant)
        contentScroll = configuration.contentScroll
        recede = configuration.recede ?? .standard(configuration.dragLaw.progress)
        contentFirst = configuration.contentFirst
        detents = configuration.detents
        hiddenConstant = configuration.hiddenConstant
        showDefault = configuration.showDefault
        dismissTarget = configuration.dismissTarget
        initialDetent = preset.initialDetent.flatMap { name in configuration.detents.first { $0.name == name } }
        scrollHandOff = preset.has(.scrollHandOff)
        effectiveOptions = configuration.effectiveOptions
        dragLaw = configuration.dragLaw
        releaseLaw = layout.reducedMotion ? configuration.releaseLaw.jumping : configuration.releaseLaw
    }

    /// What the keyboard does (`none` for a preset without the capability, and for a sheet from
    /// another edge than the bottom: the keyboard is not along its axis).
    var keyboard: KeyboardPolicy { layoutLaw.map { $0.edge == .bottom ? $0.keyboard : .none } ?? .none }

    /// How a layout change moves a card that is not under the finger, unless the event says.
    var layoutMotion: LayoutMotion { layout.reducedMotion ? .none : layoutLaw?.motion ?? .release }

    /// The model for the next layout and options (merged: a member replaces its key's value, a
    /// null member removes it).
    func relaid(_ change: LayoutChange) throws(ConfigurationError) -> SheetModel {
        var next = layout
        if let g = change.geometry { next.geometry = g }
        if let k = change.keyboardInset { next.keyboardInset = k }
        if let h = change.contentHeight { next.contentHeight = h }
        let reduced = change.reducedMotion ?? layout.reducedMotion
        // The inset is bounded by the screen, which may have changed with it.
        next = try Layout(geometry: next.geometry, keyboardInset: next.keyboardInset, contentHeight: next.contentHeight)
        next.reducedMotion = reduced
        var options = sentOptions
        for (key, value) in change.options ?? [] {
            options.removeAll { $0.key == key }
            if value != .null { options.append((key, value)) }
        }
        return try SheetModel(preset: preset, layout: next, options: options)
    }

    /// Whether the content scrolls while the card rests at `detent` (a preset with scroll hand-off).
    func contentScrolls(at detent: Detent) -> Bool {
        scrollHandOff && contentScroll.scrolls(at: detent, topMost: topMost)
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
            contentFirst: contentFirst, finish: finish)
    }

    /// What moves the card from `from` to `to`: the release law's motion (twitter shows with its
    /// spring: `releasedAbove` never applies to a show), under the request's own reduced-motion
    /// setting (nil: the session's).
    func animationCurve(
        from: Double, to target: Detent, velocity v: Double, isShow: Bool, reducedMotion: Bool? = nil
    ) -> (curve: AnimationCurve, duration: Double) {
        releaseLaw.motion(from: from, to: target, velocity: v, isShow: isShow, reducedMotion: reducedMotion)
    }
}
