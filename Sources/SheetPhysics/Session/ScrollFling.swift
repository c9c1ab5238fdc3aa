/// The moment a release hands the card's momentum to its content: the content starts a fling of
/// `velocity` (pt/s, < 0: upward, as the card moved) at `time` (seconds, the session's clock),
/// the instant the card reaches the top-most detent.
public struct ScrollFling: Sendable, Hashable {
    public let time: Double
    public let velocity: Double

    /// A hand-off at `time` with `velocity`.
    public init(time: Double, velocity: Double) {
        self.time = time
        self.velocity = velocity
    }
}
