/// The current stretch of a drag: where it started and what ends it early. A drag has one
/// segment from `began` on; fluid's scroll hand-off starts a new one when the sheet takes the
/// movement back from the content.
public struct DragSegment: Sendable, Hashable {
    /// The constant the segment started from, points.
    public let start: Double
    /// The finger's translation when the segment started, points.
    public let base: Double
    /// The detent a `cancelled` returns to.
    public let origin: Detent
    /// fluid: the drag began resting at a detent where the content scrolls (`contentScrollsAt`;
    /// by default the top-most), so a `changed` that carries
    /// `scrollOffset` may go to the content instead (then the constant stays, and the sheet
    /// re-bases when it takes over: a new segment).
    public let contentCanScroll: Bool
    /// fluid: an upward movement goes to the content before the sheet grows (the `dragFirst`
    /// option is `content`); false: the sheet takes it until it reaches the drag law's `lower`.
    public let contentFirst: Bool
    /// transition: the point at which the drag finishes the transition by itself; nil elsewhere.
    public let finish: DragFinish?

    /// A segment from its values.
    public init(
        start: Double, base: Double, origin: Detent, contentCanScroll: Bool, contentFirst: Bool = true,
        finish: DragFinish?
    ) {
        self.contentFirst = contentFirst
        self.start = start
        self.base = base
        self.origin = origin
        self.contentCanScroll = contentCanScroll
        self.finish = finish
    }
}
