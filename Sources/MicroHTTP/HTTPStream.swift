import Synchronization

/// A response body written over time, for Server-Sent Events and other long-lived streams.
///
/// Thread-safe: writers may be on any thread. Bytes are buffered (up to `bufferLimit`) until the
/// client's connection can take them. An idle stream costs no CPU: when its buffer is empty the
/// connection is parked inside libmicrohttpd and the next `write` wakes it.
///
/// Return it in an `HTTPResponse` (`.stream`) from one request only; a stream is bound to the
/// first connection it is sent on.
public final class HTTPStream: Sendable {
    /// What became of the bytes given to `write` or `replaceBuffered(with:)`.
    public enum WriteResult: Sendable, Equatable {
        /// The bytes are buffered and will be sent in order.
        case written
        /// The bytes were NOT taken: they would have put more than `bufferLimit` bytes in the
        /// buffer (the client reads slower than the producer writes). The stream stays open.
        case overflow
        /// The bytes were NOT taken: the stream is closed (finished, client gone, server stopped).
        case closed
    }

    /// The most bytes the stream buffers for a slow client, in bytes.
    public let bufferLimit: Int

    /// Everything mutable, behind one lock that is also held across libmicrohttpd's
    /// suspend (in the reader) and resume (in the writers), so a wake-up is never lost.
    let state: Mutex<StreamState>

    /// An open stream that buffers at most `bufferLimit` bytes (64 KiB by default).
    public init(bufferLimit: Int = 64 * 1024) {
        precondition(bufferLimit > 0, "HTTPStream.bufferLimit must be positive")
        self.bufferLimit = bufferLimit
        state = Mutex(StreamState())
    }

    /// Appends bytes to the body. They are taken whole or not at all: `.overflow` if the buffer
    /// would exceed `bufferLimit` (so the producer can decide, e.g. drop to the latest frame with
    /// `replaceBuffered(with:)`), `.closed` if the stream is closed.
    public func write(_ bytes: some Collection<UInt8>) -> WriteResult {
        // Copy before taking the lock, to keep the critical section to bookkeeping.
        let segment = Array(bytes)
        return state.withLock { state in
            guard state.phase == .open else { return .closed }
            guard state.bufferedByteCount + segment.count <= bufferLimit else { return .overflow }
            guard !segment.isEmpty else { return .written }
            state.append(segment)
            state.wakeParkedConnection()
            return .written
        }
    }

    /// Drops every pending write and buffers these bytes instead ("drop to the latest frame").
    ///
    /// A write the connection has already started sending is kept whole, so the client never sees
    /// a cut frame. `.overflow` (nothing changed) if the kept part plus `bytes` exceed
    /// `bufferLimit`; `.closed` if the stream is closed.
    public func replaceBuffered(with bytes: some Collection<UInt8>) -> WriteResult {
        let segment = Array(bytes)
        return state.withLock { state in
            guard state.phase == .open else { return .closed }
            guard state.startedSegmentRemainder + segment.count <= bufferLimit else { return .overflow }
            state.dropUnstartedSegments()
            state.append(segment)
            if !segment.isEmpty { state.wakeParkedConnection() }
            return .written
        }
    }

    /// Ends the body once what is buffered has been sent (HTTP/1.1: the chunked terminator, and the
    /// connection stays usable for the next request). Later writes return `.closed`.
    public func finish() {
        let handlers = state.withLock { state in
            let handlers = state.close(to: .finishing)
            state.wakeParkedConnection()
            return handlers
        }
        for handler in handlers { handler() }
    }

    /// Whether the stream is closed: finished, or its client went away, or the server stopped.
    public var isClosed: Bool {
        state.withLock { $0.phase != .open }
    }

    /// The bytes written but not yet handed to the connection, in bytes.
    public var bufferedByteCount: Int {
        state.withLock { $0.bufferedByteCount }
    }

