/// What a drag does with the finger, as data: for any translation of the current drag, the
/// constant, the dimmer alpha and the progress the engine answers. The engine moves the card by
/// evaluating this value (`SheetSession` calls `constant(for:in:)`), and the service sends the same
/// value to clients, so a client that evaluates it predicts every `changed` answer exactly,
/// without waiting for it.
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

    public init(
        lower: Double?, upper: Double?, rubberBand: RubberBand? = nil, dimmer: DimmerCurve, progress: ProgressScale,
        finishThreshold: Double? = nil
    ) {
        self.lower = lower
        self.upper = upper
        self.rubberBand = rubberBand
        self.dimmer = dimmer
        self.progress = progress
        self.finishThreshold = finishThreshold
    }

    /// The constant for a finger at `translation` in the drag segment `segment` (steps 1–3).
    @inline(__always)
    public func constant(for translation: Double, in segment: DragSegment) -> Double {
        constant(candidate: segment.start + (translation - segment.base))
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
}

/// A rubber band: past a bound, a drag of x points moves the card f(x) =
/// (1 − 1/(x·coefficient/dimension + 1))·dimension points, a resistance that grows with x and
/// never reaches `dimension` (fluid: coefficient 0.55, dimension the screen height h).
public struct RubberBand: Sendable, Hashable {
    /// Dimensionless stiffness of the band (UIScrollView's 0.55).
    public let coefficient: Double
    /// The asymptote, points.
    public let dimension: Double

    public init(coefficient: Double, dimension: Double) {
        self.coefficient = coefficient
        self.dimension = dimension
    }

    /// f(x), points, for an over-drag of x ≥ 0 points.
    @inline(__always)
    public func resistance(_ x: Double) -> Double {
        (1 - 1 / (x * coefficient / dimension + 1)) * dimension
    }
}

/// How open the card is: 0 at `low` (hidden, or the lowest detent where there is no hidden), 1 at
/// `top` (the top-most detent), linear in the constant and not clamped.
public struct ProgressScale: Sendable, Hashable {
    /// The constant of progress 0.
    public let low: Double
    /// The constant of progress 1.
    public let top: Double

    public init(low: Double, top: Double) {
        self.low = low
        self.top = top
    }

    /// (low − constant) / (low − top); 1 where low and top are less than 1e-9 pt apart.
    @inline(__always) public func progress(of constant: Double) -> Double {
        // Detents less than a nanopoint apart are one position (a span the decoders accept, such
        // as a 1e-310 card ratio, would otherwise make progress overflow to ±∞; found by fuzzing).
        (low - top).magnitude < 1e-9 ? 1 : (low - constant) / (low - top)
    }
}

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
    /// fluid: the drag began resting at the top-most detent, so a `changed` that carries
    /// `scrollOffset` may go to the content instead (then the constant stays, and the sheet
    /// re-bases when it takes over: a new segment).
    public let contentCanScroll: Bool
    /// transition: the point at which the drag finishes the transition by itself; nil elsewhere.
    public let finish: DragFinish?

    public init(start: Double, base: Double, origin: Detent, contentCanScroll: Bool, finish: DragFinish?) {
        self.start = start
        self.base = base
        self.origin = origin
        self.contentCanScroll = contentCanScroll
        self.finish = finish
    }
}

/// transition's finish threshold for one drag: once the card is `threshold` of the way from
/// `from` toward `toward`, the transition completes at once (an animation to `detent`), and the
/// drag's later events change nothing.
public struct DragFinish: Sendable, Hashable {
    /// The constant the drag's detent sits at.
    public let from: Double
    /// The other detent's constant.
    public let toward: Double
    /// The fraction of the way, (0, 1].
    public let threshold: Double
    /// The detent the transition finishes at.
    public let detent: Detent

    /// The fraction of the way from `from` toward `toward` at `constant`: (constant − from) /
    /// (toward − from), 0 where the two coincide.
    @inline(__always) public func percent(at constant: Double) -> Double {
        Self.percent(at: constant, from: from, toward: toward)
    }

    /// Whether a drag at `constant` finishes the transition.
    @inline(__always) public func isReached(at constant: Double) -> Bool { percent(at: constant) >= threshold }

    static func percent(at constant: Double, from: Double, toward: Double) -> Double {
        let span = toward - from
        return span == 0 ? 0 : (constant - from) / span
    }
}
