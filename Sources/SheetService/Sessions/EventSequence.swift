import MicroHTTP
import SheetPhysics

// Idempotent events: a mutating request (pan, layout, fling, a batch, show, dismiss, step) may
// carry `seq`, a number its client raises with every request of the session. sheetd applies a
// `seq` once: the same `seq` again (a retry whose answer was lost: a proxy's timeout, an instance
// that died after applying it) is answered with the first answer's bytes, from this instance or,
// through the store, from another; an older `seq` is 409 `stale-sequence`. Nothing is applied
// twice, and a retried request is answered as the first was.

extension Decode {
    /// The largest `seq` (2^53, the largest integer every JSON client holds exactly).
    static let maxSequence = 9_007_199_254_740_992.0

    /// Takes `seq` out of a request body's top-level object: the sequence number, and the body
    /// the route's own decoder reads (without it).
    static func takeSequence(_ value: JSONValue?) throws(Problem) -> (Int?, JSONValue?) {
        guard case let .object(o)? = value, let i = o.members.firstIndex(where: { $0.key == "seq" }) else {
            return (nil, value)
        }
        guard case let .number(x) = o.members[i].value, x.isFinite, x >= 1, x <= maxSequence, x == x.rounded() else {
            throw .invalid(
                "invalid-value", "seq must be an integer from 1 to 2^53, raised by the client with every request",
                field: "seq")
        }
        var rest = JSONObject()
        for (k, member) in o.members.enumerated() where k != i { rest.append(key: member.key, value: member.value) }
        return (Int(x), .object(rest))
    }
}

extension SheetResponder {
    /// Runs `body`, the application of a request, once per `seq`: a `seq` applied already is
    /// answered with its first answer (`Sheetd-Replay: true`), an older one is 409
    /// `stale-sequence`, one being applied by a concurrent request is 409 with `Retry-After`. A
    /// refused request leaves its `seq` free (a retry is refused again, not replayed). Without
    /// `seq`, `body` as it is.
    func sequenced(_ box: SessionBox, _ seq: Int?, _ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        guard let seq else { return try body() }
        if let replayed = try reserve(box, seq) { return replayed }
        let response: HTTPResponse
        do {
            response = try body()
        } catch {
            box.record.withLock { r in
                if r.lastSeq == seq, r.lastReply == nil { r.lastSeq = r.previousSeq }
            }
            throw error
        }
        guard response.status == 200, let bytes = response.body.completeBytes else { return response }
        box.record.withLock { r in
            guard r.lastSeq == seq else { return }
            r.lastReply = bytes
            save(box, &r)
        }
        return response
    }

    /// Takes `seq` for this request: the first answer again where it was applied, a problem
    /// where it cannot be applied; nil: reserved, apply it.
    private func reserve(_ box: SessionBox, _ seq: Int) throws(Problem) -> HTTPResponse? {
        let outcome: Result<[UInt8]?, Problem> = box.record.withLock { r in
            if seq == r.lastSeq, let reply = r.lastReply { return .success(reply) }
            if seq <= r.lastSeq {
                return .failure(
                    Problem(
                        status: 409, code: "stale-sequence",
                        detail: seq == r.lastSeq
                            ? "seq \(seq) is being applied by another request; retry once that one is answered"
                            : "seq \(seq) is older than the session's last applied seq \(r.lastSeq): a request answered already",
                        field: "seq", headers: seq == r.lastSeq ? [("Retry-After", "1")] : []))
            }
            r.previousSeq = r.lastSeq
            r.lastSeq = seq
            r.lastReply = nil
            return .success(nil)
        }
        guard let reply = try outcome.get() else { return nil }
        var r = HTTPResponse(status: 200, headers: Self.jsonHeaders, body: reply)
        r.headers.append(name: "Sheetd-Replay", value: "true")
        metrics.replays.increment()
        return r
    }
}
