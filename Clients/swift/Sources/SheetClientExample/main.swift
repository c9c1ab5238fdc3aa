// A whole sheetd session driven through the client that swift-openapi-generator makes from the
// repository's openapi.yaml (the build plugin; async-http-client, so frame streams stream):
// every preset created with options, shown, dragged (began, changed, ended), its snap and
// animation read typed, its frames streamed, numbered events (`seq`: the replay header and the gap
// problem typed), and a simulation. Every typed answer is encoded again and compared with the raw
// JSON sheetd sent: a field the typed client lost fails the run.
//
//     swift run --package-path Clients/swift SheetClientExample PORT [HOST]
//
// Prints `ok …` or `FAIL …` per check and last `swift-client: N passed, M failed`; exits 1 on a
// failure.

import AsyncHTTPClient
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// Any JSON value, to compare raw answers with typed values encoded again.
indirect enum JSON: Decodable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSON].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSON].self))
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .number(let n): "\(n)"
        case .string(let s): "\"\(s)\""
        case .array(let a): "[\(a.map(\.description).joined(separator: ","))]"
        case .object(let o): "{\(o.keys.sorted().map { "\($0):\(o[$0]!)" }.joined(separator: ","))}"
        }
    }

    /// Where `typed` (a typed value encoded again) differs from `self` (what sheetd sent). A
    /// member sent as null may be absent from `typed`: Swift's Codable encodes nil by leaving the
    /// key out, which carries the same (no) value.
    func lost(in typed: JSON, at path: String = "") -> [String] {
        switch (self, typed) {
        case let (.object(raw), .object(again)):
            var out = again.keys.filter { raw[$0] == nil }.map { "\(path)/\($0): not sent, but encoded" }
            for (key, value) in raw {
                if let other = again[key] {
                    out += value.lost(in: other, at: "\(path)/\(key)")
                } else if value != .null {
                    out.append("\(path)/\(key): lost (sent \(value))")
                }
            }
            return out
        case let (.array(raw), .array(again)):
            guard raw.count == again.count else { return ["\(path): \(raw.count) items sent, \(again.count) typed"] }
            return zip(raw, again).enumerated().flatMap { i, pair in pair.0.lost(in: pair.1, at: "\(path)[\(i)]") }
        default:
            return self == typed ? [] : ["\(path): sent \(self), typed \(typed)"]
        }
    }
}

/// The raw body of the last answer of every operation but the stream, kept by `RawBodies`.
actor RawStore {
    private(set) var last: [String: [UInt8]] = [:]
    func keep(_ bytes: [UInt8], for operation: String) { last[operation] = bytes }
}

/// Reads every answer's body whole (frame streams excepted), keeps a copy and passes it on.
struct RawBodies: ClientMiddleware {
    let store: RawStore

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard operationID != "streamFrames", let responseBody else { return (response, responseBody) }
        let bytes = try await [UInt8](collecting: responseBody, upTo: 4 << 20)
        await store.keep(bytes, for: operationID)
        return (response, HTTPBody(bytes))
    }
}

