import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Idempotent events (`seq`): a retried request is answered with its first answer and applied once,
// here and, through the store, on another instance; a `seq` that does not follow the session's last
// applied one is a 409 naming it, so that a client sees a session behind what it acknowledged. In
// process, and on a real redis-server.

extension ServiceIntegration {
    @Suite struct SequenceTests {}
}

/// One rule of EventSequence.swift: a request sent to a session whose last applied `seq` is 3,
/// what the session answers, and its last applied `seq` afterwards.
struct SequenceRow: Sendable, CustomTestStringConvertible {
    /// Where the session is when the request arrives.
    enum Fixture: Sendable {
        /// seq 1–3 applied, each answer kept.
        case applied
        /// seq 1–3 applied, and a request with seq 4 being applied right now.
        case applying
        /// seq 1–3 applied, the answer to 3 not kept (the record as read from a store written
        /// between an event and the write of its answer).
        case answerNotKept
    }

    let rule: String
    var fixture = Fixture.applied
    var route = "pan"
    let body: String
    /// The request's `Sheetd-Seq` field, when sent.
    var field: String? = nil
    /// 200, or the problem's status and code.
    let status: Int
    var code: String? = nil
    /// A 200 that is the answer to seq 3 again, marked `Sheetd-Replay: true`.
    var replay = false
    /// The problem names the session's last applied `seq`.
    var lastSeq: Int? = nil
    var retryAfter = false
    /// What the problem's `field` names (a 409 of the event itself names none).
    var problemField: String? = "seq"
    /// The session's last applied `seq` after the request.
    let after: Int
    /// The card moved (else the session's snapshot is what it was).
    var applied = false

    var testDescription: String { rule }

