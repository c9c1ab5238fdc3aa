import SheetPhysics

/// What a batch's answer says of the events before its last.
struct BatchSummary {
    /// How many events the batch had.
    var count: Int
    /// Every event before the last that started an animation, in order.
    /// (`reducedMotion`: whether that motion is reduced motion's jump.)
    var settles: [(index: Int, phase: String, snap: Snap, animation: Animation, reducedMotion: Bool?)]
    /// The segment of the drag in progress after the batch, when an event of the batch started
    /// it (a `began`, or fluid's sheet taking over from the content).
    var drag: DragSegment?
    /// Whether an event of the batch changed the layout (the answer then carries the new laws).
    var relaid = false
}
