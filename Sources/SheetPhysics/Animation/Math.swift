import RealModule

// The elementary functions of the closed-form curves come from swift-numerics' RealModule, so the
// engine needs neither Foundation nor a libc import.

/// Elementary functions and constants for the closed-form curves.
enum Math {
    @inline(__always) static func exp(_ x: Double) -> Double { Double.exp(x) }
    @inline(__always) static func sin(_ x: Double) -> Double { Double.sin(x) }
    @inline(__always) static func cos(_ x: Double) -> Double { Double.cos(x) }
    @inline(__always) static func atan2(_ y: Double, _ x: Double) -> Double { Double.atan2(y: y, x: x) }
    @inline(__always) static func log(_ x: Double) -> Double { Double.log(x) }
    /// 2π.
    static let twoPi = 2 * Double.pi
    /// ln(1000): the duration spring's envelope falls to 1/1000 at its duration.
    static let ln1000 = Double.log(1000)
}
