// Waiting without timed assertions: poll a condition until it holds, on the monotonic clock.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Seconds on the monotonic clock (the same clock the server's ContinuousClock reads).
public enum Monotonic {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Sleeps for `seconds` (short sleeps only: the tests poll instead of waiting long).
    public static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        usleep(UInt32(seconds * 1_000_000))
    }
}

/// Polls `condition` every `interval` seconds (1 ms by default) until it holds or `seconds` pass;
/// whether it held. The limit only bounds a failing test: a passing one returns as soon as the
/// condition holds, so it is not a timed assertion. The default, 30 s, is thousands of times what
/// the conditions polled for take, so a loaded machine does not miss it for a correct program.
public func eventually(
    within seconds: Double = 30, every interval: Double = 0.001, _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = Monotonic.now() + seconds
    while Monotonic.now() < deadline {
        if try condition() { return true }
        Monotonic.sleep(interval)
    }
    return try condition()
}
