/// A drag in progress, as plain values (see `Drag`).
public struct DragArchive: Sendable, Hashable {
    /// The constant the current segment of the drag started from.
    public var start: Double
    /// The translation at which the current segment started.
    public var base: Double
    /// The index of the detent a cancel returns to.
    public var origin: Int
    /// The card's constant now.
    public var constant: Double
    /// The translation of the drag's previous event.
    public var lastTranslation: Double
    /// fluid: the drag began at the top-most detent, so the content may scroll.
    public var canScroll: Bool
    /// fluid: who took the last `changed`.
    public var consumer: Consumer

    /// A drag from its values (as `SheetSession.archive` wrote them).
    public init(
        start: Double, base: Double, origin: Int, constant: Double, lastTranslation: Double, canScroll: Bool,
        consumer: Consumer
    ) {
        self.start = start
        self.base = base
        self.origin = origin
        self.constant = constant
        self.lastTranslation = lastTranslation
        self.canScroll = canScroll
        self.consumer = consumer
    }
}
