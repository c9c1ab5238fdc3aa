/// How a preset's constraint constant is applied by a client.
public enum ConstraintKind: String, Sendable, CaseIterable {
    /// Card top to the safe-area top.
    case top
    /// Card bottom to the view bottom; positive pushes the card down.
    case bottom
    /// Card origin y in the container.
    case frameY
    /// Content offset from its resting place.
    case offset
}
