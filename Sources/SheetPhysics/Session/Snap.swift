/// Why a release, show, dismiss or cancel went where it went.
public struct Snap: Sendable, Hashable {
    /// Where the card goes.
    public let detent: Detent
    /// Free text for people: "velocity 1800 > 1500", "projected 1099.1 beyond tip".
    public let reason: String
    /// fluid only: the projected constant.
    public let projected: Double?
}
