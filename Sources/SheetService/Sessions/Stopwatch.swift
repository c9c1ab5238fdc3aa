/// The server's monotonic clock in seconds since the service started: the time of sessions that
/// use the server clock, and of idle-session expiry.
public struct Stopwatch: Sendable {
    private let origin: ContinuousClock.Instant

    public init(origin: ContinuousClock.Instant = .now) { self.origin = origin }

    /// Seconds since the origin at `instant`.
    @inline(__always)
    public func seconds(at instant: ContinuousClock.Instant) -> Double {
        // One `components` (a 128-bit division): reading it twice cost ≈ 200 instructions.
        let (seconds, attoseconds) = (instant - origin).components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    /// Seconds since the origin now.
    public var now: Double { seconds(at: .now) }
}
