// Closed-form animation curves. Every value is a pure function of elapsed time, so frames at any
// rate trace the same curve and nothing is integrated step by step.

/// A CSS/UIKit cubic-bezier timing curve through (0,0), (x1,y1), (x2,y2), (1,1).
public struct TimingCurve: Sendable, Hashable {
    /// The first control point's time fraction, [0, 1].
    public let x1: Double
    /// The first control point's progress.
    public let y1: Double
    /// The second control point's time fraction, [0, 1].
    public let x2: Double
    /// The second control point's progress.
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
        /// Constant speed.
        case linear
        /// Slow start.
        case easeIn
        /// Slow end.
        case easeOut
        /// Slow start and end.
        case easeInOut
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
    /// far inside docs/PHYSICS.md's 1e-7, with Newton steps guarded by bisection.
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
