/// One card's state machine: takes an event and its time, returns the new state and what
/// happened. A value type with no clock of its own: time is always a parameter (seconds on the
/// session's clock, never decreasing).
public struct SheetSession: Sendable {
    /// The resolved configuration (a layout event replaces it).
    public internal(set) var model: SheetModel

    enum Phase: Sendable {
        case hidden
        /// At rest at `model.detents[index]`.
        case resting(Int)
        case dragging(Drag)
        case animating(Animation)
    }

    var phase: Phase
    /// The current drag's velocity samples, kept outside `phase` so appending never copies them.
    var samples = VelocitySamples()
    /// The number of the last animation started (0: none yet).
    public internal(set) var animationCount = 0
    /// The time of the last accepted event.
    public internal(set) var lastTime = -Double.infinity
    /// transition: the drag finished the transition at its threshold; its later events are
    /// answered unchanged until the next `began`.
    var finishedDrag = false
    /// The number of layout changes accepted: every answer's laws are those of this revision.
    public internal(set) var layoutRevision = 0
    /// `keyboard: extend`: the detent the keyboard took the card from, to go back to when it goes.
    var keyboardReturn: String?

    /// A new session: hidden, or resting at `initialDetent` (or at the preset's own initial detent:
    /// swipeCell starts resting at `initial`).
    public init(model: SheetModel, initialDetent: String? = nil) throws(ConfigurationError) {
        self.model = model
        if let name = initialDetent {
            guard let d = model.detent(named: name) else {
                throw .unknownDetent(field: "initialDetent", name: name, known: model.detents.map(\.name))
            }
            phase = d.isHidden ? .hidden : .resting(model.index(of: d))
        } else if let d = model.initialDetent {
            phase = .resting(model.index(of: d))
        } else {
            phase = .hidden
        }
    }

    /// The coarse state at `time`.
    public func state(at time: Double) -> SheetState { snapshot(at: time).state }

    /// The session at `time`: an animation is sampled there; one that has ended counts as settled.
    public func snapshot(at time: Double) -> SheetSnapshot {
        switch phase {
        case .hidden:
            let c = model.hiddenConstant
            return SheetSnapshot(
                state: .hidden, detent: model.detents.last(where: \.isHidden), constant: c,
                dimmerAlpha: model.alpha(at: c), progress: model.progress(at: c), velocity: 0, animation: nil,
                time: time)
        case let .resting(i):
            let d = model.detents[i]
            return SheetSnapshot(
                state: .resting, detent: d, constant: d.constant, dimmerAlpha: model.alpha(at: d.constant),
                progress: model.progress(at: d.constant), velocity: 0, animation: nil, time: time)
        case let .dragging(drag):
            return SheetSnapshot(
                state: .dragging, detent: nil, constant: drag.constant, dimmerAlpha: model.alpha(at: drag.constant),
                progress: model.progress(at: drag.constant), velocity: 0, animation: nil, time: time)
        case let .animating(a):
            if time >= a.endTime {
                return SheetSnapshot(
                    state: a.dismiss ? .hidden : .resting, detent: a.detent, constant: a.to,
                    dimmerAlpha: a.toAlpha,
                    progress: model.progress(at: a.to), velocity: 0, animation: nil, time: time)
            }
            let s = a.sample(at: time)
            return SheetSnapshot(
                state: .animating, detent: a.detent, constant: s.constant, dimmerAlpha: s.dimmerAlpha,
                progress: s.progress, velocity: s.velocity, animation: a, time: time)
        }
    }

    /// The running animation at `time`, if any.
    public func animation(at time: Double) -> Animation? {
        if case let .animating(a) = phase, time < a.endTime { return a }
        return nil
    }

    /// The current drag's segment, while dragging: with `model.dragLaw`, where the next
    /// `changed` puts the card.
    public var dragSegment: DragSegment? {
        if case let .dragging(d) = phase { return segment(of: d) }
        return nil
    }

    func segment(of d: Drag) -> DragSegment {
        model.dragSegment(start: d.start, base: d.base, origin: d.origin, contentCanScroll: d.canScroll)
    }

    /// The last animation started, running or not.
    public var lastAnimation: Animation? {
        if case let .animating(a) = phase { return a }
        return nil
    }

