/// Whether the page behind the card takes input, as a function of the card's constant: the card
/// is modal above `interactiveFrom` and lets the page through at and below it (a larger constant
/// is lower on screen in every constraint system here). Independent of the dimmer: an overlay may
/// stay visible while the page takes input, and the reverse.
public struct ModalityLaw: Sendable, Hashable {
    /// The constant at and beyond which the background is interactive, points: fluid's
    /// `interactiveUpThrough` detent, else the hidden constant (a card on screen is modal).
    public let interactiveFrom: Double

    /// A law from its threshold.
    public init(interactiveFrom: Double) { self.interactiveFrom = interactiveFrom }

    /// Whether the background takes input with the card at `constant`.
    @inline(__always) public func backgroundInteractive(at constant: Double) -> Bool { constant >= interactiveFrom }
}
