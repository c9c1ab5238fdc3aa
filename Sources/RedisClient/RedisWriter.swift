import Foundation

/// Write-behind to Redis: callers enqueue a SET or DEL and return at once; one background thread
/// writes them. A caller that must know its write reached Redis (a creation it is about to
/// acknowledge) enqueues it tracked and waits for that write alone, up to a deadline.
///
/// Writes are coalesced by key (only the latest operation on a key is sent; a DEL after a SET
/// replaces it) and pipelined in batches. While Redis is down the thread retries with backoff
/// (50 ms doubling to 2 s) and keeps only the latest operation per key, at most `maxPending` keys
/// and about `maxPendingBytes` bytes of keys and values: operations on further keys are dropped
/// and counted (newer operations on a key already waiting, or in the batch being retried, are
/// always kept, so the bytes can pass the bound by what one key's values grow).
///
/// Redis's error replies are told apart by their code (`RedisError.temporaryCodes`). A temporary
/// one (LOADING, READONLY, NOREPLICAS, MASTERDOWN, BUSY, TRYAGAIN) is handled as a broken
/// connection: the operations it answered stay in the batch (those Redis took are settled), the
/// connection is dropped, and the batch is retried with the same backoff on a new connection,
/// whose ROLE is checked first; counted in `deferred`. A final one (WRONGTYPE, OOM under
/// `noeviction`, MISCONF, an invalid argument) refuses that operation for good: counted as
/// refused, by code, and not retried.
///
/// **Versioned writes** (`set(_:_:ttlSeconds:version:)`) run the writer's `versionedWrite` script
/// instead of SET, so that the store keeps the newest version of a value whatever order writes
/// arrive in (two processes that both hold it, a retry after a timeout). The script is fenced
/// (`RedisScript`: a call the server takes after its deadline does nothing) and its contract is:
/// KEYS[1] the key; ARGV[1] the value, ARGV[2] its version (an integer below 2^53), ARGV[3] its
/// TTL in seconds (0: none); it answers 1 when it wrote the value, 2 when it wrote it over a
/// stored value whose version it could not read, and the error reply `STALE <stored version>`
/// when it wrote nothing because the stored version is at least as new (an equal version with
/// the same value is a retry: written). A stale write is counted (`stale`), settles its tickets as
/// `.stale`, and is told to `onVersion` unless a ticket waits for it; a write over an unreadable
/// version is counted (`reset`) and told.
///
/// The thread uses the connection it is given; give it its own `RedisConnection` so that its
/// retries never make request-path calls wait for the connection's mutex. Give it a `.primary`
/// one (the default): its ROLE check after every connect is what keeps writes off a replica. On a
/// Sentinel endpoint the connection follows the Sentinels: while they fail the primary over the
/// batch is deferred (code "FAILOVER"), and the next attempt after their announcement goes to the
/// new primary.
public final class RedisWriter: Sendable {
    /// What the writer has done so far.
    public struct Statistics: Sendable, Hashable {
        /// Operations Redis accepted.
        public var written: Int
        /// Operations Redis refused for good (a final error reply); not retried.
        public var refused: Int
        /// Operations never sent: over `maxPending` or `maxPendingBytes`, enqueued after
        /// `close()`, or left when `close()` could not reach Redis.
        public var dropped: Int
        /// Keys waiting to be written, including the batch in flight.
        public var pending: Int
        /// Bytes of keys and values waiting, including the batch in flight.
        public var pendingBytes: Int
        /// Operations replaced by a later one on the same key before being sent.
        public var coalesced: Int
        /// `refused` by the code of Redis's reply ("OOM", "WRONGTYPE", "ERR" …); adds up to
        /// `refused`.
        public var refusedByCode: [String: Int] = [:]
        /// Times an operation was sent and kept for a retry because Redis answered a temporary error
        /// reply, or its batch found a server that is not the primary (each attempt counts).
        public var deferred: Int = 0
        /// `deferred` by the code of Redis's reply ("LOADING", "READONLY", "NOREPLICAS",
        /// "MASTERDOWN", "BUSY", "TRYAGAIN", "EXPIRED"), "ROLE" when the connection found a
        /// replica, or "FAILOVER" while the Sentinels fail the primary over; adds up to `deferred`.
        public var deferredByCode: [String: Int] = [:]
        /// Versioned writes the store refused because it held a version at least as new (another
        /// writer's); not retried.
        public var stale: Int = 0
        /// Versioned writes that replaced a stored value whose version could not be read.
        public var reset: Int = 0