    /// An animation that has run its course becomes the state it ends in.
    mutating func settle(at time: Double) {
        if case let .animating(a) = phase, time >= a.endTime {
            phase = a.dismiss ? .hidden : .resting(model.index(of: a.detent))
        }
    }

    /// Applies `event` at `time`. A conflict leaves the session exactly as it was.
    /// `reducedMotion`: the request's own reduced-motion setting for the motion the event starts
    /// (nil: the session's); it changes nothing else and is not kept (a `layout` event's own
    /// `reducedMotion` is the one that changes the session's setting, and a layout move follows it).
    public mutating func handle(_ event: SheetEvent, at time: Double, reducedMotion: Bool? = nil) -> SheetOutcome {
        // The request's own setting: the parameter, else what the pan or fling event says.
        let r: Bool?
        switch event {
        case .layout: r = nil
        case let .pan(pan): r = reducedMotion ?? pan.reducedMotion
        case let .fling(_, flingReduced): r = reducedMotion ?? flingReduced
        case .show, .dismiss, .step: r = reducedMotion
        }
        guard time >= lastTime else {
            return conflict(.clockBackwards(time: time, last: lastTime), at: time)
        }
        // Handlers settle a finished animation before their checks; a refusal must not keep that
        // (an event accepted later at an earlier time would find the card already at rest).
        // The phase is all that settling changes, and copying it copies no array.
        let before = phase
        let result: SheetOutcome
        switch event {
        case let .pan(pan):
            switch pan.phase {
            case .began: result = began(pan, at: time)
            case .changed: result = changed(pan, at: time, reducedMotion: r)
            case .ended: result = ended(pan, at: time, reducedMotion: r)
            case .cancelled: result = cancelled(at: time, reducedMotion: r)
            }
        case let .show(name):
            result = show(name, at: time, reducedMotion: r)
        case .dismiss:
            result = dismiss(at: time, reducedMotion: r)
        case let .layout(change):
            result = relayout(change, at: time)
        case let .fling(velocity, _):
            result = fling(velocity, at: time, reducedMotion: r)
        case let .step(expand):
            result = step(expand: expand, at: time, reducedMotion: r)
        }
        // Only a layout event replaces the model, and only once it is accepted (`relayout`).
        // (A `let` switched on and returned as it is: a `var` result was copied whole to be
        // switched on, 200 instructions of every `changed`.)
        switch result.action {
        case .conflict, .invalid:
            phase = before
            return result
        case .dragged, .unchanged: return result
        case .settle:
            var started = result
            started.reducedMotion = model.releaseLaw.variant(reducedMotion: r).reducedMotion
            return started
        }
    }

    func conflict(_ c: SheetConflict, at time: Double) -> SheetOutcome {
        SheetOutcome(action: .conflict(c), snapshot: snapshot(at: time))
    }

    func outcome(_ action: SheetAction, at time: Double, interrupted: Animation? = nil) -> SheetOutcome {
        SheetOutcome(action: action, snapshot: snapshot(at: time), interrupted: interrupted)
    }

    // MARK: Pan

    private mutating func began(_ pan: PanEvent, at time: Double) -> SheetOutcome {
        settle(at: time)
        if model.layout.keyboardIsUp, let law = model.layoutLaw, law.edge == .bottom, !law.keyboardDrag {
            return conflict(.keyboardLocked, at: time)
        }
        let translation = pan.translation ?? 0
        var interrupted: Animation?
        let drag: Drag
        switch phase {
        case .hidden:
            return conflict(.hidden, at: time)
        case let .resting(i):
            let d = model.detents[i]
            drag = Drag(
                start: d.constant, base: translation, origin: i, constant: d.constant, lastTranslation: translation,
                canScroll: model.contentScrolls(at: d), consumer: .sheet)
        case let .animating(a):
            // Catch the card where it is on screen; a cancel goes to where it was heading.
            let c = a.sample(at: time).constant
            interrupted = a
            drag = Drag(
                start: c, base: translation, origin: model.index(of: a.detent), constant: c,
                lastTranslation: translation,
                canScroll: false, consumer: .sheet)
        case let .dragging(old):
            // A second began (a lost `ended`): the drag restarts where the card is, same origin.
            drag = Drag(
                start: old.constant, base: translation, origin: old.origin, constant: old.constant,
                lastTranslation: translation, canScroll: old.canScroll, consumer: .sheet)
        }
        lastTime = time
        finishedDrag = false
        samples.reset()
        phase = .dragging(drag)
        var result = outcome(.dragged, at: time, interrupted: interrupted)
        if model.scrollHandOff { result.consumer = .sheet }
        result.drag = segment(of: drag)
        return result
    }

