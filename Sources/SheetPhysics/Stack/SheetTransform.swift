/// How a card draws what lies beneath it at one instant: the sheet it is stacked on (its
/// parent), or the page behind a root sheet. The identity is scale 1 and everything else 0.
public struct SheetTransform: Sendable, Hashable {
    /// The covered thing's scale, about its centre along the cross axis and its far edge along
    /// the sheet's axis (≤ 1: it recedes).
    public let scale: Double
    /// Points it moves away from the edge it comes from (a bottom sheet beneath: up).
    public let lift: Double
    /// Its corner radius, points (on the corners away from its edge).
    public let cornerRadius: Double
    /// The alpha of a shade drawn over it, [0, 1].
    public let alpha: Double

    /// A transform from its values.
    public init(scale: Double, lift: Double, cornerRadius: Double, alpha: Double) {
        self.scale = scale
        self.lift = lift
        self.cornerRadius = cornerRadius
        self.alpha = alpha
    }

    /// Nothing covers it.
    public static let identity = SheetTransform(scale: 1, lift: 0, cornerRadius: 0, alpha: 0)
}
