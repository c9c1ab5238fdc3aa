/// A place the card can rest, with its constant in the preset's constraint system.
public struct Detent: Sendable, Hashable {
    /// The detent's name (`expanded`, `normal`, `hidden`, …).
    public let name: String
    /// Its constraint constant.
    public let constant: Double
    /// Whether resting here means the card is hidden (a dismissal).
    public let isHidden: Bool

    /// A detent `name` at `constant` (points), hidden or not.
    public init(name: String, constant: Double, isHidden: Bool = false) {
        self.name = name
        self.constant = constant
        self.isHidden = isHidden
    }
}
