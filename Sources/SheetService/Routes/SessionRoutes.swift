import MicroHTTP
import Synchronization

/// The session resource's routes: create (`POST /sessions`), read, replace and delete
/// (`/sessions/{id}`).
extension SheetResponder {
    var busy: Problem {
        Problem(
            status: 503, code: "draining",
            detail: "the server is shutting down and takes no new sessions; retry on another instance",
            headers: [("Retry-After", String(configuration.retryAfter))])
    }

    var full: Problem {
        Problem(
            status: 503, code: "session-limit",
            detail: "the session limit (\(configuration.maxSessions)) is reached; delete idle sessions or retry later",
            headers: [("Retry-After", String(configuration.retryAfter))])
    }

    func createSession(_ request: HTTPRequest) throws -> HTTPResponse {
        if draining.load(ordering: .relaxed) { throw busy }
        let (profile, session) = try profiles.configuration(request.body)
        let parent = try stackParent(profile, for: nil, request)
        let now = clock.seconds(at: request.receivedAt)
        // 128 random bits from the system's cryptographic source, base64url: 22 characters.
        for _ in 0..<4 {
            let id = Self.generateID()
            // A stack shares its root's token: one credential opens every sheet of it.
            let token = configuration.sessionTokens ? parent?.token ?? Self.generateID() : nil
            let box = SessionBox(id: id, profile: profile, session: session, now: now, token: token)
            switch table.insertNew(box) {
            case true?:
                let write = box.record.withLock { saveTracked(box, &$0) }
                var r = snapshotResponse(201, box, at: now, token: token)
                r.headers.append(name: "Location", value: "/sessions/\(id)")
                return answer(
                    after: write, "creating session \(id)", undone: true, reply: r,
                    succeeded: { [metrics] in metrics.sessionsCreated.increment() },
                    failed: { [self] in
                        // Nobody knows the id yet: the session goes, and so does its write if it
                        // is still queued (a delete behind it, should it have reached the store).
                        _ = table.remove(box)
                        store?.remove(id)
                    })
            case false?: continue  // a 2^-128 collision: draw again
            case nil: throw full
            }
        }
        throw Problem(status: 500, code: "internal", detail: "could not draw a fresh session id")
    }

    static func generateID() -> String {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let a = rng.next() as UInt64
        let b = rng.next() as UInt64
        var out: [UInt8] = []
        out.reserveCapacity(22)
        var bits = a
        for _ in 0..<10 {
            out.append(alphabet[Int(bits & 63)])
            bits >>= 6
        }
        // 4 bits left of a, plus b: 68 bits in 12 characters (the last one partial).
        var rest = (bits & 0xF) | ((b & 0x3) << 4)
        out.append(alphabet[Int(rest)])
        rest = b >> 2
        for _ in 0..<11 {
            out.append(alphabet[Int(rest & 63)])
            rest >>= 6
        }
        return String(decoding: out, as: UTF8.self)
    }

    func putSession(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let (profile, session) = try profiles.configuration(request.body)
        if draining.load(ordering: .relaxed), table.get(id) == nil { throw busy }
        let parent = try stackParent(profile, for: id, request)
        let now = clock.seconds(at: request.receivedAt)
        guard configuration.sessionTokens else {
            return try put(SessionBox(id: id, profile: profile, session: session, now: now, token: nil), now: now)
        }
        // With tokens, the put is a compare-and-set against the copy the request was authorised
        // against: of two PUTs of one new id, one creates it and the other is authorised again,
        // against the winner's token (401 without it). A replaced session keeps its token (its
        // holder authorised the PUT with it), also when only the store held it.
        for _ in 0..<3 {
            let held = table.get(id)
            // `authorize` passed on what it saw; another PUT may have created the session since.
            if let held, !opens(held, request) {
                throw Problem.unauthorized(
                    "session \(id) was created by another request meanwhile: it needs its token", invalid: false)
            }
            let token =
                try (held ?? (store != nil ? stored(id)?.box : nil))?.token ?? parent?.token ?? Self.generateID()
            let box = SessionBox(id: id, profile: profile, session: session, now: now, token: token)
            if let result = table.put(box, replacing: held) { return try put(box, result, now: now) }
        }
        throw Problem(
            status: 409, code: "conflict",
            detail: "session \(id) was replaced by other requests while this one was being applied; retry")
    }

    /// Puts `box` under its id, replacing any session of that id.
    private func put(_ box: SessionBox, now: Double) throws -> HTTPResponse {
        try put(box, table.put(box), now: now)
    }

    /// Answers a put's result: 201 for a creation, 200 for a replacement (its streams closed), each
    /// once the store has it; 503 at the session cap.
    private func put(_ box: SessionBox, _ result: SessionTable.PutResult, now: Double) throws -> HTTPResponse {
        let id = box.id
        let token = box.token
        switch result {
        case .created:
            var write: StoreWrite?
            if configuration.sessionTokens && store != nil {
                try createInStore(box)
            } else {
                write = box.record.withLock { saveTracked(box, &$0) }
            }
            metrics.sessionsCreated.increment()
            var r = snapshotResponse(201, box, at: now, token: token)
            r.headers.append(name: "Location", value: "/sessions/\(id)")
            return answer(after: write, "creating session \(id)", undone: false, reply: r)
        case let .replaced(old):
            let version = old.record.withLock { r in
                r.closeStreams(reason: "replaced", now: now)
                return r.version
            }
            let ticket = box.record.withLock { r in
                r.version = version
                return saveTracked(box, &r)
            }
            return answer(
                after: ticket, "replacing session \(id)", undone: false,
                reply: snapshotResponse(200, box, at: now, token: token))
        case .full:
            throw full
        }
    }

    func deleteSession(_ id: String) throws -> HTTPResponse {
        guard let box = table.remove(id) else {
            // Held only in the store (by another instance before): deleted there.
            guard store != nil, let stored = try stored(id), stored.box != nil else {
                throw Problem.sessionNotFound(id)
            }
            return answer(
                after: bury(id, after: stored.version), "deleting session \(id)", undone: false,
                reply: HTTPResponse(status: 204))
        }
        let now = clock.now
        let version = box.record.withLock { r in
            r.closeStreams(reason: "deleted", now: now)
            return r.version
        }
        return answer(
            after: bury(id, after: version), "deleting session \(id)", undone: false,
            reply: HTTPResponse(status: 204))
    }

    func getSession(_ id: String) throws -> HTTPResponse {
        // A read does not ask the store (a copy out of date is dropped by the other instance's
        // notice; a GET that polls must not cost a round trip to Redis each time).
        let box = try session(id)
        let now = clock.seconds(at: .now)
        box.touch(now)
        return snapshotResponse(200, box, at: now)
    }

    /// The session's snapshot now: on the server clock, `now`; on the client clock, the time of
    /// its last event (the server cannot know the client's now).
    func snapshotResponse(_ status: Int, _ box: SessionBox, at now: Double, token: String? = nil)
        -> HTTPResponse
    {
        let (snapshot, drag, profile) = box.record.withLock { r in
            (r.sheet.snapshot(at: sessionTime(box, r, now: now)), r.sheet.dragSegment, r.profile)
        }
        // A covered sheet: drawn by its open child's recede law at the child's constant.
        let coveredBy = coveringChild(of: box, at: box.clock == .client ? snapshot.time : now).map { child, _, t in
            (child.id, t)
        }
        var w = JSONWriter(capacity: 1024)
        ReplyJSON.snapshot(
            id: box.id, profile: profile, snapshot, drag: drag, token: token, coveredBy: coveredBy, into: &w)
        return Self.json(status, w.takeBuffer())
    }
}
