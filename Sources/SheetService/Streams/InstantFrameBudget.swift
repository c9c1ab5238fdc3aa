import Synchronization

/// The server's allowance of instant-pace frames: all instant streams together are made at most
/// `rate` frames a second, in bursts of at most `burst` frames. An instant stream's frames are made
/// as its client reads them, so without it a client that reads 400 streams as fast as loopback
/// allows had sheetd make frames for nothing else (1.3 GB in 8 s), and another client's event
/// waited behind them: p99 26 ms against 0.2 ms idle (issue 29).
///
/// A token bucket whose tokens may be lent ahead: a block taken when the bucket is empty is
/// booked for the time the bucket will have refilled it, and the stream is refilled then by the
/// frame pacer, off the connection's thread. Bookings are in the order they were asked for, so
/// every reading stream gets its turn; each stream holds at most one.
final class InstantFrameBudget: Sendable {
    /// Frames a second, over all instant streams.
    let rate: Double
    /// Frames that may be made at once after a quiet spell (10 ms of `rate`, at least a block).
    let burst: Double
    private let bucket: Mutex<Bucket>

    struct Bucket {
        /// Frames that may still be made; below zero, frames already booked ahead.
        var tokens: Double
        /// Server seconds of the last update.
        var last: Double
    }

    init(framesPerSecond: Int, block: Int) {
        let rate = Double(max(framesPerSecond, 1))
        let burst = max(rate / 100, Double(block))
        self.rate = rate
        self.burst = burst
        bucket = Mutex(Bucket(tokens: burst, last: 0))
    }

    /// Takes `frames` at server time `now` (seconds); returns when they may be made: `now` when
    /// the bucket holds them, else the time it will have refilled them, behind every block booked
    /// before.
    func take(_ frames: Int, now: Double) -> Double {
        bucket.withLock { b in
            // A clock that went back (tests drive their own) refills nothing, and bookings count
            // from the latest time seen.
            b.tokens = min(burst, b.tokens + max(now - b.last, 0) * rate)
            b.last = max(now, b.last)
            b.tokens -= Double(frames)
            return b.tokens >= 0 ? now : b.last - b.tokens / rate
        }
    }
}
