/// One animation of a session: a closed form from `from` to `to` that any client can sample.
/// Immutable and shared by reference (results, snapshots and streams hold the same one), so
/// passing it around copies a pointer, not 200 bytes.
public final class Animation: Sendable, Hashable {
    /// The animation's number, strictly increasing within its session.
    public let id: Int
    /// How it moves.
    public let curve: AnimationCurve
    /// The constant it starts at, points.
    public let from: Double
    /// The constant it ends at (its detent's), points.
    public let to: Double
    /// T: at t ≥ T the card is exactly at `to`. Seconds.
    public let duration: Double
    /// The dimmer alpha at the start, [0, 1].
    public let fromAlpha: Double
    /// The dimmer alpha at the end (the position rule at `to`), [0, 1].
    public let toAlpha: Double
    /// How the dimmer moves between the two.
    public let alphaRule: AlphaRule
    /// When it started, on the session's clock (seconds).
    public let startTime: Double
    /// The detent it ends at.
    public let detent: Detent
    /// Whether it ends with the card hidden.
    public var dismiss: Bool { detent.isHidden }

    // What sampling needs from the session's model, so an animation samples on its own.
    let dimmer: DimmerCurve
    let progressScale: ProgressScale
    /// Whether the page behind takes input, by constant (every frame says it).
    let modality: ModalityLaw
    private let oscillator: DampedOscillator?

    init(
        id: Int, curve: AnimationCurve, from: Double, to: Double, duration: Double,
        fromAlpha: Double, toAlpha: Double, alphaRule: AlphaRule, startTime: Double,
        detent: Detent, dimmer: DimmerCurve, progressScale: ProgressScale,
        modality: ModalityLaw = ModalityLaw(interactiveFrom: .infinity)
    ) {
        self.modality = modality
        self.id = id
        self.curve = curve
        self.from = from
        self.to = to
        self.fromAlpha = fromAlpha
        self.toAlpha = toAlpha
        self.alphaRule = alphaRule
        self.startTime = startTime
        self.detent = detent
        self.dimmer = dimmer
        self.progressScale = progressScale
        switch curve {
        case .timed:
            oscillator = nil
            self.duration = duration
        case let .durationSpring(zeta, v):
            oscillator = DampedOscillator(
                omega: Math.ln1000 / (zeta * duration), dampingRatio: zeta, x0: 1, v0: -v)
            self.duration = duration
        case let .spring(response, zeta, velocity):
            let osc = DampedOscillator(
                omega: Math.twoPi / response, dampingRatio: zeta, x0: from - to, v0: velocity)
            oscillator = osc
            // A spring ends when it settles, or earlier where it hands the card's momentum to the
            // content (`duration` > 0: the instant it reaches its target, `ReleaseLaw.handOff`).
            let settle = Animation.settleTime(of: osc)
            self.duration = duration > 0 ? min(duration, settle) : settle
        }
    }

    /// Animations are equal when they describe the same motion.
    public static func == (a: Animation, b: Animation) -> Bool {
        a === b
            || (a.id == b.id && a.curve == b.curve && a.from == b.from && a.to == b.to && a.duration == b.duration
                && a.startTime == b.startTime && a.detent == b.detent && a.fromAlpha == b.fromAlpha
                && a.toAlpha == b.toAlpha && a.alphaRule == b.alphaRule)
    }

    /// Hashes the identity and the target (equal animations hash alike).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(startTime)
        hasher.combine(to)
    }

    /// The end of the animation on the session's clock.
    public var endTime: Double { startTime + duration }

    /// The card at `elapsed` seconds after the start (clamped to [0, T]; exactly `to` at T).
    public func sample(elapsed: Double) -> AnimationSample {
        let t = min(max(elapsed, 0), duration)
        var constant: Double
        var velocity: Double
        var p: Double  // the animation's own progress, 0 at from and 1 at to
        if t >= duration {
            constant = to
            velocity = 0
            p = 1
        } else {
            switch curve {
            case let .timed(c):
                let x = t / duration
                let (progress, slope) = c.progressAndSlope(at: x)
                p = progress
                constant = from + (to - from) * p
                velocity = (to - from) * slope / duration
            case .durationSpring:
                let s = oscillator.unsafelyUnwrapped.state(at: t)
                p = 1 - s.x
                constant = from + (to - from) * p
                velocity = -(to - from) * s.v
            case .spring:
                let s = oscillator.unsafelyUnwrapped.state(at: t)
                constant = to + s.x
                velocity = s.v
                p = from == to ? 1 : (constant - from) / (to - from)
            }
        }
        let alpha: Double
        switch alphaRule {
        case .interpolate: alpha = fromAlpha + (toAlpha - fromAlpha) * min(max(p, 0), 1)
        case .position: alpha = dimmer.alpha(at: constant)
        }
        return AnimationSample(
            t: t, constant: constant, dimmerAlpha: alpha, progress: progressScale.progress(of: constant),
            velocity: velocity, backgroundInteractive: modality.backgroundInteractive(at: constant))
    }

    /// The card at `time` on the session's clock.
    public func sample(at time: Double) -> AnimationSample { sample(elapsed: time - startTime) }

    /// n + 1 frames at `fps`: n = ceil(T·fps), at least 1 (T·fps within 1e-9 of an integer counts
    /// as that integer, so 0.3 s at 30 fps is 9 intervals, not 10 by rounding error).
    public func frameCount(fps: Int) -> Int {
        let exact = duration * Double(fps)
        let n = (exact - 1e-9).rounded(.up)
        return max(1, Int(n)) + 1
    }

    /// Time of frame `index` since the start: min(k / fps, T).
    public func frameTime(_ index: Int, fps: Int) -> Double {
        min(Double(index) / Double(fps), duration)
    }

    /// Frame `index` at `fps`; the last frame is exactly the target.
    public func frame(_ index: Int, fps: Int) -> AnimationSample {
        sample(elapsed: frameTime(index, fps: fps))
    }

    /// Every frame at `fps`.
    public func frames(fps: Int) -> [AnimationSample] {
        (0..<frameCount(fps: fps)).map { frame($0, fps: fps) }
    }

    /// The physical spring settles at the first multiple of 1 ms where |x| ≤ 0.25 pt and
    /// |v| ≤ 5 pt/s (0 if it starts settled). Scanned with a cheap recurrence and confirmed with
    /// the closed form; capped at 60 s for springs too weak to settle sooner.
    /// The longest animation the engine starts, seconds: springs that settle later and timed
    /// curves that would last longer are cut here (the last frame is still the exact target).
    public static let maxDuration: Double = 60

    /// A physical spring has settled where its displacement is at most this, points.
    public static let settleDistance: Double = 0.25
    /// … and its speed at most this, points per second.
    public static let settleSpeed: Double = 5

    static func settleTime(of osc: DampedOscillator) -> Double {
        let k = osc.firstMillisecond(within: settleDistance, speed: settleSpeed, limit: Int(maxDuration * 1000))
        return Double(k) / 1000
    }
}
