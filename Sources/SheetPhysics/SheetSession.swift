/// The phase of a pan gesture, as `UIPanGestureRecognizer` reports it.
public enum PanPhase: String, Sendable, CaseIterable {
    case began, changed, ended, cancelled
}

/// One pan event: cumulative translation since `began` and the finger's velocity (pt/s, positive
/// downward).
public struct PanEvent: Sendable, Hashable {
    public var phase: PanPhase
    /// Cumulative vertical translation since `began`; nil where the client sent none.
    public var translation: Double?
    /// Vertical velocity; nil on `ended` means "estimate it".
    public var velocity: Double?
    /// fluid: the inner scroll view's offset (0 = at the top); nil where not sent.
    public var scrollOffset: Double?

    public init(phase: PanPhase, translation: Double? = nil, velocity: Double? = nil, scrollOffset: Double? = nil) {
        self.phase = phase
        self.translation = translation
        self.velocity = velocity
        self.scrollOffset = scrollOffset
    }
}

/// Something that happens to a session.
public enum SheetEvent: Sendable, Hashable {
    case pan(PanEvent)
    /// Present or move to a detent (nil: the preset's default).
    case show(detent: String?)
    /// The tap on the dimmer.
    case dismiss
}

/// The session's coarse state.
public enum SheetState: String, Sendable, CaseIterable {
    case hidden, resting, dragging, animating
}

/// Where a result's velocity came from.
public enum VelocitySource: String, Sendable {
    case client, estimated
}

/// fluid scroll hand-off: who took the movement.
public enum Consumer: String, Sendable {
    case sheet, scroll
}

/// Why an event was refused. The session is unchanged.
public enum SheetConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// `changed`, `ended` or `cancelled` with no drag in progress.
    case noDrag(PanPhase, state: SheetState)
    /// `began` on a hidden card (it is off screen: show it first).
    case hidden
    /// The client clock went backwards.
    case clockBackwards(time: Double, last: Double)

    public var description: String {
        switch self {
        case let .noDrag(phase, state):
            "\(phase.rawValue) with no drag in progress (the card is \(state.rawValue)); send began first"
        case .hidden: "the card is hidden, so there is nothing to grab; show it first"
        case let .clockBackwards(time, last):
            "time \(Format.number(time, decimals: 6)) is before the session's last event at \(Format.number(last, decimals: 6)); the client clock must never decrease"
        }
    }
}

/// What a session looks like at one instant.
public struct SheetSnapshot: Sendable, Hashable {
    public var state: SheetState
    /// The detent the card rests at, or animates to; nil while dragging (and for a hidden card of a
    /// preset without a hidden detent).
    public var detent: Detent?
    public var constant: Double
    public var dimmerAlpha: Double
    public var progress: Double
    /// d(constant)/dt, pt/s (0 at rest and while dragging).
    public var velocity: Double
    /// The running animation, if animating.
    public var animation: Animation?
    /// The instant this describes, on the session's clock.
    public var time: Double

    public init(
        state: SheetState, detent: Detent?, constant: Double, dimmerAlpha: Double, progress: Double,
        velocity: Double, animation: Animation?, time: Double
    ) {
        self.state = state
        self.detent = detent
        self.constant = constant
        self.dimmerAlpha = dimmerAlpha
        self.progress = progress
        self.velocity = velocity
        self.animation = animation
        self.time = time
    }
}

/// What an event did. The service decides the I/O.
public enum SheetAction: Sendable, Equatable {
    /// The card follows the finger (began, changed, or the scroll view took the movement).
    case dragged
    /// An animation started toward a detent.
    case settle(Animation, Snap)
    /// Accepted with nothing to do (events of a drag that a finished transition ended; dismissing
    /// a hidden card).
    case unchanged
    /// Refused as conflicting with the session's state: the session did not change.
    case conflict(SheetConflict)
    /// Refused as invalid (a show to an unknown or hidden detent): the session did not change.
    case invalid(ConfigurationError)
}

