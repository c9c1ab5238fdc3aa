import SheetPhysics
import Synchronization

/// What a session's lock guards: the state machine, its open frame streams and its recent
/// animations (frames are a pure function of their animation, so these are all a reconnecting
/// stream needs; frames themselves are never stored).
struct SessionRecord: Sendable {
    var sheet: SheetSession
    var streams: [FrameStream] = []
    /// The last few animations, newest last (for Last-Event-ID).
    var recent: [Animation] = []
    /// Server seconds at which the newest animation's t = 0 fell (its start time on the server
    /// clock; the receive time of its event on the client clock).
    var origin = 0.0
    /// The version of the session's last write to the store (0: never): microseconds of wall
    /// time, so another process that wrote a higher version holds a newer state.
    var version = 0
    /// Enough for a stream away for a drain's 2 s retry while its session goes on elsewhere at a
    /// gesture every ~0.5 s (4 was not: IntegrationTests/rolling-restart saw resumptions fall back to a
    /// snapshot, 3 of 12 in one run). An idle session holds none of them.
    static let recentLimit = 8

    init(sheet: SheetSession) { self.sheet = sheet }

    /// Remembers `a` for reconnecting streams.
    mutating func remember(_ a: Animation, origin: Double) {
        if recent.count == Self.recentLimit { recent.removeFirst() }
        recent.append(a)
        self.origin = origin
    }

    /// Sends `closed` to every open stream and forgets them.
    mutating func closeStreams(reason: String, now: Double, retry: Int? = nil) {
        for stream in streams { stream.close(reason: reason, now: now, retry: retry) }
        streams = []
    }
}
