/// The screen the card lives on, in points (y grows downward, as in UIKit; x grows rightward).
public struct Geometry: Sendable, Hashable {
    /// The container's height h.
    public let height: Double
    /// The top safe-area inset st (status bar, notch).
    public let safeAreaTop: Double
    /// The bottom safe-area inset sb (home indicator).
    public let safeAreaBottom: Double
    /// The container's width w; nil: not given (a bottom or top sheet does not need it, a left or
    /// right one does: it is their main dimension).
    public let width: Double?
    /// The left safe-area inset sl (a landscape notch), points.
    public let safeAreaLeft: Double
    /// The right safe-area inset sr, points.
    public let safeAreaRight: Double

    /// An iPhone 14-class screen: 844 × (47, 34), no width.
    public static let standard = Geometry(uncheckedHeight: 844, safeAreaTop: 47, safeAreaBottom: 34)

    /// A validated geometry: all finite, h > 0, st ≥ 0, sb ≥ 0, st + sb < h; and, where a width is
    /// given, w > 0 and sl + sr < w (sl ≥ 0 and sr ≥ 0 always).
    public init(
        height: Double, safeAreaTop: Double, safeAreaBottom: Double, width: Double? = nil,
        safeAreaLeft: Double = 0, safeAreaRight: Double = 0
    ) throws(ConfigurationError) {
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
        try Self.checkSides(width: width, left: safeAreaLeft, right: safeAreaRight)
        self.init(
            uncheckedHeight: height, safeAreaTop: safeAreaTop, safeAreaBottom: safeAreaBottom, width: width,
            safeAreaLeft: safeAreaLeft, safeAreaRight: safeAreaRight)
    }

    /// A geometry from parts already checked.
    init(
        uncheckedHeight: Double, safeAreaTop: Double, safeAreaBottom: Double, width: Double? = nil,
        safeAreaLeft: Double = 0, safeAreaRight: Double = 0
    ) {
        self.height = uncheckedHeight
        self.safeAreaTop = safeAreaTop
        self.safeAreaBottom = safeAreaBottom
        self.width = width
        self.safeAreaLeft = safeAreaLeft
        self.safeAreaRight = safeAreaRight
    }

    /// S = h − st − sb: the seeds' `safeAreaHeight`.
    public var safeAreaHeight: Double { height - safeAreaTop - safeAreaBottom }
    /// H = S + sb = h − st: the seeds' `safeAreaHeight + bottomPadding`.
    public var availableHeight: Double { height - safeAreaTop }
}
