/// Where momentum would carry a released card: UIScrollView's deceleration, p = c + (v / 1000) ·
/// r / (1 − r).
public struct MomentumProjection: Sendable, Hashable {
    /// r, per millisecond, (0, 1).
    public let decelerationRate: Double

    func project(constant c: Double, velocity v: Double) -> Double {
        c + (v / 1000) * decelerationRate / (1 - decelerationRate)
    }
}
