import MicroHTTP
import SheetPhysics
import Synchronization

/// One Server-Sent Events subscriber of a session's animations (GET /sessions/{id}/frames).
/// Frames are sampled from the animation's closed form at this stream's own fps, so streams at
/// 120 and 30 fps of one animation agree at shared instants.
final class FrameStream: Sendable {
    let http: HTTPStream
    let fps: Int
    let pace: StreamPace
    let once: Bool
    /// The session's profile, for the snapshots this stream sends: a layout event replaces it
    /// (`follow`). Its own lock, never taken with `state`'s.
    private let profile: Mutex<SessionProfile>
    /// The session's id, named in the snapshots of `settled`, `interrupted` and `snapshot` events.
    let sessionID: String
    private let metrics: ServiceMetrics
    /// Instant pace: the server's allowance of frames, shared by every instant stream.
    private let budget: InstantFrameBudget
    private let state = Mutex(State())

    struct State {
        /// The animation being streamed, and the server time of its t = 0.
        var animation: Animation?
        var origin = 0.0
        /// The next frame to send.
        var next = 0
        /// Bumped whenever the animation changes, so stale pacer entries are dropped.
        var generation = 0
        /// Server seconds of the last bytes written (for keep-alives).
        var lastWrite = 0.0
        /// No more events (closed, or `once` and settled).
        var done = false
        /// Instant pace: the animations that began while an earlier one was still being sent, in
        /// order, each with its origin and the frame the client had (`begin`'s `after`). Every
        /// frame of each is sent, as the client reads them (`refill`).
        var queued: [(animation: Animation, origin: Double, after: Int?)] = []
        /// Instant pace: a `close` that came while frames were still to be sent, sent after them.
        var closing: (reason: String, retry: Int?)?
        /// Instant pace: frames this stream may still make before it asks the budget again.
        var credit = 0
        /// Instant pace: a block is booked with the budget, and the pacer refills the stream at its
        /// time (until then the connection's reader finds nothing and parks it).
        var booked = false
        /// The reconnection delay (ms) still to be sent: it travels in the block of the next event,
        /// never in a block of its own (which some clients hand to the application as an empty
        /// event). 1000 until the first event; `close` may set another.
        var retry: Int? = 1000
    }

    init(
        http: HTTPStream, fps: Int, pace: StreamPace, once: Bool, profile: SessionProfile, sessionID: String,
        metrics: ServiceMetrics, budget: InstantFrameBudget
    ) {
        self.budget = budget
        self.http = http
        self.sessionID = sessionID
        self.fps = fps
        self.pace = pace
        self.once = once
        self.profile = Mutex(profile)
        self.metrics = metrics
    }

    /// The session's layout changed: later snapshots carry its new profile.
    func follow(_ profile: SessionProfile) { self.profile.withLock { $0 = profile } }

    var isDone: Bool { state.withLock { $0.done } || http.isClosed }

    // MARK: Events

    /// Writes one whole event, with the pending `retry:` line in its block; a reader too slow to
    /// keep up loses what it has not taken yet and gets this event instead (drop to the latest
    /// frame), counted in /metrics.
    private func send(_ event: [UInt8], now: Double, state s: inout State) {
        guard let retry = s.retry else { return write(event, now: now, state: &s) }
        s.retry = nil
        write(Array("retry: \(retry)\n".utf8) + event, now: now, state: &s)
    }

    /// Writes bytes as they are (an event block, or a comment).
    private func write(_ bytes: [UInt8], now: Double, state s: inout State) {
        switch http.write(bytes) {
        case .written: break
        case .overflow:
            metrics.framesDropped.increment()
            _ = http.replaceBuffered(with: bytes)
        case .closed:
            s.done = true
        }
        s.lastWrite = now
    }

