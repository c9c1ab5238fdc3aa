import Foundation
import Logging
import RedisClient
import SheetPhysics
import Synchronization

/// The session store in Redis (`--store redis://host:port`): saves and removals go through a
/// write-behind writer on a connection of its own (a creation, replacement or deletion waits for
/// its own write, nothing else waits); loads use another connection, so they never queue behind a
/// batch of writes; a third one watches the store's identity (`StoreWatch`). Keys are
/// `sheetd:session:<id>` and expire after the idle TTL, as sessions do in memory.
///
/// Every write is a fenced script (`RedisScript`: it does nothing once its deadline has passed on
/// the server's clock): a session's through `writeScript`, which keeps the newest version
/// (`StoreVersion`) and tells the writer that lost (`StoreChange.outdated`), a creation with
/// session tokens through `createScript`, the marker through `markScript`.
final class RedisSessionStore: SessionStore {
    private let endpoint: RedisEndpoint
    private let reader: RedisConnection
    private let writer: RedisWriter
    private let watcher: RedisConnection
    private let ttlSeconds: Int
    private let logger: Logger
    private let subscriber = Mutex<RedisSubscriber?>(nil)
    private let storeWatch = Mutex<StoreWatch?>(nil)
    /// This process's name in notices: 64 random bits.
    let instance = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    /// What every key and channel name starts with (`--store-prefix`): two deployments sharing a
    /// Redis use two prefixes, and neither reads, overwrites or hears the other's sessions (a
    /// database number separates keys but not pub/sub channels, which span databases).
    static let defaultPrefix = "sheetd:"
    /// A session's key is this and its id: `sheetd:session:<id>` with the default prefix.
    let keyPrefix: String
    /// The channel the instances' notices go through.
    let channel: String
    /// Present while the store holds what the instances wrote: set at startup, and again by the
    /// store watch once the instances have written back what they hold after the store lost its
    /// data (it is gone with the data when Redis restarts empty). A load that finds neither the
    /// session nor the marker cannot tell a missing session from one not written back yet.
    let markerKey: String
    /// The default prefix's session key prefix (tests read the keys straight from Redis).
    static let keyPrefix = defaultPrefix + "session:"

    /// The stored record's version, for the scripts: the integer ArchiveCodec writes second, after
    /// `"v":1` (`{"v":1,"version":N,…`), read only there and only up to 2^53; nil for a record that
    /// does not start so (corrupt, or not sheetd's).
    static let versionOf = """
        local function version_of(record)
          local digits = string.match(record, '^{"v":1,"version":(%d+)[,}]')
          if not digits or #digits > 16 then return nil end
          local version = tonumber(digits)
          if version > 9007199254740992 then return nil end
          return version
        end

        """

    /// Every write of a session (the writer's versioned write, `RedisWriter`'s contract): KEYS[1]
    /// its key; ARGV[1] its record, ARGV[2] the record's version, ARGV[3] its TTL in seconds.
    /// Written when the stored version is older (1), or unreadable (2: the record is replaced, not
    /// left to answer 503 until it expires); refused with `STALE <stored version>` when it is newer,
    /// or as new with another state. The same state at the same version is this copy's write again
    /// (a retry whose answer was lost, or the write-back after an outage beside the writer's own
    /// write of that version): written, which also renews the TTL. Records are compared without
    /// their trailing clocks (`"wall":…,"server":…}`, where ArchiveCodec writes them), which are
    /// the moment of encoding, not the session's state. Fenced: a write the writer gave up on does
    /// nothing when a stalled server takes it later. Only the record's first 40 bytes are read
    /// (GETRANGE: the version is there), the whole of it only for a tie.
    static let writeScript = RedisScript(
        versionOf + """
            local function state_of(record)
              return (string.gsub(record, ',"wall":[-+.%deE]+,"server":[-+.%deE]+}$', '}', 1))
            end
            local given = tonumber(ARGV[2])
            local head = redis.call('GETRANGE', KEYS[1], 0, 39)
            local outcome = 1
            if head ~= '' then
              local version = version_of(head)
              if not version then
                outcome = 2
              elseif version > given
                or (version == given and state_of(redis.call('GET', KEYS[1])) ~= state_of(ARGV[1])) then
                return redis.error_reply(string.format('STALE %d', version))
              end
            end
            local ttl = tonumber(ARGV[3])
            if ttl > 0 then redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl) else redis.call('SET', KEYS[1], ARGV[1]) end
            return outcome
            """, fenced: true)

