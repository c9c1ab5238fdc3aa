/// The motions of a release law for one reduced-motion setting: which curve takes the card to
/// the detent a release (or a show, dismiss, step or fling) chose, and whether a spring hands its
/// momentum to the content. A release law carries the variant of the session's setting and the
/// one a request that asks the other (`reducedMotion` on the request) uses, so that a client
/// predicts either from the law alone.
public struct MotionVariant: Sendable, Hashable {
    /// Whether these are the reduced-motion motions (every motion a jump).
    public let reducedMotion: Bool
    /// Which curve takes the card there: the first rule that matches.
    public let motions: [MotionRule]
    /// The top-most detent a spring hands its momentum to the content at (`ReleaseLaw.handOff`);
    /// nil: no hand-off.
    public let handOff: Detent?

    /// The variant of `reducedMotion` with `motions` and `handOff`.
    init(reducedMotion: Bool, motions: [MotionRule], handOff: Detent?) {
        self.reducedMotion = reducedMotion
        self.motions = motions
        self.handOff = handOff
    }

    /// Reduced motion's variant: every motion a jump (a linear curve of duration 0, its frames all
    /// at the target), no hand-off (there is no momentum left to hand on).
    static let jump = MotionVariant(
        reducedMotion: true, motions: [MotionRule([], .timed(.linear, duration: 0))], handOff: nil)
}