/// The checks of the run and their outcome.
actor Report {
    private(set) var passed = 0
    private(set) var failed = 0

    func check(_ ok: Bool, _ what: String, _ why: String = "") {
        if ok {
            passed += 1
            print("ok   \(what)")
        } else {
            failed += 1
            print("FAIL \(what): \(why)")
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: SheetClientExample PORT [HOST]")
    exit(2)
}
let report = Report()
let raw = RawStore()
let serverURL = try Servers.Server1.url(host: arguments.count > 2 ? arguments[2] : "127.0.0.1", port: arguments[1])
let client = Client(serverURL: serverURL, transport: AsyncHTTPClientTransport(), middlewares: [RawBodies(store: raw)])

/// Compares the typed `value` of operation `operation`'s last answer, encoded again, with the raw
/// JSON sheetd sent.
@MainActor func roundTrip(_ what: String, _ value: some Encodable, operation: String) async throws {
    let sent = try JSONDecoder().decode(JSON.self, from: Data(await raw.last[operation] ?? []))
    let again = try JSONDecoder().decode(JSON.self, from: JSONEncoder().encode(value))
    let lost = sent.lost(in: again)
    await report.check(
        lost.isEmpty, "\(what): every field survives the typed round trip", lost.prefix(5).joined(separator: "; "))
}

typealias Schemas = Components.Schemas

/// One preset's session: its configuration (with options) and what the snapshot must echo.
struct Row {
    let preset: String
    let config: Schemas.SessionConfig
    /// The typed snapshot shows the options that were sent.
    let echoes: @Sendable (Schemas.Snapshot) -> Bool
}

let rows: [Row] = [
    Row(
        preset: "facebook",
        config: .facebook(.init(preset: .facebook, options: .init(expandedOffset: 60), clock: .server)),
        echoes: { if case .facebook(let s) = $0 { s.value2.options.expandedOffset == 60 } else { false } }),
    Row(
        preset: "twitter",
        config: .twitter(.init(preset: .twitter, options: .init(cardHeightRatio: 0.6, maxDimAlpha: 0.5))),
        echoes: {
            if case .twitter(let s) = $0 {
                s.value2.options.cardHeightRatio == 0.6 && s.value2.options.maxDimAlpha == 0.5
            } else {
                false
            }
        }),
    Row(
        preset: "glide",
        config: .glide(
            .init(preset: .glide, options: .init(segmented: false, concreteDimension: .case2(.init(custom: 500))))),
        echoes: {
            if case .glide(let s) = $0 {
                s.value2.options.segmented == false && s.value2.options.concreteDimension == .case2(.init(custom: 500))
            } else {
                false
            }
        }),
    Row(
        preset: "transition",
        config: .transition(.init(preset: .transition, options: .init(miniHeight: 80, finishThreshold: 0.9))),
        echoes: {
            if case .transition(let s) = $0 {
                s.value2.options.miniHeight == 80 && s.value2.options.finishThreshold == 0.9
            } else {
                false
            }
        }),
    Row(
        preset: "swipeCell",
        config: .swipeCell(.init(preset: .swipeCell, options: .init(swipeDistance: 120))),
        echoes: { if case .swipeCell(let s) = $0 { s.value2.options.swipeDistance == 120 } else { false } }),
    Row(
        preset: "fluid",
        config: .fluid(
            .init(
                preset: .fluid,
                options: .init(
                    detents: .init(additionalProperties: [
                        "full": .case1(.init(fromTop: 18)), "half": .case2(.init(fraction: 0.5)),
                        "peek": .case3(.init(height: 120)),
                    ]), hideable: false, maxDimAlpha: 0.4))),
        echoes: {
            if case .fluid(let s) = $0 {
                s.value2.options.detents?.additionalProperties["peek"] == .case3(.init(height: 120))
                    && s.value2.options.hideable == false && s.value1.detents.additionalProperties["hidden"] == nil
            } else {
                false
            }
        }),
]

/// The session id of a typed snapshot, whatever its preset.
func sessionID(_ snapshot: Schemas.Snapshot) -> String? {
    switch snapshot {
    case .facebook(let s): s.value1.id
    case .twitter(let s): s.value1.id
    case .glide(let s): s.value1.id
    case .transition(let s): s.value1.id
    case .swipeCell(let s): s.value1.id
    case .fluid(let s): s.value1.id
    }
}

/// A pan event's typed result.
@MainActor func pan(_ id: String, _ event: Schemas.PanEvent) async throws -> Schemas.Result {
    try await client.pan(path: .init(id: id), body: .json(.PanEvent(event))).ok.body.json
}

for row in rows {
    let created = try await client.createSession(body: .json(row.config)).created.body.json
    await report.check(row.echoes(created), "\(row.preset): the typed snapshot has the options sent", "\(created)")
    try await roundTrip("\(row.preset): created snapshot", created, operation: "createSession")
    guard let id = sessionID(created) else {
        await report.check(false, "\(row.preset): the snapshot names its session", "\(created)")
        continue
    }

    // Show, then stream: the stream is opened while the show animation runs (or after), and a
    // drag follows; `once` ends it after the first animation it sees settles.
    let shown = try await client.show(path: .init(id: id), body: .json(.init())).ok.body.json
    await report.check(
        shown.snap != nil && shown.animation != nil, "\(row.preset): show answers a typed snap and animation",
        "\(shown)")
    try await roundTrip("\(row.preset): show result", shown, operation: "show")

    let stream = try await client.streamFrames(
        path: .init(id: id), query: .init(fps: 60, pace: .instant, once: true)
    ).ok.body.textEventStream

    let began = try await pan(id, .init(phase: .began))
    await report.check(
        began.drag != nil && began.dragLaw != nil, "\(row.preset): began answers the segment and the drag law",
        "\(began)")
    try await roundTrip("\(row.preset): began result", began, operation: "pan")
    // Down by 60 and released upward: every preset animates back to a detent.
    let changed = try await pan(id, .init(phase: .changed, translation: 60))
    try await roundTrip("\(row.preset): changed result", changed, operation: "pan")
    let ended = try await pan(id, .init(phase: .ended, translation: 60, velocity: -900))
    // A transition drag that reaches its finish threshold is over on `changed`, which answers the
    // animation; the release then changes nothing.
    let release = ended.animation == nil ? changed : ended
    await report.check(
        release.snap != nil && release.animation != nil,
        "\(row.preset): the release answers a typed snap and animation",
        "\(ended)")
    try await roundTrip("\(row.preset): ended result", ended, operation: "pan")

    // The frames: every event has data (no block of its own for `retry:`), frames decode as
    // `Frame` with ids n:k in order, and the stream ends with `settled`, a typed `Snapshot`.
    var frames: [Schemas.Frame] = []
    var last: (event: String?, data: String?) = (nil, nil)
    var emptyEvents = 0
    var retries: [Int64] = []
    var badIDs = 0
    for try await event in stream.asDecodedServerSentEvents() {
        if let retry = event.retry { retries.append(retry) }
        guard let data = event.data else {
            emptyEvents += 1
            continue
        }
        last = (event.event, data)
        if event.event == "frame" {
            let frame = try JSONDecoder().decode(Schemas.Frame.self, from: Data(data.utf8))
            if event.id != "\(frame.animation):\(frame.index)"
                || frame.index != (frames.last.map { $0.index + 1 } ?? frame.index)
            {
                badIDs += 1
            }
            frames.append(frame)
        }
    }
    await report.check(emptyEvents == 0, "\(row.preset): the stream has no event without data", "\(emptyEvents) empty")
    await report.check(retries == [1000], "\(row.preset): retry: 1000 came once, with an event", "\(retries)")
    await report.check(
        !frames.isEmpty && badIDs == 0, "\(row.preset): \(frames.count) typed frames, ids n:k in order",
        "\(badIDs) out of order")
    let settled = last.data.flatMap { try? JSONDecoder().decode(Schemas.Snapshot.self, from: Data($0.utf8)) }
    await report.check(
        last.event == "settled" && settled != nil, "\(row.preset): the stream ends with a typed settled snapshot")

    let read = try await client.getSession(path: .init(id: id)).ok.body.json
    try await roundTrip("\(row.preset): GET snapshot", read, operation: "getSession")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
}

// A live stream: with async-http-client the events arrive while the stream stays open (a
// transport that buffers the body, as URLSession does on Linux, hands over nothing until the
// stream ends, and this one ends only when the session is deleted, after the check).
let watched = try await client.createSession(body: .json(.facebook(.init(preset: .facebook)))).created.body.json

if let id = sessionID(watched) {
    let live = try await client.streamFrames(path: .init(id: id), query: .init(fps: 60, pace: .realtime)).ok.body
        .textEventStream
    _ = try await client.show(path: .init(id: id), body: .json(.init())).ok.body.json
    let streamed = try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            for try await event in live.asDecodedServerSentEvents() where event.event == "settled" { return true }
            return false
        }
        group.addTask {
            try await Task.sleep(for: .seconds(10))
            return false
        }
        let first = try await group.next() ?? false
        // Deleting the session ends the stream (`closed`), so the reader finishes either way.
        _ = try await client.deleteSession(path: .init(id: id)).noContent
        group.cancelAll()
        return first
    }
    await report.check(streamed, "a realtime stream that stays open delivers its frames and settled as they happen")
}

