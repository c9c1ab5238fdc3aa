import Foundation
import RedisClient
import SheetPhysics
import Synchronization

/// The archive in Redis (`--store redis://host:port`): saves and removals go through a
/// write-behind writer on a connection of its own (the request path never waits on them); loads
/// use another connection, so they never queue behind a batch of writes. Keys are
/// `sheetd:session:<id>` and expire after the idle TTL, as sessions do in memory.
final class RedisSessionArchive: SessionArchive {
    private let endpoint: RedisEndpoint
    private let reader: RedisConnection
    private let writer: RedisWriter
    private let ttlSeconds: Int
    private let subscriber = Mutex<RedisSubscriber?>(nil)
    /// This process's name in notices: 64 random bits.
    let instance = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    static let keyPrefix = "sheetd:session:"
    static let channel = "sheetd:sessions"

    /// Connects twice to the Redis at `url` (failing at once when it cannot be reached).
    init(url: String, ttlSeconds: Int, timeout: Double = 1) throws {
        endpoint = try RedisEndpoint(url: url)
        reader = try RedisConnection(endpoint: endpoint, timeout: timeout)
        try reader.ping()
        // 5 ms of linger: a gesture's 60 Hz events become about one write each, and busy
        // instances pipeline many sessions per round trip (measured in PERFORMANCE.md).
        writer = RedisWriter(
            connection: try RedisConnection(endpoint: endpoint, timeout: timeout), linger: 0.005)
        self.ttlSeconds = max(1, ttlSeconds)
    }

    deinit {
        writer.close()
        subscriber.withLock { $0?.close() }
    }

    func announce(_ notice: ArchiveNotice) {
        var notice = notice
        notice.instance = instance
        _ = try? reader.publish(Self.channel, notice.bytes)
    }

    func listen(_ handler: @escaping @Sendable (ArchiveNotice) -> Void) {
        let own = instance
        let started = RedisSubscriber(endpoint: endpoint, channels: [Self.channel]) { _, message in
            guard let notice = ArchiveNotice(message), notice.instance != own else { return }
            handler(notice)
        }
        subscriber.withLock { $0 = started }
    }

    func save(_ id: String, _ bytes: [UInt8]) { writer.set(Self.keyPrefix + id, bytes, ttlSeconds: ttlSeconds) }
    func remove(_ id: String) { writer.delete(Self.keyPrefix + id) }
    func load(_ id: String) throws -> [UInt8]? { try reader.get(Self.keyPrefix + id) }
    func flush(timeout: Double) -> Bool { writer.flush(timeout: timeout) }

    var statistics: (written: Int, failed: Int, pending: Int) {
        let s = writer.statistics
        return (s.written, s.failed, s.pending)
    }
}
