import SheetPhysics
import Synchronization

/// A session's model with its pre-rendered JSON: immutable, so readers need no lock. Sessions
/// created with one configuration share one; a layout event gives its session a new one.
final class SessionProfile: Sendable {
    let model: SheetModel
    let clock: SessionClock
    /// The session it is stacked on (`StackRule`); nil: a root sheet.
    let parent: String?
    /// What the card's `RecedeLaw` draws, as the answers name it: its parent, the page behind
    /// (a root with `backdrop`), or nothing.
    let recedes: RecedeTarget?
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

    init(
        model: SheetModel, clock: SessionClock, parent: String? = nil, configurationMembers: [UInt8] = [],
        revision: Int = 0
    ) {
        self.model = model
        self.clock = clock
        self.parent = parent
        self.recedes = parent != nil ? .parent : (model.recede.backdrop ? .backdrop : nil)
        self.revision = revision
        let laws = ReplyJSON.lawMembers(model, revision: revision)
        self.lawMembers = laws
        self.staticMembers = ReplyJSON.staticMembers(model: model, clock: clock)
        self.configurationMembers = configurationMembers
    }

    /// The profile of a model a layout event built: its configuration is the model's own layout
    /// and options.
    convenience init(relaid model: SheetModel, clock: SessionClock, parent: String?, revision: Int) {
        self.init(
            model: model, clock: clock, parent: parent,
            configurationMembers: ReplyJSON.configurationMembers(model, clock: clock, parent: parent),
            revision: revision)
    }
}

/// What a card's `RecedeLaw` draws beneath it.
enum RecedeTarget: Sendable {
    /// The sheet it is stacked on: answers carry `parentTransform`.
    case parent
    /// The page behind a root sheet: answers carry `backdropTransform`.
    case backdrop
}
