import Foundation
import RedisClient
import SheetPhysics
import Synchronization

/// Where sessions are kept beyond this process (the optional `--store`), so that another instance,
/// or this one after a restart, carries on with them. Writes are queued and never make a request
/// wait; only a request for a session this process does not hold waits for a read.
///
/// Class-bound: the responder holds one as `(any SessionArchive)?` and looks at it on every event
/// (whether there is one, and to save), and a class existential is one reference, where a general
/// one is copied as a box each time (≈ 150 instructions a look).
package protocol SessionArchive: AnyObject, Sendable {
    /// Queues the session's latest encoding; returns at once (later saves of one id replace
    /// earlier ones that have not been written yet).
    func save(_ id: String, _ bytes: [UInt8])
    /// Queues the removal of a session.
    func remove(_ id: String)
    /// The stored encoding of `id`, nil if there is none. Waits for the store (bounded by its
    /// timeout); throws when the store cannot be reached.
    func load(_ id: String) throws -> [UInt8]?
    /// Waits until everything queued before the call is written, at most `timeout` seconds;
    /// false if that did not happen (the drain logs it).
    func flush(timeout: Double) -> Bool
    /// A line for the log and /metrics: what the archive wrote, failed and has queued.
    var statistics: (written: Int, failed: Int, pending: Int) { get }
    /// Tells the other processes that this one took `notice.id` over from the archive, or deleted
    /// it, so that they drop their copies (and close their streams of it). Best effort.
    func announce(_ notice: ArchiveNotice)
    /// Calls `handler` with the other processes' notices, in order, on a thread of the archive's.
    func listen(_ handler: @escaping @Sendable (ArchiveNotice) -> Void)
}

/// What one process tells the others about a session.
package struct ArchiveNotice: Sendable, Equatable {
    package enum Kind: String, Sendable {
        /// Loaded from the archive here: a copy elsewhere is out of date from now on.
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
