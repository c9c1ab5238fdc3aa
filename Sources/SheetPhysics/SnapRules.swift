// The per-preset rules of PHYSICS.md: where a drag puts the card, where a release sends it, and
// which curve takes it there.

extension SheetModel {
    /// Where a release at `constant` with `velocity` (pt/s, positive downward) sends the card.
    func release(constant c: Double, velocity v: Double, origin: Detent) -> Snap {
        switch rule {
        case .facebook:
            let H = geometry.availableHeight
            let S = geometry.safeAreaHeight
            if v > 1500 {
                return Snap(detent: detents[2], reason: "velocity \(Format.number(v)) > 1500", projected: nil)
            }
            if c < 0.25 * H {
                return Snap(
                    detent: detents[0], reason: "constant \(Format.number(c)) < 0.25·H = \(Format.number(0.25 * H))",
                    projected: nil)
            }
            if c < S - 70 {
                return Snap(
                    detent: detents[1], reason: "constant \(Format.number(c)) < S − 70 = \(Format.number(S - 70))",
                    projected: nil)
            }
            return Snap(
                detent: detents[2], reason: "constant \(Format.number(c)) ≥ S − 70 = \(Format.number(S - 70))",
                projected: nil)
        case .twitter:
            // The seed compares Int(constant): truncation toward zero.
            let t = c.rounded(.towardZero)
            if t < 0 {
                return Snap(
                    detent: detents[0], reason: "pulled above open (trunc \(Format.number(t)) < 0)", projected: nil)
            }
            if v > 0, v < 300, t < 180 {
                return Snap(
                    detent: detents[0],
                    reason:
                        "slow downward release (velocity \(Format.number(v)) < 300) near open (trunc \(Format.number(t)) < 180)",
                    projected: nil)
            }
            if v > 0 {
                return Snap(
                    detent: detents[1], reason: "downward release (velocity \(Format.number(v)) > 0)", projected: nil)
            }
            return Snap(
                detent: detents[0], reason: "upward or still release (velocity \(Format.number(v)) ≤ 0)", projected: nil
            )
        case let .glide(segmented, K):
            let S = geometry.safeAreaHeight
            let open = detents[0]
            let compressed = detents[1]
            let closed = detents[2]
            let up = v > 0 ? "down" : "up (velocity 0 counts as up)"
            if c < K {
                let to = v > 0 ? (segmented ? compressed : open) : open
                return Snap(
                    detent: to, reason: "above the threshold (\(Format.number(c)) < \(Format.number(K))), moving \(up)",
                    projected: nil)
            }
            if c < S {
                let to = v > 0 ? closed : (segmented ? compressed : open)
                return Snap(
                    detent: to,
                    reason: "between the threshold and S (\(Format.number(c)) < \(Format.number(S))), moving \(up)",
                    projected: nil)
            }
            return Snap(detent: closed, reason: "below S (\(Format.number(c)) ≥ \(Format.number(S)))", projected: nil)
        case .transition:
            let other = origin.name == detents[0].name ? detents[1] : detents[0]
            let p = transitionPercent(constant: c, origin: origin)
            if p > 0.5 {
                return Snap(detent: other, reason: "percent \(Format.number(p, decimals: 3)) > 0.5", projected: nil)
            }
            return Snap(detent: origin, reason: "percent \(Format.number(p, decimals: 3)) ≤ 0.5: back", projected: nil)
        case .swipeCell:
            if v < 0 { return Snap(detent: detents[0], reason: "velocity \(Format.number(v)) < 0", projected: nil) }
            if v > 0 { return Snap(detent: detents[1], reason: "velocity \(Format.number(v)) > 0", projected: nil) }
            // At rest: the nearer one; ties go to initial.
            let toTop = abs(c - detents[0].constant) < abs(c - detents[1].constant)
            return Snap(detent: toTop ? detents[0] : detents[1], reason: "at rest: nearer detent", projected: nil)
        case let .fluid(b):
            return fluidRelease(constant: c, velocity: v, behaviour: b)
        }
    }

