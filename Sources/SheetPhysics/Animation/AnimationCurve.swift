/// How an animation moves the card from `from` to `to`.
public enum AnimationCurve: Sendable, Hashable {
    /// A timed bezier curve: p(t) = bezier(t / T).
    case timed(TimingCurve)
    /// UIKit's `animate(withDuration:usingSpringWithDamping:initialSpringVelocity:)`: an
    /// oscillator on the normalized displacement with ω₀ = ln(1000) / (ζ·T) and ẋ(0) = −v.
    case durationSpring(dampingRatio: Double, initialVelocity: Double)
    /// The physical spring of `fluid`: mass 1, stiffness (2π/response)², damping
    /// 4π·ζ/response, starting with `velocity` (points per second).
    case spring(response: Double, dampingRatio: Double, velocity: Double)

    /// The public curve name (`easeIn`, `durationSpring`, `spring`).
    public var name: String {
        switch self {
        case let .timed(c): c.name.rawValue
        case .durationSpring: "durationSpring"
        case .spring: "spring"
        }
    }
}
