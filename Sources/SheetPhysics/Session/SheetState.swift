/// The session's coarse state.
public enum SheetState: String, Sendable, CaseIterable {
    /// Off screen (at the hidden constant).
    case hidden
    /// At rest at a detent.
    case resting
    /// Following the finger.
    case dragging
    /// Moving to a detent on its own.
    case animating
}
