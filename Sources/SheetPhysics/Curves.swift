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
    public func progress(at x: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        if x1 == y1 && x2 == y2 { return x }  // linear: the identity
        var s = x
        // Newton from s = x: converges in a few steps wherever the slope is not tiny.
        for _ in 0..<8 {
            let err = Self.cubic(s, x1, x2) - x
            if abs(err) < 1e-12 { return Self.cubic(s, y1, y2) }
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
        return Self.cubic(s, y1, y2)
    }

    /// d(progress)/d(time fraction) at `x`, for the card's velocity.
    public func progressSlope(at x: Double) -> Double {
        if x1 == y1 && x2 == y2 { return 1 }
        if x <= 0 || x >= 1 {
            let s = x <= 0 ? 0.0 : 1.0
            let dx = Self.slope(s, x1, x2)
            return dx == 0 ? 0 : Self.slope(s, y1, y2) / dx
        }
        // Recover s the same way progress(at:) does.
        var lo = 0.0
        var hi = 1.0
        var s = x
        for _ in 0..<8 {
            let err = Self.cubic(s, x1, x2) - x
            if abs(err) < 1e-12 { break }
            let d = Self.slope(s, x1, x2)
            if abs(d) < 1e-9 { break }
            s -= err / d
        }
        if abs(Self.cubic(s, x1, x2) - x) >= 1e-12 {
            s = x
            for _ in 0..<64 {
                let v = Self.cubic(s, x1, x2)
                if abs(v - x) < 1e-12 { break }
                if v < x { lo = s } else { hi = s }
                s = (lo + hi) / 2
            }
        }
        let dx = Self.slope(s, x1, x2)
        return dx == 0 ? 0 : Self.slope(s, y1, y2) / dx
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
