/// Number formatting for messages and snap reasons (no Foundation): at most `decimals` places,
/// no trailing ".0".
enum Format {
    static func number(_ x: Double, decimals: Int = 2) -> String {
        guard x.isFinite else { return x.isNaN ? "NaN" : (x > 0 ? "inf" : "-inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (x * scale).rounded()
        let r = scaled / scale
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        // r is the Double nearest to the decimal scaled·10^−decimals, and below 2^20 no other
        // decimal of as many places or fewer is within half a gap of it: that decimal, trailing
        // zeros dropped, is r's shortest round-trip text, which is what `description` prints
        // (in decimal notation from 1e-4 on). Written from the integer: `description` goes
        // through the general shortest-digits printer (≈ 680 instructions against ≈ 430 here; a
        // snap reason's constant has such a number whenever the card is released between whole
        // points).
        if decimals <= 9, abs(r) >= 1e-4, abs(r) < 1_048_576 { return text(Int64(scaled), decimals: decimals) }
        return r.description
    }

    /// `n`·10^−decimals (not an integer) in decimal notation, without trailing zeros after the point.
    private static func text(_ n: Int64, decimals: Int) -> String {
        var digits = n.magnitude
        var places = decimals
        while places > 0, digits % 10 == 0 {
            digits /= 10
            places -= 1
        }
        var count = 1
        var rest = digits / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        let whole = max(count - places, 1)  // digits before the point ("0" when there are none)
        let length = (n < 0 ? 1 : 0) + whole + (places > 0 ? 1 + places : 0)
        return String(unsafeUninitializedCapacity: length) { buffer in
            var i = length
            var d = digits
            for _ in 0..<places {
                i -= 1
                buffer[i] = 0x30 + UInt8(d % 10)
                d /= 10
            }
            if places > 0 {
                i -= 1
                buffer[i] = 0x2E  // .
            }
            for _ in 0..<whole {
                i -= 1
                buffer[i] = 0x30 + UInt8(d % 10)
                d /= 10
            }
            if n < 0 { buffer[0] = 0x2D }  // -
            return length
        }
    }
}
