// The layout event: the model is rebuilt for the new layout and options, and the card follows by
// the detents' names. A resting card moves to where its detent now is, an animating one is
// retargeted from its position and velocity, a dragged one stays under the finger.

extension SheetSession {
    /// Applies a layout change at `time`. Invalid options or layout: `.invalid`, nothing changes.
    mutating func relayout(_ change: LayoutChange, at time: Double) -> SheetOutcome {
        settle(at: time)
        let old = model
        let next: SheetModel
        do {
            next = try old.relaid(change)
        } catch {
            return SheetOutcome(action: .invalid(error), snapshot: snapshot(at: time))
        }
        let now = snapshot(at: time)
        // Under reduced motion every move jumps, whatever the event asked for.
        let motion = next.layout.reducedMotion ? LayoutMotion.none : change.motion ?? next.layoutMotion
        let extend = next.keyboard == .extend
        let rose = !old.layout.keyboardIsUp && next.layout.keyboardIsUp
        let fell = old.layout.keyboardIsUp && !next.layout.keyboardIsUp
        lastTime = time
        layoutRevision += 1
        model = next
        var result = follow(now, old: old, next: next, motion: motion, extend: extend, rose: rose, fell: fell, at: time)
        result.relaid = true
        return result
    }

    /// Where the card goes on `next`, by its phase.
    private mutating func follow(
        _ now: SheetSnapshot, old: SheetModel, next: SheetModel, motion: LayoutMotion, extend: Bool, rose: Bool,
        fell: Bool, at time: Double
    ) -> SheetOutcome {
        switch phase {
        case .hidden:
            keyboardReturn = nil
            return outcome(.unchanged, at: time)
        case let .resting(i):
            let from = old.detents[i]
            let (target, why) = destination(of: from, old: old, in: next, extend: extend, rose: rose, fell: fell)
            return move(from: now, to: target, reason: why, motion: motion, at: time)
        case let .animating(a):
            let (target, why) = destination(of: a.detent, old: old, in: next, extend: extend, rose: rose, fell: fell)
            return move(from: now, to: target, reason: why, motion: motion, at: time)
        case var .dragging(d):
            let origin = old.detents[d.origin]
            let placed = Self.place(origin, from: old, in: next)
            if extend && rose { keyboardReturn = placed.name }
            if fell { keyboardReturn = nil }
            // The card stays under the finger: the new segment puts it where it is at the last
            // translation (through the rubber band's inverse where it is past a bound; a clamping
            // bound that moved past it takes it to the bound).
            let start = next.dragLaw.candidate(for: d.constant)
            d.start = start
            d.base = d.lastTranslation
            d.origin = next.index(of: placed)
            d.constant = next.dragLaw.constant(candidate: start)
            phase = .dragging(d)
            var result = outcome(.dragged, at: time)
            if next.scrollHandOff { result.consumer = d.consumer }
            result.drag = segment(of: d)
            return result
        }
    }

    /// Where a card resting at (or heading for) `detent` goes on `next`, and why: the detent of the
    /// same name, or the nearest by progress where it vanished; `extend` sends it to the top-most
    /// while the keyboard is up and back when it goes.
    private mutating func destination(
        of detent: Detent, old: SheetModel, in next: SheetModel, extend: Bool, rose: Bool, fell: Bool
    ) -> (Detent, String) {
        let placed = Self.place(detent, from: old, in: next)
        var why =
            placed.name == detent.name
            ? "layout: \(placed.name) at \(Format.number(placed.constant, decimals: 1))"
            : "layout: \(detent.name) is gone; nearest by progress is \(placed.name)"
        var target = placed
        if extend, rose, !placed.isHidden, placed.name != next.topMost.name {
            keyboardReturn = placed.name
            target = next.topMost
            why = "keyboard: extend from \(placed.name) to \(target.name)"
        } else if fell, let back = keyboardReturn {
            keyboardReturn = nil
            if placed.name == next.topMost.name, let d = next.detent(named: back) {
                target = d
                why = "keyboard gone: back to \(d.name)"
            }
        }
        return (target, why)
    }

    /// The detent of `next` named as `detent`, or where it vanished, the visible one nearest to its
    /// progress on `old` (a tie goes to the upper one).
    static func place(_ detent: Detent, from old: SheetModel, in next: SheetModel) -> Detent {
        if let d = next.detent(named: detent.name) { return d }
        let p = old.progress(at: detent.constant)
        var best: Detent?
        for d in next.detents where !d.isHidden {
            guard let b = best else {
                best = d
                continue
            }
            if abs(next.progress(at: d.constant) - p) < abs(next.progress(at: b.constant) - p) { best = d }
        }
        return best ?? next.detents[0]
    }

    /// From the card as it is (`now`, on the old model) to `target`, by `motion`; nothing moves
    /// where the card is at rest exactly there.
    private mutating func move(
        from now: SheetSnapshot, to target: Detent, reason: String, motion: LayoutMotion, at time: Double
    ) -> SheetOutcome {
        if now.velocity == 0, now.animation == nil, now.constant == target.constant {
            phase = target.isHidden ? .hidden : .resting(model.index(of: target))
            return outcome(.unchanged, at: time)
        }
        let interrupted = now.animation
        let override: (curve: AnimationCurve, duration: Double)?
        switch motion {
        case .release: override = nil
        case .none: override = (.timed(.linear), 0)
        case let .timed(curve, duration): override = (.timed(curve), duration)
        }
        // The dimmer goes from what it shows to the target's alpha on the new model (the position
        // rule of the new model would make it jump where the detents moved under the card).
        let a = startAnimation(
            from: now.constant, alpha: now.dimmerAlpha, to: target, velocity: now.velocity, at: time,
            isShow: false, motion: override, alphaRule: .interpolate)
        return outcome(
            .settle(a, Snap(detent: target, reason: reason, projected: nil)), at: time, interrupted: interrupted)
    }
}
