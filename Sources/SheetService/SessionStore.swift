import SheetPhysics
import Synchronization

/// Which clock a session's times are on.
public enum SessionClock: String, Sendable {
    /// The server's monotonic clock (receive times).
    case server
    /// The client's monotonic clock: every mutating request carries `time`.
    case client
}

/// What a session was created with: immutable, so readers need no lock.
final class SessionProfile: Sendable {
    let model: SheetModel
    let clock: SessionClock
    /// The snapshot's members that never change (preset … detents and the laws), pre-rendered as
    /// JSON members without braces, so a snapshot costs only its moving parts.
    let staticMembers: [UInt8]
    /// `"dragLaw":…,"releaseLaw":…`, pre-rendered: the end of `staticMembers`, and what every
    /// answer that starts a drag segment carries.
    let lawMembers: [UInt8]
    /// The configuration as sent, re-rendered as JSON members without braces (what the session
    /// archive stores, so another process rebuilds the same profile).
    let configurationMembers: [UInt8]

    init(model: SheetModel, clock: SessionClock, configurationMembers: [UInt8] = []) {
        self.model = model
        self.clock = clock
        let laws = Wire.lawMembers(model)
        self.lawMembers = laws
        self.staticMembers = Wire.staticMembers(model: model, clock: clock, laws: laws)
        self.configurationMembers = configurationMembers
    }
}

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
    /// The version of the session's last write to the archive (0: never): microseconds of wall
    /// time, so another process that wrote a higher version holds a newer state.
    var version = 0
    /// Enough for a stream away for a drain's 2 s retry while its session goes on elsewhere at a
    /// gesture every ~0.5 s (4 was not: scripts/rolling-restart saw resumptions fall back to a
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

/// One live session: its profile, its record behind a lock, and its idle timestamp.
/// Events of one session are applied one at a time, in the order they take the lock.
final class SessionBox: Sendable {
    let id: String
    let profile: SessionProfile
    let record: Mutex<SessionRecord>
    /// Open frame streams: a watched session is not idle, so the sweeper leaves it.
    let openStreams = Atomic<Int>(0)
    /// Server seconds of the last request that touched it, as Double bits (read by the sweeper
    /// without taking the session's lock).
    private let touched: Atomic<UInt64>

    /// The bearer token that opens this session's routes (nil: none; `--session-tokens` is off).
    let token: String?

    convenience init(id: String, profile: SessionProfile, session: SheetSession, now: Double, token: String? = nil) {
        self.init(id: id, profile: profile, record: SessionRecord(sheet: session), now: now, token: token)
    }

    init(
        id: String, profile: SessionProfile, record: SessionRecord, now: Double, token: String?, restored: Bool = false
    ) {
        self.id = id
        self.profile = profile
        self.token = token
        self.record = Mutex(record)
        self.touched = Atomic(now.bitPattern)
    }

    /// Marks the session used at `now` (server seconds).
    func touch(_ now: Double) { touched.store(now.bitPattern, ordering: .relaxed) }

    /// When the session was last used (server seconds).
    var lastTouched: Double { Double(bitPattern: touched.load(ordering: .relaxed)) }
}

/// One shard of the store: a dictionary behind its own lock.
private final class Shard: Sendable {
    let table = Mutex<[String: SessionBox]>([:])

    @inline(__always) func withLock<R>(_ body: (inout [String: SessionBox]) -> R) -> R {
        table.withLock { body(&$0) }
    }
}

/// Every live session, sharded so that different sessions rarely meet on a lock: a lookup holds
/// one of 64 shard locks for a dictionary probe, then only the session's own lock.
final class SessionStore: Sendable {
    private static let shardCount = 64
    private let shards: [Shard]
    private let live = Atomic<Int>(0)
    /// Sessions at most.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        self.shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// The shard of `id`, by FNV-1a over its bytes: ids spread as evenly as with `hashValue`, at a
    /// fraction of a seeded SipHash (the shard's dictionary hashes the id again, with its seed, so
    /// ids chosen to collide only share a lock, never a probe chain).
    @inline(__always) private func shard(_ id: String) -> Shard {
        var hash: UInt32 = 2_166_136_261
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return shards[Int(hash % UInt32(Self.shardCount))]
    }

