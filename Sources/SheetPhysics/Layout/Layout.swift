/// Everything around the card that may change while it lives: the screen, the keyboard over its
/// bottom and the height of the card's content. A session's model is built for one layout; a
/// `layout` event builds the model for the next one (`SheetSession.handle(.layout…)`).
public struct Layout: Sendable, Hashable {
    /// The screen, points.
    public var geometry: Geometry
    /// Points the keyboard covers from the bottom of the screen (0: no keyboard), [0, height].
    public var keyboardInset: Double
    /// The height of the card's content, points (nil: not measured yet; detents of kind `content`
    /// are then unreachable), [0, 1e6].
    public var contentHeight: Double?
    /// The platform's reduce-motion setting: every motion jumps (an animation of duration 0).
    public var reducedMotion = false

    /// The standard geometry, no keyboard, content not measured.
    public static let standard = Layout(geometry: .standard)

    /// A layout on `geometry` with no keyboard and no content height.
    public init(geometry: Geometry) {
        self.geometry = geometry
        self.keyboardInset = 0
        self.contentHeight = nil
    }

    /// A validated layout: the inset finite and ≥ 0 (one taller than the screen, as after a
    /// rotation that left the inset as it was, covers the screen: `LayoutLaw` takes min(inset, h)),
    /// the content height finite within [0, 1e6] points.
    public init(geometry: Geometry, keyboardInset: Double, contentHeight: Double?) throws(ConfigurationError) {
        guard keyboardInset.isFinite, keyboardInset >= 0 else {
            throw .invalidOption(
                field: "keyboardInset",
                reason: "must be a finite number of points ≥ 0, got \(Format.number(keyboardInset, decimals: 6))")
        }
        if let h = contentHeight {
            guard h.isFinite, h >= 0, h <= 1e6 else {
                throw .invalidOption(
                    field: "contentHeight",
                    reason: "must be a number of points from 0 to 1e6, got \(Format.number(h, decimals: 6))")
            }
        }
        self.geometry = geometry
        self.keyboardInset = keyboardInset
        self.contentHeight = contentHeight
    }

    /// Whether the keyboard is up.
    public var keyboardIsUp: Bool { keyboardInset > 0 }
}
