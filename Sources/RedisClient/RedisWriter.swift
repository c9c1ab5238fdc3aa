import Foundation

/// Write-behind to Redis: callers enqueue a SET or DEL and return at once; one background thread
/// writes them.
///
/// Writes are coalesced by key (only the latest operation on a key is sent; a DEL after a SET
/// replaces it) and pipelined in batches. While Redis is down the thread retries with backoff
/// (50 ms doubling to 2 s) and keeps only the latest operation per key, at most `maxPending` keys:
/// operations on further keys are dropped and counted as failed (newer operations on a key already
/// waiting, or in the batch being retried, are always kept). An operation Redis refuses (an
/// error reply, e.g. OOM) is counted as failed and not retried.
///
/// The thread uses the connection it is given; give it its own `RedisConnection` so that its
/// retries never make request-path calls wait for the connection's mutex.
public final class RedisWriter: Sendable {
    /// What the writer has done so far.
    public struct Statistics: Sendable, Hashable {
        /// Operations Redis accepted.
        public var written: Int
        /// Operations dropped: over `maxPending`, refused by Redis, enqueued after `close()`, or
        /// left when `close()` could not reach Redis.
        public var failed: Int
        /// Keys waiting to be written, including the batch in flight.
        public var pending: Int
        /// Operations replaced by a later one on the same key before being sent.
        public var coalesced: Int
    }

    private let queue: WriteQueue

    /// Starts the writer thread, which writes through `connection`; at most `maxPending` keys wait.
    ///
    /// `linger`: seconds the thread waits, once woken by new work, before it takes a batch, so that
    /// a burst of writes to the same keys (a gesture's 60 Hz events) goes out as one write per key
    /// and many keys share one pipeline; `flush` and `close` cut it short. 0 writes at once.
    public init(connection: RedisConnection, maxPending: Int = 1_000_000, linger: Double = 0) {
        queue = WriteQueue(connection: connection, maxPending: max(1, maxPending), linger: max(0, linger))
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

    /// Enqueues DEL `key`; never waits for Redis.
    public func delete(_ key: String) {
        queue.enqueue(key, .delete)
    }

    /// Waits until every operation enqueued before this call has been written (or dropped), for up
    /// to `timeout` seconds; a writer waiting to retry retries at once. False on timeout.
    public func flush(timeout: Double) -> Bool {
        queue.flush(timeout: timeout)
    }

    /// What the writer has done so far.
    public var statistics: Statistics { queue.statistics }

    /// Why the last batch failed or Redis refused part of it, or nil when it was all written (for
    /// health checks).
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

    /// An operation on a key and the sequence number of the oldest operation it replaced.
    private struct Entry {
        let key: String
        var operation: WriteOperation
        let oldest: UInt64

        var command: RedisCommand {
            switch operation {
            case .set(let value, let ttlSeconds): .set(key, value, ttlSeconds: ttlSeconds)
            case .delete: .delete(key)
            }
        }

        var byteCount: Int {
            if case .set(let value, _) = operation { return key.utf8.count + value.count }
            return key.utf8.count
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
    private var failed = 0
    private var coalesced = 0
    private var lastErrorValue: RedisError?
    private var failures = 0
    private var retryAt: Date?
    private var threadIsIdle = false
    /// Seconds to wait for more work before taking a batch (see `RedisWriter.init`).
    private let linger: Double
    /// Callers waiting in `flush`: the thread does not linger for them.
    private var flushWaiters = 0
    private var closing = false
    private var finished = false

    /// At most this many commands, or about this many bytes, go in one pipeline.
    private static let batchCommands = 512
    private static let batchBytes = 4 << 20

    init(connection: RedisConnection, maxPending: Int, linger: Double) {
        self.connection = connection
        self.maxPending = maxPending
        self.linger = linger
    }

    func enqueue(_ key: String, _ operation: WriteOperation) {
        condition.lock()
        defer { condition.unlock() }
        if closing {
            failed += 1
            return
        }
        sequence += 1
        if waiting[key] != nil {
            waiting[key]!.operation = operation
            coalesced += 1
            return
        }
        let inBatch = batchKeys.contains(key)
        if !inBatch && pendingKeys >= maxPending {
            failed += 1
            return
        }
        waiting[key] = Entry(key: key, operation: operation, oldest: sequence)
        arrivals.append((key, sequence))
        if inBatch { overlap += 1 }
        if threadIsIdle { condition.broadcast() }
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
        while writtenThrough() < target && !finished {
            if !condition.wait(until: deadline) { break }
        }
        return writtenThrough() >= target
    }

    var statistics: RedisWriter.Statistics {
        condition.lock()
        defer { condition.unlock() }
        return .init(written: written, failed: failed, pending: pendingKeys, coalesced: coalesced)
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
            if batch.isEmpty && waiting.isEmpty {
                if closing { break }
                threadIsIdle = true
                condition.wait()
                threadIsIdle = false
                continue
            }
            if !closing, let retryAt, retryAt.timeIntervalSinceNow > 0 {
                _ = condition.wait(until: retryAt)
                continue
            }
            if linger > 0, !lingered, !closing, flushWaiters == 0, batch.isEmpty {
                lingered = true
                _ = condition.wait(until: Date(timeIntervalSinceNow: linger))
                continue
            }
            lingered = false
            retryAt = nil
            fillBatch()
            let commands = batch.map(\.command)
            condition.unlock()
            let outcome = Result { () throws(RedisError) in try connection.execute(commands) }
            condition.lock()
            switch outcome {
            case .success(let replies):
                lastErrorValue = nil
                for (command, reply) in zip(commands, replies) {
                    if case .error(let message) = reply {
                        failed += 1
                        lastErrorValue = RedisError(
                            .errorReply, function: command.name,
                            reason: "\(connection.endpoint.address) replied \"\(message)\"")
                    } else {
                        written += 1
                    }
                }
                batch.removeAll(keepingCapacity: true)
                batchKeys.removeAll(keepingCapacity: true)
                overlap = 0
                failures = 0
            case .failure(let error):
                lastErrorValue = error
                failures += 1
                if closing {
                    failed += pendingKeys
                    coalesced += overlap
                    overlap = 0
                    batch.removeAll()
                    batchKeys.removeAll()
                    waiting.removeAll()
                    arrivals.removeAll()
                    arrivalsHead = 0
                } else {
                    let delay = min(0.05 * Double(1 << min(failures - 1, 6)), 2.0)
                    retryAt = Date(timeIntervalSinceNow: delay)
                }
            }
            condition.broadcast()
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Brings newer operations on the batch's keys into it (a retried batch), then adds waiting
    /// keys in arrival order up to the batch limits.
    private func fillBatch() {
        for index in batch.indices {
            if let newer = waiting.removeValue(forKey: batch[index].key) {
                batch[index].operation = newer.operation
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
