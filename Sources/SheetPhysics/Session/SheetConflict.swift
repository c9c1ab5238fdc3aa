/// Why an event was refused. The session is unchanged.
public enum SheetConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// `changed`, `ended` or `cancelled` with no drag in progress.
    case noDrag(PanPhase, state: SheetState)
    /// `began` on a hidden card (it is off screen: show it first).
    case hidden
    /// The client clock went backwards.
    case clockBackwards(time: Double, last: Double)
    /// `began` while the keyboard is up, on a session whose `keyboardDrag` option is false.
    case keyboardLocked
    /// `step` while a finger holds the card.
    case stepWhileDragging
    /// `fling` while the card is not resting at a detent where its content scrolls.
    case noScroll(state: SheetState)

    /// What went wrong and what to send instead, for a person.
    public var description: String {
        switch self {
        case let .noDrag(phase, state):
            "\(phase.rawValue) with no drag in progress (the card is \(state.rawValue)); send began first"
        case .hidden: "the card is hidden, so there is nothing to grab; show it first"
        case .stepWhileDragging:
            "step while the card is being dragged: the finger holds it; step after the drag ends"
        case let .noScroll(state):
            "fling with the card \(state.rawValue), not resting at a detent where its content scrolls (contentScrollsAt): the card takes a content's momentum only there"
        case .keyboardLocked:
            "the keyboard is up and this session's keyboardDrag option is false: the card cannot be dragged until the keyboard goes"
        case let .clockBackwards(time, last):
            "time \(Format.number(time, decimals: 6)) is before the session's last event at \(Format.number(last, decimals: 6)); the client clock must never decrease"
        }
    }
}
