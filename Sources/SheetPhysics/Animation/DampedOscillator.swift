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

    /// The first time t > 0 at which the displacement is 0 (the spring crosses its target), in
    /// closed form; nil where it never crosses:
    /// - ζ < 1: ω_d·t = φ + π/2 reduced to (0, π], φ = atan2(B, A);
    /// - ζ = 1: t = −A / B, where positive;
    /// - ζ > 1: t = ln(−c2 / c1) / (r1 − r2), where −c2 / c1 > 1.
    public func firstCrossing() -> Double? {
        switch regime {
        case let .under(_, wd, a, b):
            var theta = Math.atan2(b, a) + Double.pi / 2
            while theta <= 0 { theta += Double.pi }
            while theta > Double.pi { theta -= Double.pi }
            return theta / wd
        case let .critical(_, a, b):
            guard b != 0 else { return nil }
            let t = -a / b
            return t > 0 ? t : nil
        case let .over(r1, r2, c1, c2):
            guard c1 != 0 else { return nil }
            let ratio = -c2 / c1
            guard ratio > 1 else { return nil }
            return Math.log(ratio) / (r1 - r2)
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
