// JSON layer micro-benchmarks: our JSONReader/JSONWriter against Foundation's
// JSONDecoder/JSONSerialization/JSONEncoder on the service's typical bodies.
// Prints nothing: `runJSONBench` returns (name, ns/op) rows, each the median
// of `rounds` timed rounds of `iterations` operations (ContinuousClock).

import Foundation
import SheetService

/// A typical pan request body (~70 bytes).
let jsonBenchPanBody = #"{"phase":"changed","translation":-120.5,"velocity":-800,"time":12.25}"#

/// The typical ~290-byte result the service writes for it.
let jsonBenchReply =
    #"{"phase":"ended","state":"animating","detent":"expanded","constant":278,"dimmerAlpha":0.7,"progress":0.68,"snap":{"detent":"expanded","constant":30,"dismiss":false,"reason":"constant 278 < 211.0"},"animation":{"id":3,"curve":"easeIn","duration":0.25,"from":278,"to":30,"fromAlpha":0.7,"toAlpha":0.7,"alphaRule":"interpolate","startTime":12.25}}"#

/// Runs every JSON benchmark and returns ns per operation (median of `rounds`).
func runJSONBench(iterations: Int, rounds: Int = 7) -> [(name: String, nanosecondsPerOp: Double)] {
    let body = Array(jsonBenchPanBody.utf8)
    let bodyData = Data(body)
    let reply = JSONBenchReply.sample(opaque: benchOpaque(1))
    let decoder = JSONDecoder()
    let encoder = JSONEncoder()

    // Sanity: every candidate reads the same request and writes the same reply.
    precondition(try! decoder.decode(JSONBenchPan.self, from: bodyData) == JSONBenchPan.ours(body)!)
    precondition(JSONBenchPan.serialization(bodyData) == JSONBenchPan.ours(body)!)
    // The direct pan decoder reads the same fields as the general path (Decode.json then Decode.pan).
    let pan = PanDecoder.direct(body, preset: .facebook, clock: .server)!
    precondition(pan == PanDecoder.general(body, preset: .facebook, clock: .server)!)
    precondition(pan.0.translation == JSONBenchPan.ours(body)!.translation && pan.1 == JSONBenchPan.ours(body)!.time)
    precondition(String(decoding: reply.writeStatic(), as: UTF8.self) == jsonBenchReply)
    precondition(String(decoding: reply.writeDynamic(), as: UTF8.self) == jsonBenchReply)
    precondition(
        Set(try! JSONReader.parse(try! encoder.encode(reply)).object!.keys)
            == Set(try! JSONReader.parse(jsonBenchReply).object!.keys))
    let replyValue = try! JSONReader.parse(jsonBenchReply)

    var rows: [(name: String, nanosecondsPerOp: Double)] = []
    func measure(_ name: String, _ op: () -> Void) {
        rows.append((name, benchMedian(iterations: iterations, rounds: rounds, op)))
    }

    measure("parse pan body: JSONReader → 4 fields") {
        benchBlackHole(JSONBenchPan.ours(body))
    }
    measure("parse pan body: Decode.panDirect → PanEvent (no tree)") {
        benchBlackHole(PanDecoder.direct(body, preset: .facebook, clock: .server))
    }
    measure("parse pan body: JSONReader → JSONValue only") {
        benchBlackHole(try? JSONReader.parse(body))
    }
    measure("parse pan body: JSONDecoder (reused) → Codable") {
        benchBlackHole(try? decoder.decode(JSONBenchPan.self, from: bodyData))
    }
    measure("parse pan body: JSONSerialization → 4 fields") {
        benchBlackHole(JSONBenchPan.serialization(bodyData))
    }
    measure("write reply: JSONWriter, StaticString keys") {
        benchBlackHole(reply.writeStatic())
    }
    measure("write reply: JSONWriter, String literal keys") {
        benchBlackHole(reply.writeDynamic())
    }
    measure("write reply: JSONWriter.value(JSONValue)") {
        benchBlackHole(replyValue.jsonBytes())
    }
    measure("write reply: JSONEncoder (reused) ← Codable") {
        benchBlackHole(try? encoder.encode(reply))
    }
    return rows
}

// MARK: - Harness

