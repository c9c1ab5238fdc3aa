/// transition's finish threshold for one drag: once the card is `threshold` of the way from
/// `from` toward `toward`, the transition completes at once (an animation to `detent`), and the
/// drag's later events change nothing.
public struct DragFinish: Sendable, Hashable {
    /// The constant the drag's detent sits at.
    public let from: Double
    /// The other detent's constant.
    public let toward: Double
    /// The fraction of the way, (0, 1].
    public let threshold: Double
    /// The detent the transition finishes at.
    public let detent: Detent

    /// The fraction of the way from `from` toward `toward` at `constant`: (constant − from) /
    /// (toward − from), 0 where the two coincide.
    @inline(__always) public func percent(at constant: Double) -> Double {
        Self.percent(at: constant, from: from, toward: toward)
    }

    /// Whether a drag at `constant` finishes the transition.
    @inline(__always) public func isReached(at constant: Double) -> Bool { percent(at: constant) >= threshold }

    static func percent(at constant: Double, from: Double, toward: Double) -> Double {
        let span = toward - from
        return span == 0 ? 0 : (constant - from) / span
    }
}
