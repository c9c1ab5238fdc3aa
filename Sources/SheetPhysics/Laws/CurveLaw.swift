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
