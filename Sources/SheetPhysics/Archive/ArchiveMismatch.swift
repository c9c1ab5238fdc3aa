/// Why an archive cannot be restored on a model (it was made for another configuration, or was
/// altered on its way through the store).
public struct ArchiveMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    /// What does not fit, for a person.
    public let reason: String
    /// A mismatch described by `reason`.
    public init(reason: String) { self.reason = reason }
    /// The whole message.
    public var description: String { "the stored session does not fit its configuration: \(reason)" }
}