    /// A `changed` at `translation` and `time`, with `seq` when given.
    static func changed(_ translation: Double, at time: Double, seq: String?) -> String {
        #"{"phase": "changed", "translation": \#(translation), "time": \#(time)"#
            + (seq.map { #", "seq": \#($0)}"# } ?? "}")
    }

    static let rows: [SequenceRow] = [
        // seq = lastSeq + 1: applied, and the session's last seq is 4.
        SequenceRow(
            rule: "the next seq is applied", body: changed(-60, at: 1.2, seq: "4"), status: 200, after: 4,
            applied: true),
        // seq = lastSeq with its answer kept: the first answer's bytes again, marked; nothing applied.
        SequenceRow(
            rule: "the last seq again is its first answer, marked", body: changed(-40, at: 1.1, seq: "3"),
            status: 200, replay: true, after: 3),
        // A retry is recognised by its seq alone: another body with the last seq gets the first answer.
        SequenceRow(
            rule: "the last seq with another body is its first answer too", body: changed(-99, at: 1.3, seq: "3"),
            status: 200, replay: true, after: 3),
        // seq < lastSeq: a request answered already, never applied again.
        SequenceRow(
            rule: "an older seq is stale-sequence", body: changed(-60, at: 1.2, seq: "2"), status: 409,
            code: "stale-sequence", lastSeq: 3, after: 3),
        // seq > lastSeq + 1: the session lacks seq 4; the problem says where it is.
        SequenceRow(
            rule: "a seq past the next one is sequence-gap", body: changed(-60, at: 1.2, seq: "5"), status: 409,
            code: "sequence-gap", lastSeq: 3, after: 3),
        // The largest seq is a gap like any other, not a value out of range.
        SequenceRow(
            rule: "2^53 is a gap", body: changed(-60, at: 1.2, seq: "9007199254740992"), status: 409,
            code: "sequence-gap", lastSeq: 3, after: 3),
        // The seq is checked before the event: a gap whose event would be refused is the gap.
        SequenceRow(
            rule: "a gap is found before the event", body: changed(-60, at: 0.5, seq: "6"), status: 409,
            code: "sequence-gap", lastSeq: 3, after: 3),
        // A refused event does not take its seq: lastSeq stays 3, so its retry is refused the same way.
        SequenceRow(
            rule: "a refused event leaves its seq free", body: changed(-60, at: 0.5, seq: "4"), status: 409,
            code: "clock-backwards", problemField: nil, after: 3),
        // Without seq: applied as it comes; the session's last seq stays.
        SequenceRow(
            rule: "no seq: applied, the last seq unchanged", body: changed(-60, at: 1.2, seq: nil), status: 200,
            after: 3, applied: true),
        // A batch is one request: one seq for all its events.
        SequenceRow(
            rule: "a batch takes one seq",
            body:
                #"{"events": [{"phase": "changed", "translation": -60, "time": 1.2}, {"phase": "ended", "velocity": 300, "time": 1.25}], "seq": 4}"#,
            status: 200, after: 4, applied: true),
        // Show, step and dismiss are sequenced like the pan route.
        SequenceRow(
            rule: "dismiss with the next seq is applied", route: "dismiss", body: #"{"time": 2, "seq": 4}"#,
            status: 200, after: 4, applied: true),
        SequenceRow(
            rule: "show with a gap is sequence-gap", route: "show", body: #"{"detent": "full", "time": 2, "seq": 7}"#,
            status: 409, code: "sequence-gap", lastSeq: 3, after: 3),
        SequenceRow(
            rule: "step with an older seq is stale-sequence", route: "step",
            body: #"{"direction": "expand", "time": 2, "seq": 1}"#, status: 409, code: "stale-sequence",
            lastSeq: 3, after: 3),
        // Not an integer from 1 to 2^53: 400 naming seq, and nothing changes.
        SequenceRow(
            rule: "seq 0 is invalid", body: changed(-60, at: 1.2, seq: "0"), status: 400, code: "invalid-value",
            after: 3),
        SequenceRow(
            rule: "a fraction is invalid", body: changed(-60, at: 1.2, seq: "4.5"), status: 400,
            code: "invalid-value", after: 3),
        SequenceRow(
            rule: "a string is invalid", body: changed(-60, at: 1.2, seq: #""4""#), status: 400,
            code: "invalid-value", after: 3),
        SequenceRow(
            rule: "past 2^53 is invalid", body: changed(-60, at: 1.2, seq: "9007199254740994"), status: 400,
            code: "invalid-value", after: 3),
        // A request being applied (seq 4): the same seq waits for its answer (Retry-After) …
        SequenceRow(
            rule: "the seq being applied: wait", fixture: .applying, body: changed(-60, at: 1.2, seq: "4"),
            status: 409, code: "stale-sequence", lastSeq: 3, retryAfter: true, after: 4),
        // … so does the one after it (applied before 4 it would be out of order) …
        SequenceRow(
            rule: "the seq after the one being applied: wait", fixture: .applying,
            body: changed(-60, at: 1.2, seq: "5"), status: 409, code: "sequence-gap", lastSeq: 3,
            retryAfter: true, after: 4),
        // … while the last applied one is still answered, and an older one is stale at once.
        SequenceRow(
            rule: "the last applied seq while another is applied: its answer", fixture: .applying,
            body: changed(-40, at: 1.1, seq: "3"), status: 200, replay: true, after: 4),
        SequenceRow(
            rule: "an older seq while another is applied: stale", fixture: .applying,
            body: changed(-40, at: 1.1, seq: "2"), status: 409, code: "stale-sequence", lastSeq: 3, after: 4),
        // The last seq applied without its answer kept: stale-sequence (applied, nothing to replay) …
        SequenceRow(
            rule: "the last seq, its answer not kept: stale", fixture: .answerNotKept,
            body: changed(-40, at: 1.1, seq: "3"), status: 409, code: "stale-sequence", lastSeq: 3, after: 3),
        // … and the next one follows it as usual.
        SequenceRow(
            rule: "the seq after an answer not kept is applied", fixture: .answerNotKept,
            body: changed(-60, at: 1.2, seq: "4"), status: 200, after: 4, applied: true),
        // The Sheetd-Seq field numbers a request as `seq` in the body does (a proxy reads it): the
        // next one is applied, also on a plain body the fast path would otherwise take …
        SequenceRow(
            rule: "Sheetd-Seq alone: the next seq is applied", body: changed(-60, at: 1.2, seq: nil), field: "4",
            status: 200, after: 4, applied: true),
        // … the last one again is its first answer (a proxy's retry of a request whose answer it lost) …
        SequenceRow(
            rule: "Sheetd-Seq alone: the last seq again is its first answer", body: changed(-40, at: 1.1, seq: nil),
            field: "3", status: 200, replay: true, after: 3),
        SequenceRow(
            rule: "Sheetd-Seq alone: a gap is sequence-gap", route: "show", body: #"{"detent": "full", "time": 2}"#,
            field: "6", status: 409, code: "sequence-gap", lastSeq: 3, after: 3),
        // … with the body's seq, the same number: one request.
        SequenceRow(
            rule: "Sheetd-Seq and seq alike: applied", route: "dismiss", body: #"{"time": 2, "seq": 4}"#, field: "4",
            status: 200, after: 4, applied: true),
        // Two numbers that differ: which one the client meant is not known; nothing applied.
        SequenceRow(
            rule: "Sheetd-Seq and seq differ: invalid", body: changed(-60, at: 1.2, seq: "4"), field: "5",
            status: 400, code: "invalid-value", after: 3),
        // Not 1 to 2^53 in decimal digits: 400 naming the field.
        SequenceRow(
            rule: "Sheetd-Seq 0 is invalid", body: changed(-60, at: 1.2, seq: nil), field: "0", status: 400,
            code: "invalid-value", problemField: "Sheetd-Seq", after: 3),
        SequenceRow(
            rule: "Sheetd-Seq with a sign is invalid", body: changed(-60, at: 1.2, seq: nil), field: "+4", status: 400,
            code: "invalid-value", problemField: "Sheetd-Seq", after: 3),
        SequenceRow(
            rule: "Sheetd-Seq past 2^53 is invalid", body: changed(-60, at: 1.2, seq: nil), field: "9007199254740993",
            status: 400, code: "invalid-value", problemField: "Sheetd-Seq", after: 3),
        SequenceRow(
            rule: "Sheetd-Seq of letters is invalid", body: changed(-60, at: 1.2, seq: nil), field: "four", status: 400,
            code: "invalid-value", problemField: "Sheetd-Seq", after: 3),
    ]
}

extension ServiceIntegration.SequenceTests {
    /// A session dragged with seq 1–3 (client clock: replayable), in `fixture`'s state; the answer
    /// to seq 3.
    private func fixture(_ c: InProcessService, _ fixture: SequenceRow.Fixture) throws -> Response {
        #expect(try c.put("t", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        #expect(try c.pan("t", #"{"phase": "began", "time": 1, "seq": 1}"#).status == 200)
        #expect(try c.pan("t", SequenceRow.changed(-20, at: 1.05, seq: "2")).status == 200)
        let third = try c.pan("t", SequenceRow.changed(-40, at: 1.1, seq: "3"))
        #expect(third.status == 200)
        let box = try #require(c.responder.table.get("t"))
        box.record.withLock { r in
            switch fixture {
            case .applied: break
            case .applying:
                // As `reserve` leaves the record while seq 4's event is applied.
                r.applying = SequenceReservation(seq: 4, lastSeq: r.lastSeq, lastReply: r.lastReply)
                r.lastSeq = 4
                r.lastReply = nil
            case .answerNotKept: r.lastReply = nil
            }
        }
        return third
    }

    /// The session's last applied seq, as a gap tells it.
    private func lastSeq(_ c: InProcessService) throws -> Double? {
        let probe = try c.request(
            "POST", "/sessions/t/dismiss", json: #"{"time": 1000, "seq": 9007199254740992}"#)
        #expect(probe.status == 409)
        return num(probe.json?["lastSeq"])
    }

    /// Each row: what a session whose last applied seq is 3 answers a request, and where its seq is after.
    @Test(arguments: SequenceRow.rows) func sequenceRule(_ row: SequenceRow) throws {
        let c = try InProcessService()
        let third = try fixture(c, row.fixture)
        let before = try c.get("/sessions/t").text
        let r = try c.request(
            "POST", "/sessions/t/\(row.route)", headers: row.field.map { [("Sheetd-Seq", $0)] } ?? [], json: row.body)
        if row.status == 200 {
            #expect(r.status == 200, "\(r)")
            #expect(r.headers["Sheetd-Replay"] == (row.replay ? "true" : nil), "\(r)")
            if row.replay { #expect(r.text == third.text) }
        } else {
            let problem = expectProblem(r, status: row.status, code: row.code)
            #expect(problem["field"] as? String == row.problemField, "\(r.text)")
            #expect(num(problem["lastSeq"]) == row.lastSeq.map(Double.init), "\(r.text)")
            #expect((r.headers["Retry-After"] != nil) == row.retryAfter, "\(r)")
        }
        let after = try c.get("/sessions/t").text
        #expect((after != before) == row.applied, "before \(before)\nafter \(after)")
        if row.fixture == .applying {
            #expect(c.responder.table.get("t")?.record.withLock { $0.lastSeq } == row.after)
        } else {
            #expect(try lastSeq(c) == Double(row.after))
        }
    }

    /// A drag released with `seq`: the retry of the release gets the same bytes, marked, and no
    /// second animation starts; a request refused after it leaves that answer for its retry.
    @Test func retryIsAnsweredWithTheFirstAnswer() throws {
        let c = try InProcessService()
        #expect(try c.put("q", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        #expect(try c.pan("q", #"{"phase": "began", "time": 1, "seq": 1}"#).status == 200)
        #expect(try c.pan("q", #"{"phase": "changed", "translation": -50, "time": 1.05, "seq": 2}"#).status == 200)
        let first = try c.pan("q", #"{"phase": "ended", "velocity": -900, "time": 1.1, "seq": 3}"#)
        let again = try c.pan("q", #"{"phase": "ended", "velocity": -900, "time": 1.1, "seq": 3}"#)
        #expect(first.status == 200 && first.headers["Sheetd-Replay"] == nil, "\(first)")
        #expect(again.status == 200 && again.headers["Sheetd-Replay"] == "true", "\(again)")
        #expect(again.text == first.text)
        let now = try c.get("/sessions/q")
        #expect(obj(now.json?["animation"])?["id"].flatMap(num) == 1, "one animation: \(now.text)")
        // A refusal (seq 4 with no drag to change) gives its seq back and keeps seq 3's answer.
        expectProblem(
            try c.pan("q", #"{"phase": "changed", "translation": 3, "time": 2, "seq": 4}"#), status: 409,
            code: "conflict")
        let later = try c.pan("q", #"{"phase": "ended", "velocity": -900, "time": 1.1, "seq": 3}"#)
        #expect(later.headers["Sheetd-Replay"] == "true" && later.text == first.text, "\(later)")
        let metrics = try c.get("/metrics").text
        #expect(
            metrics.contains("sheetd_replays_total 2"),
            "\(metrics.split(separator: "\n").filter { $0.contains("replays") })")
    }
}

extension ServiceIntegration.StoreIntegration.StoreTests {
    /// Two instances on one redis-server, A and B, with a connection each, and a fluid session
    /// `id` on the client clock created on A at half, its drag begun there with seq 1; `body` runs
    /// with them (A, its connection, B, its connection), and both stop after it.
    private func onTwoInstances(
        session id: String, _ body: (SheetServer, HTTPConnection, SheetServer, HTTPConnection) throws -> Void
    ) throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try SheetServiceTests.startServer { $0.store = redis.url() }
            let b = try SheetServiceTests.startServer { $0.store = redis.url() }
            defer {
                a.stop()
                b.stop()
            }
            let ca = try HTTPConnection(port: a.port)
            let cb = try HTTPConnection(port: b.port)
            #expect(try ca.put(id, #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
            #expect(try ca.pan(id, #"{"phase": "began", "time": 1, "seq": 1}"#).status == 200)
            try body(a, ca, b, cb)
        }
    }

    /// The answer to a `seq` travels with the session: the retry that reaches another instance (the
    /// first one died after applying it) is answered from the store, not applied again.
    @Test func retryOnAnotherInstanceIsAnsweredFromTheStore() throws {
        try onTwoInstances(session: "s") { a, ca, b, cb in
            let first = try ca.pan("s", #"{"phase": "ended", "velocity": 1200, "time": 1.1, "seq": 2}"#)
            #expect(a.responder.store?.flush(timeout: 30) == true)
            let retried = try cb.pan("s", #"{"phase": "ended", "velocity": 1200, "time": 1.1, "seq": 2}"#)
            #expect(retried.status == 200 && retried.headers["Sheetd-Replay"] == "true", "\(retried)")
            #expect(retried.text == first.text)
        }
    }

    /// The store lost the last two acknowledged events (written behind their answers, by an
    /// instance that then died: here, the stored record put back to its state after seq 2). Read
    /// on another instance, the session answers the client's next seq with the gap and its last
    /// seq, 2; the client sends seq 3 and 4 again, which are applied (not replayed) with the same
    /// answers as the first time, and carries on.
    @Test func sessionBehindTheClientAnswersTheGap() throws {
        try onTwoInstances(session: "g") { a, ca, b, cb in
            let store = try #require(a.responder.store)
            #expect(try ca.pan("g", #"{"phase": "changed", "translation": -30, "time": 1.05, "seq": 2}"#).status == 200)
            #expect(store.flush(timeout: 30))
            let kept = try #require(try store.load("g"))
            let lost = [
                #"{"phase": "changed", "translation": -80, "time": 1.1, "seq": 3}"#,
                #"{"phase": "ended", "velocity": -700, "time": 1.15, "seq": 4}"#,
            ]
            let answered = try lost.map { try ca.pan("g", $0) }
            #expect(answered.allSatisfy { $0.status == 200 })
            #expect(store.flush(timeout: 30))
            // The store loses the last two writes: the record as it was is put back over them, with
            // a version above theirs so that the fenced write (which keeps the newest) takes it.
            store.save("g", kept, version: 1 << 50)
            #expect(store.flush(timeout: 30))

            let next = #"{"phase": "began", "time": 2, "seq": 5}"#
            let gap = expectProblem(try cb.pan("g", next), status: 409, code: "sequence-gap")
            #expect(num(gap["lastSeq"]) == 2, "\(gap)")
            for (body, first) in zip(lost, answered) {
                let again = try cb.pan("g", body)
                #expect(again.status == 200 && again.headers["Sheetd-Replay"] == nil, "\(again)")
                #expect(again.text == first.text)
            }
            #expect(try cb.pan("g", next).status == 200)
        }
    }

    /// A copy here behind the store (the session went on in another instance, and this one
    /// missed the notice) never takes a `seq` for the session: the gap it sees is checked on the
    /// stored version, where the next `seq` is applied, a retry is answered as the first time,
    /// and the copy is replaced, so the `seq` after it follows.
    @Test func staleCopyChecksTheSeqOnTheStoredVersion() throws {
        try onTwoInstances(session: "st") { a, ca, b, cb in
            #expect(
                try ca.pan("st", #"{"phase": "changed", "translation": -30, "time": 1.05, "seq": 2}"#).status == 200)
            #expect(a.responder.store?.flush(timeout: 30) == true)
            let stale = try #require(a.responder.table.get("st"))
            #expect(eventually(within: 30) { (a.responder.store as? RedisSessionStore)?.isListening == true })
            // B goes on with it (A drops its copy on B's notice), then A holds the old copy again.
            #expect(try cb.pan("st", #"{"phase": "ended", "velocity": 400, "time": 1.1, "seq": 3}"#).status == 200)
            let grabbed = try cb.pan("st", #"{"phase": "began", "time": 2, "seq": 4}"#)
            #expect(grabbed.status == 200)
            #expect(b.responder.store?.flush(timeout: 30) == true)
            #expect(eventually(within: 30) { a.responder.table.get("st") == nil })
            _ = a.responder.table.put(stale)

            let retried = try ca.pan("st", #"{"phase": "began", "time": 2, "seq": 4}"#)
            #expect(retried.headers["Sheetd-Replay"] == "true" && retried.text == grabbed.text, "\(retried)")
            let moved = try ca.pan("st", #"{"phase": "changed", "translation": 25, "time": 2.05, "seq": 5}"#)
            #expect(moved.status == 200 && moved.headers["Sheetd-Replay"] == nil, "\(moved)")
            #expect(a.responder.table.get("st") !== stale)
            #expect(try ca.pan("st", #"{"phase": "ended", "velocity": 0, "time": 2.1, "seq": 6}"#).status == 200)
        }
    }
}
