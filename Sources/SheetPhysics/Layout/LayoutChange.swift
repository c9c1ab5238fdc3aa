/// A `layout` event: what changed around the card at its time. Fields left nil keep their value.
public struct LayoutChange: Sendable, Equatable {
    /// The new screen (rotation, a resized window).
    public var geometry: Geometry?
    /// The keyboard's new inset, points.
    public var keyboardInset: Double?
    /// The content's new height, points.
    public var contentHeight: Double?
    /// Options to change: each member replaces the option of its key, a null member restores its
    /// default; the others keep their values.
    public var options: [(key: String, value: OptionValue)]?
    /// The platform's reduce-motion setting changed.
    public var reducedMotion: Bool?
    /// How this change moves the card (nil: the session's `layoutMotion` option).
    public var motion: LayoutMotion?

    /// A change of the fields given.
    public init(
        geometry: Geometry? = nil, keyboardInset: Double? = nil, contentHeight: Double? = nil,
        options: [(key: String, value: OptionValue)]? = nil, motion: LayoutMotion? = nil
    ) {
        self.geometry = geometry
        self.keyboardInset = keyboardInset
        self.contentHeight = contentHeight
        self.options = options
        self.motion = motion
    }

    /// Equal fields; options compared member by member, in order.
    public static func == (a: LayoutChange, b: LayoutChange) -> Bool {
        let sameOptions: Bool
        switch (a.options, b.options) {
        case (nil, nil): sameOptions = true
        case let (x?, y?): sameOptions = OptionValue.object(x) == OptionValue.object(y)
        default: sameOptions = false
        }
        return a.geometry == b.geometry && a.keyboardInset == b.keyboardInset && a.contentHeight == b.contentHeight
            && sameOptions && a.motion == b.motion && a.reducedMotion == b.reducedMotion
    }
}