    /// `changed`, `ended` or `cancelled` with no drag: after a transition that finished its drag
    /// at the threshold, accepted with nothing to do; otherwise a conflict.
    private mutating func withoutDrag(_ phase: PanPhase, at time: Double) -> SheetOutcome {
        if finishedDrag {
            lastTime = time
            return outcome(.unchanged, at: time)
        }
        return conflict(.noDrag(phase, state: snapshot(at: time).state), at: time)
    }

    private mutating func changed(_ pan: PanEvent, at time: Double, reducedMotion: Bool?) -> SheetOutcome {
        settle(at: time)
        guard case var .dragging(drag) = phase else { return withoutDrag(.changed, at: time) }
        let translation = pan.translation ?? drag.lastTranslation
        var consumer = Consumer.sheet
        var rebased = false
        // The content takes the movement while it is scrolled (offset > 0), or when the finger
        // moves up: first (`dragFirst` content), or once the sheet has grown to its top-most limit.
        if model.scrollHandOff, let offset = pan.scrollOffset, drag.canScroll,
            offset > 0
                || (translation < drag.lastTranslation
                    && (model.contentFirst || drag.constant <= model.topMost.constant))
        {
            consumer = .scroll
        }
        if consumer == .sheet {
            if drag.consumer == .scroll {
                // Scroll → sheet: re-base at the previous event so this event's own movement counts.
                drag.start = drag.constant
                drag.base = drag.lastTranslation
                rebased = true
            }
            drag.constant = model.dragLaw.constant(candidate: drag.start + (translation - drag.base))
        }
        drag.consumer = consumer
        drag.lastTranslation = translation
        samples.append(time: time, translation: translation)
        lastTime = time
        // transition: past the finish threshold the transition completes at once.
        if let threshold = model.dragLaw.finishThreshold,
            model.transitionPercent(constant: drag.constant, origin: drag.origin) >= threshold
        {
            let other = model.detents[model.counterpart(of: drag.origin)]
            let p = model.transitionPercent(constant: drag.constant, origin: drag.origin)
            let snap = Snap(
                detent: other,
                reason:
                    "percent \(Format.number(p, decimals: 3)) ≥ finish threshold \(Format.number(threshold, decimals: 3))",
                projected: nil)
            finishedDrag = true
            let a = startAnimation(
                from: drag.constant, alpha: model.alpha(at: drag.constant), to: other, velocity: 0, at: time,
                isShow: false, reducedMotion: reducedMotion)
            return outcome(.settle(a, snap), at: time)
        }
        phase = .dragging(drag)
        var result = outcome(.dragged, at: time)
        if model.scrollHandOff { result.consumer = consumer }
        if rebased { result.drag = segment(of: drag) }
        return result
    }

    private mutating func ended(_ pan: PanEvent, at time: Double, reducedMotion: Bool?) -> SheetOutcome {
        settle(at: time)
        guard case var .dragging(drag) = phase else { return withoutDrag(.ended, at: time) }
        // An ended that carries a translation places the card first (not a velocity sample).
        if let t = pan.translation, drag.consumer == .sheet {
            drag.constant = model.dragLaw.constant(candidate: drag.start + (t - drag.base))
        }
        let source: VelocitySource = pan.velocity == nil ? .estimated : .client
        let v = pan.velocity ?? samples.slope(endingAt: time)
        let snap: Snap
        var velocity = v
        if model.scrollHandOff, drag.consumer == .scroll {
            // The content took the last movement: the sheet stays at the detent it began at.
            let origin = model.detents[drag.origin]
            snap = Snap(detent: origin, reason: "the content scrolled: stays at \(origin.name)", projected: nil)
            velocity = 0
        } else {
            snap = model.releaseLaw.snap(constant: drag.constant, velocity: v, origin: model.detents[drag.origin])
        }
        lastTime = time
        let (a, handed) = release(
            from: drag.constant, to: snap.detent, velocity: velocity, at: time, reducedMotion: reducedMotion)
        var result = outcome(.settle(a, snap), at: time)
        result.velocity = v
        result.velocitySource = source
        result.scrollFling = handed
        if model.scrollHandOff { result.consumer = drag.consumer }
        return result
    }

