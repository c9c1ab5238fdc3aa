/// Everything a `SheetSession` holds beyond its model, as plain values: what a session store
/// keeps so that another process can carry on with the session exactly where it was.
///
/// Times are on the session's clock (seconds). A server-clock session moving to another process
/// is re-based onto that process's clock with `shifted(by:)`.
public struct SheetArchive: Sendable, Hashable {
    /// Where the card is.
    public enum Phase: Sendable, Hashable {
        case hidden
        /// At rest at the model's detent with this index.
        case resting(detent: Int)
        case dragging(DragArchive)
        case animating(AnimationArchive)
    }

    public var phase: Phase
    /// The current drag's velocity samples, (time, translation), oldest first.
    public var samples: [VelocitySample]
    /// The number of the last animation started.
    public var animationCount: Int
    /// The time of the last accepted event (−∞: none yet).
    public var lastTime: Double
    /// transition: the drag finished the transition at its threshold.
    public var finishedDrag: Bool

    public init(phase: Phase, samples: [VelocitySample], animationCount: Int, lastTime: Double, finishedDrag: Bool) {
        self.phase = phase
        self.samples = samples
        self.animationCount = animationCount
        self.lastTime = lastTime
        self.finishedDrag = finishedDrag
    }

    /// The same session with every time moved by `delta` seconds (to another process's clock).
    public func shifted(by delta: Double) -> SheetArchive {
        var copy = self
        copy.lastTime = lastTime + delta
        copy.samples = samples.map { VelocitySample(time: $0.time + delta, translation: $0.translation) }
        if case var .animating(a) = phase {
            a.startTime += delta
            copy.phase = .animating(a)
        }
        return copy
    }
}

/// One `changed` event's (time, translation), seconds and points.
public struct VelocitySample: Sendable, Hashable {
    public var time: Double
    public var translation: Double

    public init(time: Double, translation: Double) {
        self.time = time
        self.translation = translation
    }
}

/// A drag in progress, as plain values (see `Drag`).
public struct DragArchive: Sendable, Hashable {
    /// The constant the current segment of the drag started from.
    public var start: Double
    /// The translation at which the current segment started.
    public var base: Double
    /// The index of the detent a cancel returns to.
    public var origin: Int
    /// The card's constant now.
    public var constant: Double
    /// The translation of the drag's previous event.
    public var lastTranslation: Double
    /// fluid: the drag began at the top-most detent, so the content may scroll.
    public var canScroll: Bool
    /// fluid: who took the last `changed`.
    public var consumer: Consumer

    public init(
        start: Double, base: Double, origin: Int, constant: Double, lastTranslation: Double, canScroll: Bool,
        consumer: Consumer
    ) {
        self.start = start
        self.base = base
        self.origin = origin
        self.constant = constant
        self.lastTranslation = lastTranslation
        self.canScroll = canScroll
        self.consumer = consumer
    }
}

/// An animation as the values it was started with; the model supplies the rest (its dimmer and
/// progress scale), so restoring gives the same closed form, sample for sample.
public struct AnimationArchive: Sendable, Hashable {
    public var id: Int
    public var curve: AnimationCurve
    public var from: Double
    public var to: Double
    /// The duration asked for (a fluid spring's own settle time is recomputed from its curve).
    public var duration: Double
    public var fromAlpha: Double
    public var toAlpha: Double
    public var startTime: Double
    /// The index of the detent it ends at in the model's detents.
    public var detent: Int

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

/// Why an archive cannot be restored on a model (it was made for another configuration, or was
/// altered on its way through the store).
public struct ArchiveMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    public let reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { "the stored session does not fit its configuration: \(reason)" }
}

extension Animation {
    /// The values this animation was started with.
    public func archive(in model: SheetModel) -> AnimationArchive {
        AnimationArchive(
            id: id, curve: curve, from: from, to: to, duration: duration, fromAlpha: fromAlpha, toAlpha: toAlpha,
            startTime: startTime, detent: model.index(of: detent))
    }

    /// The animation `archive` describes, on `model`.
    public convenience init(archive a: AnimationArchive, model: SheetModel) throws(ArchiveMismatch) {
        guard model.detents.indices.contains(a.detent) else {
            throw ArchiveMismatch(reason: "animation \(a.id) ends at detent #\(a.detent) of \(model.detents.count)")
        }
        let finite = [a.from, a.to, a.duration, a.fromAlpha, a.toAlpha, a.startTime].allSatisfy(\.isFinite)
        guard finite, a.duration >= 0, a.duration <= Animation.maxDuration, a.id >= 1 else {
            throw ArchiveMismatch(reason: "animation \(a.id) has a non-finite or out-of-range value")
        }
        switch a.curve {
        case .timed: break
        case let .durationSpring(zeta, v):
            guard zeta > 0, zeta.isFinite, v.isFinite, a.duration > 0 else {
                throw ArchiveMismatch(reason: "animation \(a.id) has an invalid duration spring")
            }
        case let .spring(response, zeta, v):
            guard (0.01...10).contains(response), (0.05...10).contains(zeta), v.isFinite else {
                throw ArchiveMismatch(reason: "animation \(a.id) has an invalid spring")
            }
        }
        self.init(
            id: a.id, curve: a.curve, from: a.from, to: a.to, duration: a.duration, fromAlpha: a.fromAlpha,
            toAlpha: a.toAlpha, alphaRule: model.alphaRule, startTime: a.startTime, detent: model.detents[a.detent],
            dimmer: model.dimmer, progressScale: model.progressScale)
    }
}