        /// Operations refused or dropped.
        public var failed: Int { refused + dropped }
    }

    /// A tracked write, to wait for with `wait(for:timeout:)` (exactly once: until then the writer
    /// keeps what that write became).
    public struct Ticket: Sendable {
        let key: String
        /// The write's sequence number; 0 when it was dropped as it was enqueued.
        let sequence: UInt64
    }

    /// What became of a tracked write.
    public enum Receipt: Sendable, Equatable {
        /// Redis has it: the write, or a later one on its key that replaced it before it was sent.
        case written
        /// Redis refused it, or it was dropped (over the bounds, or the writer closed).
        case failed
        /// A versioned write that Redis refused: it holds `storedVersion`, at least as new.
        case stale(storedVersion: Int)
        /// Not written by the deadline; it stays queued and may still be written.
        case timedOut
        /// Not waited for: the writer's last attempt to reach Redis failed, or Redis answered that
        /// it cannot take writes now (before or while this waited), and it retries with backoff. It
        /// stays queued and may still be written.
        case unreachable
    }

    /// A versioned write that did not simply replace an older version, as told to `onVersion`.
    public struct VersionNotice: Sendable, Hashable {
        /// What the store did with it.
        public enum Kind: Sendable, Hashable {
            /// Refused: the store holds `storedVersion`, at least as new (another writer's).
            case stale(storedVersion: Int)
            /// Written over a stored value whose version could not be read (corrupt, or not
            /// written by this program).
            case reset
        }
        /// The key written.
        public let key: String
        /// The version the write carried.
        public let version: Int
        public let kind: Kind
    }

    private let queue: WriteQueue

    /// Starts the writer thread, which writes through `connection`; at most `maxPending` keys wait.
    ///
    /// `linger`: seconds the thread waits, once woken by new work, before it takes a batch, so that
    /// a burst of writes to the same keys (a gesture's 60 Hz events) goes out as one write per key
    /// and many keys share one pipeline; `flush` and `close` cut it short. 0 writes at once.
    ///
    /// `maxPendingBytes`: the bound on what waits while Redis is away (64 MiB by default: with
    /// sessions of ≈ 1.5 KB, about 40,000 of them).
    ///
    /// `versionedWrite`: the script versioned writes run (see the type's summary for its contract);
    /// `onVersion` is called, on the writer thread and after the batch's outcome is counted, with
    /// each versioned write that replaced an unreadable version, and each that was stale unless a
    /// caller waits for it with a ticket (its receipt tells it).
    public init(
        connection: RedisConnection, maxPending: Int = 1_000_000, maxPendingBytes: Int = 64 << 20, linger: Double = 0,
        versionedWrite: RedisScript? = nil, onVersion: (@Sendable (VersionNotice) -> Void)? = nil
    ) {
        queue = WriteQueue(
            connection: connection, maxPending: max(1, maxPending), maxPendingBytes: max(1, maxPendingBytes),
            linger: max(0, linger), versionedWrite: versionedWrite, onVersion: onVersion)
        let queue = self.queue
        // The thread holds the queue until `close()` (or deinit) ends its loop.
        let thread = Thread { queue.run() }
        thread.name = "redis-writer"
        thread.start()
    }

    /// Closes the writer (see `close()`) if that was not done.
    deinit { queue.close() }

    /// Enqueues SET `key` `value` [EX `ttlSeconds`]; never waits for Redis.
    public func set(_ key: String, _ value: [UInt8], ttlSeconds: Int?) {
        queue.enqueue(key, .set(value, ttlSeconds: ttlSeconds))
    }