    /// Writes a new session unless a live one of its id is stored (0; a record that is not a
    /// tombstone counts as live, also when it cannot be read: fail closed), or its tombstone is at
    /// least as new as the given version (`STALE`: the caller writes again above it, so that no
    /// copy of the deleted session can overwrite the new one): the create of `PUT` with session
    /// tokens, made atomic across instances. KEYS and ARGV as `writeScript`'s. Fenced.
    static let createScript = RedisScript(
        versionOf + """
            local stored = redis.call('GET', KEYS[1])
            if stored then
              if not string.match(stored, '^{"v":1,"version":%d+,"deleted":true}$') then return 0 end
              local version = version_of(stored)
              if version and version >= tonumber(ARGV[2]) then
                return redis.error_reply(string.format('STALE %d', version))
              end
            end
            redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
            return 1
            """, fenced: true)

    /// Sets the store's marker key (KEYS[1]) to ARGV[1], or deletes it for an empty ARGV[1]: a
    /// write like any other, fenced.
    static let markScript = RedisScript(
        """
        if ARGV[1] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[1]) end
        return 1
        """, fenced: true)

    /// The store watch's handler, also told of versioned writes that were stale or replaced an
    /// unreadable record (the writer tells them on its thread).
    private let changes = ChangeHandler()

    private final class ChangeHandler: Sendable {
        let handler = Mutex<(@Sendable (StoreChange) -> Void)?>(nil)
    }

    /// Connects three times to the Redis at `url` (failing at once when it cannot be reached).
    /// `deadline`: seconds a call may take, connecting included (a request waits at most that for
    /// the store). `backlogBytes`: what the writer keeps while the store is away.
    init(
        url: String, prefix: String = RedisSessionStore.defaultPrefix, ttlSeconds: Int, deadline: Double,
        backlogBytes: Int, logger: Logger
    ) throws {
        keyPrefix = prefix + "session:"
        channel = prefix + "sessions"
        markerKey = prefix + "store"
        endpoint = try RedisEndpoint(url: url)
        reader = try RedisConnection(endpoint: endpoint, timeout: deadline)
        try reader.ping()
        try Self.mark(markerKey, on: reader)
        // 5 ms of linger: a gesture's 60 Hz events become about one write each, and busy
        // instances pipeline many sessions per round trip (measured in PERFORMANCE.md); a write
        // someone waits for cuts it short.
        let sessions = keyPrefix
        let changes = self.changes
        writer = RedisWriter(
            connection: try RedisConnection(endpoint: endpoint, timeout: deadline), maxPendingBytes: backlogBytes,
            linger: 0.005, versionedWrite: Self.writeScript
        ) { notice in
            guard notice.key.hasPrefix(sessions), let handler = changes.handler.withLock({ $0 }) else { return }
            let id = String(notice.key.dropFirst(sessions.count))
            switch notice.kind {
            case .stale(let stored): handler(.outdated(id: id, version: notice.version, storedVersion: stored))
            case .reset: handler(.repaired(id: id, version: notice.version))
            }
        }
        watcher = try RedisConnection(endpoint: endpoint, timeout: deadline)
        self.ttlSeconds = max(1, ttlSeconds)
        self.logger = logger
    }

    deinit {
        stopListening()
        writer.close()
    }

    func announce(_ notice: ArchiveNotice) {
        var notice = notice
        notice.instance = instance
        _ = try? reader.publish(channel, notice.bytes)
    }

