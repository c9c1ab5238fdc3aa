import MicroHTTP
import SheetPhysics

/// The routes that move a card: `POST /sessions/{id}/pan` (one event or a batch), `show` and
/// `dismiss`; each decodes its body, applies it (`EventApplication.swift`) and answers the result.
extension SheetResponder {
    func resultResponse(
        _ outcome: SheetOutcome, phase: String?, profile: SessionProfile, batch: BatchSummary? = nil, fps: Int?,
        cascade: [String]? = nil
    ) -> HTTPResponse {
        // `?frames=FPS`: the animation running after the request, the one it started or one already running.
        let frames = fps.map { InlineFrames(fps: $0, animation: outcome.animation ?? outcome.snapshot.animation) }
        // An `ended` reply is ≈ 490 bytes, and a string reserves room for escaping every byte
        // (6 per byte) before it is written: with 512, a quarter of the `ended` replies grew the
        // buffer (a second allocation and a copy). 960 with the buffer object's header stays
        // within glibc's per-thread cache (up to 1,032 bytes); 1,024 missed it (≈ 360 more
        // instructions per allocation).
        return Self.json(200, capacity: frames == nil ? 960 : 4096) { w in
            ReplyJSON.result(
                outcome, phase: phase, profile: profile, batch: batch, frames: frames, cascade: cascade, into: &w)
        }
    }

    func pan(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let held = table.get(id)
        if let held, Decode.sequenceField(of: request) == nil,
            let direct = Decode.panDirect(request.body, preset: held.preset, clock: held.clock)
        {
            // The common case, a session held here and a plain body (no `seq`, in the body or the
            // field): read without a JSON tree (≈ 100 ns against ≈ 600 ns).
            let fps = try Self.framesQuery(request)
            let event = SheetEvent.pan(direct.0)
            // A `changed` goes on from the copy here; any other event checks the store's version first.
            let box = event.isChanged ? held : try current(held)
            return try sequenced(box, nil) { b in
                try panEvent(b, (event, direct.1), fps: fps, receivedAt: request.receivedAt)
            }
        }
        // The general way, in the order that gives the same error for a bad body as always
        // (invalid JSON before a missing session).
        let (seq, json) = try Decode.takeSequence(of: request)
        var box = try held ?? session(id)
        // As on show and dismiss: the body's JSON, the session, the query, then the fields.
        let fps = try Self.framesQuery(request)
        if let events = try Decode.panBatch(json, preset: box.preset, clock: box.clock) {
            if held != nil, events.contains(where: { !$0.0.isChanged }) { box = try current(box) }
            return try sequenced(box, seq) { b in
                try panBatch(b, events, fps: fps, receivedAt: request.receivedAt)
            }
        }
        let decoded = try Decode.panRouteEvent(json, preset: box.preset, clock: box.clock)
        if held != nil, !decoded.0.isChanged { box = try current(box) }
        return try sequenced(box, seq) { b in
            try panEvent(b, decoded, fps: fps, receivedAt: request.receivedAt)
        }
    }

    /// One event of the pan route, applied and answered.
    private func panEvent(
        _ box: SessionBox, _ decoded: (SheetEvent, Double?), fps: Int?, receivedAt: ContinuousClock.Instant
    ) throws -> HTTPResponse {
        let (event, time) = decoded
        let (outcome, profile) = try apply(box, event, clientTime: time, receivedAt: receivedAt)
        return resultResponse(outcome, phase: event.phaseName, profile: profile, fps: fps)
    }

