/// What a drag does with the finger, as data: for any translation of the current drag, the
/// constant, the dimmer alpha and the progress the engine answers. The engine moves the card by
/// evaluating this value (`SheetSession` calls `constant(candidate:)` with step 1's candidate), and the service sends the same
/// value to clients, so a client that evaluates it predicts every `changed` answer exactly,
/// without waiting for it.
///
/// A client maps its pointer once: translation = `edge.sign` · (the pointer's movement along
/// `edge.axis`), points, and places the card at `constant` from the far safe edge along that axis.
///
/// Evaluation, in this order (each step one IEEE-754 double operation, as written):
/// 1. candidate = segment.start + (translation − segment.base);
/// 2. inside [lower, upper] (a missing bound is no bound): the constant is the candidate;
/// 3. past a bound with no rubber band: the bound (clamping);
///    past `upper` u with a rubber band: u + f(candidate − u); past `lower` l: l − f(l − candidate),
///    f(x) = (1 − 1 / (x · coefficient / dimension + 1)) · dimension;
/// 4. dimmerAlpha = `dimmer.alpha(at: constant)`, progress = `progress.progress(of: constant)`;
/// 5. transition: once `segment.finish` is reached, the drag is over (see `DragFinish`).
public struct DragLaw: Sendable, Hashable {
    /// The smallest constant a drag reaches freely (the top-most limit); nil: none.
    public let lower: Double?
    /// The largest constant a drag reaches freely (the bottom-most limit); nil: none.
    public let upper: Double?
    /// Resistance past a bound; nil: the bound clamps.
    public let rubberBand: RubberBand?
    /// The dimmer's alpha as a function of the constant (while dragging, every preset).
    public let dimmer: DimmerCurve
    /// How open the card is as a function of the constant.
    public let progress: ProgressScale
    /// transition: the fraction of the way from the drag's detent toward the other one at which
    /// the drag finishes the transition by itself (each drag's `DragSegment.finish`); nil: never.
    public let finishThreshold: Double?
    /// The edge the card comes from: the pointer axis and sign a client maps deltas by (every
    /// preset but fluid: bottom).
    public let edge: Edge

    /// A law from its parts (each preset builds its own in `Presets/`).
    public init(
        lower: Double?, upper: Double?, rubberBand: RubberBand? = nil, dimmer: DimmerCurve, progress: ProgressScale,
        finishThreshold: Double? = nil, edge: Edge = .bottom
    ) {
        self.edge = edge
        self.lower = lower
        self.upper = upper
        self.rubberBand = rubberBand
        self.dimmer = dimmer
        self.progress = progress
        self.finishThreshold = finishThreshold
    }

    /// The constant for an unlimited candidate position (steps 2–3).
    @inline(__always)
    public func constant(candidate c: Double) -> Double {
        if let u = upper, c > u {
            guard let band = rubberBand else { return u }
            return u + band.resistance(c - u)
        }
        if let l = lower, c < l {
            guard let band = rubberBand else { return l }
            return l - band.resistance(l - c)
        }
        return c
    }

    /// A candidate that this law turns into `constant` (the inverse of `constant(candidate:)`):
    /// the constant itself within the bounds, the rubber band's inverse past one. A constant a
    /// clamping bound cannot give maps to the bound. Re-basing a drag on a new law with it keeps
    /// the card under the finger (to rounding), except within ≈ 1e-5 pt of the band's asymptote:
    /// the stretch there is capped at `maxStretch`, so a stored drag stays within the store's
    /// bound on numbers (1e12).
    public func candidate(for constant: Double) -> Double {
        if let u = upper, constant > u {
            guard let band = rubberBand else { return u }
            return u + min(band.stretch(giving: constant - u), Self.maxStretch)
        }
        if let l = lower, constant < l {
            guard let band = rubberBand else { return l }
            return l - min(band.stretch(giving: l - constant), Self.maxStretch)
        }
        return constant
    }

    /// The largest over-drag `candidate(for:)` gives, points.
    public static let maxStretch = 1e11
}
