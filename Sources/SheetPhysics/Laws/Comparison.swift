/// A comparison of a quantity with a value.
public enum Comparison: String, Sendable, Hashable {
    /// quantity < value.
    case less = "<"
    /// quantity ≤ value.
    case lessOrEqual = "<="
    /// quantity > value.
    case greater = ">"
    /// quantity ≥ value.
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
