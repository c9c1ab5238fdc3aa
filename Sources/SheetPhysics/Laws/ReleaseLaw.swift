/// Where a release sends the card and how it moves there, as data: the engine decides every
/// `ended` (and transition's finish) by evaluating this value, and the service sends the same value
/// to clients (`releaseLaw`), so a client that evaluates it starts the card's settle on the frame
/// the finger lifts, without waiting for the answer.
///
/// Evaluation of a release at `constant` c with velocity v (pt/s, positive downward) from the
/// drag's `origin` detent:
/// 1. v: the `ended` event's own velocity, else the least-squares slope of translation over time of
///    the drag's `changed` samples with time ≥ ended's time − `velocityWindow` (0 for fewer than
///    two such samples or for samples all at one time);
/// 2. with a `projection`, p: where momentum would carry the card (the snap reports it);
/// 3. the first rule of `rules` whose conditions all hold picks the detent (the last rule has none);
/// 4. the first rule of `motions` whose conditions hold picks the curve, from c to the detent's
///    constant, starting at the event's time; the dimmer follows `alphaRule`. A request whose own
///    `reducedMotion` differs from the session's (`reducedMotion`) reads `requestOverride`'s
///    motions and hand-off instead.
public struct ReleaseLaw: Sendable {
    /// Seconds of `changed` samples the velocity estimate reads, counted back from the release
    /// (0.1 s and 1 ns of slack, so a sample exactly 0.1 s before counts despite rounding).
    public let velocityWindow: Double
    /// fluid: the momentum projection the rules may read; nil elsewhere.
    public let projection: MomentumProjection?
    /// Which detent a release goes to: the first rule that matches.
    public let rules: [ReleaseRule]
    /// Which curve takes the card there under the session's setting: the first rule that matches.
    public var motions: [MotionRule] { session.motions }
    /// How the dimmer moves during the animation.
    public let alphaRule: AlphaRule
    /// fluid with `momentumHandOff`: the top-most detent, where the content scrolls. Step 5: a
    /// spring to it from below (from > to) whose first crossing of the detent, t_c (the closed form
    /// of `DampedOscillator.firstCrossing`), comes before its settle time ends there, and the
    /// content takes the card's velocity at t_c (`scrollFling`). nil: no hand-off (and always nil
    /// under reduced motion).
    public var handOff: Detent? { session.handOff }
    /// Whether the session is under reduced motion: `motions` and `handOff` are then the jump.
    public var reducedMotion: Bool { session.reducedMotion }
    /// The motions and hand-off under the session's reduced-motion setting.
    public let session: MotionVariant
    /// The motions and hand-off of a request that asks the other setting (its `reducedMotion`
    /// differs from the session's): the animated ones on a reduced session, the jump otherwise.
    public let requestOverride: MotionVariant

    /// A law; every preset reads velocity over the same window, the estimator's. Its motions are
    /// the animated ones; a request under reduced motion jumps (`MotionVariant.jump`).
    init(
        velocityWindow: Double = VelocitySamples.window, projection: MomentumProjection? = nil,
        rules: [ReleaseRule], motions: [MotionRule], alphaRule: AlphaRule, handOff: Detent? = nil
    ) {
        self.init(
            velocityWindow: velocityWindow, projection: projection, rules: rules, alphaRule: alphaRule,
            session: MotionVariant(reducedMotion: false, motions: motions, handOff: handOff), requestOverride: .jump)
    }

    private init(
        velocityWindow: Double, projection: MomentumProjection?, rules: [ReleaseRule], alphaRule: AlphaRule,
        session: MotionVariant, requestOverride: MotionVariant
    ) {
        self.velocityWindow = velocityWindow
        self.projection = projection
        self.rules = rules
        self.alphaRule = alphaRule
        self.session = session
        self.requestOverride = requestOverride
    }

    /// The same law for a session under reduced motion: the same rules, the jump as the session's
    /// motions, and the animated ones kept for a request that asks for motion (`reducedMotion:
    /// false`).
    var jumping: ReleaseLaw {
        guard !session.reducedMotion else { return self }
        return ReleaseLaw(
            velocityWindow: velocityWindow, projection: projection, rules: rules, alphaRule: alphaRule,
            session: .jump, requestOverride: session)
    }

    /// The motions a request uses: the session's, unless the request's own `reducedMotion` (nil:
    /// it says nothing) differs from the session's setting, then `requestOverride`'s.
    public func variant(reducedMotion requested: Bool?) -> MotionVariant {
        guard let requested, requested != session.reducedMotion else { return session }
        return requestOverride
    }

    /// Where a release at `constant` with `velocity`, from a drag that began at `origin`, sends
    /// the card (steps 2 and 3), and why.
    public func snap(constant c: Double, velocity v: Double, origin: Detent) -> Snap {
        let projected = projection?.project(constant: c, velocity: v)
        for rule in rules
        where rule.conditions.allSatisfy({ $0.holds(constant: c, velocity: v, origin: origin, projected: projected) }) {
            let choice = rule.target.choose(constant: c, projected: projected)
            let facts = ReleaseFacts(
                constant: c, velocity: v, origin: origin, projected: projected, beyond: choice.beyond)
            return Snap(detent: choice.detent, reason: rule.explain(facts), projected: projected)
        }
        // Every law ends with an unconditional rule; this is reached only by a law built wrong.
        preconditionFailure("a release law without a final unconditional rule")
    }

    /// The curve and duration (seconds) that move the card from `from` to `target` (step 4).
    /// `velocity` is the release velocity, pt/s; `isShow`: a `show`, to which `releasedAbove`
    /// never applies.
    /// `reducedMotion`: the request's own setting (nil: the session's; `variant(reducedMotion:)`).
    public func motion(
        from: Double, to target: Detent, velocity v: Double, isShow: Bool, reducedMotion: Bool? = nil
    ) -> (curve: AnimationCurve, duration: Double) {
        for rule in variant(reducedMotion: reducedMotion).motions
        where rule.conditions.allSatisfy({ $0.holds(from: from, to: target, isShow: isShow) }) {
            return rule.curve.animation(from: from, to: target.constant, velocity: v)
        }
        preconditionFailure("a release law without a final unconditional motion")
    }
}
