import SheetPhysics
import Synchronization

/// One live session: what never changes about it (its id, preset and clock), its record behind a
/// lock (the state machine and its current profile, which a layout event replaces), and its idle
/// timestamp. Events of one session are applied one at a time, in the order they take the lock.
final class SessionBox: Sendable {
    let id: String
    /// The preset the session was created with (a layout event keeps it).
    let preset: PresetName
    /// The clock its events' times are on.
    let clock: SessionClock
    /// The session it is stacked on (nil: a root sheet).
    let parent: String?
    /// Whether a session here named this one as its parent (`StackIndex`): only then does an
    /// event ask whether it is covered, so a sheet alone pays one relaxed load for stacks.
    let mayBeCovered = Atomic<Bool>(false)
    let record: Mutex<SessionRecord>
    /// Open frame streams: a watched session is not idle, so the sweeper leaves it.
    let openStreams = Atomic<Int>(0)
    /// Server seconds of the last request that touched it, as Double bits (read by the sweeper
    /// without taking the session's lock).
    private let touched: Atomic<UInt64>

    /// The bearer token that opens this session's routes (nil: none; `--session-tokens` is off).
    let token: String?

    convenience init(id: String, profile: SessionProfile, session: SheetSession, now: Double, token: String? = nil) {
        self.init(id: id, record: SessionRecord(sheet: session, profile: profile), now: now, token: token)
    }

    init(id: String, record: SessionRecord, now: Double, token: String?) {
        self.id = id
        self.preset = record.profile.model.preset
        self.clock = record.profile.clock
        self.parent = record.profile.parent
        self.token = token
        self.record = Mutex(record)
        self.touched = Atomic(now.bitPattern)
    }

    /// Marks the session used at `now` (server seconds).
    func touch(_ now: Double) { touched.store(now.bitPattern, ordering: .relaxed) }

    /// When the session was last used (server seconds).
    var lastTouched: Double { Double(bitPattern: touched.load(ordering: .relaxed)) }
}
