/// Reads a fuzz input as a stream of small decisions. Past the end every read returns zero, so any
/// input is a complete program (libFuzzer shortens inputs freely).
struct ByteReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Whether any byte is left.
    var isEmpty: Bool { position >= bytes.count }

    /// The next byte, or 0 past the end.
    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next byte as an index below `count` (which must be positive).
    mutating func index(_ count: Int) -> Int { Int(byte()) % count }

    /// The next `n` bytes, little-endian.
    mutating func bits(_ n: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<n { value |= UInt64(byte()) << (8 * UInt64(i)) }
        return value
    }

    /// Values the engine's edges sit on; the reader scales some by the caller's limit.
    private static let specials: [Double] = [
        0, -0.0, 1, -1, 0.5, 0.1, 1e-9, -1e-9, .leastNonzeroMagnitude, 1e-300, 100, -100, 1e3, 1e5, 0.999_999,
        1.000_001,
    ]

    /// A finite number with magnitude ≤ `limit`, the domain the service's decoders let through.
    /// A tag byte picks the form, so the fuzzer can reach integers, fine fractions, edge values and
    /// arbitrary bit patterns (each clamped into the domain) with a one-byte change.
    mutating func number(limit: Double) -> Double {
        let tag = byte()
        let x: Double
        switch tag & 3 {
        case 0: x = Double(Int16(truncatingIfNeeded: bits(2)))
        case 1: x = Double(Int32(truncatingIfNeeded: bits(3) << 8) >> 8) / 1000
        case 2: x = Double(bitPattern: bits(8))
        default:
            let pick = Int(tag >> 2)
            switch pick % 20 {
            case 16: x = limit
            case 17: x = -limit
            case 18: x = limit.nextDown
            case 19: x = Double(pick) / 64
            default: x = Self.specials[pick % 20]
            }
        }
        guard x.isFinite else { return 0 }
        return min(max(x, -limit), limit)
    }
}
