/// SplitMix64: a small deterministic generator for generated test cases, so a failure reproduces
/// from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` bytes in a pattern that makes misplaced bytes visible (and includes NUL). The pattern
/// repeats every 256 bytes, so it is built by doubling (fast in debug builds too).
public func pattern(_ count: Int) -> [UInt8] {
    var bytes = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    while bytes.count < count { bytes += bytes }
    bytes.removeLast(bytes.count - count)
    return bytes
}
