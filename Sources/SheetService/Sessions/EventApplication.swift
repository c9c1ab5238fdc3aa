import MicroHTTP
import SheetPhysics
import Synchronization

/// The events that move a card: pan gestures (one or a batch), show and dismiss, applied to the
/// session under its lock, with each animation they start announced to the session's streams.
extension SheetResponder {
    /// Applies one event to a session under its lock, at the event's time on the session's clock.
    /// Returns its outcome and the session's profile after it (a layout event gives a new one).
    /// A sheet covered by an open child takes no event but a layout change, unless the event is
    /// part of a `cascade` that closes the whole stack. `reducedMotion`: the request's own setting
    /// for the motion it starts (show, step, dismiss; a pan or fling event carries its own).
    func apply(
        _ box: SessionBox, _ event: SheetEvent, clientTime: Double?, receivedAt: ContinuousClock.Instant,
        cascade: Bool = false, reducedMotion: Bool? = nil
    ) throws(Problem) -> (SheetOutcome, SessionProfile) {
        if !cascade { try refuseIfCovered(box, event, at: clientTime) }
        let now = clock.seconds(at: receivedAt)
        box.touch(now)
        // The outcome goes from the lock to the return whole, refused under the lock: taken apart
        // after it, it was copied once and destroyed twice (400 instructions of a `changed`).
        let applied = try box.record.withLock { r throws(Problem) -> (SheetOutcome, SessionProfile) in
            // Server clock: the receive time, never before the session's last event (two
            // requests may take the lock in the other order than they were received).
            let time = box.clock == .client ? clientTime! : max(now, r.sheet.lastTime)
            let outcome = r.sheet.handle(event, at: time, reducedMotion: reducedMotion)
            r.followLayout()
            announce(outcome, box.clock, &r, now: now)
            // Every accepted event is written behind (coalesced per session, never waited for):
            // a load balancer may send the next event to another instance at any time (a drain,
            // a failure, an instance coming back), and that one must find this state.
            switch outcome.action {
            case .settle:
                save(box, &r)
                metrics.animationsStarted.increment()
            case .dragged, .unchanged: save(box, &r)
            case let .conflict(c): throw Problem(c)
            case let .invalid(e): throw Problem(e)
            }
            return (outcome, r.profile)
        }
        // Draining: the answer waits until the store has the state, so a client's next request,
        // which may reach another instance, finds it there.
        if store != nil, draining.load(ordering: .relaxed) { _ = store?.flush(timeout: 1) }
        return applied
    }

    /// Frame streams hear of an outcome under the session's lock, so they see events in order.
    @inline(__always)
    func announce(_ outcome: SheetOutcome, _ clock: SessionClock, _ r: inout SessionRecord, now: Double) {
        if let a = outcome.animation {
            let origin = clock == .server ? a.startTime : now
            r.remember(a, origin: origin)
            if !r.streams.isEmpty {
                r.streams.removeAll { $0.isDone }
                let grabbed = outcome.interrupted != nil ? outcome.snapshot : nil
                for stream in r.streams {
                    stream.begin(a, origin: origin, interrupted: grabbed, now: now, pacer: pacer)
                }
            }
        } else if outcome.interrupted != nil {
            for stream in r.streams { stream.interrupt(outcome.snapshot, now: now) }
        }
    }

    /// Applies a batch of the pan route's events (client clock) all or nothing: on a copy of the
    /// state machine, committed only when every event is accepted. A refusal names the event's
    /// index and leaves the session as it was. Returns every outcome, in order, and the session's
    /// profile after them.
    func applyBatch(
        _ box: SessionBox, _ events: [(SheetEvent, Double?)], receivedAt: ContinuousClock.Instant
    ) throws(Problem) -> ([SheetOutcome], SessionProfile) {
        if box.mayBeCovered.load(ordering: .relaxed) {
            for (i, (event, time)) in events.enumerated() {
                try refuseIfCovered(box, event, at: time, field: "events[\(i)]")
            }
        }
        let now = clock.seconds(at: receivedAt)
        let result: Result<([SheetOutcome], SessionProfile), Problem> = box.record.withLock { r in
            var sheet = r.sheet
            var outcomes: [SheetOutcome] = []
            outcomes.reserveCapacity(events.count)
            for (i, (event, time)) in events.enumerated() {
                let outcome = sheet.handle(event, at: time!)
                switch outcome.action {
                case let .conflict(c):
                    var p = Problem(c)
                    p.detail =
                        "events[\(i)] (\(event.phaseName ?? "")): \(p.detail); no event of the batch was applied"
                    p.field = "events[\(i)]"
                    return .failure(p)
                case let .invalid(e):
                    var p = Problem(e)
                    p.field = "events[\(i)].\(e.field)"
                    p.detail += "; no event of the batch was applied"
                    return .failure(p)
                case .settle, .dragged, .unchanged: outcomes.append(outcome)
                }
            }
            r.sheet = sheet
            r.followLayout()
            for outcome in outcomes { announce(outcome, box.clock, &r, now: now) }
            save(box, &r)
            return .success((outcomes, r.profile))
        }
        if store != nil, draining.load(ordering: .relaxed) { _ = store?.flush(timeout: 1) }
        box.touch(now)
        let (outcomes, profile) = try result.get()
        for outcome in outcomes where outcome.animation != nil { metrics.animationsStarted.increment() }
        return (outcomes, profile)
    }
}
