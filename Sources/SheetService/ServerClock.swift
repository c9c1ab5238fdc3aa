/// The server's monotonic clock in seconds since the service started: the time of sessions that
/// use the server clock, and of idle-session expiry.
public struct ServerClock: Sendable {
    private let origin: ContinuousClock.Instant

    public init(origin: ContinuousClock.Instant = .now) { self.origin = origin }

    /// Seconds since the origin at `instant`.
    @inline(__always)
    public func seconds(at instant: ContinuousClock.Instant) -> Double {
        let d = instant - origin
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    /// Seconds since the origin now.
    public var now: Double { seconds(at: .now) }
}
