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

    /// Writes a session unless the stored one's version is at least as new. The version is the
    /// first `"version":` of the encoding (ArchiveCodec writes it second, after `"v"`); versions
    /// are microseconds since 1970, ≈ 1.8e15, exact in Lua's doubles (< 2^53).
    static let setUnlessNewer = """
        local stored = redis.call('GET', KEYS[1])
        if stored then
          local version = tonumber(string.match(stored, '"version":(%d+)'))
          if version and version >= tonumber(ARGV[2]) then return 0 end
        end
        redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
        return 1
        """

    /// Writes a session unless a live one of its id is stored (a deletion's tombstone is no
    /// session): the create of `PUT` with session tokens, made atomic across instances.
    static let createUnlessLive = """
        local stored = redis.call('GET', KEYS[1])
        if stored and not string.find(stored, '"deleted":true', 1, true) then return 0 end
        redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
        return 1
        """

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
        try reader.set(markerKey, Array("1".utf8), ttlSeconds: nil)
        // 5 ms of linger: a gesture's 60 Hz events become about one write each, and busy
        // instances pipeline many sessions per round trip (measured in PERFORMANCE.md); a write
        // someone waits for cuts it short.
        writer = RedisWriter(
            connection: try RedisConnection(endpoint: endpoint, timeout: deadline), maxPendingBytes: backlogBytes,
            linger: 0.005)
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

    func watch(_ handler: @escaping @Sendable (StoreChange) -> Void) {
        let started = StoreWatch(
            connection: watcher, writer: writer, logger: logger, interval: 0.5, marker: markerKey,
            onChange: handler)
        storeWatch.withLock { $0 = started }
    }

    func stopListening() {
        storeWatch.withLock { watch in
            watch?.stop()
            watch = nil
        }
        subscriber.withLock { subscriber in
            subscriber?.close()
            subscriber = nil
        }
    }

    func save(_ id: String, _ bytes: [UInt8]) { writer.set(keyPrefix + id, bytes, ttlSeconds: ttlSeconds) }

    func saveTracked(_ id: String, _ bytes: [UInt8]) -> RedisWriter.Ticket {
        writer.setTracked(keyPrefix + id, bytes, ttlSeconds: ttlSeconds)
    }

    func confirm(_ ticket: RedisWriter.Ticket, timeout: Double) -> RedisWriter.Receipt {
        writer.wait(for: ticket, timeout: timeout)
    }

    func remove(_ id: String) { writer.delete(keyPrefix + id) }
    func retryNow() { _ = writer.flush(timeout: 0) }
    /// Whether this process hears the other instances' notices yet (its subscription is made on a
    /// thread of its own after start-up).
    var isListening: Bool { subscriber.withLock { $0?.isSubscribed ?? false } }

    func createIfAbsent(_ id: String, _ bytes: [UInt8]) throws -> Bool {
        let call = (keys: [keyPrefix + id], arguments: [bytes, Array(String(ttlSeconds).utf8)])
        return try reader.evaluate(Self.createUnlessLive, [call]).first == 1
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
        // On the watch's connection: the thread that calls this is the watch's own.
        return try watcher.evaluate(Self.setUnlessNewer, calls).reduce(0) { $0 + Int($1 ?? 0) }
    }

    var statistics: RedisWriter.Statistics { writer.statistics }
}
