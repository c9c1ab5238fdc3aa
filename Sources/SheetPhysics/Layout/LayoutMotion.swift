/// How a card at rest or animating moves to where a layout change puts it.
public enum LayoutMotion: Sendable, Hashable {
    /// The release law's own motion (fluid's spring), from the card's position and velocity.
    case release
    /// A jump: an animation of duration 0.
    case none
    /// A timing curve of `duration` seconds: the platform's keyboard curve, so that the card and
    /// the keyboard move together.
    case timed(TimingCurve, duration: Double)

    /// The public name: `release`, `none`, or the timing curve's.
    public var name: String {
        switch self {
        case .release: "release"
        case .none: "none"
        case let .timed(c, _): c.name.rawValue
        }
    }

    /// The motion a name and an optional duration describe (`release`, `none`, or a timing
    /// curve's name with a duration in (0, 10] seconds); nil: no such motion.
    public static func named(_ name: String, duration: Double?) -> LayoutMotion? {
        switch name {
        case "release": return duration == nil ? .release : nil
        case "none": return duration == nil ? LayoutMotion.none : nil
        default:
            guard let curve = TimingCurve.Name(rawValue: name), let d = duration, d.isFinite, d > 0, d <= 10 else {
                return nil
            }
            return .timed(TimingCurve(named: curve), duration: d)
        }
    }
}
