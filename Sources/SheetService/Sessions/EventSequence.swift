import MicroHTTP
import SheetPhysics

// Idempotent events: a mutating request (pan, layout, fling, a batch, show, dismiss, step) may
// carry `seq`, a number its client raises by one with every request of the session it has
// acknowledged. sheetd applies the `seq` that follows the session's last applied one (`lastSeq`,
// kept with the session in memory and in the store), and no other:
//
//   seq = lastSeq + 1                 applied
//   seq = lastSeq, its answer kept    the first answer's bytes again, `Sheetd-Replay: true`; nothing applied
//   seq = lastSeq, answer not kept    409 stale-sequence (applied by an instance that stopped before storing its answer)
//   seq < lastSeq                     409 stale-sequence
//   seq > lastSeq + 1                 409 sequence-gap: the session lacks lastSeq + 1 … seq − 1
//   another request of the session    409 with Retry-After (stale-sequence for the same seq, else sequence-gap)
//     being applied
//
// The number may come in the request's `Sheetd-Seq` field instead (or as well: then the two
// agree), where a proxy can see it. Every refusal names `lastSeq`. A retry whose answer was lost
// (a proxy's timeout, an instance that died after applying it) is thus answered as the first was,
// from this instance or, through the store, from another; and a gap tells a client that the
// session is behind what it acknowledged (events are written to the store behind their answers:
// those answered in the last milliseconds before a crash can be lost), so that it sends them again.

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

    /// The request field that carries `seq` where a proxy can read it: deploy/'s proxies send a
    /// numbered event again to another instance when the first one failed with it (the retry is
    /// answered as the first was), and never an unnumbered one.
    static let sequenceFieldName = "sheetd-seq"

    /// The request's `Sheetd-Seq` field, nil when not sent: a head of none but the usual fields has
    /// not got it, and is not searched (a search is ≈ 190 instructions of a pan's fast path).
    static func sequenceField(of request: HTTPRequest) -> String? {
        request.head.otherFields > 0 ? request.headers[sequenceFieldName] : nil
    }

    /// The body's JSON of a mutating request, without its `seq`, and the request's `seq`: from the
    /// body or the `Sheetd-Seq` field (the field alone numbers the request as `seq` in the body
    /// does; with both, they must agree).
    static func takeSequence(of request: HTTPRequest) throws(Problem) -> (Int?, JSONValue?) {
        try takeSequence(json(request.body), field: sequenceField(of: request))
    }

    /// `takeSequence`, with the request's `Sheetd-Seq` field (`field`, nil when not sent).
    private static func takeSequence(_ value: JSONValue?, field: String?) throws(Problem) -> (Int?, JSONValue?) {
        let (seq, rest) = try takeSequence(value)
        guard let field else { return (seq, rest) }
        guard let number = sequence(field) else {
            throw .invalid(
                "invalid-value",
                "the Sheetd-Seq field must be the request's seq: an integer from 1 to 2^53 in decimal digits",
                field: "Sheetd-Seq")
        }
        if let seq, seq != number {
            throw .invalid(
                "invalid-value",
                "seq \(seq) and the Sheetd-Seq field \(number) differ: send the one number in both, or in the field alone",
                field: "seq")
        }
        return (number, rest)
    }

    /// A `Sheetd-Seq` value: 1 to 16 decimal digits (no sign, no spaces), from 1 to 2^53.
    private static func sequence(_ text: String) -> Int? {
        let digits = text.utf8
        guard (1...16).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
            let n = Int(text), n >= 1, n <= 1 << 53  // (in integers: 2^53 + 1 rounds to 2^53 as a Double)
        else { return nil }
        return n
    }
}

/// A `seq` being applied: the record's `lastSeq` and `lastReply` it displaced, put back if the
/// request is refused (a refused request does not take its `seq`).
struct SequenceReservation: Sendable {
    let seq: Int
    let lastSeq: Int
    let lastReply: [UInt8]?
}

extension Problem {
    /// 409 `stale-sequence`: `seq` was applied already (or is being applied: `busy`).
    static func staleSequence(_ seq: Int, lastSeq: Int, replyLost: Bool = false, busy: Bool = false) -> Problem {
        let detail =
            busy
            ? "seq \(seq) is being applied by another request; retry once that one is answered"
            : replyLost
                ? "seq \(seq) was applied, but its answer was not kept (the instance that applied it stopped first); GET the session for its state and number the next request \(seq + 1)"
                : "seq \(seq) is older than the session's last applied seq \(lastSeq): a request answered already"
        var p = Problem(
            status: 409, code: "stale-sequence", detail: detail, field: "seq",
            headers: busy ? [("Retry-After", "1")] : [])
        p.lastSeq = lastSeq
        return p
    }

