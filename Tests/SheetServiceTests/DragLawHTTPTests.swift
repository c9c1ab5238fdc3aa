// The drag law through the service, answered in process: batches of pan events on the client
// clock, each answer checked against the client's evaluation (DragLawClient.swift), and the batch
// refusals.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - 3. Over HTTP, in batches

extension ServiceIntegration {
    @Suite struct DragLawHTTPTests {}
}

/// One pan event of a batch.
private struct BatchEvent {
    var phase: String
    var translation: Double?
    var time: Double
}

/// `{"events": [...]}`, written with the service's writer (numbers exactly as a client's
/// shortest round-trip formatting).
private func batchBody(_ events: [BatchEvent]) -> [UInt8] {
    var w = JSONWriter()
    w.beginObject()
    w.key("events")
    w.beginArray()
    for e in events {
        w.beginObject()
        w.key("phase")
        w.string(e.phase)
        if let t = e.translation {
            w.key("translation")
            w.number(t)
        }
        w.key("time")
        w.number(e.time)
        w.endObject()
    }
    w.endArray()
    w.endObject()
    return w.takeBytes()
}

private func postBatch(_ c: some HTTPClient, _ id: String, _ events: [BatchEvent]) throws -> Response {
    try c.request("POST", "/sessions/\(id)/pan", body: batchBody(events))
}

/// The answer's body, read as a client reads it.
private func parsed(_ r: Response) throws -> JSONValue { try JSONReader.parse(r.body) }

/// A client checking a batch answer against its own evaluation.
private func expectCard(
    _ answer: JSONValue, _ card: ClientCard, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    for (name, client) in [
        ("constant", card.constant), ("dimmerAlpha", card.dimmerAlpha), ("progress", card.progress),
    ] {
        let served = answer[name]?.double
        #expect(
            served.map { abs($0 - client) <= 1e-9 } == true,
            "\(context): \(name) served \(String(describing: served)), client \(client)",
            sourceLocation: sourceLocation)
    }
}

