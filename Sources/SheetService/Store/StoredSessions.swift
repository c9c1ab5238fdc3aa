import Foundation
import Logging
import MicroHTTP
import RedisClient
import Synchronization

/// Sessions kept beyond this process (`--store`): loading one another instance wrote, noticing
/// a newer version, writing each change behind, and forgetting a deleted one everywhere.
extension SheetResponder {
    /// The store's copy of `id`, decoded onto this process's clocks; nil when there is none (or
    /// it cannot be read: logged, and the session counts as gone).
    func stored(_ id: String) throws(Problem) -> ArchiveCodec.Restored? {
        guard let store else { return nil }
        let bytes: [UInt8]?
        do {
            bytes = try store.load(id)
        } catch is StoreRefilling {
            metrics.storeErrors.increment()
            logger.warning("session store: \(id) is not in the store, which is being refilled after it lost its data")
            throw storeUnavailable(
                "the session store lost its data and the instances are writing back the sessions they hold, so whether session \(id) exists is not known yet; retry shortly"
            )
        } catch {
            metrics.storeErrors.increment()
            logger.error("session store: loading \(id) failed: \(error)")
            throw storeUnavailable(
                "the session store cannot be reached, so session \(id) cannot be loaded; retry shortly")
        }
        guard let bytes else { return nil }
        do {
            let restored = try ArchiveCodec.decode(
                bytes, id: id, profiles: profiles, serverNow: clock.now, wallNow: Date().timeIntervalSince1970)
            // A copy loaded from the store is a take: its writes outrank those of every copy
            // taken before it, however many events that one accepts meanwhile (StoreVersion).
            restored.box?.record.withLock { $0.version = StoreVersion.take(after: restored.version) }
            return restored
        } catch {
            // Fail closed: a record sheetd cannot read (corrupt, or written by something else) is
            // neither a session nor its absence; taking it for absent would let anyone create the
            // id anew, tokens or not. Until it expires (the session TTL) or an operator deletes the
            // key, the id answers 503.
            metrics.storeErrors.increment()
            logger.error("session store: the stored session \(id) cannot be read: \(error)")
            throw storeUnavailable(
                "the session store's record of session \(id) cannot be read, so whether it exists is not known; it expires with the session TTL"
            )
        }
    }

    /// With a store, a session held here may have moved on in another process since (a
    /// client routed there while this one was away, or a drain handed it over): where the store
    /// holds a newer version, that one replaces the copy here, keeping its open streams; where it
    /// holds a deletion, the copy goes. Called where a gesture, an animation or a stream starts,
    /// and before refusing an event as a conflict; never on `changed` (which must not wait) nor
    /// on a GET.
    func current(_ box: SessionBox) throws(Problem) -> SessionBox {
        // A store that cannot be reached leaves the copy here in charge (it is the freshest this
        // process can know of; loads of sessions it lacks are what fail then).
        guard store != nil, let newer = try? stored(box.id) else { return box }
        let streams: [FrameStream]? = box.record.withLock { r in
            guard newer.version > r.version else { return nil }
            defer { r.streams = [] }
            return r.streams
        }
        guard let streams else { return box }
        guard let replacement = newer.box else {
            // Deleted elsewhere.
            if table.get(box.id) === box { _ = table.remove(box.id) }
            let now = clock.now
            for stream in streams { stream.close(reason: "deleted", now: now) }
            throw Problem.sessionNotFound(box.id)
        }
        replacement.record.withLock { $0.streams = streams }
        _ = table.put(replacement)
        logger.debug("session \(box.id): the store held a newer version; took it over")
        return replacement
    }

    /// Deletes `id` in the store with a tombstone newer than `version` (a take: above every copy
    /// another process may still hold), and tells the other processes; the DELETE waits for the
    /// tombstone (`confirm`) before it answers.
    func bury(_ id: String, after version: Int) -> StoreWrite? {
        guard let store else { return nil }
        let tombstone = StoreVersion.take(after: version)
        let ticket = store.saveTracked(id, ArchiveCodec.tombstone(version: tombstone), version: tombstone)
        store.announce(ArchiveNotice(kind: .deleted, id: id, instance: ""))
        return StoreWrite(ticket: ticket, id: id, box: nil, version: tombstone)
    }

