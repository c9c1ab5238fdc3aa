/// What a session looks like at one instant.
public struct SheetSnapshot: Sendable, Hashable {
    /// The coarse state.
    public var state: SheetState
    /// The detent the card rests at, or animates to; nil while dragging (and for a hidden card of a
    /// preset without a hidden detent).
    public var detent: Detent?
    /// The card's constant, points.
    public var constant: Double
    /// The dimmer's alpha, [0, 1].
    public var dimmerAlpha: Double
    /// How open the card is: 0 hidden (or at the lowest detent), 1 at the top-most.
    public var progress: Double
    /// d(constant)/dt, pt/s (0 at rest and while dragging).
    public var velocity: Double
    /// The running animation, if animating.
    public var animation: Animation?
    /// The instant this describes, on the session's clock.
    public var time: Double

    /// A snapshot from its values.
    public init(
        state: SheetState, detent: Detent?, constant: Double, dimmerAlpha: Double, progress: Double,
        velocity: Double, animation: Animation?, time: Double
    ) {
        self.state = state
        self.detent = detent
        self.constant = constant
        self.dimmerAlpha = dimmerAlpha
        self.progress = progress
        self.velocity = velocity
        self.animation = animation
        self.time = time
    }
}
