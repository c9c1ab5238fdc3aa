#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The monotonic clock that goes on while the machine sleeps (`ContinuousClock`'s on Linux,
/// CLOCK_BOOTTIME), read straight as nanoseconds: for the request deadline's checks, made twice
/// for every request, and a request's latency. `ContinuousClock.now` builds its `Duration` from
/// the same reading with 128-bit multiplications: a deadline check with instants cost ≈ 260
/// instructions, with this ≈ 30.
package enum BootClock {
    /// Nanoseconds since an arbitrary, fixed point (the boot, on Linux).
    @inline(__always)
    package static func nanoseconds() -> Int64 {
        var now = timespec()
        #if canImport(Glibc)
            clock_gettime(CLOCK_BOOTTIME, &now)
        #else
            clock_gettime(CLOCK_MONOTONIC, &now)
        #endif
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }

    /// `duration` in nanoseconds, truncated (a request deadline, a latency: far from overflowing).
    package static func nanoseconds(of duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
