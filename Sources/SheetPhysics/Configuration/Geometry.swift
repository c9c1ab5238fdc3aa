/// The screen the card lives on, in points (y grows downward, as in UIKit).
public struct Geometry: Sendable, Hashable {
    /// The container's height h.
    public let height: Double
    /// The top safe-area inset st (status bar, notch).
    public let safeAreaTop: Double
    /// The bottom safe-area inset sb (home indicator).
    public let safeAreaBottom: Double

    /// An iPhone 14-class screen: 844 × (47, 34).
    public static let standard = Geometry(uncheckedHeight: 844, safeAreaTop: 47, safeAreaBottom: 34)

    /// A validated geometry: all finite, h > 0, st ≥ 0, sb ≥ 0, st + sb < h.
    public init(height: Double, safeAreaTop: Double, safeAreaBottom: Double) throws(ConfigurationError) {
        guard height.isFinite, safeAreaTop.isFinite, safeAreaBottom.isFinite else {
            throw .invalidGeometry("height, safeAreaTop and safeAreaBottom must be finite numbers")
        }
        guard height > 0 else { throw .invalidGeometry("height must be > 0, got \(Format.number(height))") }
        guard safeAreaTop >= 0 else {
            throw .invalidGeometry("safeAreaTop must be ≥ 0, got \(Format.number(safeAreaTop))")
        }
        guard safeAreaBottom >= 0 else {
            throw .invalidGeometry("safeAreaBottom must be ≥ 0, got \(Format.number(safeAreaBottom))")
        }
        guard safeAreaTop + safeAreaBottom < height else {
            throw .invalidGeometry(
                "safeAreaTop + safeAreaBottom (\(Format.number(safeAreaTop + safeAreaBottom))) must be less than height (\(Format.number(height)))"
            )
        }
        self.init(uncheckedHeight: height, safeAreaTop: safeAreaTop, safeAreaBottom: safeAreaBottom)
    }

    private init(uncheckedHeight: Double, safeAreaTop: Double, safeAreaBottom: Double) {
        self.height = uncheckedHeight
        self.safeAreaTop = safeAreaTop
        self.safeAreaBottom = safeAreaBottom
    }

    /// S = h − st − sb: the seeds' `safeAreaHeight`.
    public var safeAreaHeight: Double { height - safeAreaTop - safeAreaBottom }
    /// H = S + sb = h − st: the seeds' `safeAreaHeight + bottomPadding`.
    public var availableHeight: Double { height - safeAreaTop }
}
