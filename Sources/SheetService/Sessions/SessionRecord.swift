import SheetPhysics
import Synchronization

/// What a session's lock guards: the state machine, its open frame streams and its recent
/// animations (frames are a pure function of their animation, so these are all a reconnecting
/// stream needs; frames themselves are never stored).
struct SessionRecord: Sendable {
    var sheet: SheetSession
    /// The profile of `sheet.model` (laws and detents pre-rendered): a layout event replaces both.
    var profile: SessionProfile
    var streams: [FrameStream] = []
    /// The last few animations, newest last (for Last-Event-ID).
    var recent: [Animation] = []
    /// Server seconds at which the newest animation's t = 0 fell (its start time on the server
    /// clock; the receive time of its event on the client clock).
    var origin = 0.0
    /// The version of the session's last write to the store (0: never), or of the take that
    /// loaded it (`StoreVersion`): another process that wrote a higher version holds a newer state.
    var version = 0
    /// The `seq` of the last request applied with one (0: none), and its answer's bytes: a retry
    /// of it is answered with them (`EventSequence.swift`).
    var lastSeq = 0
    var lastReply: [UInt8]?
    /// The request with `seq` being applied now, if one is (in memory only: a record read from
    /// the store has none, so a `lastSeq` without `lastReply` there was applied, its answer lost).
    var applying: SequenceReservation?
    /// Enough for a stream away for a drain's 2 s retry while its session goes on elsewhere at a
    /// gesture every ~0.5 s (4 was not: IntegrationTests/rolling-restart saw resumptions fall back to a
    /// snapshot, 3 of 12 in one run). An idle session holds none of them.
    static let recentLimit = 8

    init(sheet: SheetSession, profile: SessionProfile) {
        self.sheet = sheet
        self.profile = profile
    }

    /// After a layout event replaced the state machine's model: the profile of the new one (its
    /// configuration re-rendered for the store), told to the open streams; recent animations
    /// toward detents the new model lacks are forgotten (a stored session names detents by index).
    mutating func followLayout() {
        guard sheet.model !== profile.model else { return }
        profile = SessionProfile(
            relaid: sheet.model, clock: profile.clock, parent: profile.parent, revision: sheet.layoutRevision)
        let model = sheet.model
        recent.removeAll { model.detent(named: $0.detent.name) == nil }
        for stream in streams { stream.follow(profile) }
    }

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
