/// An animation as the values it was started with; the model supplies the rest (its dimmer and
/// progress scale), so restoring gives the same closed form, sample for sample.
public struct AnimationArchive: Sendable, Hashable {
    /// The animation's number in its session.
    public var id: Int
    /// How it moves.
    public var curve: AnimationCurve
    /// The constant it starts at, points.
    public var from: Double
    /// The constant it ends at, points.
    public var to: Double
    /// The duration asked for (a fluid spring's own settle time is recomputed from its curve).
    public var duration: Double
    /// The dimmer alpha at the start.
    public var fromAlpha: Double
    /// The dimmer alpha at the end.
    public var toAlpha: Double
    /// When it started, on the session's clock (seconds).
    public var startTime: Double
    /// The index of the detent it ends at in the model's detents.
    public var detent: Int
    /// How its dimmer moves, where not the model's (a layout move interpolates); nil: the model's.
    public var alphaRule: AlphaRule?

    /// An animation archive from its values.
    public init(
        id: Int, curve: AnimationCurve, from: Double, to: Double, duration: Double, fromAlpha: Double,
        toAlpha: Double, startTime: Double, detent: Int
    ) {
        self.id = id
        self.curve = curve
        self.from = from
        self.to = to
        self.duration = duration
        self.fromAlpha = fromAlpha
        self.toAlpha = toAlpha
        self.startTime = startTime
        self.detent = detent
    }
}