// A card in a living layout (fluid): a content-fit detent, the keyboard rising with its own curve,
// the content growing, a content fling handed to the card, and a spring handing its momentum to
// the content; every answer typed and round-tripped.
/// A layout, fling or pan event's typed result.
@MainActor func send(_ id: String, _ body: Components.RequestBodies.PanEventBody.JsonPayload) async throws
    -> Schemas.Result
{
    try await client.pan(path: .init(id: id), body: .json(body)).ok.body.json
}

let living = try await client.createSession(
    body: .json(
        .fluid(
            .init(
                preset: .fluid, contentHeight: 300,
                options: .init(
                    detents: .init(additionalProperties: [
                        "full": .case1(.init(fromTop: 18)), "fit": .case4(.init(content: 40)),
                        "tip": .case3(.init(height: 69)),
                    ]), dampingRatio: 0.5, contentScrollsAt: .case1(.everywhere), dragFirst: .sheet,
                    momentumHandOff: true), initialDetent: "fit")))
).created.body.json
try await roundTrip("layout: created snapshot", living, operation: "createSession")
if case .fluid(let s) = living, let id = s.value1.id {
    await report.check(
        s.value2.unreachable == ["full"] && s.value1.revision == 0 && s.value2.layoutLaw != nil,
        "layout: the snapshot has its unreachable detents, revision and layout law", "\(s)")
    let up = try await send(
        id,
        .LayoutEvent(.init(phase: .layout, keyboardInset: 291, motion: .case2(.init(curve: .easeOut, duration: 0.25)))))
    await report.check(
        up.revision == 1 && up.keyboardInset == 291 && up.layoutLaw != nil && up.animation?.to == 166,
        "layout: the keyboard lifts the card, with the new laws of revision 1", "\(up)")
    try await roundTrip("layout: keyboard result", up, operation: "pan")
    let grown = try await send(
        id, .LayoutEvent(.init(phase: .layout, keyboardInset: 0, contentHeight: 420, motion: .case1(.none))))
    await report.check(
        grown.revision == 2 && grown.detents?.additionalProperties["fit"] == 337,
        "layout: the content-fit detent follows the content", "\(grown)")
    try await roundTrip("layout: content result", grown, operation: "pan")
    let flung = try await send(id, .FlingEvent(.init(phase: .fling, velocity: 900)))
    await report.check(flung.snap != nil, "layout: a content fling releases the card", "\(flung)")
    try await roundTrip("layout: fling result", flung, operation: "pan")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
} else {
    await report.check(false, "layout: a typed fluid snapshot", "\(living)")
}
let handing = try await client.createSession(
    body: .json(
        .fluid(.init(preset: .fluid, options: .init(dampingRatio: 0.5, momentumHandOff: true), initialDetent: "half")))
).created.body.json
if let id = sessionID(handing) {
    _ = try await pan(id, .init(phase: .began))
    let handed = try await pan(id, .init(phase: .ended, velocity: -1000))
    await report.check(
        (handed.scrollFling?.velocity ?? 0) < 0,
        "hand-off: the release hands its momentum to the content (scrollFling)",
        "\(handed)")
    try await roundTrip("hand-off: ended result", handed, operation: "pan")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
}

