/// fluid scroll hand-off: who took the movement.
public enum Consumer: String, Sendable {
    /// The card moved.
    case sheet
    /// The inner scroll view moved; the card stayed.
    case scroll
}