    private mutating func cancelled(at time: Double, reducedMotion: Bool?) -> SheetOutcome {
        settle(at: time)
        guard case let .dragging(drag) = phase else { return withoutDrag(.cancelled, at: time) }
        lastTime = time
        let origin = model.detents[drag.origin]
        let snap = Snap(detent: origin, reason: "cancelled: back to \(origin.name)", projected: nil)
        let a = startAnimation(
            from: drag.constant, alpha: model.alpha(at: drag.constant), to: origin, velocity: 0, at: time,
            isShow: false, reducedMotion: reducedMotion)
        var result = outcome(.settle(a, snap), at: time)
        result.velocity = 0
        return result
    }

    /// A release's animation, from `from` at `velocity` to `target`; where the release law hands
    /// the momentum to the content (`ReleaseLaw.handOff`), it ends as the spring first reaches
    /// the top-most detent, and the content takes the velocity the card has then. `reducedMotion`:
    /// the request's own setting (nil: the session's).
    mutating func release(
        from: Double, to target: Detent, velocity: Double, at time: Double, reducedMotion: Bool? = nil
    ) -> (Animation, ScrollFling?) {
        if let h = model.releaseLaw.variant(reducedMotion: reducedMotion).handOff, target.name == h.name,
            from > target.constant,
            case let .spring(response, zeta, v) = model.animationCurve(
                from: from, to: target, velocity: velocity, isShow: false, reducedMotion: reducedMotion
            ).curve
        {
            let oscillator = DampedOscillator(
                omega: Math.twoPi / response, dampingRatio: zeta, x0: from - target.constant, v0: v)
            if let t = oscillator.firstCrossing(), t < Animation.settleTime(of: oscillator) {
                let handed = oscillator.state(at: t).v
                if handed < 0 {
                    let a = startAnimation(
                        from: from, alpha: model.alpha(at: from), to: target, velocity: velocity, at: time,
                        isShow: false, motion: (.spring(response: response, dampingRatio: zeta, velocity: v), t))
                    return (a, ScrollFling(time: time + t, velocity: handed))
                }
            }
        }
        let a = startAnimation(
            from: from, alpha: model.alpha(at: from), to: target, velocity: velocity, at: time, isShow: false,
            reducedMotion: reducedMotion)
        return (a, nil)
    }

    /// The content's fling reached the content's top with `velocity` (pt/s, > 0: downward) while
    /// the card rests where the content scrolls: the card takes the momentum, released from its
    /// detent by the release law.
    private mutating func fling(_ velocity: Double, at time: Double, reducedMotion: Bool?) -> SheetOutcome {
        settle(at: time)
        guard case let .resting(i) = phase, model.contentScrolls(at: model.detents[i]) else {
            return conflict(.noScroll(state: snapshot(at: time).state), at: time)
        }
        let origin = model.detents[i]
        let snap = model.releaseLaw.snap(constant: origin.constant, velocity: velocity, origin: origin)
        lastTime = time
        finishedDrag = false
        let (a, handed) = release(
            from: origin.constant, to: snap.detent, velocity: velocity, at: time, reducedMotion: reducedMotion)
        var result = outcome(.settle(a, snap), at: time)
        result.velocity = velocity
        result.velocitySource = .client
        result.scrollFling = handed
        return result
    }

    // MARK: Show and dismiss

    private mutating func show(_ name: String?, at time: Double, reducedMotion: Bool?) -> SheetOutcome {
        let target: Detent
        if let name {
            if let error = validateShowTarget(name) {
                return SheetOutcome(action: .invalid(error), snapshot: snapshot(at: time))
            }
            target = model.detent(named: name)!
        } else {
            target = model.showDefault
        }
        return move(to: target, reason: "show(\(target.name))", at: time, isShow: true, reducedMotion: reducedMotion)
    }

    private mutating func dismiss(at time: Double, reducedMotion: Bool?) -> SheetOutcome {
        settle(at: time)
        if case .hidden = phase {
            lastTime = time
            finishedDrag = false
            return outcome(.unchanged, at: time)
        }
        return move(
            to: model.dismissTarget, reason: "dismiss → \(model.dismissTarget.name)", at: time, isShow: false,
            reducedMotion: reducedMotion)
    }