private func benchMedian(iterations: Int, rounds: Int, _ op: () -> Void) -> Double {
    for _ in 0..<max(1, iterations / 10) { op() }  // warm-up
    let clock = ContinuousClock()
    var samples: [Double] = []
    for _ in 0..<max(5, rounds) {
        let start = clock.now
        for _ in 0..<iterations { op() }
        let elapsed = clock.now - start
        let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        samples.append(ns / Double(iterations))
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// Keeps a value alive and opaque to the optimizer.
@_optimize(none)
private func benchBlackHole<T>(_ x: T) {}

/// Returns its argument through a barrier the optimizer cannot see through.
@_optimize(none)
private func benchOpaque<T>(_ x: T) -> T { x }

// MARK: - Request

struct JSONBenchPan: Codable, Equatable {
    var phase: String
    var translation: Double
    var velocity: Double
    var time: Double

    /// Our reader: parse, then pick the four fields out of the object.
    static func ours(_ body: [UInt8]) -> JSONBenchPan? {
        guard let value = try? JSONReader.parse(body), case .object(let o) = value,
            let phase = o["phase"]?.string, let translation = o["translation"]?.double,
            let velocity = o["velocity"]?.double, let time = o["time"]?.double
        else { return nil }
        return JSONBenchPan(phase: phase, translation: translation, velocity: velocity, time: time)
    }

    static func serialization(_ data: Data) -> JSONBenchPan? {
        guard let o = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let phase = o["phase"] as? String, let translation = (o["translation"] as? NSNumber)?.doubleValue,
            let velocity = (o["velocity"] as? NSNumber)?.doubleValue, let time = (o["time"] as? NSNumber)?.doubleValue
        else { return nil }
        return JSONBenchPan(phase: phase, translation: translation, velocity: velocity, time: time)
    }
}

// MARK: - Reply

struct JSONBenchReply: Codable {
    struct Snap: Codable {
        var detent: String
        var constant: Double
        var dismiss: Bool
        var reason: String
    }
    struct Animation: Codable {
        var id: Int
        var curve: String
        var duration: Double
        var from: Double
        var to: Double
        var fromAlpha: Double
        var toAlpha: Double
        var alphaRule: String
        var startTime: Double
    }
    var phase: String
    var state: String
    var detent: String
    var constant: Double
    var dimmerAlpha: Double
    var progress: Double
    var snap: Snap
    var animation: Animation

    /// Built at run time (through `opaque`) so the writer cannot be constant-folded.
    static func sample(opaque one: Double) -> JSONBenchReply {
        JSONBenchReply(
            phase: "ended", state: "animating", detent: "expanded", constant: 278 * one, dimmerAlpha: 0.7 * one,
            progress: 0.68 * one,
            snap: Snap(detent: "expanded", constant: 30 * one, dismiss: one != 1, reason: "constant 278 < 211.0"),
            animation: Animation(
                id: Int(3 * one), curve: "easeIn", duration: 0.25 * one, from: 278 * one, to: 30 * one,
                fromAlpha: 0.7 * one,
                toAlpha: 0.7 * one, alphaRule: "interpolate", startTime: 12.25 * one))
    }

    private enum K {
        static let phase: StaticString = "phase", state: StaticString = "state", detent: StaticString = "detent"
        static let constant: StaticString = "constant", dimmerAlpha: StaticString = "dimmerAlpha"
        static let progress: StaticString = "progress", snap: StaticString = "snap", dismiss: StaticString = "dismiss"
        static let reason: StaticString = "reason", animation: StaticString = "animation", id: StaticString = "id"
        static let curve: StaticString = "curve", duration: StaticString = "duration", from: StaticString = "from"
        static let to: StaticString = "to", fromAlpha: StaticString = "fromAlpha", toAlpha: StaticString = "toAlpha"
        static let alphaRule: StaticString = "alphaRule", startTime: StaticString = "startTime"
    }

    /// The intended use: StaticString keys, a fresh writer per reply.
    func writeStatic() -> [UInt8] {
        var w = JSONWriter(capacity: 384)
        w.beginObject()
        w.key(K.phase)
        w.string(phase)
        w.key(K.state)
        w.string(state)
        w.key(K.detent)
        w.string(detent)
        w.key(K.constant)
        w.number(constant)
        w.key(K.dimmerAlpha)
        w.number(dimmerAlpha)
        w.key(K.progress)
        w.number(progress)
        w.key(K.snap)
        w.beginObject()
        w.key(K.detent)
        w.string(snap.detent)
        w.key(K.constant)
        w.number(snap.constant)
        w.key(K.dismiss)
        w.bool(snap.dismiss)
        w.key(K.reason)
        w.string(snap.reason)
        w.endObject()
        w.key(K.animation)
        w.beginObject()
        w.key(K.id)
        w.integer(animation.id)
        w.key(K.curve)
        w.string(animation.curve)
        w.key(K.duration)
        w.number(animation.duration)
        w.key(K.from)
        w.number(animation.from)
        w.key(K.to)
        w.number(animation.to)
        w.key(K.fromAlpha)
        w.number(animation.fromAlpha)
        w.key(K.toAlpha)
        w.number(animation.toAlpha)
        w.key(K.alphaRule)
        w.string(animation.alphaRule)
        w.key(K.startTime)
        w.number(animation.startTime)
        w.endObject()
        w.endObject()
        return w.takeBytes()
    }

    /// Same with bare literals, which Swift resolves to `key(_: String)`.
    func writeDynamic() -> [UInt8] {
        var w = JSONWriter(capacity: 384)
        w.beginObject()
        w.key("phase")
        w.string(phase)
        w.key("state")
        w.string(state)
        w.key("detent")
        w.string(detent)
        w.key("constant")
        w.number(constant)
        w.key("dimmerAlpha")
        w.number(dimmerAlpha)
        w.key("progress")
        w.number(progress)
        w.key("snap")
        w.beginObject()
        w.key("detent")
        w.string(snap.detent)
        w.key("constant")
        w.number(snap.constant)
        w.key("dismiss")
        w.bool(snap.dismiss)
        w.key("reason")
        w.string(snap.reason)
        w.endObject()
        w.key("animation")
        w.beginObject()
        w.key("id")
        w.integer(animation.id)
        w.key("curve")
        w.string(animation.curve)
        w.key("duration")
        w.number(animation.duration)
        w.key("from")
        w.number(animation.from)
        w.key("to")
        w.number(animation.to)
        w.key("fromAlpha")
        w.number(animation.fromAlpha)
        w.key("toAlpha")
        w.number(animation.toAlpha)
        w.key("alphaRule")
        w.string(animation.alphaRule)
        w.key("startTime")
        w.number(animation.startTime)
        w.endObject()
        w.endObject()
        return w.takeBytes()
    }
}