    /// Live sessions now.
    var count: Int { live.load(ordering: .relaxed) }

    /// The session `id`, if it lives.
    func get(_ id: String) -> SessionBox? {
        shard(id).withLock { $0[id] }
    }

    /// The outcome of `put`.
    enum PutResult {
        case created
        case replaced(SessionBox)
        case full
    }

    /// Stores `box` under its id, replacing any session of that id; refuses a new id when the
    /// store is at capacity.
    func put(_ box: SessionBox) -> PutResult {
        shard(box.id).withLock { table in
            if let old = table[box.id] {
                table[box.id] = box
                return .replaced(old)
            }
            guard reservePlace() else { return .full }
            table[box.id] = box
            return .created
        }
    }

    /// Stores `box` only if no session has its id yet (POST /sessions with a generated id).
    func insertNew(_ box: SessionBox) -> Bool? {
        shard(box.id).withLock { table in
            if table[box.id] != nil { return false }
            guard reservePlace() else { return nil }
            table[box.id] = box
            return true
        }
    }

    /// Counts one more live session unless that would pass the cap. Reserving before inserting
    /// means concurrent creators never overshoot it.
    private func reservePlace() -> Bool {
        if live.wrappingAdd(1, ordering: .relaxed).newValue > capacity {
            live.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Removes and returns the session `id`.
    func remove(_ id: String) -> SessionBox? {
        shard(id).withLock { table in
            guard let box = table.removeValue(forKey: id) else { return nil }
            live.wrappingSubtract(1, ordering: .relaxed)
            return box
        }
    }

    /// Removes `box` if it is still the session under its id (not one that replaced it since).
    func remove(_ box: SessionBox) -> Bool {
        shard(box.id).withLock { table in
            guard table[box.id] === box else { return false }
            table.removeValue(forKey: box.id)
            live.wrappingSubtract(1, ordering: .relaxed)
            return true
        }
    }

    /// Removes every session last used before `cutoff` (server seconds) and returns them.
    func evict(idleBefore cutoff: Double) -> [SessionBox] {
        var evicted: [SessionBox] = []
        for shard in shards {
            shard.withLock { table in
                // Collect first: removing while iterating a dictionary is not allowed.
                let stale = table.values.filter {
                    $0.lastTouched < cutoff && $0.openStreams.load(ordering: .relaxed) == 0
                }
                for box in stale {
                    table.removeValue(forKey: box.id)
                    live.wrappingSubtract(1, ordering: .relaxed)
                    evicted.append(box)
                }
            }
        }
        return evicted
    }

    /// Every live session (for draining its streams).
    func all() -> [SessionBox] {
        shards.flatMap { shard in shard.withLock { Array($0.values) } }
    }
}

/// Sessions created with the same configuration share one immutable profile (model, detents,
/// pre-rendered JSON), so a million sessions of a few configurations cost a few profiles, not a
/// million. Keyed by the request body's exact bytes; bounded, and simply emptied when full.
final class ProfileCache: Sendable {
    private let entries = Mutex<[[UInt8]: (SessionProfile, SheetSession)]>([:])
    /// Distinct configurations kept at most.
    static let capacity = 1024

    /// The profile and the initial session for a configuration body, decoded once per distinct body.
    func configuration(_ body: [UInt8]) throws(Problem) -> (SessionProfile, SheetSession) {
        if let hit = entries.withLock({ $0[body] }) { return hit }
        let json = try Decode.json(body)
        var (profile, session) = try Decode.configuration(json)
        var members = JSONWriter(capacity: body.count + 16)
        if let json { members.value(json) }
        // "{…}" → "…": the members, so the archive can write them inside its own braces.
        let rendered = members.takeBytes()
        profile = SessionProfile(
            model: profile.model, clock: profile.clock,
            configurationMembers: rendered.count >= 2 ? Array(rendered.dropFirst().dropLast()) : [])
        let decoded = (profile, session)
        entries.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[body] = decoded
        }
        return decoded
    }
}