/// The answer to one event.
public struct SheetOutcome: Sendable {
    public var action: SheetAction
    /// The session after the event, at the event's time.
    public var snapshot: SheetSnapshot
    /// An animation this event stopped before its end (a grab, or a show/dismiss mid-flight).
    public var interrupted: Animation?
    /// The release velocity used (ended, cancelled) and its source.
    public var velocity: Double?
    public var velocitySource: VelocitySource?
    /// fluid pan events: who took the movement.
    public var consumer: Consumer?
    /// The drag segment this event started (`began`; a `changed` where the sheet took the
    /// movement back from the content): what a client evaluates the drag law in from now on.
    public var drag: DragSegment? {
        get { startedSegment?.segment }
        set { startedSegment = newValue.map(SegmentBox.init) }
    }
    /// Boxed: most outcomes (every plain `changed`) have none, and an inline segment (two detent
    /// names) made every outcome larger to copy and destroy (≈ 500 instructions per `changed`).
    var startedSegment: SegmentBox? = nil

    /// The snap, if the event started an animation.
    public var snap: Snap? {
        if case let .settle(_, snap) = action { return snap }
        return nil
    }

    /// The animation the event started, if any.
    public var animation: Animation? {
        if case let .settle(animation, _) = action { return animation }
        return nil
    }
}

/// A drag segment on the heap, so that an outcome without one carries a null reference.
final class SegmentBox: Sendable {
    let segment: DragSegment
    init(_ segment: DragSegment) { self.segment = segment }
}

/// A drag in progress.
struct Drag: Sendable {
    /// The constant the current segment of the drag started from.
    var start: Double
    /// The translation at which the current segment started (re-based on scroll → sheet).
    var base: Double
    /// The detent a cancel returns to (an index into the model's detents: keeps Drag plain data).
    var origin: Int
    /// The card's constant now.
    var constant: Double
    /// The translation of the previous event of this drag.
    var lastTranslation: Double
    /// fluid: the drag began resting at the top-most detent, so the content may scroll.
    var canScroll: Bool
    /// fluid: who took the last `changed`.
    var consumer: Consumer
}

/// The (time, translation) samples of a drag's `changed` events, kept for 0.1 s behind the newest.
struct VelocitySamples: Sendable {
    private var times: [Double] = []
    private var translations: [Double] = []
    private var head = 0

    /// The least-squares window, seconds, with 1 ns of slack so that a sample exactly 0.1 s before
    /// `ended` counts even when the subtraction rounds (0.55 − 0.1 = 0.45000000000000007).
    static let window = 0.1 + 1e-9

    /// Samples each array has room for once a drag starts.
    static let initialCapacity = 32

    /// Forgets every sample, keeping the storage for the next drag.
    mutating func reset() {
        times.removeAll(keepingCapacity: true)
        translations.removeAll(keepingCapacity: true)
        head = 0
    }

    mutating func append(time: Double, translation: Double) {
        // A drag at 60 Hz keeps up to ≈ 24 samples between compactions (below): room for 32 from
        // the first sample on, instead of growing 1, 2, 4 … 32 (five reallocations per array in a
        // session's first drag; the capacity is kept across drags).
        if times.capacity == 0 {
            times.reserveCapacity(Self.initialCapacity)
            translations.reserveCapacity(Self.initialCapacity)
        }
        // Samples older than the newest minus the window can never be inside an `ended` window,
        // because the ended time is at least the newest sample time.
        while head < times.count, times[head] < time - Self.window { head += 1 }
        if head > 16, head * 2 > times.count {
            times.removeFirst(head)
            translations.removeFirst(head)
            head = 0
        }
        times.append(time)
        translations.append(translation)
    }

    /// The samples still inside the window, oldest first (what an archive keeps).
    var kept: [VelocitySample] {
        (head..<times.count).map { VelocitySample(time: times[$0], translation: translations[$0]) }
    }

    /// Samples restored from an archive.
    init(_ samples: [VelocitySample]) {
        times = samples.map(\.time)
        translations = samples.map(\.translation)
    }

    init() {}

