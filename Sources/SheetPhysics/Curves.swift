// Closed-form animation curves. Every value is a pure function of elapsed time, so frames at any
// rate trace the same curve and nothing is integrated step by step.

/// A CSS/UIKit cubic-bezier timing curve through (0,0), (x1,y1), (x2,y2), (1,1).
public struct TimingCurve: Sendable, Hashable {
    public let x1: Double
    public let y1: Double
    public let x2: Double
    public let y2: Double

    /// UIKit's `.linear`.
    public static let linear = TimingCurve(name: .linear, x1: 0, y1: 0, x2: 1, y2: 1)
    /// UIKit's `.easeIn`.
    public static let easeIn = TimingCurve(name: .easeIn, x1: 0.42, y1: 0, x2: 1, y2: 1)
    /// UIKit's `.easeOut`.
    public static let easeOut = TimingCurve(name: .easeOut, x1: 0, y1: 0, x2: 0.58, y2: 1)
    /// UIKit's `.easeInOut`.
    public static let easeInOut = TimingCurve(name: .easeInOut, x1: 0.42, y1: 0, x2: 0.58, y2: 1)

    /// The curve's public name, as it appears in results (`"easeIn"`).
    public enum Name: String, Sendable, CaseIterable {
        case linear, easeIn, easeOut, easeInOut
    }

    /// The curve's name.
    public let name: Name

    /// The curve called `name`.
    public init(named name: Name) {
        switch name {
        case .linear: self = .linear
        case .easeIn: self = .easeIn
        case .easeOut: self = .easeOut
        case .easeInOut: self = .easeInOut
        }
    }

    private init(name: Name, x1: Double, y1: Double, x2: Double, y2: Double) {
        self.name = name
        self.x1 = x1
        self.y1 = y1
        self.x2 = x2
        self.y2 = y2
    }

    /// The curve for a name.
    public static func named(_ name: Name) -> TimingCurve {
        switch name {
        case .linear: .linear
        case .easeIn: .easeIn
        case .easeOut: .easeOut
        case .easeInOut: .easeInOut
        }
    }

    // Bernstein form: B(s) = 3(1-s)²s·c1 + 3(1-s)s²·c2 + s³, written as a cubic a·s³ + b·s² + c·s.
    @inline(__always) private static func cubic(_ s: Double, _ c1: Double, _ c2: Double) -> Double {
        let c = 3 * c1
        let b = 3 * (c2 - c1) - c
        let a = 1 - c - b
        return ((a * s + b) * s + c) * s
    }

    @inline(__always) private static func slope(_ s: Double, _ c1: Double, _ c2: Double) -> Double {
        let c = 3 * c1
        let b = 3 * (c2 - c1) - c
        let a = 1 - c - b
        return (3 * a * s + 2 * b) * s + c
    }

    /// The curve's progress at time fraction `x` ∈ [0, 1] (clamped): solves x(s) = x to 1e-12,
    /// far inside PHYSICS.md's 1e-7, with Newton steps guarded by bisection.
    public func progress(at x: Double) -> Double { progressAndSlope(at: x).progress }

    /// Progress at `x` and its derivative d(progress)/d(time fraction), from one solve.
    public func progressAndSlope(at x: Double) -> (progress: Double, slope: Double) {
        if x1 == y1 && x2 == y2 { return (min(max(x, 0), 1), 1) }  // linear: the identity
        let s: Double
        if x <= 0 {
            s = 0
        } else if x >= 1 {
            s = 1
        } else {
            s = solve(x)
        }
        let dx = Self.slope(s, x1, x2)
        let progress = s == 0 ? 0 : (s == 1 ? 1 : Self.cubic(s, y1, y2))
        return (progress, dx == 0 ? 0 : Self.slope(s, y1, y2) / dx)
    }

    /// The curve parameter s with x(s) = x, for 0 < x < 1.
    private func solve(_ x: Double) -> Double {
        // Newton from s = x converges in a few steps wherever the slope is not tiny.
        var s = x
        for _ in 0..<8 {
            let err = Self.cubic(s, x1, x2) - x
            if abs(err) < 1e-12 { return s }
            let d = Self.slope(s, x1, x2)
            if abs(d) < 1e-9 { break }
            s -= err / d
        }
        // Bisection: x(s) is monotone on [0, 1] for control x's in [0, 1].
        var lo = 0.0
        var hi = 1.0
        s = x
        for _ in 0..<64 {
            let v = Self.cubic(s, x1, x2)
            if abs(v - x) < 1e-12 { break }
            if v < x { lo = s } else { hi = s }
            s = (lo + hi) / 2
        }
        return s
    }
}

/// A damped harmonic oscillator x'' + 2ζω₀x' + ω₀²x = 0 in closed form, for every damping ratio.
/// Both springs reduce to it: the duration spring on normalized displacement, the physical
/// spring on displacement in points.
public struct DampedOscillator: Sendable, Hashable {
    /// Natural angular frequency ω₀, in radians per second.
    public let omega: Double
    /// Damping ratio ζ (> 0).
    public let dampingRatio: Double
    /// Displacement at t = 0.
    public let x0: Double
    /// Velocity at t = 0 (displacement units per second).
    public let v0: Double