    /// 409 `sequence-gap`: `seq` does not follow the session's last applied one; `applying`, the
    /// `seq` another request is applying now, if one is.
    static func sequenceGap(_ seq: Int, lastSeq: Int, applying: Int? = nil) -> Problem {
        let detail =
            if let applying {
                "seq \(seq) follows seq \(applying), which another request is applying; retry once that one is answered"
            } else {
                "seq \(seq) does not follow the session's last applied seq \(lastSeq): send seq \(lastSeq + 1) next (a client that saw seqs after \(lastSeq) acknowledged sends those requests again first)"
            }
        var p = Problem(
            status: 409, code: "sequence-gap", detail: detail, field: "seq",
            headers: applying != nil ? [("Retry-After", "1")] : [])
        p.lastSeq = lastSeq
        return p
    }
}

extension SheetResponder {
    /// Applies a request to a session: `body` applied to the session's box, once per `seq` (the
    /// rules above; without `seq`, as it comes). With a store, a conflict or a gap is tried once
    /// more on the stored version of the session if it is newer than the copy here: a drag, or a
    /// `seq`, that went on in another instance. Both the `seq` and the event are checked on the
    /// copy the event is applied to.
    func sequenced(_ box: SessionBox, _ seq: Int?, _ body: (SessionBox) throws -> HTTPResponse) throws -> HTTPResponse {
        do {
            return try once(box, seq, body)
        } catch let problem as Problem where problem.status == 409 && problem.code != "stale-sequence" && store != nil {
            let newer = try current(box)
            guard newer !== box else { throw problem }
            return try once(newer, seq, body)
        }
    }

    /// `body` on `box` once per `seq`: the answer it gave before, a problem where the `seq` cannot
    /// be applied, or `body` applied and its answer kept with the session.
    private func once(_ box: SessionBox, _ seq: Int?, _ body: (SessionBox) throws -> HTTPResponse) throws
        -> HTTPResponse
    {
        guard let seq else { return try body(box) }
        if let replayed = try reserve(box, seq) { return replayed }
        let response: HTTPResponse
        do {
            response = try body(box)
        } catch {
            box.record.withLock { r in release(&r, seq) }
            throw error
        }
        box.record.withLock { r in
            guard response.status == 200 else { return release(&r, seq) }
            guard r.applying?.seq == seq else { return }
            r.applying = nil
            // (An answer that is not whole bytes cannot be kept: its seq stays applied without it.)
            guard let bytes = response.body.completeBytes else { return }
            r.lastReply = bytes
            save(box, &r)
        }
        // Draining: as for the event itself, the store has the answer before it leaves, so the
        // retry that reaches another instance is answered from it.
        if store != nil, draining.load(ordering: .relaxed) { _ = store?.flush(timeout: 1) }
        return response
    }

    /// Takes `seq` for this request: the first answer again where it was applied, a problem
    /// where it cannot be applied; nil: reserved (the record's `lastSeq` is `seq` from now, so
    /// that the state the event writes to the store carries it), apply it.
    private func reserve(_ box: SessionBox, _ seq: Int) throws(Problem) -> HTTPResponse? {
        let outcome: Result<[UInt8]?, Problem> = box.record.withLock { r in
            // What the session had applied before any request in flight.
            let applied = r.applying.map { ($0.lastSeq, $0.lastReply) } ?? (r.lastSeq, r.lastReply)
            if seq == applied.0, seq > 0 {
                guard let reply = applied.1 else {
                    return .failure(.staleSequence(seq, lastSeq: applied.0, replyLost: true))
                }
                return .success(reply)
            }
            if seq < applied.0 { return .failure(.staleSequence(seq, lastSeq: applied.0)) }
            if let applying = r.applying?.seq {
                return .failure(
                    seq == applying
                        ? .staleSequence(seq, lastSeq: applied.0, busy: true)
                        : .sequenceGap(seq, lastSeq: applied.0, applying: applying))
            }
            if seq > applied.0 + 1 { return .failure(.sequenceGap(seq, lastSeq: applied.0)) }
            r.applying = SequenceReservation(seq: seq, lastSeq: r.lastSeq, lastReply: r.lastReply)
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

    /// A refused request gives its `seq` back: the session's last applied `seq` and its answer
    /// are what they were.
    private func release(_ r: inout SessionRecord, _ seq: Int) {
        guard let reservation = r.applying, reservation.seq == seq else { return }
        r.lastSeq = reservation.lastSeq
        r.lastReply = reservation.lastReply
        r.applying = nil
    }
}
