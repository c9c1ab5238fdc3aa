/// How open the card is: 0 at `low` (hidden, or the lowest detent where there is no hidden), 1 at
/// `top` (the top-most detent), linear in the constant and not clamped.
public struct ProgressScale: Sendable, Hashable {
    /// The constant of progress 0.
    public let low: Double
    /// The constant of progress 1.
    public let top: Double

    /// Progress 0 at the constant `low`, 1 at `top`.
    public init(low: Double, top: Double) {
        self.low = low
        self.top = top
    }

    /// The scale over a preset's `detents` (ordered top-down): 0 at the hidden detent, or at the
    /// lowest where there is none; 1 at the top-most.
    init(spanning detents: [Detent]) {
        self.init(
            low: detents.first(where: \.isHidden)?.constant ?? detents[detents.count - 1].constant,
            top: detents[0].constant)
    }

    /// (low − constant) / (low − top); 1 where low and top are less than 1e-9 pt apart.
    @inline(__always) public func progress(of constant: Double) -> Double {
        // Detents less than a nanopoint apart are one position (a span the decoders accept, such
        // as a 1e-310 card ratio, would otherwise make progress overflow to ±∞; found by fuzzing).
        (low - top).magnitude < 1e-9 ? 1 : (low - constant) / (low - top)
    }
}
