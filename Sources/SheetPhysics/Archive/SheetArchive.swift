/// Everything a `SheetSession` holds beyond its model, as plain values: what a session store
/// keeps so that another process can carry on with the session exactly where it was.
///
/// Times are on the session's clock (seconds). A server-clock session moving to another process
/// is re-based onto that process's clock with `shifted(by:)`.
public struct SheetArchive: Sendable, Hashable {
    /// Where the card is.
    public enum Phase: Sendable, Hashable {
        /// Off screen.
        case hidden
        /// At rest at the model's detent with this index.
        case resting(detent: Int)
        /// Following the finger.
        case dragging(DragArchive)
        /// Moving to a detent on its own.
        case animating(AnimationArchive)
    }

    /// Where the card is.
    public var phase: Phase
    /// The current drag's velocity samples, (time, translation), oldest first.
    public var samples: [VelocitySample]
    /// The number of the last animation started.
    public var animationCount: Int
    /// The time of the last accepted event (−∞: none yet).
    public var lastTime: Double
    /// transition: the drag finished the transition at its threshold.
    public var finishedDrag: Bool
    /// The number of layout changes accepted.
    public var layoutRevision = 0
    /// `keyboard: extend`: the detent to go back to when the keyboard goes.
    public var keyboardReturn: String?

    /// An archive from its values (as a store read them).
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