    /// Enqueues a versioned write of `value` at `key`, at `version`, expiring after `ttlSeconds`
    /// (nil: never): the store keeps it unless it holds a version at least as new. Never waits for
    /// Redis. Precondition: the writer was given its `versionedWrite` script.
    public func set(_ key: String, _ value: [UInt8], ttlSeconds: Int?, version: Int) {
        queue.enqueue(key, .versioned(value, version: version, ttlSeconds: ttlSeconds))
    }

    /// `set(_:_:ttlSeconds:version:)`, and a ticket to wait for this write with.
    public func setTracked(_ key: String, _ value: [UInt8], ttlSeconds: Int?, version: Int) -> Ticket {
        Ticket(
            key: key,
            sequence: queue.enqueue(key, .versioned(value, version: version, ttlSeconds: ttlSeconds), tracked: true))
    }

    /// Enqueues DEL `key`; never waits for Redis.
    public func delete(_ key: String) {
        queue.enqueue(key, .delete)
    }

    /// Enqueues SET `key` `value` [EX `ttlSeconds`] as `set` does, and returns a ticket to wait
    /// for this write with; never waits for Redis.
    public func setTracked(_ key: String, _ value: [UInt8], ttlSeconds: Int?) -> Ticket {
        Ticket(key: key, sequence: queue.enqueue(key, .set(value, ttlSeconds: ttlSeconds), tracked: true))
    }

    /// Waits until the ticket's write is written, refused or dropped, at most `timeout` seconds
    /// (without waiting for writes to other keys queued before it beyond the batches they share);
    /// a writer lingering writes at once. While Redis is known to be unreachable (the last attempt
    /// failed, or fails while this waits) it returns at once (`.unreachable`): callers are threads
    /// answering requests, and a Redis that is down must not hold each of them for a whole
    /// timeout in turn.
    public func wait(for ticket: Ticket, timeout: Double) -> Receipt {
        queue.wait(for: ticket, timeout: timeout)
    }

    /// `wait(for:timeout:)` without holding the caller: `then` is called exactly once with the
    /// ticket's receipt, the same one `wait` would have returned. At once, on the calling thread,
    /// when the write is settled already, was dropped, or Redis is known to be unreachable;
    /// otherwise on the writer thread, unlocked, right after the batch that settles it (so the
    /// tracked writes of concurrent callers share one pipeline), or when Redis is found
    /// unreachable, or at the deadline (`.timedOut`; at the latest when the batch in flight
    /// returns, which the connection's timeout bounds). `then` must be quick and must not wait
    /// for the writer (`wait`, `flush`, `close`); it may enqueue writes and wait for them this way.
    public func whenWritten(_ ticket: Ticket, timeout: Double, then: @escaping @Sendable (Receipt) -> Void) {
        queue.whenWritten(ticket, timeout: timeout, then: then)
    }

    /// Waits until every operation enqueued before this call has been written (or dropped), and
    /// what `onVersion` is told of them has been told, for up to `timeout` seconds; a writer waiting
    /// to retry retries at once (so `flush(timeout: 0)` asks for a retry now, e.g. when Redis is
    /// known to answer again). False on timeout.
    public func flush(timeout: Double) -> Bool {
        queue.flush(timeout: timeout)
    }

    /// What the writer has done so far.
    public var statistics: Statistics { queue.statistics }

    /// Why the last batch failed or Redis refused or deferred part of it, or nil when it was all
    /// written (for health checks; `code` says which error reply).
    public var lastError: RedisError? { queue.lastError }

    /// Writes what is pending, with one attempt if Redis is down (bounded by the connection's
    /// timeouts), drops and counts the rest, and ends the thread. Later operations are dropped.
    /// Idempotent.
    public func close() {
        queue.close()
    }
}

