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
    /// The fraction of the way from `from` toward `toward` of the momentum projection p (of c
    /// where the law has none): (p − from) / (toward − from), 0 where they coincide.
    case projectedFraction(from: Double, toward: Double)

    func value(constant c: Double, velocity v: Double, projected: Double?) -> Double {
        switch self {
        case .constant: c
        case .truncatedConstant: c.rounded(.towardZero)
        case .velocity: v
        case let .velocityPerDistance(to): v / max(to - c, 1)
        case let .fraction(from, toward): DragFinish.percent(at: c, from: from, toward: toward)
        case let .projectedFraction(from, toward): DragFinish.percent(at: projected ?? c, from: from, toward: toward)
        }
    }
}