    /// The least-squares slope of translation over time for samples with t ≥ end − 0.1 s; 0 for
    /// fewer than two samples or samples all at one time.
    func slope(endingAt end: Double) -> Double {
        var n = 0.0
        var st = 0.0
        var sx = 0.0
        var i = head
        while i < times.count {
            if times[i] >= end - Self.window {
                n += 1
                st += times[i]
                sx += translations[i]
            }
            i += 1
        }
        guard n >= 2 else { return 0 }
        let mt = st / n
        let mx = sx / n
        var num = 0.0
        var den = 0.0
        i = head
        while i < times.count {
            if times[i] >= end - Self.window {
                let dt = times[i] - mt
                num += dt * (translations[i] - mx)
                den += dt * dt
            }
            i += 1
        }
        return den == 0 ? 0 : num / den
    }
}

/// One card's state machine: takes an event and its time, returns the new state and what
/// happened. A value type with no clock of its own: time is always a parameter (seconds on the
/// session's clock, never decreasing).
public struct SheetSession: Sendable {
    /// The resolved configuration.
    public let model: SheetModel

    enum Phase: Sendable {
        case hidden
        /// At rest at `model.detents[index]`.
        case resting(Int)
        case dragging(Drag)
        case animating(Animation)
    }

    private(set) var phase: Phase
    /// The current drag's velocity samples, kept outside `phase` so appending never copies them.
    private var samples = VelocitySamples()
    /// The number of the last animation started (0: none yet).
    public private(set) var animationCount = 0
    /// The time of the last accepted event.
    public private(set) var lastTime = -Double.infinity
    /// transition: the drag finished the transition at its threshold; its later events are
    /// answered unchanged until the next `began`.
    private var finishedDrag = false

    /// A new session: hidden, or resting at `initialDetent` (swipeCell starts resting at `initial`).
    public init(model: SheetModel, initialDetent: String? = nil) throws(ConfigurationError) {
        self.model = model
        if let name = initialDetent {
            guard let d = model.detent(named: name) else {
                throw .unknownDetent(field: "initialDetent", name: name, known: model.detents.map(\.name))
            }
            phase = d.isHidden ? .hidden : .resting(model.index(of: d))
        } else if model.preset == .swipeCell {
            phase = .resting(model.index(of: model.dismissTarget))
        } else {
            phase = .hidden
        }
    }

    /// The session as plain values, for a store (see `init(model:archive:)`).
    public var archive: SheetArchive {
        let p: SheetArchive.Phase
        switch phase {
        case .hidden: p = .hidden
        case let .resting(i): p = .resting(detent: i)
        case let .dragging(d):
            p = .dragging(
                DragArchive(
                    start: d.start, base: d.base, origin: d.origin, constant: d.constant,
                    lastTranslation: d.lastTranslation, canScroll: d.canScroll, consumer: d.consumer))
        case let .animating(a): p = .animating(a.archive(in: model))
        }
        return SheetArchive(
            phase: p, samples: samples.kept, animationCount: animationCount, lastTime: lastTime,
            finishedDrag: finishedDrag)
    }