    /// Another process took a session over, or deleted it: the copy here is dropped and its
    /// streams are closed (`moved`: a client reconnects, through the load balancer, to where the
    /// session is now, and resumes by Last-Event-ID; `deleted`: it stops).
    func heard(_ notice: ArchiveNotice) {
        guard let box = table.get(notice.id), table.remove(box) else { return }
        let now = clock.now
        box.record.withLock { r in
            // Moved: reconnect soon (the session is being served elsewhere already).
            notice.kind == .deleted
                ? r.closeStreams(reason: "deleted", now: now) : r.closeStreams(reason: "moved", now: now, retry: 250)
        }
        logger.debug("session \(notice.id): \(notice.kind.rawValue) by another instance; dropped the copy here")
    }

    /// A session whose write lost to a newer version another process wrote (`StoreChange.outdated`):
    /// the copy here, unless it has moved on past that version since, is dropped and its streams
    /// are sent on (`moved`), as when a notice `taken` arrives (this one was missed, or is late);
    /// the next request loads the newer version. Logged once, as the copy goes; every stale write
    /// is counted (`sheetd_store_stale_total`).
    func outdated(_ id: String, version: Int, storedVersion: Int) {
        guard let box = table.get(id), box.record.withLock({ $0.version <= storedVersion }), table.remove(box) else {
            logger.debug(
                "session store: a write of session \(id) at version \(version) lost to version \(storedVersion)")
            return
        }
        let now = clock.now
        box.record.withLock { $0.closeStreams(reason: "moved", now: now, retry: 250) }
        logger.warning(
            "session store: session \(id): a write of version \(version) lost to version \(storedVersion), which another instance wrote (it took the session over, replaced or deleted it); dropped the copy here, the next request loads the newer one"
        )
    }

    /// Writes the session to the store behind, if there is one (the caller holds its lock:
    /// `r`), at the next version of this copy.
    func save(_ box: SessionBox, _ r: inout SessionRecord) {
        guard let store else { return }
        r.version = StoreVersion.next(after: r.version)
        store.save(box.id, encoding(box, r), version: r.version)
    }

    /// `save`, for a creation or replacement that waits for the write (`confirm`) before it
    /// answers: a take (`StoreVersion`), so that it outranks every copy another process holds.
    func saveTracked(_ box: SessionBox, _ r: inout SessionRecord) -> StoreWrite? {
        guard let store else { return nil }
        r.version = StoreVersion.take(after: r.version)
        let ticket = store.saveTracked(box.id, encoding(box, r), version: r.version)
        return StoreWrite(ticket: ticket, id: box.id, box: box, version: r.version)
    }

    /// With session tokens, a new session is created in the store only if no live session of its
    /// id is there: two instances that each took a `PUT` of one new id (the proxy's ring moving,
    /// or a client that reaches both) would otherwise both answer 201, each with a token of its
    /// own (289 of 300 pairs in the attack suite). The loser's copy goes, and its request is
    /// refused as a stranger's (401); a store that cannot answer is 503 and creates nothing.
    ///
    /// The id's tombstone, if it is newer than the creation's first version, is written over at a
    /// version above it (a copy of the deleted session another process still holds must not
    /// overwrite the new one).
    func createInStore(_ box: SessionBox) throws(Problem) {
        guard let store else { return }
        var newer = 0
        for _ in 0..<3 {
            let (bytes, version) = box.record.withLock { r in
                r.version = StoreVersion.take(after: max(r.version, newer))
                return (encoding(box, r), r.version)
            }
            let created: StoreCreation
            do {
                created = try store.createIfAbsent(box.id, bytes, version: version)
            } catch {
                _ = table.remove(box)
                metrics.storeErrors.increment()
                logger.warning("session store: creating \(box.id) failed: \(error)")
                throw storeUnavailable(
                    "the session store cannot be reached, so session \(box.id) was not created; retry shortly")
            }
            switch created {
            case .created: return
            case .stale(let stored): newer = stored
            case .exists:
                _ = table.remove(box)
                throw Problem.unauthorized(
                    "session \(box.id) was created by another request meanwhile: it needs its token", invalid: false)
            }
        }
        _ = table.remove(box)
        throw Problem(
            status: 409, code: "conflict",
            detail: "session \(box.id) was deleted and written again by other requests while this one created it; retry"
        )
    }

    /// The store's encoding of the session as it is now, at its current version.
    private func encoding(_ box: SessionBox, _ r: SessionRecord) -> [UInt8] {
        ArchiveCodec.encode(box, r, version: r.version, serverNow: clock.now, wallNow: Date().timeIntervalSince1970)
    }