// A contentAnchor detent: the card stops with the content shown down to a point and an offset more;
// unreachable once the content ends above the point.
let anchored = try await client.createSession(
    body: .json(
        .fluid(
            .init(
                preset: .fluid, contentHeight: 500,
                options: .init(
                    detents: .init(additionalProperties: [
                        "full": .case1(.init(fromTop: 18)), "buy": .case5(.init(contentAnchor: 300, offset: 62)),
                        "tip": .case3(.init(height: 69)),
                    ])), initialDetent: "buy")))
).created.body.json
try await roundTrip("anchor: created snapshot", anchored, operation: "createSession")
if case .fluid(let s) = anchored, let id = s.value1.id {
    let rule = s.value2.layoutLaw?.detents.first { $0.name == "buy" }
    await report.check(
        s.value1.detents.additionalProperties["buy"] == 435 && rule?.kind == .contentAnchor && rule?.offset == 62,
        "anchor: H − (300 + 62) = 435, the layout law's rule carries its offset", "\(s)")
    let shrunk = try await send(id, .LayoutEvent(.init(phase: .layout, contentHeight: 200, motion: .case1(.none))))
    await report.check(
        shrunk.unreachable == ["buy"] && shrunk.snap?.detent != "buy",
        "anchor: a point past the content's end is unreachable, and the card leaves it", "\(shrunk)")
    try await roundTrip("anchor: content result", shrunk, operation: "pan")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
} else {
    await report.check(false, "anchor: a typed fluid snapshot", "\(anchored)")
}

