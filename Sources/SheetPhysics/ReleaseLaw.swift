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
///    constant, starting at the event's time; the dimmer follows `alphaRule`.
public struct ReleaseLaw: Sendable {
    /// Seconds of `changed` samples the velocity estimate reads, counted back from the release
    /// (0.1 s and 1 ns of slack, so a sample exactly 0.1 s before counts despite rounding).
    public let velocityWindow: Double
    /// fluid: the momentum projection the rules may read; nil elsewhere.
    public let projection: MomentumProjection?
    /// Which detent a release goes to: the first rule that matches.
    public let rules: [ReleaseRule]
    /// Which curve takes the card there: the first rule that matches.
    public let motions: [MotionRule]
    /// How the dimmer moves during the animation.
    public let alphaRule: AlphaRule

    init(
        velocityWindow: Double, projection: MomentumProjection? = nil, rules: [ReleaseRule], motions: [MotionRule],
        alphaRule: AlphaRule
    ) {
        self.velocityWindow = velocityWindow
        self.projection = projection
        self.rules = rules
        self.motions = motions
        self.alphaRule = alphaRule
    }

    /// Where a release at `constant` with `velocity`, from a drag that began at `origin`, sends
    /// the card (steps 2 and 3), and why.
    public func snap(constant c: Double, velocity v: Double, origin: Detent) -> Snap {
        let projected = projection?.project(constant: c, velocity: v)
        for rule in rules where rule.conditions.allSatisfy({ $0.holds(constant: c, velocity: v, origin: origin) }) {
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
    public func motion(
        from: Double, to target: Detent, velocity v: Double, isShow: Bool
    ) -> (curve: AnimationCurve, duration: Double) {
        for rule in motions
        where rule.conditions.allSatisfy({ $0.holds(from: from, to: target, isShow: isShow) }) {
            return rule.curve.animation(from: from, to: target.constant, velocity: v)
        }
        preconditionFailure("a release law without a final unconditional motion")
    }
}

/// One clause of a release law: when every condition holds, `target` picks the detent.
public struct ReleaseRule: Sendable {
    /// All must hold; none: always.
    public let conditions: [ReleaseCondition]
    public let target: ReleaseTarget
    /// The reason people read in the snap (not part of the law a client evaluates).
    let explain: @Sendable (ReleaseFacts) -> String

    init(
        _ conditions: [ReleaseCondition], _ target: ReleaseTarget,
        because explain: @escaping @Sendable (ReleaseFacts) -> String
    ) {
        self.conditions = conditions
        self.target = target
        self.explain = explain
    }
}

/// What a rule's reason may quote.
struct ReleaseFacts {
    let constant: Double
    let velocity: Double
    let origin: Detent
    /// The momentum projection, where the law has one.
    let projected: Double?
    /// The neighbour the projection was clamped to, when it was.
    let beyond: Detent?
}

/// A number a release condition compares.
public enum ReleaseQuantity: Sendable, Hashable {
    /// c, points.
    case constant
    /// c truncated toward zero (twitter's seed compares `Int(constant)`).
    case truncatedConstant
    /// v, points per second.
    case velocity
    /// v / max(`to` − c, 1): how fast against the distance left to `to`, per second.
    case velocityPerDistance(to: Double)
    /// The fraction of the way from `from` toward `toward`: (c − from) / (toward − from), 0 where
    /// they coincide.
    case fraction(from: Double, toward: Double)

    func value(constant c: Double, velocity v: Double) -> Double {
        switch self {
        case .constant: c
        case .truncatedConstant: c.rounded(.towardZero)
        case .velocity: v
        case let .velocityPerDistance(to): v / max(to - c, 1)
        case let .fraction(from, toward): DragFinish.percent(at: c, from: from, toward: toward)
        }
    }
}

/// A comparison of a quantity with a value.
public enum Comparison: String, Sendable, Hashable {
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="

    func holds(_ a: Double, _ b: Double) -> Bool {
        switch self {
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        }
    }
}

/// A condition of a release rule.
public enum ReleaseCondition: Sendable, Hashable {
    /// quantity `comparison` value.
    case compare(ReleaseQuantity, Comparison, Double)
    /// The drag began at the detent of this name.
    case origin(String)

    func holds(constant c: Double, velocity v: Double, origin: Detent) -> Bool {
        switch self {
        case let .compare(q, op, value): op.holds(q.value(constant: c, velocity: v), value)
        case let .origin(name): origin.name == name
        }
    }
}

/// The detent a matching rule sends the card to.
public enum ReleaseTarget: Sendable, Hashable {
    /// This detent.
    case detent(Detent)
    /// The nearest of `candidates` (a tie goes to the earlier one) to the constant, or to the
    /// law's projection with `toProjection`. With `clampToNeighbours` (candidates ordered
    /// top-down), the projection passes at most one detent: it is clamped between the nearest
    /// candidates above and below the release point.
    case nearest(candidates: [Detent], toProjection: Bool, clampToNeighbours: Bool)

    func choose(constant c: Double, projected: Double?) -> (detent: Detent, beyond: Detent?) {
        switch self {
        case let .detent(d):
            return (d, nil)
        case let .nearest(candidates, toProjection, clampToNeighbours):
            var q = c
            var beyond: Detent?
            if toProjection, let p = projected {
                q = p
                if clampToNeighbours {
                    let upper = candidates.last(where: { $0.constant < c }) ?? candidates[0]
                    let lower = candidates.first(where: { $0.constant > c }) ?? candidates[candidates.count - 1]
                    if p < upper.constant {
                        q = upper.constant
                        beyond = upper
                    } else if p > lower.constant {
                        q = lower.constant
                        beyond = lower
                    }
                }
            }
            var best = candidates[0]
            for d in candidates.dropFirst() where abs(d.constant - q) < abs(best.constant - q) { best = d }
            return (best, beyond)
        }
    }
}

/// Where momentum would carry a released card: UIScrollView's deceleration, p = c + (v / 1000) ·
/// r / (1 − r).
public struct MomentumProjection: Sendable, Hashable {
    /// r, per millisecond, (0, 1).
    public let decelerationRate: Double

    func project(constant c: Double, velocity v: Double) -> Double {
        c + (v / 1000) * decelerationRate / (1 - decelerationRate)
    }
}

/// One clause of a release law's motions: when every condition holds, `curve` moves the card.
public struct MotionRule: Sendable, Hashable {
    public let conditions: [MotionCondition]
    public let curve: CurveLaw

    init(_ conditions: [MotionCondition], _ curve: CurveLaw) {
        self.conditions = conditions
        self.curve = curve
    }
}

/// A condition of a motion rule.
public enum MotionCondition: Sendable, Hashable {
    /// The target is the hidden detent.
    case toHidden
    /// Not a `show`, and the start truncated toward zero is below this value (twitter: a card
    /// pulled above open).
    case releasedAbove(Double)

    func holds(from: Double, to target: Detent, isShow: Bool) -> Bool {
        switch self {
        case .toHidden: target.isHidden
        case let .releasedAbove(limit): !isShow && from.rounded(.towardZero) < limit
        }
    }
}

/// An animation curve with its parameters, some of which come from the release.
public enum CurveLaw: Sendable, Hashable {
    /// A bezier timing curve lasting `duration` seconds.
    case timed(TimingCurve, duration: Double)
    /// A bezier timing curve lasting the remaining fraction of a whole transition:
    /// min(whole · (|to − from| / span) / speed, `Animation.maxDuration`), 0 when span is 0.
    case timedRemaining(TimingCurve, whole: Double, span: Double, speed: Double)
    /// UIKit's duration spring. `initialVelocity` nil: the release velocity in distances per second
    /// toward the target, v · sign(to − from) / max(|to − from|, 1).
    case durationSpring(dampingRatio: Double, initialVelocity: Double?, duration: Double)
    /// The physical spring, starting at the release velocity; it lasts until it settles (see
    /// `Animation`).
    case spring(response: Double, dampingRatio: Double)

    /// The oscillator's natural angular frequency ω₀, rad/s, where the curve is a spring.
    public var omega: Double? {
        switch self {
        case .timed, .timedRemaining: nil
        case let .durationSpring(zeta, _, duration): Math.ln1000 / (zeta * duration)
        case let .spring(response, _): Math.twoPi / response
        }
    }

    func animation(from: Double, to: Double, velocity v: Double) -> (curve: AnimationCurve, duration: Double) {
        switch self {
        case let .timed(c, duration):
            return (.timed(c), duration)
        case let .timedRemaining(c, whole, span, speed):
            let remaining = span == 0 ? 0 : abs(to - from) / span
            // Capped like the spring's settle time: a fraction far above 1 (from hidden, over a
            // tiny mini span) at a slow speed would otherwise ask for hours of frames.
            return (.timed(c), min(whole * remaining / speed, Animation.maxDuration))
        case let .durationSpring(zeta, initial, duration):
            if let initial { return (.durationSpring(dampingRatio: zeta, initialVelocity: initial), duration) }
            // The card leaves the finger at its speed: v in distances per second toward the target.
            let distance = to - from
            let sign: Double = distance > 0 ? 1 : (distance < 0 ? -1 : 0)
            return (.durationSpring(dampingRatio: zeta, initialVelocity: v * sign / max(abs(distance), 1)), duration)
        case let .spring(response, zeta):
            return (.spring(response: response, dampingRatio: zeta, velocity: v), 0)
        }
    }
}
