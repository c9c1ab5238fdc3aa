/// The phase of a pan gesture, as `UIPanGestureRecognizer` reports it.
public enum PanPhase: String, Sendable, CaseIterable {
    /// The finger touched down: a drag starts.
    case began
    /// The finger moved.
    case changed
    /// The finger lifted: the release law decides where the card goes.
    case ended
    /// The system took the gesture: the card returns to the drag's detent.
    case cancelled
}