/// An operation waiting to be written.
enum WriteOperation: Sendable {
    case set([UInt8], ttlSeconds: Int?)
    /// Through the writer's `versionedWrite` script.
    case versioned([UInt8], version: Int, ttlSeconds: Int?)
    case delete
}

/// The state shared by the callers and the writer thread: the latest operation per key in the
/// order keys arrived, the batch in flight, and the counters.
///
/// Flush works with sequence numbers: every enqueue takes the next one, and each waiting key (or
/// batch entry) remembers the oldest operation it stands for. Keys wait in arrival order, so the
/// oldest unwritten operation is the smaller of the batch's oldest and the first waiting key's,
/// and everything before it is written.
final class WriteQueue: @unchecked Sendable {
    // @unchecked: every var below is only touched with `condition` locked.
    private let condition = NSCondition()
    private let connection: RedisConnection
    private let maxPending: Int
    private let versionedWrite: RedisScript?
    private let onVersion: (@Sendable (RedisWriter.VersionNotice) -> Void)?

    /// An operation on a key, and the sequence numbers of the oldest operation it stands for and
    /// of its own (the newest).
    private struct Entry {
        let key: String
        var operation: WriteOperation
        let oldest: UInt64
        var newest: UInt64

        func command(versionedWrite: RedisScript?) -> RedisCommand {
            switch operation {
            case .set(let value, let ttlSeconds): return .set(key, value, ttlSeconds: ttlSeconds)
            case .delete: return .delete(key)
            case .versioned(let value, let version, let ttlSeconds):
                guard let versionedWrite else {
                    preconditionFailure("RedisWriter: a versioned write needs the writer's versionedWrite script")
                }
                return .evaluate(
                    versionedWrite, keys: [key],
                    arguments: [value, Array(String(version).utf8), Array(String(ttlSeconds ?? 0).utf8)])
            }
        }

        /// The version a versioned operation carries.
        var version: Int? {
            if case .versioned(_, let version, _) = operation { return version }
            return nil
        }

        var byteCount: Int {
            switch operation {
            case .set(let value, _), .versioned(let value, _, _): key.utf8.count + value.count
            case .delete: key.utf8.count
            }
        }
    }

    /// Waiting keys and their entries.
    private var waiting: [String: Entry] = [:]
    /// Keys in arrival order as (key, oldest); a slot whose entry has since left `waiting` (or been
    /// replaced) is skipped.
    private var arrivals: [(key: String, oldest: UInt64)] = []
    private var arrivalsHead = 0
    /// The batch being written, or waiting to be retried, and its keys.
    private var batch: [Entry] = []
    private var batchKeys: Set<String> = []
    /// Keys both in the batch and waiting (a newer operation arrived while the batch was out).
    private var overlap = 0
    /// The sequence number of the last enqueued operation.
    private var sequence: UInt64 = 0

    private var written = 0
    private var refused = 0
    private var refusedByCode: [String: Int] = [:]
    private var deferred = 0
    private var deferredByCode: [String: Int] = [:]
    private var stale = 0
    private var reset = 0
    private var dropped = 0
    private var coalesced = 0
    /// Bytes of the entries waiting and in the batch.
    private var pendingBytes = 0
    private let maxPendingBytes: Int
    /// Keys with tracked writes not yet waited for, and how many each has.
    private var watched: [String: Int] = [:]
    /// For watched keys: the newest sequence number settled so far and what became of it.
    private var receipts: [String: (through: UInt64, receipt: RedisWriter.Receipt)] = [:]
    /// Tracked writes waited for without a thread (`whenWritten`): told by the writer thread.
    private var waiters: [Waiter] = []

