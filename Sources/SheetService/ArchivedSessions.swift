import Foundation
import Logging
import MicroHTTP
import Synchronization

/// Sessions kept beyond this process (`--store`): loading one another instance wrote, noticing
/// a newer version, writing each change behind, and forgetting a deleted one everywhere.
extension SheetResponder {
    /// The archive's copy of `id`, decoded onto this process's clocks; nil when there is none (or
    /// it cannot be read: logged, and the session counts as gone).
    func stored(_ id: String) throws(Problem) -> ArchiveCodec.Restored? {
        guard let archive else { return nil }
        let bytes: [UInt8]?
        do {
            bytes = try archive.load(id)
        } catch {
            metrics.storeErrors.increment()
            logger.error("session store: loading \(id) failed: \(error)")
            throw Problem(
                status: 503, code: "store-unavailable",
                detail: "the session store cannot be reached, so session \(id) cannot be loaded; retry shortly",
                headers: [("Retry-After", String(configuration.retryAfter))])
        }
        guard let bytes else { return nil }
        do {
            return try ArchiveCodec.decode(
                bytes, id: id, profiles: profiles, serverNow: clock.now, wallNow: Date().timeIntervalSince1970)
        } catch {
            logger.error("session store: the stored session \(id) cannot be read: \(error)")
            return nil
        }
    }

    /// With an archive, a session held here may have moved on in another process since (a
    /// client routed there while this one was away, or a drain handed it over): where the archive
    /// holds a newer version, that one replaces the copy here, keeping its open streams; where it
    /// holds a deletion, the copy goes. Called where a gesture, an animation or a stream starts,
    /// and before refusing an event as a conflict; never on `changed` (which must not wait) nor
    /// on a GET.
    func current(_ box: SessionBox) throws(Problem) -> SessionBox {
        // A store that cannot be reached leaves the copy here in charge (it is the freshest this
        // process can know of; loads of sessions it lacks are what fail then).
        guard archive != nil, let newer = try? stored(box.id) else { return box }
        let streams: [FrameStream]? = box.record.withLock { r in
            guard newer.version > r.version else { return nil }
            defer { r.streams = [] }
            return r.streams
        }
        guard let streams else { return box }
        guard let replacement = newer.box else {
            // Deleted elsewhere.
            if store.get(box.id) === box { _ = store.remove(box.id) }
            let now = clock.now
            for stream in streams { stream.close(reason: "deleted", now: now) }
            throw Problem.sessionNotFound(box.id)
        }
        replacement.record.withLock { $0.streams = streams }
        _ = store.put(replacement)
        logger.debug("session \(box.id): the store held a newer version; took it over")
        return replacement
    }

    /// Deletes `id` in the archive with a tombstone newer than `version`, and tells the other
    /// processes.
    func bury(_ id: String, after version: Int) {
        guard let archive else { return }
        archive.save(id, ArchiveCodec.tombstone(version: Self.nextVersion(after: version)))
        archive.announce(ArchiveNotice(kind: .deleted, id: id, instance: ""))
    }

    /// Another process took a session over, or deleted it: the copy here is dropped and its
    /// streams are closed (`moved`: a client reconnects, through the load balancer, to where the
    /// session is now, and resumes by Last-Event-ID; `deleted`: it stops).
    func heard(_ notice: ArchiveNotice) {
        guard let box = store.get(notice.id), store.remove(box) else { return }
        let now = clock.now
        box.record.withLock { r in
            // Moved: reconnect soon (the session is being served elsewhere already).
            notice.kind == .deleted
                ? r.closeStreams(reason: "deleted", now: now) : r.closeStreams(reason: "moved", now: now, retry: 250)
        }
        logger.debug("session \(notice.id): \(notice.kind.rawValue) by another instance; dropped the copy here")
    }

    /// A version newer than `version`: microseconds of wall time, kept increasing, so that any
    /// process's later write outranks an earlier one (clocks of the instances in step).
    static func nextVersion(after version: Int) -> Int {
        max(version + 1, Int(Date().timeIntervalSince1970 * 1e6))
    }

    /// Writes the session to the archive, if there is one (the caller holds its lock: `r`).
    /// Versions are microseconds of wall time, kept increasing, so that any process's later
    /// write outranks an earlier one.
    func save(_ box: SessionBox, _ r: inout SessionRecord) {
        guard let archive else { return }
        r.version = Self.nextVersion(after: r.version)
        archive.save(
            box.id,
            ArchiveCodec.encode(
                box, r, version: r.version, serverNow: clock.now, wallNow: Date().timeIntervalSince1970))
    }

    /// Waits until the archive has every write queued so far (the drain's last step; every
    /// accepted event was queued as it was answered, so nothing else needs writing).
    func flushArchive(timeout: Double) {
        guard let archive else { return }
        let flushed = archive.flush(timeout: timeout)
        let s = archive.statistics
        logger.info(
            "session store: \(flushed ? "flushed" : "flush timed out") on drain (written \(s.written), failed \(s.failed), pending \(s.pending))"
        )
    }
}