    private func fluidRelease(constant c: Double, velocity v: Double, behaviour b: FluidBehaviour) -> Snap {
        let H = geometry.availableHeight
        let r = b.decelerationRate
        // 1. Momentum projection (UIScrollView's deceleration): distance = (v/1000)·r/(1 − r).
        let p = c + (v / 1000) * r / (1 - r)
        // 2. Removal by velocity relative to the distance left to hidden.
        if b.hideable, v > 0, v / max(H - c, 1) >= b.removalVelocity, let hidden = detents.last, hidden.isHidden {
            let ratio = v / max(H - c, 1)
            return Snap(
                detent: hidden,
                reason: "removal: velocity/distance \(Format.number(ratio)) ≥ \(Format.number(b.removalVelocity))",
                projected: p)
        }
        // 3. At most one detent passed: clamp p between the neighbours of the release point.
        var q = p
        var note = ""
        if !b.skipDetents {
            let upper = detents.last(where: { $0.constant < c }) ?? detents[0]
            let lower = detents.first(where: { $0.constant > c }) ?? detents[detents.count - 1]
            if p < upper.constant {
                q = upper.constant
                note = " beyond \(upper.name)"
            } else if p > lower.constant {
                q = lower.constant
                note = " beyond \(lower.name)"
            }
        }
        // 4. The nearest detent to the (clamped) projection; a tie goes to the upper one.
        var best = detents[0]
        for d in detents.dropFirst() where abs(d.constant - q) < abs(best.constant - q) { best = d }
        return Snap(detent: best, reason: "projected \(Format.number(p, decimals: 1))\(note)", projected: p)
    }

    /// transition: the fraction of the way from `origin` toward the other detent.
    func transitionPercent(constant c: Double, origin: Detent) -> Double {
        let other = origin.name == detents[0].name ? detents[1] : detents[0]
        return DragFinish.percent(at: c, from: origin.constant, toward: other.constant)
    }

    /// The drag segment that starts at `start` with the finger at `base`, from the detent at
    /// `origin` (an index into `detents`).
    func dragSegment(start: Double, base: Double, origin: Int, contentCanScroll: Bool) -> DragSegment {
        var finish: DragFinish?
        if let threshold = dragLaw.finishThreshold {
            // transition, the one preset with a finish: two detents, so the other is 1 − origin.
            let other = detents[1 - origin]
            finish = DragFinish(
                from: detents[origin].constant, toward: other.constant, threshold: threshold, detent: other)
        }
        // Only fluid hands movements to an inner scroll view.
        var scrolls = false
        if case .fluid = rule { scrolls = contentCanScroll }
        return DragSegment(start: start, base: base, origin: detents[origin], contentCanScroll: scrolls, finish: finish)
    }

    /// What moves the card from `from` to `to`: the preset's release animation, or its show
    /// animation where that differs (twitter shows with its spring).
    func animationCurve(
        from: Double, to target: Detent, velocity v: Double, isShow: Bool
    ) -> (curve: AnimationCurve, duration: Double) {
        switch rule {
        case .facebook:
            return (.timed(.easeIn), 0.25)
        case .twitter:
            if target.isHidden { return (.durationSpring(dampingRatio: 0.9, initialVelocity: 0.6), 0.5) }
            if !isShow, from.rounded(.towardZero) < 0 { return (.timed(.easeInOut), 0.2) }
            return (.durationSpring(dampingRatio: 0.9, initialVelocity: 3), 0.3)
        case .glide:
            // The card leaves the finger at its speed: v in distances per second toward the target.
            let distance = target.constant - from
            let sign: Double = distance > 0 ? 1 : (distance < 0 ? -1 : 0)
            let initial = v * sign / max(abs(distance), 1)
            return (.durationSpring(dampingRatio: 0.8, initialVelocity: initial), 0.4)
        case let .transition(duration, speed):
            // The remaining fraction of a whole transition, at completionSpeed.
            let span = abs(detents[1].constant - detents[0].constant)
            let remaining = span == 0 ? 0 : abs(target.constant - from) / span
            // Capped like the spring's settle time: a fraction far above 1 (from hidden, over a
            // tiny mini span) at a slow speed would otherwise ask for hours of frames.
            return (.timed(.easeInOut), min(duration * remaining / speed, Animation.maxDuration))
        case .swipeCell:
            return (.timed(.easeOut), 0.25)
        case let .fluid(b):
            return (.spring(response: b.response, dampingRatio: b.dampingRatio, velocity: v), 0)
        }
    }
}
