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
final class StoreWatch: Sendable {
    private let stopped = Mutex(false)
    private let wakeup = NSCondition()

    init(
        connection: RedisConnection, writer: RedisWriter, logger: Logger, interval: Double,
        onChange: @escaping @Sendable (StoreChange) -> Void
    ) {
        let thread = Thread { [self] in
            var observer = Observer(logger: logger, address: connection.endpoint.description)
            while !isStopped {
                let answer = Result { () throws(RedisError) in try connection.serverRunID() }
                if let change = observer.observe(answer, dropped: writer.statistics.dropped, at: Date()) {
                    onChange(change)
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
                    logger.notice(
                        "session store: \(address) answers again after \(String(format: "%.1f", seconds)) s\(runID != nil && runID != id ? " (another server: run_id changed)" : "")"
                    )
                    return .reachableAgain(seconds: seconds)
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