    /// Answers with `reply` once the store has `write` (a creation, replacement or deletion):
    /// an acknowledged change is in the store before its answer leaves, so it survives this
    /// process (a `kill -9` right after the answer included). Without a store (or a write) the
    /// reply is the answer now. Otherwise the answer is deferred (`respond` sees `slot.storeWait`):
    /// the request's connection is suspended and holds no thread while the store's writer writes
    /// it, with the tracked writes of other requests in one pipeline; the answer is made when the
    /// write is confirmed, or is 503 `store-unavailable` when the store did not confirm it within
    /// its deadline (`what` and `undone` say what became of the change). `succeeded` or `failed`
    /// runs (on the store's writer thread) as soon as that is known.
    ///
    /// Where the store holds a newer version (another process wrote the session since this one
    /// had it: it took it over, or replaced it), the change is written again above that version,
    /// within the same deadline: it was asked for after that write, and wins over it.
    func answer(
        after write: StoreWrite?, _ what: String, undone: Bool, reply: HTTPResponse,
        succeeded: (@Sendable () -> Void)? = nil, failed: (@Sendable () -> Void)? = nil
    ) -> HTTPResponse {
        guard let write, store != nil else {
            succeeded?()
            return reply
        }
        TraceSlot.mine.storeWait = StoreWait(
            write: write, what: what, undone: undone, reply: reply, succeeded: succeeded, failed: failed)
        return reply
    }

    /// The deferred answer of a request that waits for its store write (`answer(after:…)`):
    /// made on the connection's thread once the write is confirmed or given up on, with what
    /// `respond` gives every answer (CORS, metrics, the request id, the access line), recorded
    /// at that moment.
    func answerLater(
        _ wait: StoreWait, route: Route, origin: String?, _ request: HTTPRequest, _ slot: TraceSlot
    ) -> HTTPResponse {
        guard let store else { return wait.reply }
        let later = DeferredResponse()
        let trace = slot.saved
        let head = request.head
        let received = request.receivedNanoseconds
        let deadline = ContinuousClock.now + .seconds(configuration.storeDeadline)
        confirm(wait.write, on: store, what: wait.what, deadline: deadline, attempt: 0) { [self] receipt in
            if receipt == .written {
                wait.succeeded?()
            } else {
                metrics.storeErrors.increment()
                wait.failed?()
            }
            later.send(making: { [self] in
                let slot = TraceSlot.mine
                slot.restore(trace)
                defer { slot.end() }
                var response =
                    receipt == .written
                    ? wait.reply
                    : problemResponse(unconfirmed(receipt, wait.what, undone: wait.undone), origin: nil)
                addCORS(&response.headers, origin: origin)
                let nanoseconds = BootClock.nanoseconds() - received
                metrics.record(route: route, status: response.status, nanoseconds: nanoseconds)
                finish(&response, head, route: route, nanoseconds: nanoseconds, slot)
                return response
            })
        }
        return HTTPResponse(deferred: later)
    }

    /// Asks the store for `write`'s receipt, within `deadline`; a stale one is written again above
    /// the stored version (twice at most) and asked for again. `then` runs once, on the store's
    /// writer thread (or on this one when the receipt is known at once).
    private func confirm(
        _ write: StoreWrite, on store: any SessionStore, what: String, deadline: ContinuousClock.Instant,
        attempt: Int, _ then: @escaping @Sendable (RedisWriter.Receipt) -> Void
    ) {
        let (seconds, attoseconds) = ContinuousClock.now.duration(to: deadline).components
        let timeout = attempt == 0 ? configuration.storeDeadline : max(0, Double(seconds) + Double(attoseconds) * 1e-18)
        store.confirm(write.ticket, timeout: timeout) { [self] receipt in
            guard case .stale(let stored) = receipt, attempt < 2 else { return then(receipt) }
            // Rare (another instance wrote the session meanwhile): the retries share the deadline.
            logger.debug("session store: \(what): the store held version \(stored), newer; writing it again above")
            confirm(
                again(write, above: stored, on: store), on: store, what: what, deadline: deadline,
                attempt: attempt + 1, then)
        }
    }

    /// The 503 `store-unavailable` of a write the store did not confirm (`receipt`), logged.
    private func unconfirmed(_ receipt: RedisWriter.Receipt, _ what: String, undone: Bool) -> Problem {
        let why =
            switch receipt {
            case .timedOut: "did not confirm it within \(configuration.storeDeadline) s"
            case .unreachable: "cannot be reached"
            case .stale: "kept newer versions other instances wrote meanwhile"
            case .failed, .written: "refused it"
            }
        logger.warning("session store: \(what): the store \(why)")
        return storeUnavailable(
            undone
                ? "the session store \(why), so \(what) did not happen; retry shortly"
                : "the session store \(why): \(what) is done on this instance and queued for the store, but not safe against this instance's failure until the store has it; repeat the request (it is idempotent) to be told when it is"
        )
    }