    static func event(_ name: StaticString, id: String?, _ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        body(&w)
        let data = w.takeBytes()
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 48)
        if let id {
            out.append(contentsOf: "id: ".utf8)
            out.append(contentsOf: id.utf8)
            out.append(0x0A)
        }
        out.append(contentsOf: "event: ".utf8)
        name.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(contentsOf: "\ndata: ".utf8)
        out.append(contentsOf: data)
        out.append(contentsOf: "\n\n".utf8)
        return out
    }

    private func frameEvent(_ a: Animation, _ k: Int) -> [UInt8] {
        let profile = self.profile.withLock { $0 }
        return Self.event("frame", id: "\(a.id):\(k)") { w in
            ReplyJSON.frame(animation: a.id, index: k, a.frame(k, fps: fps), profile: profile, into: &w)
        }
    }

    private func snapshotEvent(_ name: StaticString, _ snapshot: SheetSnapshot, id: String? = nil) -> [UInt8] {
        let profile = self.profile.withLock { $0 }
        return Self.event(name, id: id) { w in
            ReplyJSON.snapshot(id: sessionID, profile: profile, snapshot, into: &w)
        }
    }

    /// `settled` for animation `a`, with the id of its last frame: a client that reconnects after
    /// it names that frame, and a `once` stream then knows the client has everything (204).
    private func settledEvent(_ a: Animation) -> [UInt8] {
        snapshotEvent("settled", .settled(a), id: "\(a.id):\(a.frameCount(fps: fps) - 1)")
    }

    /// A one-off `snapshot` event (a reconnect with an unknown Last-Event-ID).
    func sendSnapshot(_ snapshot: SheetSnapshot, now: Double) {
        state.withLock { s in send(snapshotEvent("snapshot", snapshot), now: now, state: &s) }
    }

    /// `settled` for an animation that ended while the client was away.
    func sendSettled(_ a: Animation, now: Double) {
        state.withLock { s in
            send(settledEvent(a), now: now, state: &s)
            if once { finish(&s) }
        }
    }

    /// Streams animation `a`, whose t = 0 is `origin` on the server clock, starting after frame
    /// `after` (nil: from its start, or for a realtime stream from the current frame). If it
    /// replaces one still in flight, that one ends with `interrupted` (the snapshot at the grab).
    func begin(
        _ a: Animation, origin: Double, after: Int? = nil, interrupted: SheetSnapshot?, now: Double, pacer: FramePacer
    ) {
        let due: (Double, Int)? = state.withLock { s in
            guard !s.done else { return nil }
            if pace == .instant {
                // Nothing proportional to the animation's frames on the caller's thread (an event's,
                // under the session's lock): the first frame is written here, which wakes the
                // connection; the rest are made as the client reads them (`refill`). An animation
                // that begins while one is still being sent waits for it: each is sent whole.
                guard s.animation == nil, s.queued.isEmpty else {
                    if s.queued.count >= Self.queueLimit {
                        // A client that stopped reading while events kept coming: its oldest waiting
                        // animation is dropped (counted as skipped frames), never the memory bound.
                        metrics.framesSkipped.increment(by: s.queued[0].animation.frameCount(fps: fps))
                        s.queued.removeFirst()
                    }
                    s.queued.append((a, origin, after))
                    return nil
                }
                start(a, origin: origin, after: after, now: now, &s)
                if s.animation != nil { sendNext(&s, now: now) }
                return nil
            }
            if let running = s.animation, running.id != a.id {
                if let snapshot = interrupted {
                    send(snapshotEvent("interrupted", snapshot), now: now, state: &s)
                } else {
                    // It ended on the session's clock before this one began (the stream was still
                    // behind it, e.g. a client-clock session ahead of the server): finish it as a
                    // stalled pacer does, skipping to its last frame, so that it ends at its target
                    // frame and `settled` like every other animation.
                    let last = running.frameCount(fps: fps) - 1
                    if s.next < last { metrics.framesSkipped.increment(by: last - s.next) }
                    s.next = max(s.next, last)
                    sendNext(&s, now: now)
                    if s.done { return nil }  // a `once` stream ends with that animation
                }
            }
            start(a, origin: origin, after: after, now: now, &s)
            guard s.animation != nil else { return nil }
            // Realtime: from the frame due now, unless the client is past it.
            let current = Self.frameIndex(now - origin, fps: fps, last: a.frameCount(fps: fps) - 1)
            s.next = max(current, s.next)
            return (origin + a.frameTime(s.next, fps: fps), s.generation)
        }
        if let (time, generation) = due { pacer.schedule(.frame, self, at: time, generation: generation) }
    }

    /// Instant pace: at most this many animations wait behind the one being sent.
    static let queueLimit = 64

    /// Instant pace: the frames of one block at most (`HTTPStream`'s reader asks when the client has
    /// taken everything written): about 20 frames (≈ 200 bytes each) per call.
    static let refillBytes = 4 * 1024

    /// Instant pace: frames taken from the budget at a time (about a block of ≈ 200-byte frames).
    static let refillFrames = 16

    /// Instant pace: makes `a` the animation being sent, from the frame after `after` (only its
    /// `settled` when the client has every frame).
    private func start(_ a: Animation, origin: Double, after: Int?, now: Double, _ s: inout State) {
        s.animation = a
        s.origin = origin
        s.generation += 1
        let last = a.frameCount(fps: fps) - 1
        if let k = after, k >= last {
            // The client has every frame: only `settled` is left.
            send(settledEvent(a), now: now, state: &s)
            s.animation = nil
            if once { finish(&s) }
            return
        }
        s.next = after.map { $0 + 1 } ?? 0
    }

    /// Instant pace: the connection's reader found nothing left to send (or, with `booked`, the
    /// pacer came at the time the budget gave); writes the next block of frames (and `settled`s),
    /// starting the next waiting animation when one ends. Frames come out of the server's budget a
    /// block at a time; when it is spent, the block is booked and this returns without writing (the
    /// reader parks the connection, and the pacer's call at the booked time wakes it).
    func refill(now: Double, pacer: FramePacer, booked: Bool = false) {
        guard pace == .instant else { return }
        let due: Double? = state.withLock { s in
            if booked {
                s.booked = false
            } else if s.booked {
                return nil  // its block is booked: the pacer writes it
            }
            let target = http.bufferedByteCount + Self.refillBytes
            while !s.done && http.bufferedByteCount < target {
                if s.animation == nil {
                    guard !s.queued.isEmpty else {
                        if let (reason, retry) = s.closing { sendClosed(reason: reason, retry: retry, now: now, &s) }
                        return nil
                    }
                    let (a, origin, after) = s.queued.removeFirst()
                    start(a, origin: origin, after: after, now: now, &s)
                    continue
                }
                if s.credit == 0 {
                    s.credit = Self.refillFrames
                    let time = budget.take(Self.refillFrames, now: now)
                    if time > now {
                        metrics.instantBlocksBooked.increment()
                        s.booked = true
                        return time
                    }
                }
                s.credit -= 1
                sendNext(&s, now: now)
            }
            return nil
        }
        if let due { pacer.schedule(.refill, self, at: due, generation: 0) }
    }

    /// The index of the frame due `elapsed` seconds into an animation, at most `last` and at least
    /// −1 (before its start). Clamped before the conversion: an origin read from a store can be
    /// anything, and a Double beyond Int's range traps when converted.
    static func frameIndex(_ elapsed: Double, fps: Int, last: Int) -> Int {
        let x = (elapsed * Double(fps)).rounded(.down)
        guard !x.isNaN else { return -1 }
        return Int(min(max(x, -1), Double(last)))
    }

    /// Sends the next frame (and `settled` after the last one); returns when the one after is due.
    private func sendNext(_ s: inout State, now: Double) {
        guard let a = s.animation else { return }
        let last = a.frameCount(fps: fps) - 1
        let k = s.next
        send(frameEvent(a, k), now: now, state: &s)
        metrics.framesSent.increment()
        if k >= last {
            send(settledEvent(a), now: now, state: &s)
            s.animation = nil
            if once { finish(&s) }
            return
        }
        s.next = k + 1
    }

    private func finish(_ s: inout State) {
        s.done = true
        s.animation = nil
        http.finish()
    }

    /// A `began` grabbed the card: the animation in flight ends with `interrupted`.
    func interrupt(_ snapshot: SheetSnapshot, now: Double) {
        // Instant pace sends every animation whole: one in flight is only waiting for its reader.
        guard pace == .realtime else { return }
        state.withLock { s in
            guard !s.done, s.animation != nil else { return }
            send(snapshotEvent("interrupted", snapshot), now: now, state: &s)
            s.animation = nil
            s.generation += 1
        }
    }

    /// The pacer's call: sends frame `next` if this entry is still current and reschedules.
    func tick(generation: Int, due: Double, now: Double, pacer: FramePacer) {
        let next: (Double, Int)? = state.withLock { s in
            guard !s.done, s.generation == generation, let a = s.animation else { return nil }
            metrics.frameLateness.recordNanoseconds(Int64(max(now - due, 0) * 1e9))
            sendNext(&s, now: now)
            guard s.animation != nil else { return nil }
            // Fallen more than a frame behind (a stalled machine): skip to the current frame.
            let last = a.frameCount(fps: fps) - 1
            let current = Self.frameIndex(now - s.origin, fps: fps, last: last)
            if current > s.next {
                metrics.framesSkipped.increment(by: current - s.next)
                s.next = current
            }
            return (s.origin + a.frameTime(s.next, fps: fps), s.generation)
        }
        if let (time, generation) = next { pacer.schedule(.frame, self, at: time, generation: generation) }
    }

    /// The pacer's call for keep-alives: a comment line when nothing was written for `interval`.
    func keepAlive(now: Double, interval: Double, pacer: FramePacer) {
        let again: Double? = state.withLock { s in
            guard !s.done, !http.isClosed else { return nil }
            if now - s.lastWrite >= interval - 1e-3 {
                write(Array(": keep-alive\n\n".utf8), now: now, state: &s)
            }
            return s.lastWrite + interval
        }
        if let again { pacer.schedule(.keepAlive, self, at: again, generation: 0) }
    }

    /// `closed` (the session ended or the server drains), then the end of the body. `retry`:
    /// milliseconds an EventSource should wait before reconnecting (in the `closed` block, when
    /// given).
    func close(reason: String, now: Double, retry: Int? = nil) {
        state.withLock { s in
            guard !s.done else { return }
            // Instant pace: the frames already due go first, as they would have had they been
            // written at once (`refill` sends `closed` after them).
            if pace == .instant, s.animation != nil || !s.queued.isEmpty {
                s.closing = (reason, retry)
                return
            }
            sendClosed(reason: reason, retry: retry, now: now, &s)
        }
    }

    private func sendClosed(reason: String, retry: Int?, now: Double, _ s: inout State) {
        if let retry { s.retry = retry }
        send(
            Self.event("closed", id: nil) { w in
                w.beginObject()
                w.member("reason", reason)
                w.endObject()
            }, now: now, state: &s)
        finish(&s)
    }
}

extension SheetSnapshot {
    /// The session as animation `a` leaves it: at rest at its detent (or hidden), at its end time.
    static func settled(_ a: Animation) -> SheetSnapshot {
        SheetSnapshot(
            state: a.dismiss ? .hidden : .resting, detent: a.detent, constant: a.to, dimmerAlpha: a.toAlpha,
            progress: a.sample(elapsed: a.duration).progress, velocity: 0, animation: nil, time: a.endTime)
    }
}
