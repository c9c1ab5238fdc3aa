import Foundation
import Logging
import RedisClient
import Synchronization

/// A thread that asks the store who it is twice a second (INFO's `run_id`, on a connection of
/// its own) and reports when it may have lost what this process wrote: it answers again after
/// being unreachable, or another server answers (restarted, or a replica promoted). It also logs
/// the store going away and coming back, and the writes the writer dropped meanwhile, once a
/// second at most.
///
/// A write that fails shows an outage too, but only when there is one to make: an idle process
/// would not notice that Redis restarted empty, and its sessions would be gone from the store.
///
/// It also keeps the store's marker key (`marker`): a store that lost its data lost the marker
/// too, and loads that find neither a session nor the marker answer 503 instead of 404 (the
/// session may be held by an instance that has not written it back yet). After acting on a change
/// the watch sets the marker again once every instance has had time to notice and write back
/// (2 × (interval + the connection's timeout): ≤ one interval to look, ≤ one timeout before a
/// failed connection is tried again, twice over for the write-back itself). A marker gone while
/// the same server answers (flushed, or evicted under memory pressure) counts as a change; when
/// another server answers, the marker it holds (replicated, or restored from its files) is deleted
/// at once, since it was written before the writes that server lacks.
final class StoreWatch: Sendable {
    private let stopped = Mutex(false)
    private let wakeup = NSCondition()

    init(
        connection: RedisConnection, writer: RedisWriter, logger: Logger, interval: Double, marker: String,
        onChange: @escaping @Sendable (StoreChange) -> Void
    ) {
        let settle = 2 * (interval + connection.timeout)
        let thread = Thread { [self] in
            var observer = Observer(logger: logger, address: connection.endpoint.description)
            // When to set the marker again, after a change this process wrote back for.
            var markAt: Date?
            while !isStopped {
                let answer = Result { () throws(RedisError) in try connection.serverRunID() }
                if let change = observer.observe(answer, dropped: writer.statistics.dropped, at: Date()) {
                    // Another server (a promoted replica, or a restart from its files) has the
                    // marker of the one before, copied with its data, but not the writes that had
                    // not reached it: a session it lacks may still be held by an instance, so the
                    // marker goes until the write-back has had its time (a miss is 503, not 404).
                    if case .replaced = change { _ = try? RedisSessionStore.mark(marker, nil, on: connection) }
                    onChange(change)
                    markAt = Date(timeIntervalSinceNow: settle)
                } else if case .success = answer, markAt == nil,
                    case .some(let found) = try? connection.get([marker]), found[0] == nil
                {
                    logger.warning(
                        "session store: \(connection.endpoint.description) lost its marker key (flushed or evicted): writing back the sessions held here"
                    )
                    onChange(.replaced)
                    markAt = Date(timeIntervalSinceNow: settle)
                }
                if let at = markAt, at <= Date(), case .success = answer,
                    (try? RedisSessionStore.mark(marker, on: connection)) != nil
                {
                    markAt = nil
                }
                wakeup.lock()
                if !isStopped { _ = wakeup.wait(until: Date(timeIntervalSinceNow: interval)) }
                wakeup.unlock()
            }
        }
        thread.name = "store-watch"
        thread.start()
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    /// Ends the thread after its current look (at most one call's timeout).
    func stop() {
        stopped.withLock { $0 = true }
        wakeup.lock()
        wakeup.broadcast()
        wakeup.unlock()
    }

    /// What the watch has seen so far, and what each new look means.
    struct Observer {
        let logger: Logger
        let address: String
        var runID: String?
        var unreachableSince: Date?
        var droppedLogged = 0

        mutating func observe(_ answer: Result<String, RedisError>, dropped: Int, at now: Date) -> StoreChange? {
            if dropped > droppedLogged {
                logger.warning(
                    "session store: \(dropped - droppedLogged) writes dropped (the backlog is at its bound; \(dropped) in all); sessions held here are written again when the store answers"
                )
                droppedLogged = dropped
            }
            switch answer {
            case .failure(let error):
                if unreachableSince == nil {
                    unreachableSince = now
                    logger.error("session store: \(address) unreachable: \(error)")
                }
                return nil
            case .success(let id):
                defer {
                    runID = id
                    unreachableSince = nil
                }
                if let since = unreachableSince {
                    let seconds = now.timeIntervalSince(since)
                    let another = runID != nil && runID != id
                    logger.notice(
                        "session store: \(address) answers again after \(String(format: "%.1f", seconds)) s\(another ? " (another server: run_id changed)" : "")"
                    )
                    // Back, but another server (a failover followed through Sentinel): replaced.
                    return another ? .replaced : .reachableAgain(seconds: seconds)
                }
                if let runID, runID != id {
                    logger.warning(
                        "session store: \(address) is another server now (run_id changed: restarted or failed over)")
                    return .replaced
                }
                return nil
            }
        }
    }
}
