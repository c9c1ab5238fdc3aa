/// Where a result's velocity came from.
public enum VelocitySource: String, Sendable {
    /// The `ended` event carried it.
    case client
    /// The least-squares slope of the drag's samples (see `VelocitySamples`).
    case estimated
}