    /// A batch of the pan route's events: applied all or nothing, answered with the last event's result and
    /// what the ones before it started.
    func panBatch(
        _ box: SessionBox, _ events: [(SheetEvent, Double?)], fps: Int?, receivedAt: ContinuousClock.Instant
    ) throws -> HTTPResponse {
        // (As for a single event, anything but a batch of `changed` checked the store's version
        // first: a gesture may have moved on in another instance.)
        let (outcomes, profile) = try applyBatch(box, events, receivedAt: receivedAt)
        let last = outcomes[outcomes.count - 1]
        var summary = BatchSummary(count: outcomes.count, settles: [], drag: nil)
        for i in outcomes.indices {
            let o = outcomes[i]
            if let d = o.drag { summary.drag = d }
            if o.relaid { summary.relaid = true }
            guard i < outcomes.count - 1, let a = o.animation, let snap = o.snap else { continue }
            summary.settles.append((i, events[i].0.phaseName ?? "", snap, a, o.reducedMotion))
            summary.drag = nil  // a drag begun before a release is over
        }
        if last.snapshot.state != .dragging { summary.drag = nil }
        return resultResponse(
            last, phase: events[events.count - 1].0.phaseName, profile: profile, batch: summary, fps: fps)
    }

    /// `?frames=FPS` on pan, show and dismiss: the answer carries the frames of the animation
    /// running after the request, sampled at FPS (1…240), so a client plays sheetd's own curve on
    /// its clock without a stream. nil: not asked.
    static func framesQuery(_ request: HTTPRequest) throws(Problem) -> Int? {
        guard request.head.query != nil else { return nil }
        var fps: Int?
        for (name, value) in request.queryItems {
            guard name == "frames" else {
                throw Problem.invalid(
                    "unknown-field", "unknown query parameter \"\(name)\"; this route takes frames (1 to 240)",
                    field: name)
            }
            guard let v = Int(value), (1...240).contains(v) else {
                throw Problem.invalid(
                    "invalid-value", "frames must be an integer from 1 to 240 (frames per second), got \"\(value)\"",
                    field: "frames")
            }
            fps = v
        }
        return fps
    }

    func show(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        try cardRoute(id, request) { json, clock throws(Problem) in
            let (detent, time, reduced) = try Decode.show(json, clock: clock)
            return (.show(detent: detent), time, reduced)
        }
    }

    /// `POST /sessions/{id}/step`: the accessibility step, answered with what a screen reader
    /// announces and the value it reads.
    func step(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        try cardRoute(id, request) { json, clock throws(Problem) in
            let (expand, time, reduced) = try Decode.step(json, clock: clock)
            return (.step(expand: expand), time, reduced)
        }
    }

    /// `POST /sessions/{id}/dismiss`; with `{"cascade": true}` the open sheets stacked on it are
    /// dismissed with it, at the same instant, top-most first, and the answer names them.
    func dismiss(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let (seq, json) = try Decode.takeSequence(of: request)
        let box = try currentSession(id)
        let fps = try Self.framesQuery(request)
        let (time, cascade, reduced) = try Decode.dismiss(json, clock: box.clock)
        return try sequenced(box, seq) { b in
            var closed: [String]?
            if cascade {
                let children = openChildren(of: b, at: time)
                for child in children.reversed() {
                    _ = try apply(
                        child, .dismiss, clientTime: time, receivedAt: request.receivedAt, cascade: true,
                        reducedMotion: reduced)
                }
                closed = children.map(\.id)
            }
            let (outcome, profile) = try apply(
                b, .dismiss, clientTime: time, receivedAt: request.receivedAt, cascade: cascade, reducedMotion: reduced)
            return resultResponse(outcome, phase: nil, profile: profile, fps: fps, cascade: closed)
        }
    }

    /// Show, step and dismiss, one way: the body's JSON (and its `seq`), the session, the query,
    /// then the route's own fields (`decode`); the event applied once per `seq` and answered.
    private func cardRoute(
        _ id: String, _ request: HTTPRequest,
        decode: (JSONValue?, SessionClock) throws(Problem) -> (SheetEvent, Double?, reducedMotion: Bool?)
    ) throws -> HTTPResponse {
        let (seq, json) = try Decode.takeSequence(of: request)
        let box = try currentSession(id)
        let fps = try Self.framesQuery(request)
        let (event, time, reduced) = try decode(json, box.clock)
        return try sequenced(box, seq) { b in
            let (outcome, profile) = try apply(
                b, event, clientTime: time, receivedAt: request.receivedAt, reducedMotion: reduced)
            return resultResponse(outcome, phase: nil, profile: profile, fps: fps)
        }
    }
}
