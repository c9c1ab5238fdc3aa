/// One pan event: cumulative translation since `began` and the finger's velocity (pt/s, positive
/// downward).
public struct PanEvent: Sendable, Hashable {
    /// Which moment of the gesture this is.
    public var phase: PanPhase
    /// Cumulative vertical translation since `began`; nil where the client sent none.
    public var translation: Double?
    /// Vertical velocity; nil on `ended` means "estimate it".
    public var velocity: Double?
    /// fluid: the inner scroll view's offset (0 = at the top); nil where not sent.
    public var scrollOffset: Double?
    /// The request's own reduced-motion setting for the motion this event starts (`changed` at
    /// transition's finish, `ended`, `cancelled`); nil: the session's.
    public var reducedMotion: Bool?

    /// An event of `phase`; fields left out are the ones the client did not send.
    public init(
        phase: PanPhase, translation: Double? = nil, velocity: Double? = nil, scrollOffset: Double? = nil,
        reducedMotion: Bool? = nil
    ) {
        self.phase = phase
        self.translation = translation
        self.velocity = velocity
        self.scrollOffset = scrollOffset
        self.reducedMotion = reducedMotion
    }
}