    /// `write` queued again at a take above `stored` (the session's state now, encoded under its
    /// lock; or its tombstone).
    private func again(_ write: StoreWrite, above stored: Int, on store: any SessionStore) -> StoreWrite {
        guard let box = write.box else {
            let version = StoreVersion.take(after: max(write.version, stored))
            let ticket = store.saveTracked(write.id, ArchiveCodec.tombstone(version: version), version: version)
            return StoreWrite(ticket: ticket, id: write.id, box: nil, version: version)
        }
        return box.record.withLock { r in
            r.version = StoreVersion.take(after: max(r.version, stored))
            let ticket = store.saveTracked(write.id, encoding(box, r), version: r.version)
            return StoreWrite(ticket: ticket, id: write.id, box: box, version: r.version)
        }
    }

    /// What the store told this process: a write of a session lost to a newer version
    /// (`outdated`), or replaced an unreadable record (logged); or the store may have lost what
    /// this process wrote (it answers again after an outage, or another server answers): then
    /// every session held here is written again, unless the store holds a newer version of it
    /// (another process moved on with it). In slices of 256, each encoded under its lock and
    /// written in one round trip.
    func storeChanged(_ change: StoreChange) {
        guard let store else { return }
        switch change {
        case let .outdated(id, version, stored):
            outdated(id, version: version, storedVersion: stored)
            return
        case let .repaired(id, version):
            logger.warning(
                "session store: session \(id): the stored record's version could not be read (corrupt, or not written by sheetd); replaced it with the copy held here, version \(version)"
            )
            return
        case .reachableAgain, .replaced:
            break
        }
        metrics.storeReturns.increment()
        // The writer may be waiting up to 2 s to retry: creations wait for it, so now.
        store.retryNow()
        let held = table.all()
        var written = 0
        do {
            for start in stride(from: 0, to: held.count, by: 256) {
                let slice = held[start..<min(start + 256, held.count)].map { box in
                    box.record.withLock { r in (id: box.id, bytes: encoding(box, r), version: r.version) }
                }
                written += try store.rewrite(slice)
            }
            metrics.sessionsRewritten.increment(by: written)
            logger.notice(
                "session store: wrote \(written) of the \(held.count) sessions held here back (\(held.count - written) were as new or newer there)"
            )
        } catch {
            metrics.sessionsRewritten.increment(by: written)
            logger.error(
                "session store: writing the sessions held here back stopped after \(written) of \(held.count): \(error); the next change of the store tries again"
            )
        }
    }

    /// Waits until the store has every write queued so far (the drain's last step; every
    /// accepted event was queued as it was answered, so nothing else needs writing).
    func flushArchive(timeout: Double) {
        guard let store else { return }
        let flushed = store.flush(timeout: timeout)
        let s = store.statistics
        logger.info(
            "session store: \(flushed ? "flushed" : "flush timed out") on drain (written \(s.written), refused \(s.refused), dropped \(s.dropped), pending \(s.pending))"
        )
    }

    /// 503 `store-unavailable` with Retry-After: the store could not say, or do, what `detail`
    /// tells; nothing was changed that the detail does not name.
    func storeUnavailable(_ detail: String) -> Problem {
        Problem(
            status: 503, code: "store-unavailable", detail: detail,
            headers: [("Retry-After", String(configuration.retryAfter))])
    }
}

/// A write a request waits for (`confirm`): its ticket, and what it writes, so that it can be
/// written again above a newer version: the session (encoded anew under its lock) or, without a
/// box, its tombstone at `version`.
struct StoreWrite: Sendable {
    let ticket: RedisWriter.Ticket
    let id: String
    let box: SessionBox?
    let version: Int
}

/// A request's answer that waits for its store write (`SheetResponder.answer(after:…)`), left by
/// its handler for `respond` in the thread's trace slot. (A class: the slot's look for one on
/// every request is then one word's.)
final class StoreWait: Sendable {
    init(
        write: StoreWrite, what: String, undone: Bool, reply: HTTPResponse, succeeded: (@Sendable () -> Void)?,
        failed: (@Sendable () -> Void)?
    ) {
        self.write = write
        self.what = what
        self.undone = undone
        self.reply = reply
        self.succeeded = succeeded
        self.failed = failed
    }

    let write: StoreWrite
    /// What the write does, for the 503's detail and the log ("creating session …").
    let what: String
    /// Whether an unconfirmed write undoes the change (a creation nobody knows the id of).
    let undone: Bool
    /// The answer once the store has the write.
    let reply: HTTPResponse
    let succeeded: (@Sendable () -> Void)?
    let failed: (@Sendable () -> Void)?
}