    /// Gives the stream a producer to ask for more bytes: the connection's reader calls `handler`
    /// when it finds the buffer empty, before it parks the connection, and sends what the handler
    /// wrote (nothing written: the connection parks until the next `write`). This lets a producer
    /// write as fast as the client reads, a block at a time, on the connection's own thread,
    /// instead of writing everything at once (a stream of 14,401 frames, made whole by the request
    /// that started it, held that request and every other client waiting behind it).
    ///
    /// It runs on one of libmicrohttpd's threads, without the stream's lock: keep it short (about
    /// one block of bytes), and do not call `HTTPServer.stop()` from it. Dropped when the stream
    /// closes.
    public func onDrained(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if state.phase == .open { state.drainedHandler = handler }
        }
    }

    /// Runs `handler` once when the stream closes for any reason (finished, client gone, server
    /// stopped), or at once if it is already closed.
    ///
    /// It runs on the thread that closed the stream, which may be one of libmicrohttpd's: keep it
    /// short, and do not call `HTTPServer.stop()` from it.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let alreadyClosed = state.withLock { state in
            guard state.phase == .open else { return true }
            state.closeHandlers.append(handler)
            return false
        }
        if alreadyClosed { handler() }
    }
}

/// The mutable part of an `HTTPStream`; only ever touched under its lock.
struct StreamState: ~Copyable {
    /// Where a stream is in its life.
    enum Phase: Equatable {
        /// Writes are accepted.
        case open
        /// No more writes; the reader sends what is buffered, then ends the body.
        case finishing
        /// The connection is gone (or never came): the buffer is dropped.
        case detached
    }

    var phase = Phase.open
    /// Pending writes, one array each, so a write already started is never cut (see
    /// `replaceBuffered`). Segments before `headIndex` are spent and compacted away in batches.
    var segments: [[UInt8]] = []
    var headIndex = 0
    /// Bytes of `segments[headIndex]` already handed to the connection.
    var headOffset = 0
    var bufferedByteCount = 0
    /// The libmicrohttpd connection this stream is the body of; nil before binding and after the
    /// response is freed.
    var connection: ConnectionHandle?
    /// Whether the stream was ever bound (a stream serves one request only).
    var wasBound = false
    /// Whether our reader suspended the connection for want of bytes; only then may anyone resume it
    /// (resuming a connection that is not suspended is undefined behaviour in libmicrohttpd).
    var parked = false
    var closeHandlers: [@Sendable () -> Void] = []
    /// The producer asked for more bytes when the buffer is empty (`onDrained`).
    var drainedHandler: (@Sendable () -> Void)?

    /// The rest of the write the connection has started sending, which a replace must keep.
    var startedSegmentRemainder: Int {
        headOffset > 0 ? segments[headIndex].count - headOffset : 0
    }

    mutating func append(_ segment: [UInt8]) {
        guard !segment.isEmpty else { return }
        segments.append(segment)
        bufferedByteCount += segment.count
    }

    /// Keeps only a started segment, dropping every write not yet begun.
    mutating func dropUnstartedSegments() {
        if headOffset > 0 {
            let started = segments[headIndex]
            segments = [started]
            headIndex = 0
            bufferedByteCount = started.count - headOffset
        } else {
            segments = []
            headIndex = 0
            bufferedByteCount = 0
        }
    }

    /// Drops everything pending.
    mutating func dropAll() {
        segments = []
        headIndex = 0
        headOffset = 0
        bufferedByteCount = 0
    }

    /// Moves out of `.open` (if still there) and hands back the close handlers to run, once.
    mutating func close(to newPhase: Phase) -> [@Sendable () -> Void] {
        let wasOpen = phase == .open
        if phase != .detached { phase = newPhase }
        // The producer holds the stream, and the stream its handler: the cycle ends here.
        drainedHandler = nil
        guard wasOpen else { return [] }
        let handlers = closeHandlers
        closeHandlers = []
        return handlers
    }
}