// Reduced motion per request: a show that asks for it jumps on a session with motion, an ended that
// asks for motion animates on a session under reduced motion; the laws carry both variants.
let calm = try await client.createSession(
    body: .json(.fluid(.init(preset: .fluid, initialDetent: "half")))
).created.body.json
if case .fluid(let s) = calm, let id = s.value1.id {
    let law = s.value1.releaseLaw
    await report.check(
        law.reducedMotion == false && law.requestOverride.reducedMotion == true,
        "reduced motion: the release law carries the jump a request may ask for", "\(law)")
    let jumped = try await client.show(path: .init(id: id), body: .json(.init(detent: "full", reducedMotion: true)))
        .ok.body.json
    await report.check(
        jumped.snap?.reducedMotion == true && jumped.animation?.duration == 0,
        "reduced motion: a show with reducedMotion true jumps, and says so", "\(jumped)")
    try await roundTrip("reduced motion: show result", jumped, operation: "show")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
} else {
    await report.check(false, "reduced motion: a typed fluid snapshot", "\(calm)")
}
let still = try await client.createSession(
    body: .json(.fluid(.init(preset: .fluid, reducedMotion: true, initialDetent: "half")))
).created.body.json
if let id = sessionID(still) {
    _ = try await pan(id, .init(phase: .began))
    let moved = try await pan(id, .init(phase: .ended, velocity: -2000, reducedMotion: false))
    await report.check(
        moved.snap?.reducedMotion == false && moved.animation?.curve == .spring,
        "reduced motion: an ended with reducedMotion false animates on a reduced session", "\(moved)")
    try await roundTrip("reduced motion: ended result", moved, operation: "pan")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
}

// A left drawer (fluid's `edge`): the geometry's width, the drag law's axis and sign.
let drawer = try await client.createSession(
    body: .json(
        .fluid(
            .init(
                preset: .fluid,
                geometry: .init(
                    height: 844, safeAreaTop: 47, safeAreaBottom: 34, width: 390, safeAreaLeft: 0, safeAreaRight: 0),
                options: .init(edge: .left), initialDetent: "half")))
).created.body.json
try await roundTrip("edge: created snapshot", drawer, operation: "createSession")
if case .fluid(let s) = drawer, let id = s.value1.id {
    let law = s.value1.dragLaw
    await report.check(
        law.edge == .left && law.axis == .x && law.sign == -1 && s.value1.geometry.width == 390,
        "edge: a left drawer's law says its axis x and sign -1", "\(law)")
    _ = try await pan(id, .init(phase: .began))
    let moved = try await pan(id, .init(phase: .changed, translation: 40))
    await report.check(moved.constant == s.value1.constant + 40, "edge: the drawer follows the axis", "\(moved)")
    try await roundTrip("edge: changed result", moved, operation: "pan")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
}

// A stack: a root whose page recedes (`recede.backdrop`) and a sheet over it; the covered root says
// so with its transform, refuses a drag (a typed 409), and a cascading dismiss closes both.
let stackRoot = try await client.putSession(
    path: .init(id: "sw-root"),
    body: .json(.fluid(.init(preset: .fluid, options: .init(recede: .init(backdrop: true)), initialDetent: "half")))
).created.body.json
try await roundTrip("stack: root snapshot", stackRoot, operation: "putSession")
let stackChild = try await client.putSession(
    path: .init(id: "sw-root~pay"),
    body: .json(.fluid(.init(preset: .fluid, initialDetent: "full", parent: "sw-root")))
).created.body.json
try await roundTrip("stack: child snapshot", stackChild, operation: "putSession")
if case .fluid(let root) = stackRoot, case .fluid(let child) = stackChild {
    await report.check(
        root.value1.backdropTransform != nil && child.value1.parent == "sw-root"
            && child.value1.parentTransform?.scale == 0.94 && child.value1.recedeLaw.backdrop == false,
        "stack: the child's law and transform, the root's backdrop", "\(child.value1)")
}
let covered = try await client.getSession(path: .init(id: "sw-root")).ok.body.json
try await roundTrip("stack: covered root", covered, operation: "getSession")
if case .fluid(let s) = covered {
    await report.check(
        s.value1.coveredBy == "sw-root~pay" && s.value1.transform?.lift == 10,
        "stack: the root is covered and drawn by the child's law", "\(s.value1)")
}
if case .conflict(let refused) = try await client.pan(
    path: .init(id: "sw-root"), body: .json(.PanEvent(.init(phase: .began))))
{
    let problem = try refused.body.applicationProblemJson
    await report.check(
        problem.code == "covered", "stack: a drag on the covered root is a typed 409 covered", "\(problem)")
} else {
    await report.check(false, "stack: a drag on the covered root is a typed 409 covered", "not a 409")
}
let closed = try await client.dismiss(path: .init(id: "sw-root"), body: .json(.init(cascade: true))).ok.body.json
try await roundTrip("stack: cascade result", closed, operation: "dismiss")
await report.check(closed.cascade == ["sw-root~pay"], "stack: the cascade closes both", "\(closed)")
_ = try await client.deleteSession(path: .init(id: "sw-root~pay")).noContent
_ = try await client.deleteSession(path: .init(id: "sw-root")).noContent