/// Creates `id` from `config` on the client clock, begins a drag, then sends `changed` events in
/// batches of 1 to 8 (a began inside one at `regrabAt`), each answer checked against the client's
/// evaluation of the `drag` and `dragLaw` it was given. Returns the client's law.
@discardableResult
private func dragInBatches(
    _ c: some HTTPClient, id: String, config: String, model: SheetModel, seed: UInt64, changes: Int = 200,
    regrabAt: Int? = nil
) throws -> (law: ClientLaw, finishes: Int, time: Double) {
    let created = try c.put(id, config)
    #expect(created.status == 201, "\(created)")
    let lawJSON = try #require(try parsed(created)["dragLaw"])
    #expect(lawJSON == (try rendered(model.dragLaw)), "\(id): the snapshot's law is the engine's")
    let law = try ClientLaw(json: lawJSON)

    var time = 0.0
    let began = try c.pan(id, #"{"phase": "began", "time": 0}"#)
    #expect(began.status == 200, "\(began)")
    let beganJSON = try parsed(began)
    #expect(beganJSON["dragLaw"] == lawJSON, "\(id): began carries the law again")
    let dragJSON = try #require(beganJSON["drag"], "\(id): began carries the drag")
    var segment = try ClientSegment(json: dragJSON)
    #expect(beganJSON["constant"]?.double == segment.start)
    // A snapshot taken while dragging carries the segment too.
    let got = try parsed(try c.get("/sessions/\(id)"))
    #expect(got["drag"] == dragJSON)
    #expect(got["dragLaw"] == lawJSON)

    var gen = Gen(seed: seed)
    var sent = 0
    var finishes = 0
    var regrabbed = false
    var last: ClientCard?
    while sent < changes {
        var events: [BatchEvent] = []
        var cards: [ClientCard] = []
        var regrabBase: Double?
        let size = min(1 + gen.int(8), changes - sent)
        while cards.count < size {
            if let at = regrabAt, !regrabbed, sent + cards.count >= at, let previous = cards.last ?? last {
                // A began inside the batch (a lost ended): the answer carries its segment.
                regrabbed = true
                let base = gen.uniform(-200, 200)
                time += 0.01
                events.append(BatchEvent(phase: "began", translation: base, time: time))
                segment.start = previous.constant
                segment.base = base
                regrabBase = base
                continue
            }
            let t = min(max(gen.translation(segment, law), -1e6), 1e6)
            time += 0.01
            events.append(BatchEvent(phase: "changed", translation: t, time: time))
            let card = law.card(t, in: segment)
            cards.append(card)
            if card.finishes { break }  // the drag ends here: the batch does too
        }
        let r = try postBatch(c, id, events)
        sent += cards.count
        let context = "\(id) after \(sent) changed events"
        #expect(r.status == 200, "\(context): \(r)")
        let answer = try parsed(r)
        #expect(answer["phase"] == "changed", "\(context)")
        #expect(answer["batch"]?["count"] == .number(Double(events.count)), "\(context)")
        let card = cards[cards.count - 1]
        last = card
        if let base = regrabBase {
            let served = try ClientSegment(json: try #require(answer["drag"], "\(context): the began's segment"))
            #expect(served.start == segment.start && served.base == base, "\(context): \(served)")
        } else {
            #expect(answer["drag"] == nil, "\(context): a batch without began carries no segment")
        }
        if card.finishes {
            // transition: the answer is the settle, from where the client put the card.
            finishes += 1
            // (Resting at once where the animation is over at its start: the card was at the
            // detent, or a few ulps from it.)
            let state = answer["state"]?.string
            let end = (answer["animation"]?["startTime"]?.double ?? 0) + (answer["animation"]?["duration"]?.double ?? 0)
            #expect(
                state == "animating" || (state == "resting" && end <= time), "\(context): \(state ?? "-") \(answer)")
            #expect(answer["snap"]?["detent"]?.string == segment.finish?.detent, "\(context)")
            #expect(answer["animation"]?["from"]?.double == card.constant, "\(context)")
            // The next drag catches the card mid-flight: a batch of one began gives its segment.
            time += 0.05
            let again = try postBatch(c, id, [BatchEvent(phase: "began", translation: 0, time: time)])
            #expect(again.status == 200, "\(again)")
            let againJSON = try parsed(again)
            segment = try ClientSegment(json: try #require(againJSON["drag"], "\(context): began's segment"))
            #expect(againJSON["dragLaw"] == lawJSON)
            last = nil
            continue
        }
        #expect(answer["state"] == "dragging", "\(context)")
        expectCard(answer, card, context)
    }
    if let at = regrabAt { #expect(regrabbed, "no began at \(at)") }
    return (law, finishes, time)
}

extension ServiceIntegration.DragLawHTTPTests {
    @Test func fluidBatchesMatchTheClient() throws {
        let c = try InProcessService()
        let g = try Geometry(height: 900, safeAreaTop: 50, safeAreaBottom: 30)
        let model = try SheetModel(preset: .fluid, geometry: g, options: [("maxDimAlpha", .number(0.45))])
        let config = #"""
            {"preset": "fluid", "clock": "client", "initialDetent": "half",
             "geometry": {"height": 900, "safeAreaTop": 50, "safeAreaBottom": 30}, "options": {"maxDimAlpha": 0.45}}
            """#
        let (_, _, time) = try dragInBatches(
            c, id: "dl-fluid", config: config, model: model, seed: 0xF1, regrabAt: 100)

        // Refused batches change nothing: a bad event at index 3 (400), then a conflict at index 2
        // (409: a changed after the batch's own ended).
        let before = try c.get("/sessions/dl-fluid")
        #expect(before.status == 200)
        let t = time + 1
        let bad = """
            {"events": [{"phase": "changed", "translation": 1, "time": \(t)},
                        {"phase": "changed", "translation": 2, "time": \(t + 0.01)},
                        {"phase": "changed", "translation": 3, "time": \(t + 0.02)},
                        {"phase": "changed", "translation": "far", "time": \(t + 0.03)}]}
            """
        let invalid = try c.request("POST", "/sessions/dl-fluid/pan", json: bad)
        let invalidProblem = expectProblem(invalid, status: 400, code: "invalid-value")
        #expect(invalidProblem["field"] as? String == "events[3].translation", "\(invalid)")
        #expect(try c.get("/sessions/dl-fluid").body == before.body)

        let conflicting = try postBatch(
            c, "dl-fluid",
            [
                BatchEvent(phase: "changed", translation: 40, time: t),
                BatchEvent(phase: "ended", translation: 40, time: t + 0.01),
                BatchEvent(phase: "changed", translation: 50, time: t + 0.02),
            ])
        let conflict = expectProblem(conflicting, status: 409, code: "conflict")
        #expect(conflict["field"] as? String == "events[2]", "\(conflicting)")
        #expect((conflict["detail"] as? String)?.contains("events[2]") == true, "\(conflicting)")
        #expect(try c.get("/sessions/dl-fluid").body == before.body)

        // The drag goes on where it was.
        let after = try postBatch(c, "dl-fluid", [BatchEvent(phase: "changed", translation: 0, time: t)])
        #expect(after.status == 200, "\(after)")
        #expect(try parsed(after)["state"] == "dragging")

        // A session on the server clock takes no batch.
        #expect(try c.put("dl-server", #"{"preset": "fluid", "initialDetent": "half"}"#).status == 201)
        let onServerClock = try postBatch(c, "dl-server", [BatchEvent(phase: "began", translation: 0, time: 1)])
        let serverProblem = expectProblem(onServerClock, status: 400, code: "invalid-value")
        #expect(serverProblem["field"] as? String == "events", "\(onServerClock)")
        #expect(try parsed(try c.get("/sessions/dl-server"))["state"] == "resting")
    }

    @Test func transitionBatchesMatchTheClient() throws {
        let c = try InProcessService()
        let model = try SheetModel(preset: .transition)
        let (law, finishes, _) = try dragInBatches(
            c, id: "dl-transition", config: #"{"preset": "transition", "clock": "client", "initialDetent": "mini"}"#,
            model: model, seed: 0x7A)
        #expect(law.finishThreshold == 0.8)
        #expect(finishes >= 3, "the drags reached the finish point \(finishes) times")
    }
}