    private enum Regime: Sendable, Hashable {
        /// ζ < 1: x = e^(−ζω₀t)(A cos ω_d t + B sin ω_d t).
        case under(decay: Double, wd: Double, a: Double, b: Double)
        /// ζ = 1: x = e^(−ω₀t)(A + B t).
        case critical(w: Double, a: Double, b: Double)
        /// ζ > 1: x = c1 e^(r1 t) + c2 e^(r2 t).
        case over(r1: Double, r2: Double, c1: Double, c2: Double)
    }

    private let regime: Regime

    /// An oscillator starting at displacement `x0` with velocity `v0`.
    public init(omega: Double, dampingRatio: Double, x0: Double, v0: Double) {
        self.omega = omega
        self.dampingRatio = dampingRatio
        self.x0 = x0
        self.v0 = v0
        let z = dampingRatio
        if abs(z - 1) <= 1e-12 {
            regime = .critical(w: omega, a: x0, b: v0 + omega * x0)
        } else if z < 1 {
            let decay = z * omega
            let wd = omega * (1 - z * z).squareRoot()
            regime = .under(decay: decay, wd: wd, a: x0, b: (v0 + decay * x0) / wd)
        } else {
            let root = (z * z - 1).squareRoot()
            let r1 = -omega * (z - root)  // the slow root
            let r2 = -omega * (z + root)
            let c1 = (v0 - r2 * x0) / (r1 - r2)
            regime = .over(r1: r1, r2: r2, c1: c1, c2: x0 - c1)
        }
    }

    /// The first whole millisecond k (≤ `limit`) at which |x| ≤ `within` and |v| ≤ `speed`.
    /// Scans with a recurrence (one multiply per exponential per step instead of exp/sin/cos),
    /// then confirms the answer with the closed form, so it agrees with `state(at:)` exactly.
    public func firstMillisecond(within: Double, speed: Double, limit: Int) -> Int {
        func settled(_ k: Int) -> Bool {
            let s = state(at: Double(k) / 1000)
            return abs(s.x) <= within && abs(s.v) <= speed
        }
        let dt = 0.001
        var k = 0
        switch regime {
        case let .under(decay, wd, a, b):
            let q = Math.exp(-decay * dt)
            let cd = Math.cos(wd * dt)
            let sd = Math.sin(wd * dt)
            var e = 1.0
            var c = 1.0
            var s = 0.0
            while k < limit {
                let x = e * (a * c + b * s)
                let v = e * ((b * wd - decay * a) * c - (a * wd + decay * b) * s)
                if abs(x) <= within && abs(v) <= speed { break }
                e *= q
                (c, s) = (c * cd - s * sd, s * cd + c * sd)
                k += 1
            }
        case let .critical(w, a, b):
            let q = Math.exp(-w * dt)
            var e = 1.0
            while k < limit {
                let t = Double(k) * dt
                let x = e * (a + b * t)
                let v = e * (b - w * (a + b * t))
                if abs(x) <= within && abs(v) <= speed { break }
                e *= q
                k += 1
            }
        case let .over(r1, r2, c1, c2):
            let q1 = Math.exp(r1 * dt)
            let q2 = Math.exp(r2 * dt)
            var e1 = 1.0
            var e2 = 1.0
            while k < limit {
                let x = c1 * e1 + c2 * e2
                let v = c1 * r1 * e1 + c2 * r2 * e2
                if abs(x) <= within && abs(v) <= speed { break }
                e1 *= q1
                e2 *= q2
                k += 1
            }
        }
        if k >= limit { return limit }
        // The recurrence drifts by ~1e-12 relative over 60,000 steps: settle borderline cases with
        // the closed form, walking back or forward to the first millisecond it agrees on.
        while k > 0 && settled(k - 1) { k -= 1 }
        while k < limit && !settled(k) { k += 1 }
        return k
    }

    /// Displacement and velocity at time `t` ≥ 0.
    @inline(__always)
    public func state(at t: Double) -> (x: Double, v: Double) {
        switch regime {
        case let .under(decay, wd, a, b):
            let e = Math.exp(-decay * t)
            let c = Math.cos(wd * t)
            let s = Math.sin(wd * t)
            let x = e * (a * c + b * s)
            let v = e * ((b * wd - decay * a) * c - (a * wd + decay * b) * s)
            return (x, v)
        case let .critical(w, a, b):
            let e = Math.exp(-w * t)
            return (e * (a + b * t), e * (b - w * (a + b * t)))
        case let .over(r1, r2, c1, c2):
            let e1 = Math.exp(r1 * t)
            let e2 = Math.exp(r2 * t)
            return (c1 * e1 + c2 * e2, c1 * r1 * e1 + c2 * r2 * e2)
        }
    }
}
