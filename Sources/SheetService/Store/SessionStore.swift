import Foundation
import RedisClient
import SheetPhysics
import Synchronization

/// Where sessions are kept beyond this process (the optional `--store`), so that another instance,
/// or this one after a restart or a crash, carries on with them. A creation, replacement or
/// deletion waits for its own write (up to the store's deadline) before it is acknowledged; the
/// events that follow are written behind, coalesced per session, and never make a request wait.
/// A request for a session this process does not hold waits for a read.
///
/// Class-bound: the responder holds one as `(any SessionStore)?` and looks at it on every event
/// (whether there is one, and to save), and a class existential is one reference, where a general
/// one is copied as a box each time (≈ 150 instructions a look).
///
/// Every write of a session carries its version (`StoreVersion`), and the store keeps the newest:
/// a write whose version is not above the stored one is refused and told (`StoreChange.outdated`,
/// or the ticket's `.stale` receipt), whatever order writes arrive in.
package protocol SessionStore: AnyObject, Sendable {
    /// Queues the session's latest encoding, at `version`; returns at once (later saves of one id
    /// replace earlier ones that have not been written yet).
    func save(_ id: String, _ bytes: [UInt8], version: Int)
    /// Queues the session's encoding as `save` does, for the caller to wait for with `confirm`.
    func saveTracked(_ id: String, _ bytes: [UInt8], version: Int) -> RedisWriter.Ticket
    /// Waits until the store has the tracked write (or refused or dropped it), at most `timeout`
    /// seconds; a write that times out stays queued.
    func confirm(_ ticket: RedisWriter.Ticket, timeout: Double) -> RedisWriter.Receipt
    /// `confirm` without holding the caller: `then` gets the receipt once, on the store's writer
    /// thread (or at once on the caller's, when it is known already); it must be quick.
    func confirm(
        _ ticket: RedisWriter.Ticket, timeout: Double, then: @escaping @Sendable (RedisWriter.Receipt) -> Void)
    /// Queues the removal of a session.
    func remove(_ id: String)
    /// Has the writer retry at once if it waits to retry (the store is known to answer again).
    func retryNow()
    /// Writes each session unless the store holds a version at least as new (a process hands back
    /// what it holds after the store lost it or was replaced); waits for the store. How many were
    /// written.
    func rewrite(_ sessions: [(id: String, bytes: [UInt8], version: Int)]) throws -> Int
    /// Writes a new session, at `version`, unless the store holds a live one of its id, or a
    /// tombstone at least as new (then the caller writes again above it); waits for the store.
    func createIfAbsent(_ id: String, _ bytes: [UInt8], version: Int) throws -> StoreCreation
    /// The stored encoding of `id`, nil if there is none. Waits for the store (bounded by its
    /// timeout); throws when the store cannot be reached, and `StoreRefilling` when it has no
    /// such key because it lost its data and the instances are still writing back what they hold.
    func load(_ id: String) throws -> [UInt8]?
    /// Waits until everything queued before the call is written, at most `timeout` seconds;
    /// false if that did not happen (the drain logs it).
    func flush(timeout: Double) -> Bool
    /// For the log and /metrics: what the store wrote, refused, dropped and has queued.
    var statistics: RedisWriter.Statistics { get }
    /// Tells the other processes that this one took `notice.id` over from the store, or deleted
    /// it, so that they drop their copies (and close their streams of it). Best effort.
    func announce(_ notice: ArchiveNotice)
    /// Calls `handler` with the other processes' notices, in order, on a thread of the store's.
    func listen(_ handler: @escaping @Sendable (ArchiveNotice) -> Void)
    /// Calls `handler`, on a thread of the store's, each time the store may have lost what this
    /// process wrote: it answers again after being unreachable, or another server answers (Redis
    /// restarted, or a replica was promoted); the handler rewrites what the process holds. Also
    /// each time a write of this process's lost to a newer version, or replaced a stored record
    /// whose version could not be read.
    func watch(_ handler: @escaping @Sendable (StoreChange) -> Void)
    /// Ends `listen` and `watch` (their threads hold the handlers, and so the server); writes
    /// still go out, so that a drain can flush after the server stopped. Idempotent.
    func stopListening()
}

/// What one process tells the others about a session.
package struct ArchiveNotice: Sendable, Equatable {
    package enum Kind: String, Sendable {
        /// Loaded from the store here: a copy elsewhere is out of date from now on.
        case taken
        /// Deleted here.
        case deleted
    }
    package var kind: Kind
    package var id: String
    /// The process that sent it (a process ignores its own).
    package var instance: String

    /// "instance kind id", the message on the wire.
    var bytes: [UInt8] { Array("\(instance) \(kind.rawValue) \(id)".utf8) }

    init(kind: Kind, id: String, instance: String) {
        self.kind = kind
        self.id = id
        self.instance = instance
    }

    init?(_ bytes: [UInt8]) {
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        guard parts.count == 3, let kind = Kind(rawValue: String(parts[1])) else { return nil }
        self.init(kind: kind, id: String(parts[2]), instance: String(parts[0]))
    }
}

/// What changed in the store under this process (see `SessionStore.watch`).
package enum StoreChange: Sendable, Equatable {
    /// It answers again after `seconds` unreachable (writes over the backlog's bound were dropped).
    case reachableAgain(seconds: Double)
    /// Another server answers than before: restarted (without persistence it is empty) or a
    /// replica promoted.
    case replaced
    /// A write of session `id` at `version` was refused: the store holds `storedVersion`, at
    /// least as new, which another process wrote (it took the session over, replaced or deleted
    /// it). The copy here, if not newer, is out of date.
    case outdated(id: String, version: Int, storedVersion: Int)
    /// A write of session `id` at `version` replaced a stored record whose version could not be
    /// read (corrupt, or not written by sheetd).
    case repaired(id: String, version: Int)
}

/// What `SessionStore.createIfAbsent` did.
package enum StoreCreation: Sendable, Equatable {
    /// The new session is stored.
    case created
    /// A live session of the id is stored: another process created it first.
    case exists
    /// Nothing written: the id's tombstone is at `storedVersion`, at least as new as the
    /// creation's; write it again above that.
    case stale(storedVersion: Int)
}

/// A load that found no key in a store that lost its data (Redis restarted without persistence, or
/// flushed) and is still being refilled: the session may be held by an instance that has not
/// written it back yet, so "not found" would be a guess.
package struct StoreRefilling: Error, Sendable {}
