/// The answer to one event.
public struct SheetOutcome: Sendable {
    /// What the event did.
    public var action: SheetAction
    /// The session after the event, at the event's time.
    public var snapshot: SheetSnapshot
    /// An animation this event stopped before its end (a grab, or a show/dismiss mid-flight).
    public var interrupted: Animation?
    /// The release velocity used (ended, cancelled) and its source.
    public var velocity: Double?
    /// Where `velocity` came from: the client, or the estimate from the drag's samples.
    public var velocitySource: VelocitySource?
    /// fluid pan events: who took the movement.
    public var consumer: Consumer?
    /// The drag segment this event started (`began`; a `changed` where the sheet took the
    /// movement back from the content): what a client evaluates the drag law in from now on.
    public var drag: DragSegment? {
        get { startedSegment?.segment }
        set { startedSegment = newValue.map(SegmentBox.init) }
    }
    /// Boxed: most outcomes (every plain `changed`) have none, and an inline segment (two detent
    /// names) made every outcome larger to copy and destroy (≈ 500 instructions per `changed`).
    var startedSegment: SegmentBox? = nil
    /// A release that handed the card's momentum to the content: when and with what velocity the
    /// content's own fling starts (`ReleaseLaw.handOff`).
    public var scrollFling: ScrollFling?
    /// A step: where the card goes among its detents, for what a screen reader says.
    public var step: StepFacts?
    /// The event started a motion: whether it is reduced motion's jump (the request's own
    /// `reducedMotion`, else the session's setting); nil when nothing started.
    public var reducedMotion: Bool?
    /// A layout event was accepted: the session's model (its detents and laws) is a new one.
    public var relaid = false

    /// The snap, if the event started an animation.
    public var snap: Snap? {
        if case let .settle(_, snap) = action { return snap }
        return nil
    }

    /// The animation the event started, if any.
    public var animation: Animation? {
        if case let .settle(animation, _) = action { return animation }
        return nil
    }
}