// Numbered events (`seq`, docs/HTTP.md "Idempotent events"): the typed request carries `seq`; the
// same request again is answered with the first answer and the typed `Sheetd-Replay` header; a
// `seq` past the next one is the typed 409 `sequence-gap` problem with the session's `lastSeq`.
let numbered = try await client.createSession(
    body: .json(.facebook(.init(preset: .facebook, initialDetent: "normal")))
).created.body.json
if let id = sessionID(numbered) {
    let began = Components.RequestBodies.PanEventBody.JsonPayload.PanEvent(.init(seq: 1, phase: .began))
    let first = try await client.pan(path: .init(id: id), body: .json(began)).ok
    let firstBytes = await raw.last["pan"] ?? []
    let again = try await client.pan(path: .init(id: id), body: .json(began)).ok
    let againBytes = await raw.last["pan"] ?? []
    await report.check(
        first.headers.sheetdReplay == nil && again.headers.sheetdReplay == ._true && againBytes == firstBytes,
        "seq: the same seq again is answered with the first answer's bytes and Sheetd-Replay: true (typed)",
        "\(first.headers) \(again.headers)")
    let gap = try await client.pan(
        path: .init(id: id), body: .json(.PanEvent(.init(seq: 3, phase: .changed, translation: 40))))
    let problem = try gap.conflict.body.applicationProblemJson
    await report.check(
        problem.code == "sequence-gap" && problem.lastSeq == 1 && problem.field == "seq",
        "seq: seq 3 after 1 is the typed sequence-gap problem, lastSeq 1", "\(problem)")
    try await roundTrip("seq: sequence-gap problem", problem, operation: "pan")
    let shown = try await client.show(path: .init(id: id), body: .json(.init(seq: 2, detent: "expanded"))).ok
    await report.check(shown.headers.sheetdReplay == nil, "seq: seq 2 (show) follows, applied", "\(shown.headers)")
    // The number in the typed `Sheetd-Seq` header parameter alone (where a proxy reads it): applied,
    // and the same request again is the replay.
    let grab = Components.RequestBodies.PanEventBody.JsonPayload.PanEvent(.init(phase: .began))
    let fielded = try await client.pan(path: .init(id: id), headers: .init(sheetdSeq: 3), body: .json(grab)).ok
    let fieldedAgain = try await client.pan(path: .init(id: id), headers: .init(sheetdSeq: 3), body: .json(grab)).ok
    await report.check(
        fielded.headers.sheetdReplay == nil && fieldedAgain.headers.sheetdReplay == ._true,
        "seq: seq 3 in the Sheetd-Seq header parameter alone is applied, and its retry is the replay (typed)",
        "\(fielded.headers) \(fieldedAgain.headers)")
    _ = try await client.deleteSession(path: .init(id: id)).noContent
}

// A simulation: the typed events (one schema per type), its results and final snapshot.
let simulated = try await client.simulate(
    body: .json(
        .init(
            config: .facebook(.init(preset: .facebook, initialDetent: "normal")),
            events: [
                .pan(.init(_type: .pan, time: 0, phase: .began)),
                .pan(.init(_type: .pan, time: 0.05, phase: .changed, translation: -100)),
                .pan(.init(_type: .pan, time: 0.1, phase: .ended, translation: -248.5)),
                .show(.init(_type: .show, time: 1, detent: "normal")),
                .dismiss(.init(_type: .dismiss, time: 2)),
            ], fps: 10))
).ok.body.json
await report.check(
    simulated.results.count == 5 && simulated.animation?.detent == "hidden",
    "simulate: typed results and last animation",
    "\(simulated)")
try await roundTrip("simulate response", simulated, operation: "simulate")

// The metrics and the spec, as the text they are sent as.
let metrics = try await client.metrics().ok.body.textPlainCharsetUtf8Version_0_0_4
let metricsText = try await String(collecting: metrics, upTo: 1 << 20)
await report.check(metricsText.contains("# TYPE"), "metrics: Prometheus text under its declared media type")
let spec = try await client.openapi().ok.body.yaml
let specText = try await String(collecting: spec, upTo: 1 << 22)
await report.check(specText.hasPrefix("openapi: 3.1"), "openapi.yaml: the spec under application/yaml")

let passed = await report.passed
let failed = await report.failed
print("swift-client: \(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
