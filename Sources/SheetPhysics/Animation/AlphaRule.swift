/// How the dimmer moves during an animation.
public enum AlphaRule: String, Sendable, Hashable {
    /// UIKit animates both in one animator: alpha = fromAlpha + (toAlpha − fromAlpha)·clamp(p, 0, 1).
    case interpolate
    /// Alpha follows the preset's position rule at every instant (overshoot included).
    case position
}
