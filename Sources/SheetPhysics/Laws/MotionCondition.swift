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
