import SheetdTesting
import Testing

@testable import SheetPhysics

/// `Format.number` (snap reasons, messages) prints what rounding to its places and printing the
/// result's `description` print, for numbers written from their digits and for the rest.
@Suite struct FormatTests {
    /// The text as it was made before numbers were written from their digits.
    private func reference(_ x: Double, decimals: Int) -> String {
        guard x.isFinite else { return x.isNaN ? "NaN" : (x > 0 ? "inf" : "-inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let r = (x * scale).rounded() / scale
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return r.description
    }

    @Test func numbersPrintAsRoundedDescriptions() {
        var values: [Double] = [
            0, -0.0, 394.77203233576745, 693, -0.004, -0.005, 0.005, 1e-4, 1e-4.nextDown, 0.00005, 0.00015,
            1_048_575.995, 1_048_576.5, -1_048_575.25, 1e15, 1e16, 123_456.789_012, .infinity, -.infinity, .nan,
            0.1 + 0.2, 2.675, 1.005, 9.995, -9.995, 0.125, 0.375,
        ]
        var rng = SplitMix64(seed: 3)
        for _ in 0..<200_000 {
            let r = rng.next()
            let magnitude =
                Double(r % 1_000_000_000) / [1, 10, 100, 1_000, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9][Int(r >> 40) % 10]
            values.append(r & 1 == 0 ? magnitude : -magnitude)
            values.append(
                Double(sign: .plus, exponent: Int(r >> 50) % 40 - 20, significand: 1) * Double(rng.next() >> 11)
                    * 0x1p-53)
        }
        var failures: [String] = []
        for x in values {
            for decimals in 0...9 where Format.number(x, decimals: decimals) != reference(x, decimals: decimals) {
                if failures.count < 10 {
                    failures.append(
                        "\(x) (\(decimals)): \(Format.number(x, decimals: decimals)) ≠ \(reference(x, decimals: decimals))"
                    )
                }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
