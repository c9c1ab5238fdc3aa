// The per-preset release rules: where a release sends the card and which curve takes it there,
// built as each preset's `ReleaseLaw` (the data the engine evaluates and clients receive).

extension SheetModel {
    /// The release law of `rule` over `detents` on `geometry`.
    static func releaseLaw(rule: SnapRule, detents: [Detent], geometry: Geometry, alphaRule: AlphaRule) -> ReleaseLaw {
        let window = VelocitySamples.window
        switch rule {
        case .facebook:
            let H = geometry.availableHeight
            let S = geometry.safeAreaHeight
            return ReleaseLaw(
                velocityWindow: window,
                rules: [
                    ReleaseRule([.compare(.velocity, .greater, 1500)], .detent(detents[2])) {
                        "velocity \(Format.number($0.velocity)) > 1500"
                    },
                    ReleaseRule([.compare(.constant, .less, 0.25 * H)], .detent(detents[0])) {
                        "constant \(Format.number($0.constant)) < 0.25·H = \(Format.number(0.25 * H))"
                    },
                    ReleaseRule([.compare(.constant, .less, S - 70)], .detent(detents[1])) {
                        "constant \(Format.number($0.constant)) < S − 70 = \(Format.number(S - 70))"
                    },
                    ReleaseRule([], .detent(detents[2])) {
                        "constant \(Format.number($0.constant)) ≥ S − 70 = \(Format.number(S - 70))"
                    },
                ],
                motions: [MotionRule([], .timed(.easeIn, duration: 0.25))], alphaRule: alphaRule)
        case .twitter:
            // The seed compares Int(constant): truncation toward zero.
            let t: @Sendable (ReleaseFacts) -> String = { f in Format.number(f.constant.rounded(.towardZero)) }
            return ReleaseLaw(
                velocityWindow: window,
                rules: [
                    ReleaseRule([.compare(.truncatedConstant, .less, 0)], .detent(detents[0])) {
                        "pulled above open (trunc \(t($0)) < 0)"
                    },
                    ReleaseRule(
                        [
                            .compare(.velocity, .greater, 0), .compare(.velocity, .less, 300),
                            .compare(.truncatedConstant, .less, 180),
                        ], .detent(detents[0])
                    ) {
                        "slow downward release (velocity \(Format.number($0.velocity)) < 300) near open (trunc \(t($0)) < 180)"
                    },
                    ReleaseRule([.compare(.velocity, .greater, 0)], .detent(detents[1])) {
                        "downward release (velocity \(Format.number($0.velocity)) > 0)"
                    },
                    ReleaseRule([], .detent(detents[0])) {
                        "upward or still release (velocity \(Format.number($0.velocity)) ≤ 0)"
                    },
                ],
                motions: [
                    MotionRule([.toHidden], .durationSpring(dampingRatio: 0.9, initialVelocity: 0.6, duration: 0.5)),
                    MotionRule([.releasedAbove(0)], .timed(.easeInOut, duration: 0.2)),
                    MotionRule([], .durationSpring(dampingRatio: 0.9, initialVelocity: 3, duration: 0.3)),
                ], alphaRule: alphaRule)
        case let .glide(segmented, K):
            let S = geometry.safeAreaHeight
            let open = detents[0]
            let compressed = detents[1]
            let closed = detents[2]
            let up: @Sendable (ReleaseFacts) -> String = { f in f.velocity > 0 ? "down" : "up (velocity 0 counts as up)"
            }
            let above: @Sendable (ReleaseFacts) -> String = { f in
                "above the threshold (\(Format.number(f.constant)) < \(Format.number(K))), moving \(up(f))"
            }
            let between: @Sendable (ReleaseFacts) -> String = { f in
                "between the threshold and S (\(Format.number(f.constant)) < \(Format.number(S))), moving \(up(f))"
            }
            return ReleaseLaw(
                velocityWindow: window,
                rules: [
                    ReleaseRule(
                        [.compare(.constant, .less, K), .compare(.velocity, .greater, 0)],
                        .detent(segmented ? compressed : open), because: above),
                    ReleaseRule([.compare(.constant, .less, K)], .detent(open), because: above),
                    ReleaseRule(
                        [.compare(.constant, .less, S), .compare(.velocity, .greater, 0)], .detent(closed),
                        because: between),
                    ReleaseRule(
                        [.compare(.constant, .less, S)], .detent(segmented ? compressed : open), because: between),
                    ReleaseRule([], .detent(closed)) {
                        "below S (\(Format.number($0.constant)) ≥ \(Format.number(S)))"
                    },
                ],
                motions: [MotionRule([], .durationSpring(dampingRatio: 0.8, initialVelocity: nil, duration: 0.4))],
                alphaRule: alphaRule)
        case let .transition(duration, speed):
            // Two detents: from either, past half of the way to the other goes there, else back.
            let first = detents[0]
            let second = detents[1]
            let percent: @Sendable (ReleaseFacts) -> String = { f in
                let other = f.origin.name == first.name ? second : first
                return Format.number(
                    DragFinish.percent(at: f.constant, from: f.origin.constant, toward: other.constant), decimals: 3)
            }
            return ReleaseLaw(
                velocityWindow: window,
                rules: [
                    ReleaseRule(
                        [
                            .origin(first.name),
                            .compare(.fraction(from: first.constant, toward: second.constant), .greater, 0.5),
                        ], .detent(second)
                    ) { "percent \(percent($0)) > 0.5" },
                    ReleaseRule([.origin(first.name)], .detent(first)) { "percent \(percent($0)) ≤ 0.5: back" },
                    ReleaseRule(
                        [.compare(.fraction(from: second.constant, toward: first.constant), .greater, 0.5)],
                        .detent(first)
                    ) { "percent \(percent($0)) > 0.5" },
                    ReleaseRule([], .detent(second)) { "percent \(percent($0)) ≤ 0.5: back" },
                ],
                motions: [
                    MotionRule(
                        [],
                        .timedRemaining(
                            .easeInOut, whole: duration, span: abs(second.constant - first.constant), speed: speed))
                ], alphaRule: alphaRule)
        case .swipeCell:
            return ReleaseLaw(
                velocityWindow: window,
                rules: [
                    ReleaseRule([.compare(.velocity, .less, 0)], .detent(detents[0])) {
                        "velocity \(Format.number($0.velocity)) < 0"
                    },
                    ReleaseRule([.compare(.velocity, .greater, 0)], .detent(detents[1])) {
                        "velocity \(Format.number($0.velocity)) > 0"
                    },
                    // At rest: the nearer one; a tie goes to initial.
                    ReleaseRule(
                        [],
                        .nearest(candidates: [detents[1], detents[0]], toProjection: false, clampToNeighbours: false)
                    ) { _ in "at rest: nearer detent" },
                ],
                motions: [MotionRule([], .timed(.easeOut, duration: 0.25))], alphaRule: alphaRule)
        case let .fluid(b):
            let H = geometry.availableHeight
            var rules: [ReleaseRule] = []
            // Removal by velocity relative to the distance left to hidden.
            if b.hideable, let hidden = detents.last, hidden.isHidden {
                rules.append(
                    ReleaseRule(
                        [
                            .compare(.velocity, .greater, 0),
                            .compare(.velocityPerDistance(to: H), .greaterOrEqual, b.removalVelocity),
                        ], .detent(hidden)
                    ) {
                        "removal: velocity/distance \(Format.number($0.velocity / max(H - $0.constant, 1))) ≥ \(Format.number(b.removalVelocity))"
                    })
            }
            // The nearest detent to the momentum projection (clamped unless skipDetents); a tie
            // goes to the upper one.
            rules.append(
                ReleaseRule(
                    [], .nearest(candidates: detents, toProjection: true, clampToNeighbours: !b.skipDetents)
                ) { f in
                    let note = f.beyond.map { " beyond \($0.name)" } ?? ""
                    return "projected \(Format.number(f.projected ?? f.constant, decimals: 1))\(note)"
                })
            return ReleaseLaw(
                velocityWindow: window, projection: MomentumProjection(decelerationRate: b.decelerationRate),
                rules: rules, motions: [MotionRule([], .spring(response: b.response, dampingRatio: b.dampingRatio))],
                alphaRule: alphaRule)
        }
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

    /// What moves the card from `from` to `to`: the release law's motion (twitter shows with its
    /// spring: `releasedAbove` never applies to a show).
    func animationCurve(
        from: Double, to target: Detent, velocity v: Double, isShow: Bool
    ) -> (curve: AnimationCurve, duration: Double) {
        releaseLaw.motion(from: from, to: target, velocity: v, isShow: isShow)
    }
}