    func listen(_ handler: @escaping @Sendable (ArchiveNotice) -> Void) {
        let own = instance
        let started = RedisSubscriber(endpoint: endpoint, channels: [channel]) { _, message in
            guard let notice = ArchiveNotice(message), notice.instance != own else { return }
            handler(notice)
        }
        subscriber.withLock { $0 = started }
    }

    /// Sets the marker key (`value` nil: deletes it) through `connection`, fenced.
    static func mark(_ marker: String, _ value: String? = "1", on connection: RedisConnection) throws(RedisError) {
        _ = try connection.run(markScript, [(keys: [marker], arguments: [Array((value ?? "").utf8)])])
    }

    func watch(_ handler: @escaping @Sendable (StoreChange) -> Void) {
        changes.handler.withLock { $0 = handler }
        let started = StoreWatch(
            connection: watcher, writer: writer, logger: logger, interval: 0.5, marker: markerKey,
            onChange: handler)
        storeWatch.withLock { $0 = started }
    }

    func stopListening() {
        changes.handler.withLock { $0 = nil }
        storeWatch.withLock { watch in
            watch?.stop()
            watch = nil
        }
        subscriber.withLock { subscriber in
            subscriber?.close()
            subscriber = nil
        }
    }

    func save(_ id: String, _ bytes: [UInt8], version: Int) {
        writer.set(keyPrefix + id, bytes, ttlSeconds: ttlSeconds, version: version)
    }

    func saveTracked(_ id: String, _ bytes: [UInt8], version: Int) -> RedisWriter.Ticket {
        writer.setTracked(keyPrefix + id, bytes, ttlSeconds: ttlSeconds, version: version)
    }

    func confirm(_ ticket: RedisWriter.Ticket, timeout: Double) -> RedisWriter.Receipt {
        writer.wait(for: ticket, timeout: timeout)
    }

    func confirm(
        _ ticket: RedisWriter.Ticket, timeout: Double, then: @escaping @Sendable (RedisWriter.Receipt) -> Void
    ) {
        writer.whenWritten(ticket, timeout: timeout, then: then)
    }

    func remove(_ id: String) { writer.delete(keyPrefix + id) }
    func retryNow() { _ = writer.flush(timeout: 0) }
    /// Whether this process hears the other instances' notices yet (its subscription is made on a
    /// thread of its own after start-up).
    var isListening: Bool { subscriber.withLock { $0?.isSubscribed ?? false } }

    func createIfAbsent(_ id: String, _ bytes: [UInt8], version: Int) throws -> StoreCreation {
        let call = (
            keys: [keyPrefix + id],
            arguments: [bytes, Array(String(version).utf8), Array(String(ttlSeconds).utf8)]
        )
        switch try reader.run(Self.createScript, [call]).first {
        case .integer(1): return .created
        case .stale(let stored): return .stale(storedVersion: stored)
        default: return .exists
        }
    }

    func load(_ id: String) throws -> [UInt8]? {
        let found = try reader.get([keyPrefix + id, markerKey])
        if found[0] == nil && found[1] == nil { throw StoreRefilling() }
        return found[0]
    }
    func flush(timeout: Double) -> Bool { writer.flush(timeout: timeout) }

    func rewrite(_ sessions: [(id: String, bytes: [UInt8], version: Int)]) throws -> Int {
        let ttl = Array(String(ttlSeconds).utf8)
        let calls = sessions.map { s in
            (keys: [keyPrefix + s.id], arguments: [s.bytes, Array(String(s.version).utf8), ttl])
        }
        // On the watch's connection: the thread that calls this is the watch's own. A stale one
        // is as new or newer there (the same write, or another process moved on).
        return try watcher.run(Self.writeScript, calls).count { $0 == .integer(1) || $0 == .integer(2) }
    }

    var statistics: RedisWriter.Statistics { writer.statistics }
}
