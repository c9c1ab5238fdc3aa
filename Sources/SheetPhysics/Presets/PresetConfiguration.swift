/// What a preset's options resolve to on one geometry: everything a `SheetModel` holds beyond
/// the preset's name and the geometry.
struct PresetConfiguration {
    /// Where the card can rest, ordered from the top-most (most open, smallest constant) down.
    var detents: [Detent]
    /// Where a hidden card sits (the constant; a preset without a hidden detent still has one).
    var hiddenConstant: Double
    /// The detent `show` uses when it names none.
    var showDefault: Detent
    /// Where `dismiss` sends the card.
    var dismissTarget: Detent
    /// What a drag does with the finger.
    var dragLaw: DragLaw
    /// Where a release sends the card and how it moves there (with the alpha rule).
    var releaseLaw: ReleaseLaw
    /// fluid: where the detents are on any layout (nil: the preset's detents are placed by its
    /// own formulas of the geometry, which a layout event re-evaluates on the server only).
    var layoutLaw: LayoutLaw? = nil
    /// fluid's `interactiveUpThrough`: the constant at and below which the page behind takes input
    /// (nil: only a hidden card lets it through).
    var interactiveFrom: Double? = nil
    /// Where the content scrolls, and whether it takes an upward drag before the sheet grows.
    var contentScroll = ContentScroll.topMost
    var contentFirst = true
    /// The names of the detents the content cannot reach on this layout.
    var unreachable: [String] = []
    /// What the card does to what lies beneath it (nil: the standard recession).
    var recede: RecedeLaw? = nil
    /// The options in effect, defaults filled in, in catalog order.
    var effectiveOptions: [(key: String, value: OptionValue)]
}
