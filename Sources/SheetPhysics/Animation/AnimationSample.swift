/// The card and dimmer at one instant of an animation.
public struct AnimationSample: Sendable, Hashable {
    /// Seconds since the animation started.
    public var t: Double
    /// The card's constant, points.
    public var constant: Double
    /// The dimmer's alpha, [0, 1].
    public var dimmerAlpha: Double
    /// How open the card is (see `ProgressScale`).
    public var progress: Double
    /// d(constant)/dt in points per second.
    public var velocity: Double
    /// Whether the page behind takes input here (`ModalityLaw`).
    public var backgroundInteractive: Bool
}
