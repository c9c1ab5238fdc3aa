import MicroHTTP
import Synchronization

/// GET /sessions/{id}/frames: a session's animations as Server-Sent Events, resumed from
/// Last-Event-ID.
extension SheetResponder {
    /// GET /sessions/{id}/frames: Server-Sent Events of every animation of the session.
    func frames(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        var fps = 60
        var pace = StreamPace.realtime
        var once = false
        for (name, value) in request.queryItems {
            switch name {
            case "fps":
                guard let v = Int(value), (1...240).contains(v) else {
                    throw Problem.invalid(
                        "invalid-value", "fps must be an integer from 1 to 240, got \"\(value)\"", field: "fps")
                }
                fps = v
            case "pace":
                guard let v = StreamPace(rawValue: value) else {
                    throw Problem.invalid(
                        "invalid-value", "pace must be realtime or instant, got \"\(value)\"", field: "pace")
                }
                pace = v
            case "access_token":
                // A credential, checked before dispatch (and ignored when access control is
                // off); its form is the contract's either way, so a reconnection's 204 never
                // answers a malformed one.
                guard (1...256).contains(value.utf8.count) else {
                    throw Problem.invalid(
                        "invalid-value", "access_token must be 1 to 256 characters", field: "access_token")
                }
            case "once":
                guard value == "true" || value == "false" || value.isEmpty else {
                    throw Problem.invalid(
                        "invalid-value", "once must be true or false, got \"\(value)\"", field: "once")
                }
                once = value != "false"
            default:
                throw Problem.invalid(
                    "unknown-field",
                    "unknown query parameter \"\(name)\"; the stream takes fps, pace, once and access_token",
                    field: name)
            }
        }
        // Last-Event-ID: "n:k", the last frame the client saw (a reconnecting EventSource).
        let lastEventID = request.headers["last-event-id"]
        var resume: (animation: Int, index: Int)?
        if let parts = lastEventID?.split(separator: ":", omittingEmptySubsequences: false), parts.count == 2,
            let n = Int(parts[0]), let k = Int(parts[1]), n >= 0, k >= 0
        {
            resume = (n, k)
        }
        let box: SessionBox
        do {
            box = try currentSession(id)
        } catch {
            // A reconnection to a session that is gone: 204 is how an EventSource is told to stop
            // reconnecting (WHATWG HTML §9.2); a first connection gets the 404.
            guard error.status == 404, lastEventID != nil else { throw error }
            return Self.noMoreEvents
        }
        let http = HTTPStream(bufferLimit: configuration.streamBufferBytes)
        let stream = FrameStream(
            http: http, fps: fps, pace: pace, once: once, profile: box.record.withLock { $0.profile },
            sessionID: box.id, metrics: metrics, budget: instantBudget)
        let now = clock.now
        if pace == .instant {
            // Frames are made as the client reads them, on its connection's thread, within the
            // server's instant frame budget (beyond it, on the pacer's, at the time it books).
            let clock = self.clock
            let pacer = self.pacer
            http.onDrained { stream.refill(now: clock.now, pacer: pacer) }
        }
        let client = streamLimits.client(of: request.head)
        let opened: Result<Bool, Problem> = box.record.withLock { r in
            let known = resume.flatMap { resume in r.recent.first { $0.id == resume.animation } }
            if once, let resume, let known, resume.index >= known.frameCount(fps: fps) - 1 {
                // A `once` stream whose client has its animation's last frame (and its `settled`,
                // which carries that frame's id): nothing is left to send, so the reconnection ends
                // with 204 instead of a `settled` and a close that the client would reconnect to
                // again and again.
                return .success(false)
            }
            r.streams.removeAll { $0.isDone }
            if let refusal = streamLimits.admit(client: client, sessionStreams: r.streams.count) {
                return .failure(refusal)
            }
            r.streams.append(stream)
            let t = sessionTime(box, r, now: now)
            let running = r.sheet.animation(at: t)
            let origin = r.origin
            if let resume, let known {
                if known === running {
                    stream.begin(known, origin: origin, after: resume.index, interrupted: nil, now: now, pacer: pacer)
                    return .success(true)
                }
                stream.sendSettled(known, now: now)
            } else if lastEventID != nil {
                stream.sendSnapshot(r.sheet.snapshot(at: t), now: now)
            }
            if let running { stream.begin(running, origin: origin, interrupted: nil, now: now, pacer: pacer) }
            return .success(true)
        }
        guard try opened.get() else { return Self.noMoreEvents }
        box.openStreams.wrappingAdd(1, ordering: .relaxed)
        metrics.streamsOpen.increment()
        let metrics = self.metrics
        let limits = streamLimits
        http.onClose {
            box.openStreams.wrappingSubtract(1, ordering: .relaxed)
            metrics.streamsOpen.decrement()
            limits.release(client: client)
        }
        pacer.schedule(.keepAlive, stream, at: now + configuration.keepAliveInterval, generation: 0)
        var headers = HTTPHeaders()
        headers.append(name: "Content-Type", value: "text/event-stream")
        headers.append(name: "Cache-Control", value: "no-cache")
        headers.append(name: "X-Accel-Buffering", value: "no")
        return HTTPResponse(status: 200, headers: headers, stream: http)
    }

    /// The answer to a stream reconnection that has nothing more to hear: 204 No Content, after
    /// which an EventSource stops reconnecting (WHATWG HTML §9.2.3).
    static let noMoreEvents = HTTPResponse(status: 204, headers: HTTPHeaders(), body: [])
}
