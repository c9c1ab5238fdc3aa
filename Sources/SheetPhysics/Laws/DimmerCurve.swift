/// The dimmer's alpha as a function of the card's constant. Every preset's rule has one shape:
/// `full` at and above `fullAt` (smaller constants are higher on screen in every constraint
/// system here), 0 at and below `clearAt`, linear between.
public struct DimmerCurve: Sendable, Hashable {
    /// Alpha when fully dimmed (0…1).
    public let full: Double
    /// The constant at and above which alpha is `full`.
    public let fullAt: Double
    /// The constant at and below which alpha is 0.
    public let clearAt: Double

    /// A curve; `fullAt` ≤ `clearAt` is expected (a step where they are equal).
    public init(full: Double, fullAt: Double, clearAt: Double) {
        self.full = full
        self.fullAt = fullAt
        self.clearAt = clearAt
    }

    /// No dimming at all.
    public static let none = DimmerCurve(full: 0, fullAt: 0, clearAt: 0)

    /// Alpha at constant `v`, always in [0, full].
    @inline(__always)
    public func alpha(at v: Double) -> Double {
        if full == 0 { return 0 }
        if v <= fullAt { return full }
        if v >= clearAt { return 0 }
        return full * (clearAt - v) / (clearAt - fullAt)
    }
}