    /// An accessibility step: to the next visible detent up or down from where the card rests or
    /// heads (down from the lowest: the dismiss target, where it hides; up from hidden: the
    /// preset's show default), by the release law's motion from the card's position and velocity.
    private mutating func step(expand: Bool, at time: Double, reducedMotion: Bool?) -> SheetOutcome {
        settle(at: time)
        let visible = model.detents.filter { !$0.isHidden }
        let current: Detent?
        switch phase {
        case .dragging: return conflict(.stepWhileDragging, at: time)
        case .hidden: current = nil
        case let .resting(i): current = model.detents[i]
        case let .animating(a): current = a.detent.isHidden ? nil : a.detent
        }
        var target: Detent?
        if let current, let i = visible.firstIndex(where: { $0.name == current.name }) {
            if expand {
                target = i > 0 ? visible[i - 1] : nil
            } else if i + 1 < visible.count {
                target = visible[i + 1]
            } else if model.dismissTarget.isHidden {
                target = model.dismissTarget
            }
        } else if expand {
            target = model.showDefault
        }
        let position = { (d: Detent) in (visible.firstIndex { $0.name == d.name } ?? -1) + 1 }
        guard let target else {
            // Already at the end it steps toward: nothing moves, and the answer says where it is.
            lastTime = time
            var result = outcome(.unchanged, at: time)
            let here = current ?? model.detents.last(where: \.isHidden) ?? model.dismissTarget
            result.step = StepFacts(
                expand: expand, detent: here, position: current.map(position) ?? 0, count: visible.count, moved: false,
                presented: false)
            return result
        }
        let verb = target.isHidden ? "dismiss" : (expand ? "expand" : "collapse")
        var result = move(
            to: target, reason: "step: \(verb) to \(target.name)", at: time, isShow: current == nil,
            reducedMotion: reducedMotion)
        result.step = StepFacts(
            expand: expand, detent: target, position: target.isHidden ? 0 : position(target), count: visible.count,
            moved: true, presented: current == nil)
        return result
    }

    /// show/dismiss: from wherever the card is (ending a drag, catching an animation with its
    /// velocity) to `target`.
    private mutating func move(
        to target: Detent, reason: String, at time: Double, isShow: Bool, reducedMotion: Bool?
    ) -> SheetOutcome {
        settle(at: time)
        let now = snapshot(at: time)
        let interrupted = now.animation
        lastTime = time
        finishedDrag = false
        let a = startAnimation(
            from: now.constant, alpha: now.dimmerAlpha, to: target, velocity: now.velocity, at: time, isShow: isShow,
            reducedMotion: reducedMotion)
        return outcome(
            .settle(a, Snap(detent: target, reason: reason, projected: nil)), at: time, interrupted: interrupted)
    }

    /// Validates a show target: nil (the default) or a visible detent of this session.
    public func validateShowTarget(_ name: String?) -> ConfigurationError? {
        guard let name else { return nil }
        guard let d = model.detent(named: name) else {
            return .unknownDetent(field: "detent", name: name, known: model.detents.filter { !$0.isHidden }.map(\.name))
        }
        if d.isHidden {
            return .invalidOption(
                field: "detent", reason: "\"\(name)\" is where dismiss goes; show takes a visible detent")
        }
        return nil
    }

    mutating func startAnimation(
        from: Double, alpha: Double, to target: Detent, velocity: Double, at time: Double, isShow: Bool,
        motion: (curve: AnimationCurve, duration: Double)? = nil, alphaRule: AlphaRule? = nil,
        reducedMotion: Bool? = nil
    ) -> Animation {
        let (curve, duration) =
            motion
            ?? model.animationCurve(
                from: from, to: target, velocity: velocity, isShow: isShow, reducedMotion: reducedMotion)
        animationCount += 1
        let a = Animation(
            id: animationCount, curve: curve, from: from, to: target.constant, duration: duration, fromAlpha: alpha,
            toAlpha: model.alpha(at: target.constant), alphaRule: alphaRule ?? model.alphaRule, startTime: time,
            detent: target, dimmer: model.dimmer, progressScale: model.progressScale, modality: model.modality)
        phase = .animating(a)
        return a
    }
}