    /// A caller of `whenWritten`: its ticket, when it stops waiting, and what to call.
    private struct Waiter {
        let ticket: RedisWriter.Ticket
        let deadline: Date
        let then: @Sendable (RedisWriter.Receipt) -> Void
    }
    private var lastErrorValue: RedisError?
    private var failures = 0
    private var retryAt: Date?
    private var threadIsIdle = false
    /// Whether the thread waits for more work before taking a batch (`linger`).
    private var threadIsLingering = false
    /// Seconds to wait for more work before taking a batch (see `RedisWriter.init`).
    private let linger: Double
    /// Callers waiting in `flush` or for a ticket: the thread does not linger for them.
    private var flushWaiters = 0
    /// Whether the thread is telling `onVersion` of a batch's outcome (unlocked): `flush` waits.
    private var telling = false
    private var closing = false
    private var finished = false

    /// At most this many commands, or about this many bytes, go in one pipeline.
    private static let batchCommands = 512
    private static let batchBytes = 4 << 20

    init(
        connection: RedisConnection, maxPending: Int, maxPendingBytes: Int, linger: Double,
        versionedWrite: RedisScript?, onVersion: (@Sendable (RedisWriter.VersionNotice) -> Void)?
    ) {
        self.connection = connection
        self.maxPending = maxPending
        self.maxPendingBytes = maxPendingBytes
        self.linger = linger
        self.versionedWrite = versionedWrite
        self.onVersion = onVersion
    }

