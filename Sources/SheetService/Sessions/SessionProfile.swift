import SheetPhysics
import Synchronization

/// A session's model with its pre-rendered JSON: immutable, so readers need no lock. Sessions
/// created with one configuration share one; a layout event gives its session a new one.
final class SessionProfile: Sendable {
    let model: SheetModel
    let clock: SessionClock
    /// The layout revision of `model` (0: as created; each layout event adds 1).
    let revision: Int
    /// The snapshot's members that never change for this model (preset … detents), pre-rendered
    /// as JSON members without braces, so a snapshot costs only its moving parts.
    let staticMembers: [UInt8]
    /// `"revision":…,"dragLaw":…,"releaseLaw":…(,"layoutLaw":…),"modality":…`, pre-rendered: what
    /// every snapshot carries after `staticMembers`, and every answer that starts a drag segment
    /// or follows a layout change.
    let lawMembers: [UInt8]
    /// The configuration, rendered as JSON members without braces (what the session store
    /// keeps, so another process rebuilds the same profile): as sent, or after a layout event the
    /// model's layout and options.
    let configurationMembers: [UInt8]

    init(model: SheetModel, clock: SessionClock, configurationMembers: [UInt8] = [], revision: Int = 0) {
        self.model = model
        self.clock = clock
        self.revision = revision
        let laws = ReplyJSON.lawMembers(model, revision: revision)
        self.lawMembers = laws
        self.staticMembers = ReplyJSON.staticMembers(model: model, clock: clock)
        self.configurationMembers = configurationMembers
    }

    /// The profile of a model a layout event built: its configuration is the model's own layout
    /// and options.
    convenience init(relaid model: SheetModel, clock: SessionClock, revision: Int) {
        self.init(
            model: model, clock: clock, configurationMembers: ReplyJSON.configurationMembers(model, clock: clock),
            revision: revision)
    }
}
