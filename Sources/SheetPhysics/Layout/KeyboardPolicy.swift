/// What the card does while the keyboard covers the bottom of the screen (the fluid option
/// `keyboard`).
public enum KeyboardPolicy: String, Sendable, CaseIterable {
    /// Every visible detent rides up by the keyboard's inset, never above the top-most one, and
    /// keeps its name and its dimmer; a hidden card stays hidden.
    case lift
    /// The card goes to the top-most detent while the keyboard is up, and back to the detent it
    /// left when the keyboard goes away (if it is still where the keyboard sent it).
    case extend
    /// The keyboard moves nothing.
    case none
}