    /// The session `archive` describes, on `model` (the configuration it was created with).
    /// Checks what an archive from outside could get wrong: indices, finiteness, the animation's
    /// curve; the restored session answers every event exactly as the archived one would.
    public init(model: SheetModel, archive: SheetArchive) throws(ArchiveMismatch) {
        self.model = model
        let detents = model.detents.indices
        switch archive.phase {
        case .hidden: phase = .hidden
        case let .resting(i):
            guard detents.contains(i), !model.detents[i].isHidden else {
                throw ArchiveMismatch(reason: "resting at detent #\(i)")
            }
            phase = .resting(i)
        case let .dragging(d):
            let values = [d.start, d.base, d.constant, d.lastTranslation]
            guard detents.contains(d.origin), values.allSatisfy(\.isFinite) else {
                throw ArchiveMismatch(reason: "a drag with an invalid origin or a non-finite value")
            }
            phase = .dragging(
                Drag(
                    start: d.start, base: d.base, origin: d.origin, constant: d.constant,
                    lastTranslation: d.lastTranslation, canScroll: d.canScroll, consumer: d.consumer))
        case let .animating(a):
            guard a.id <= archive.animationCount else {
                throw ArchiveMismatch(reason: "animation \(a.id) is newer than the count \(archive.animationCount)")
            }
            phase = .animating(try Animation(archive: a, model: model))
        }
        let times = archive.samples.flatMap { [$0.time, $0.translation] }
        guard times.allSatisfy(\.isFinite), archive.animationCount >= 0,
            archive.lastTime.isFinite || archive.lastTime == -.infinity
        else {
            throw ArchiveMismatch(reason: "a non-finite sample, time or a negative animation count")
        }
        samples = VelocitySamples(archive.samples)
        animationCount = archive.animationCount
        lastTime = archive.lastTime
        finishedDrag = archive.finishedDrag
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

    private func segment(of d: Drag) -> DragSegment {
        model.dragSegment(start: d.start, base: d.base, origin: d.origin, contentCanScroll: d.canScroll)
    }

    /// The last animation started, running or not.
    public var lastAnimation: Animation? {
        if case let .animating(a) = phase { return a }
        return nil
    }

    /// An animation that has run its course becomes the state it ends in.
    private mutating func settle(at time: Double) {
        if case let .animating(a) = phase, time >= a.endTime {
            phase = a.dismiss ? .hidden : .resting(model.index(of: a.detent))
        }
    }

    /// Applies `event` at `time`. A conflict leaves the session exactly as it was.
    public mutating func handle(_ event: SheetEvent, at time: Double) -> SheetOutcome {
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
            case .changed: result = changed(pan, at: time)
            case .ended: result = ended(pan, at: time)
            case .cancelled: result = cancelled(at: time)
            }
        case let .show(name):
            result = show(name, at: time)
        case .dismiss:
            result = dismiss(at: time)
        }
        switch result.action {
        case .conflict, .invalid: phase = before
        case .dragged, .settle, .unchanged: break
        }
        return result
    }

    private func conflict(_ c: SheetConflict, at time: Double) -> SheetOutcome {
        SheetOutcome(action: .conflict(c), snapshot: snapshot(at: time))
    }

    private func outcome(_ action: SheetAction, at time: Double, interrupted: Animation? = nil) -> SheetOutcome {
        SheetOutcome(action: action, snapshot: snapshot(at: time), interrupted: interrupted)
    }

    // MARK: Pan

    private mutating func began(_ pan: PanEvent, at time: Double) -> SheetOutcome {
        settle(at: time)
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
                canScroll: d.constant == model.detents[0].constant, consumer: .sheet)
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
        if case .fluid = model.rule { result.consumer = .sheet }
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

    private mutating func changed(_ pan: PanEvent, at time: Double) -> SheetOutcome {
        settle(at: time)
        guard case var .dragging(drag) = phase else { return withoutDrag(.changed, at: time) }
        let translation = pan.translation ?? drag.lastTranslation
        var consumer = Consumer.sheet
        var rebased = false
        if case .fluid = model.rule, let offset = pan.scrollOffset, drag.canScroll,
            offset > 0 || translation < drag.lastTranslation
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
            model.transitionPercent(constant: drag.constant, origin: model.detents[drag.origin]) >= threshold
        {
            let other = model.detents[1 - drag.origin]
            let p = model.transitionPercent(constant: drag.constant, origin: model.detents[drag.origin])
            let snap = Snap(
                detent: other,
                reason:
                    "percent \(Format.number(p, decimals: 3)) ≥ finish threshold \(Format.number(threshold, decimals: 3))",
                projected: nil)
            finishedDrag = true
            let a = startAnimation(
                from: drag.constant, alpha: model.alpha(at: drag.constant), to: other, velocity: 0, at: time,
                isShow: false)
            return outcome(.settle(a, snap), at: time)
        }
        phase = .dragging(drag)
        var result = outcome(.dragged, at: time)
        if case .fluid = model.rule { result.consumer = consumer }
        if rebased { result.drag = segment(of: drag) }
        return result
    }

    private mutating func ended(_ pan: PanEvent, at time: Double) -> SheetOutcome {
        settle(at: time)
        guard case var .dragging(drag) = phase else { return withoutDrag(.ended, at: time) }
        let isFluid: Bool
        if case .fluid = model.rule { isFluid = true } else { isFluid = false }
        // An ended that carries a translation places the card first (not a velocity sample).
        if let t = pan.translation, drag.consumer == .sheet {
            drag.constant = model.dragLaw.constant(candidate: drag.start + (t - drag.base))
        }
        let source: VelocitySource = pan.velocity == nil ? .estimated : .client
        let v = pan.velocity ?? samples.slope(endingAt: time)
        let snap: Snap
        var velocity = v
        if isFluid, drag.consumer == .scroll {
            // The content took the last movement: the sheet stays at the detent it began at.
            let origin = model.detents[drag.origin]
            snap = Snap(detent: origin, reason: "the content scrolled: stays at \(origin.name)", projected: nil)
            velocity = 0
        } else {
            snap = model.releaseLaw.snap(constant: drag.constant, velocity: v, origin: model.detents[drag.origin])
        }
        lastTime = time
        let a = startAnimation(
            from: drag.constant, alpha: model.alpha(at: drag.constant), to: snap.detent, velocity: velocity, at: time,
            isShow: false)
        var result = outcome(.settle(a, snap), at: time)
        result.velocity = v
        result.velocitySource = source
        if isFluid { result.consumer = drag.consumer }
        return result
    }

    private mutating func cancelled(at time: Double) -> SheetOutcome {
        settle(at: time)
        guard case let .dragging(drag) = phase else { return withoutDrag(.cancelled, at: time) }
        lastTime = time
        let origin = model.detents[drag.origin]
        let snap = Snap(detent: origin, reason: "cancelled: back to \(origin.name)", projected: nil)
        let a = startAnimation(
            from: drag.constant, alpha: model.alpha(at: drag.constant), to: origin, velocity: 0, at: time,
            isShow: false)
        var result = outcome(.settle(a, snap), at: time)
        result.velocity = 0
        return result
    }

    // MARK: Show and dismiss

    private mutating func show(_ name: String?, at time: Double) -> SheetOutcome {
        let target: Detent
        if let name {
            if let error = validateShowTarget(name) {
                return SheetOutcome(action: .invalid(error), snapshot: snapshot(at: time))
            }
            target = model.detent(named: name)!
        } else {
            target = model.showDefault
        }
        return move(to: target, reason: "show(\(target.name))", at: time, isShow: true)
    }

    private mutating func dismiss(at time: Double) -> SheetOutcome {
        settle(at: time)
        if case .hidden = phase {
            lastTime = time
            finishedDrag = false
            return outcome(.unchanged, at: time)
        }
        return move(to: model.dismissTarget, reason: "dismiss → \(model.dismissTarget.name)", at: time, isShow: false)
    }

    /// show/dismiss: from wherever the card is (ending a drag, catching an animation with its
    /// velocity) to `target`.
    private mutating func move(to target: Detent, reason: String, at time: Double, isShow: Bool) -> SheetOutcome {
        settle(at: time)
        let now = snapshot(at: time)
        let interrupted = now.animation
        lastTime = time
        finishedDrag = false
        let a = startAnimation(
            from: now.constant, alpha: now.dimmerAlpha, to: target, velocity: now.velocity, at: time, isShow: isShow)
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

    private mutating func startAnimation(
        from: Double, alpha: Double, to target: Detent, velocity: Double, at time: Double, isShow: Bool
    ) -> Animation {
        let (curve, duration) = model.animationCurve(from: from, to: target, velocity: velocity, isShow: isShow)
        animationCount += 1
        let a = Animation(
            id: animationCount, curve: curve, from: from, to: target.constant, duration: duration, fromAlpha: alpha,
            toAlpha: model.alpha(at: target.constant), alphaRule: model.alphaRule, startTime: time, detent: target,
            dimmer: model.dimmer, progressScale: model.progressScale)
        phase = .animating(a)
        return a
    }
}