    /// Queues `operation` on `key`: its sequence number, or 0 when it was dropped. A tracked one
    /// is watched until `wait(for:)` is called with it.
    @discardableResult
    func enqueue(_ key: String, _ operation: WriteOperation, tracked: Bool = false) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        if closing {
            dropped += 1
            return 0
        }
        sequence += 1
        if tracked { watched[key, default: 0] += 1 }
        if let old = waiting[key] {
            var entry = old
            entry.operation = operation
            entry.newest = sequence
            pendingBytes += entry.byteCount - old.byteCount
            waiting[key] = entry
            coalesced += 1
            return sequence
        }
        let entry = Entry(key: key, operation: operation, oldest: sequence, newest: sequence)
        let inBatch = batchKeys.contains(key)
        if !inBatch && (pendingKeys >= maxPending || pendingBytes + entry.byteCount > maxPendingBytes) {
            dropped += 1
            if tracked { unwatch(key) }
            return 0
        }
        waiting[key] = entry
        pendingBytes += entry.byteCount
        arrivals.append((key, sequence))
        if inBatch { overlap += 1 }
        if threadIsIdle { condition.broadcast() }
        return sequence
    }

    func wait(for ticket: RedisWriter.Ticket, timeout: Double) -> RedisWriter.Receipt {
        if ticket.sequence == 0 { return .failed }
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        defer { unwatch(ticket.key) }
        flushWaiters += 1
        defer { flushWaiters -= 1 }
        condition.broadcast()
        while isPending(ticket) && !finished && failures == 0 {
            if !condition.wait(until: deadline) { break }
        }
        return receiptNow(ticket)
    }

    func whenWritten(
        _ ticket: RedisWriter.Ticket, timeout: Double, then: @escaping @Sendable (RedisWriter.Receipt) -> Void
    ) {
        if ticket.sequence == 0 { return then(.failed) }
        condition.lock()
        guard isPending(ticket), !finished, failures == 0, timeout > 0 else {
            // Settled already, or not to be waited for: told at once, as `wait` would return.
            let receipt = receiptNow(ticket)
            unwatch(ticket.key)
            condition.unlock()
            return then(receipt)
        }
        waiters.append(Waiter(ticket: ticket, deadline: Date(timeIntervalSinceNow: timeout), then: then))
        // The thread must not linger (a caller waits). Only then is it woken: one that is writing
        // looks at the waiters after its batch (a wake-up for every waiter was a context switch
        // each: ≈ 12 % of the CPU of PUTs with a store).
        if threadIsLingering { condition.broadcast() }
        condition.unlock()
    }

    /// What `wait` returns for `ticket` once it stops waiting (the lock held).
    private func receiptNow(_ ticket: RedisWriter.Ticket) -> RedisWriter.Receipt {
        if isPending(ticket) { return failures > 0 ? .unreachable : .timedOut }
        return settledReceipt(ticket)
    }

    /// The receipt of a ticket no longer pending (the lock held).
    private func settledReceipt(_ ticket: RedisWriter.Ticket) -> RedisWriter.Receipt {
        guard let receipt = receipts[ticket.key], receipt.through >= ticket.sequence else {
            // Settled without a receipt: dropped when the writer closed.
            return .failed
        }
        return receipt.receipt
    }

    /// The waiters that stop waiting now (settled, Redis unreachable, the writer finished, or past
    /// their deadline), taken out with their receipts, to be told unlocked (the lock held).
    private func takeDueWaiters() -> [(then: @Sendable (RedisWriter.Receipt) -> Void, receipt: RedisWriter.Receipt)] {
        if waiters.isEmpty { return [] }
        let now = Date()
        var due: [(then: @Sendable (RedisWriter.Receipt) -> Void, receipt: RedisWriter.Receipt)] = []
        waiters.removeAll { waiter in
            // One look at whether it is pending (two hash lookups of the key) per waiter.
            let receipt: RedisWriter.Receipt
            if !isPending(waiter.ticket) {
                receipt = settledReceipt(waiter.ticket)
            } else if failures > 0 {
                receipt = .unreachable
            } else if finished || waiter.deadline <= now {
                receipt = .timedOut
            } else {
                return false
            }
            due.append((waiter.then, receipt))
            unwatch(waiter.ticket.key)
            return true
        }
        return due
    }

    /// Whether a waiter may stop waiting without a batch having settled anything: Redis is
    /// unreachable, the writer finished, or a deadline passed (the lock held). After a batch,
    /// `tellDueWaiters` runs anyway.
    private var waitersMayBeDue: Bool {
        guard !waiters.isEmpty else { return false }
        if failures > 0 || finished { return true }
        let now = Date()
        return waiters.contains { $0.deadline <= now }
    }

    /// Tells the due waiters (the lock held on entry and on return; released meanwhile).
    private func tellDueWaiters() {
        let due = takeDueWaiters()
        guard !due.isEmpty else { return }
        condition.unlock()
        for waiter in due { waiter.then(waiter.receipt) }
        condition.lock()
    }

    /// The earliest deadline of a waiter, if any waits.
    private var earliestWaiterDeadline: Date? { waiters.lazy.map(\.deadline).min() }

    /// Whether the ticket's write, or an entry standing for it, still waits or is in the batch.
    private func isPending(_ ticket: RedisWriter.Ticket) -> Bool {
        if let entry = waiting[ticket.key], entry.oldest <= ticket.sequence { return true }
        guard batchKeys.contains(ticket.key) else { return false }
        return batch.contains { $0.key == ticket.key && $0.oldest <= ticket.sequence }
    }

    private func unwatch(_ key: String) {
        guard let count = watched[key] else { return }
        if count > 1 {
            watched[key] = count - 1
        } else {
            watched[key] = nil
            receipts[key] = nil
        }
    }

    /// Notes what became of `entry` for the tracked writes on its key.
    private func settle(_ entry: Entry, _ receipt: RedisWriter.Receipt) {
        guard watched[entry.key] != nil else { return }
        if let earlier = receipts[entry.key], earlier.through > entry.newest { return }
        receipts[entry.key] = (entry.newest, receipt)
    }

    func flush(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        let target = sequence
        flushWaiters += 1
        defer { flushWaiters -= 1 }
        retryAt = nil
        condition.broadcast()
        while (writtenThrough() < target || telling) && !finished {
            if !condition.wait(until: deadline) { break }
        }
        return writtenThrough() >= target
    }

    var statistics: RedisWriter.Statistics {
        condition.lock()
        defer { condition.unlock() }
        return .init(
            written: written, refused: refused, dropped: dropped, pending: pendingKeys, pendingBytes: pendingBytes,
            coalesced: coalesced, refusedByCode: refusedByCode, deferred: deferred, deferredByCode: deferredByCode,
            stale: stale, reset: reset)
    }

    var lastError: RedisError? {
        condition.lock()
        defer { condition.unlock() }
        return lastErrorValue
    }

    func close() {
        condition.lock()
        defer { condition.unlock() }
        closing = true
        condition.broadcast()
        while !finished { condition.wait() }
    }

    /// The writer thread's loop: take a batch, write it unlocked, count the outcome.
    func run() {
        condition.lock()
        var lingered = false
        while true {
            if waitersMayBeDue { tellDueWaiters() }
            if batch.isEmpty && waiting.isEmpty {
                if closing { break }
                threadIsIdle = true
                if let deadline = earliestWaiterDeadline {
                    _ = condition.wait(until: deadline)
                } else {
                    condition.wait()
                }
                threadIsIdle = false
                continue
            }
            if !closing, let retryAt, retryAt.timeIntervalSinceNow > 0 {
                _ = condition.wait(until: min(retryAt, earliestWaiterDeadline ?? retryAt))
                continue
            }
            if linger > 0, !lingered, !closing, flushWaiters == 0, waiters.isEmpty, batch.isEmpty {
                lingered = true
                threadIsLingering = true
                _ = condition.wait(until: Date(timeIntervalSinceNow: linger))
                threadIsLingering = false
                continue
            }
            lingered = false
            retryAt = nil
            fillBatch()
            let commands = batch.map { $0.command(versionedWrite: versionedWrite) }
            condition.unlock()
            let outcome = Result { () throws(RedisError) in try connection.execute(commands) }
            condition.lock()
            var notices: [RedisWriter.VersionNotice] = []
            switch outcome {
            case .success(let replies):
                lastErrorValue = nil
                var kept: [Entry] = []
                for (entry, (command, reply)) in zip(batch, zip(commands, replies)) {
                    if let version = entry.version, let result = ScriptOutcome(reply) {
                        // A versioned write: 1 written, 2 written over an unreadable version,
                        // STALE refused for a newer one; any other integer is no reply of the
                        // script's, refused below.
                        switch result {
                        case .integer(1), .integer(2):
                            pendingBytes -= entry.byteCount
                            written += 1
                            settle(entry, .written)
                            if result == .integer(2) {
                                reset += 1
                                notices.append(.init(key: entry.key, version: version, kind: .reset))
                            }
                            continue
                        case .stale(let stored):
                            pendingBytes -= entry.byteCount
                            stale += 1
                            settle(entry, .stale(storedVersion: stored))
                            if watched[entry.key] == nil {
                                notices.append(
                                    .init(key: entry.key, version: version, kind: .stale(storedVersion: stored)))
                            }
                            continue
                        case .integer: break
                        }
                    } else if entry.version == nil, !reply.isError {
                        pendingBytes -= entry.byteCount
                        written += 1
                        settle(entry, .written)
                        continue
                    }
                    let error =
                        reply.isError
                        ? connection.unexpected(reply, to: command)
                        : RedisError(
                            .errorReply, function: command.name,
                            reason: "\(connection.endpoint.address) answered a versioned write with \(reply.summary)",
                            code: "REPLY")
                    lastErrorValue = error
                    if error.kind == .unavailable {
                        kept.append(entry)
                        count(deferral: error)
                    } else {
                        pendingBytes -= entry.byteCount
                        refused += 1
                        refusedByCode[error.code ?? "", default: 0] += 1
                        settle(entry, .failed)
                    }
                }
                batch = kept
                batchKeys = Set(kept.map(\.key))
                overlap = kept.count { waiting[$0.key] != nil }
                if kept.isEmpty {
                    failures = 0
                } else {
                    // The connection dropped itself on the temporary reply: the retry connects
                    // again and checks ROLE first.
                    retry()
                }
            case .failure(let error):
                lastErrorValue = error
                // A server found not to be the primary (or busy) on connecting: deferred too.
                if error.kind == .unavailable {
                    for _ in batch { count(deferral: error) }
                }
                retry()
            }
            if let onVersion, !notices.isEmpty {
                // Unlocked: the callee may enqueue writes. A flush waits for it (`telling`), so
                // that what it waited for has been told when it returns.
                telling = true
                condition.unlock()
                for notice in notices { onVersion(notice) }
                condition.lock()
                telling = false
            }
            tellDueWaiters()
            condition.broadcast()
        }
        finished = true
        condition.broadcast()
        tellDueWaiters()
        condition.unlock()
    }

    /// Counts one operation kept for a retry because of `error` (a temporary refusal).
    private func count(deferral error: RedisError) {
        deferred += 1
        deferredByCode[error.code ?? "", default: 0] += 1
    }

    /// After a failed attempt: waits with backoff (50 ms doubling to 2 s; 0.1 s at most while a
    /// Sentinel failover holds writes) to retry the batch, or, when closing, drops and counts
    /// everything pending (close makes one attempt).
    private func retry() {
        failures += 1
        if closing {
            dropped += pendingKeys
            pendingBytes = 0
            coalesced += overlap
            overlap = 0
            batch.removeAll()
            batchKeys.removeAll()
            waiting.removeAll()
            arrivals.removeAll()
            arrivalsHead = 0
        } else {
            var delay = min(0.05 * Double(1 << min(failures - 1, 6)), 2.0)
            // Held while the Sentinels fail over (no Redis was asked): look again every 0.1 s at
            // most, so that writing resumes on the new primary soon after their announcement.
            if lastErrorValue?.code == "FAILOVER" { delay = min(delay, 0.1) }
            retryAt = Date(timeIntervalSinceNow: delay)
        }
    }

    /// Brings newer operations on the batch's keys into it (a retried batch), then adds waiting
    /// keys in arrival order up to the batch limits.
    private func fillBatch() {
        for index in batch.indices {
            if let newer = waiting.removeValue(forKey: batch[index].key) {
                pendingBytes -= batch[index].byteCount
                batch[index].operation = newer.operation
                batch[index].newest = newer.newest
                coalesced += 1
                overlap -= 1
            }
        }
        var bytes = batch.reduce(0) { $0 + $1.byteCount }
        while batch.count < Self.batchCommands && bytes < Self.batchBytes, let key = popArrival() {
            let entry = waiting.removeValue(forKey: key)!
            batch.append(entry)
            batchKeys.insert(key)
            bytes += entry.byteCount
        }
        compactArrivals()
    }

    /// Drops consumed slots, and out-of-date ones once they outnumber the live ones (a batch
    /// retried through a long outage leaves one for each key updated meanwhile), so `arrivals`
    /// stays proportional to the waiting keys.
    private func compactArrivals() {
        let unconsumed = arrivals.count - arrivalsHead
        if unconsumed > 2 * waiting.count + 1024 {
            arrivals = arrivals[arrivalsHead...].filter { waiting[$0.key]?.oldest == $0.oldest }
            arrivalsHead = 0
        } else if arrivalsHead > 1024 && arrivalsHead * 2 > arrivals.count {
            arrivals.removeFirst(arrivalsHead)
            arrivalsHead = 0
        }
    }

    /// The next waiting key in arrival order, skipping slots that are out of date.
    private func popArrival() -> String? {
        while arrivalsHead < arrivals.count {
            let slot = arrivals[arrivalsHead]
            arrivalsHead += 1
            if waiting[slot.key]?.oldest == slot.oldest { return slot.key }
        }
        return nil
    }

    /// Distinct keys waiting or in the batch.
    private var pendingKeys: Int { waiting.count + batch.count - overlap }

    /// The sequence number through which every operation has been written or dropped.
    private func writtenThrough() -> UInt64 {
        var oldest = sequence + 1
        for entry in batch { oldest = min(oldest, entry.oldest) }
        while arrivalsHead < arrivals.count {
            let slot = arrivals[arrivalsHead]
            if waiting[slot.key]?.oldest == slot.oldest {
                oldest = min(oldest, slot.oldest)
                break
            }
            arrivalsHead += 1
        }
        return oldest - 1
    }
}
