#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blocking sleeps for the few places that must wait on a thread that is not Swift concurrency's.
enum Sleep {
    /// Blocks the calling thread for about `count` milliseconds.
    static func milliseconds(_ count: Int) {
        var request = timespec(tv_sec: count / 1000, tv_nsec: (count % 1000) * 1_000_000)
        var remaining = timespec()
        // Resume after a signal interrupts the sleep, with the time that was left.
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }
}
