import SheetPhysics

/// Finding a session by id (in the table, or else in the store) and its time now.
extension SheetResponder {
    /// The session `id`: from memory, or else from the store (then kept in memory).
    func session(_ id: String) throws(Problem) -> SessionBox {
        if let box = table.get(id) { return box }
        guard store != nil, let box = try stored(id)?.box else { throw Problem.sessionNotFound(id) }
        switch table.insertNew(box) {
        case true?:
            metrics.sessionsRestored.increment()
            // Copies elsewhere are out of date from now on: they drop themselves (and send their
            // streams here, through the load balancer).
            store?.announce(ArchiveNotice(kind: .taken, id: id, instance: ""))
            return box
        case false?:
            // Another request restored it meanwhile.
            return try session(id)
        case nil:
            throw full
        }
    }

    /// The session `id` as the store last had it: a copy held here is checked against the
    /// store (`current`), one loaded from it is current already.
    func currentSession(_ id: String) throws(Problem) -> SessionBox {
        if let box = table.get(id) { return try current(box) }
        return try session(id)
    }

    /// "Now" on a session's clock: the server's now, never before its last event; on the client
    /// clock, the time of its last event (the server cannot know the client's now).
    func sessionTime(_ box: SessionBox, _ r: SessionRecord, now: Double) -> Double {
        box.clock == .server ? max(now, r.sheet.lastTime) : (r.sheet.lastTime.isFinite ? r.sheet.lastTime : 0)
    }
}
