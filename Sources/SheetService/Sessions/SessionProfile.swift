import SheetPhysics
import Synchronization

/// What a session was created with: immutable, so readers need no lock.
final class SessionProfile: Sendable {
    let model: SheetModel
    let clock: SessionClock
    /// The snapshot's members that never change (preset … detents and the laws), pre-rendered as
    /// JSON members without braces, so a snapshot costs only its moving parts.
    let staticMembers: [UInt8]
    /// `"dragLaw":…,"releaseLaw":…`, pre-rendered: the end of `staticMembers`, and what every
    /// answer that starts a drag segment carries.
    let lawMembers: [UInt8]
    /// The configuration as sent, re-rendered as JSON members without braces (what the session
    /// store keeps, so another process rebuilds the same profile).
    let configurationMembers: [UInt8]

    init(model: SheetModel, clock: SessionClock, configurationMembers: [UInt8] = []) {
        self.model = model
        self.clock = clock
        let laws = ReplyJSON.lawMembers(model)
        self.lawMembers = laws
        self.staticMembers = ReplyJSON.staticMembers(model: model, clock: clock, laws: laws)
        self.configurationMembers = configurationMembers
    }
}
