/// One `changed` event's (time, translation), seconds and points.
public struct VelocitySample: Sendable, Hashable {
    /// When, on the session's clock, seconds.
    public var time: Double
    /// The drag's cumulative translation then, points.
    public var translation: Double

    /// A sample at `time` (seconds) with `translation` (points).
    public init(time: Double, translation: Double) {
        self.time = time
        self.translation = translation
    }
}
