/// A rubber band: past a bound, a drag of x points moves the card f(x) =
/// (1 − 1/(x·coefficient/dimension + 1))·dimension points, a resistance that grows with x and
/// never reaches `dimension` (fluid: coefficient 0.55, dimension the screen height h).
public struct RubberBand: Sendable, Hashable {
    /// Dimensionless stiffness of the band (UIScrollView's 0.55).
    public let coefficient: Double
    /// The asymptote, points.
    public let dimension: Double

    /// A band with UIScrollView's `coefficient` (0.55) over `dimension` points.
    public init(coefficient: Double, dimension: Double) {
        self.coefficient = coefficient
        self.dimension = dimension
    }

    /// f(x), points, for an over-drag of x ≥ 0 points.
    @inline(__always)
    public func resistance(_ x: Double) -> Double {
        (1 - 1 / (x * coefficient / dimension + 1)) * dimension
    }

    /// f⁻¹(y): the over-drag that the band turns into y points, for 0 ≤ y < dimension (∞ at and
    /// past the asymptote): x = (1 / (1 − y / dimension) − 1) · dimension / coefficient.
    public func stretch(giving y: Double) -> Double {
        guard y < dimension else { return .infinity }
        return (1 / (1 - y / dimension) - 1) * dimension / coefficient
    }
}
