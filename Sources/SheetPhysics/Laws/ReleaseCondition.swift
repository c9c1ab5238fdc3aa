/// A condition of a release rule.
public enum ReleaseCondition: Sendable, Hashable {
    /// quantity `comparison` value.
    case compare(ReleaseQuantity, Comparison, Double)
    /// The drag began at the detent of this name.
    case origin(String)

    func holds(constant c: Double, velocity v: Double, origin: Detent, projected: Double?) -> Bool {
        switch self {
        case let .compare(q, op, value): op.holds(q.value(constant: c, velocity: v, projected: projected), value)
        case let .origin(name): origin.name == name
        }
    }
}
