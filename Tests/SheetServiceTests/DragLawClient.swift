// The drag law as a client reads it (with ReleaseLawClient.swift for the release law): the card,
// finish and segment a client draws from `dragLaw` and `drag`, evaluated by the rules at the top
// of DragLaw.swift, and the service's own rendering of the laws (ReplyJSON) read back with JSONReader.
// DragLawPropertyTests, DragLawTableTests and DragLawHTTPTests check the service against it.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - The client

/// Where a client draws the card for one pointer event.
struct ClientCard {
    var constant: Double
    var dimmerAlpha: Double
    var progress: Double
    /// transition: this position finishes the drag (the engine settles).
    var finishes: Bool
}

/// `drag.finish`: the point at which a transition drag completes by itself.
struct ClientFinish {
    var from: Double
    var toward: Double
    var threshold: Double
    var detent: String

    /// (constant − from) / (toward − from), 0 where the two coincide.
    func percent(at constant: Double) -> Double {
        let span = toward - from
        return span == 0 ? 0 : (constant - from) / span
    }

    func isReached(at constant: Double) -> Bool { percent(at: constant) >= threshold }

    /// The candidate at which the finish is reached (for generating translations around it).
    var point: Double { from + threshold * (toward - from) }
}

/// `drag`: the current segment of a drag, as a client reads it.
struct ClientSegment {
    var start: Double
    var base: Double
    var origin: String
    var contentCanScroll: Bool
    var finish: ClientFinish?

    init(json: JSONValue) throws {
        start = try Read.number(json, "start", in: "drag")
        base = try Read.number(json, "base", in: "drag")
        origin = try Read.string(json, "origin", in: "drag")
        let scroll = try Read.member(json, "contentCanScroll", in: "drag")
        guard case .bool(let b) = scroll else { throw ClientReadError(description: "drag.contentCanScroll") }
        contentCanScroll = b
        let f = try Read.member(json, "finish", in: "drag")
        if f.isNull {
            finish = nil
        } else {
            finish = ClientFinish(
                from: try Read.number(f, "from", in: "drag.finish"),
                toward: try Read.number(f, "toward", in: "drag.finish"),
                threshold: try Read.number(f, "threshold", in: "drag.finish"),
                detent: try Read.string(f, "detent", in: "drag.finish"))
        }
    }
}

/// `dragLaw`, as a Kotlin or JavaScript client would read and evaluate it: numbers parsed, then
/// the documented steps, one double operation at a time (DragLaw.swift, DimmerCurve.swift).
struct ClientLaw {
    var lower: Double?
    var upper: Double?
    var rubberBand: (coefficient: Double, dimension: Double)?
    var full: Double
    var fullAt: Double
    var clearAt: Double
    var low: Double
    var top: Double
    /// transition: the fraction of the way at which a drag finishes (each segment's `finish`).
    var finishThreshold: Double?
    /// The pointer mapping: translation = sign · (the pointer's delta along axis).
    var axis: String
    var sign: Double

    init(json: JSONValue) throws {
        lower = try Read.numberOrNull(json, "lower", in: "dragLaw")
        upper = try Read.numberOrNull(json, "upper", in: "dragLaw")
        let band = try Read.member(json, "rubberBand", in: "dragLaw")
        if band.isNull {
            rubberBand = nil
        } else {
            rubberBand = (
                try Read.number(band, "coefficient", in: "dragLaw.rubberBand"),
                try Read.number(band, "dimension", in: "dragLaw.rubberBand")
            )
        }
        let dimmer = try Read.member(json, "dimmer", in: "dragLaw")
        full = try Read.number(dimmer, "full", in: "dragLaw.dimmer")
        fullAt = try Read.number(dimmer, "fullAt", in: "dragLaw.dimmer")
        clearAt = try Read.number(dimmer, "clearAt", in: "dragLaw.dimmer")
        let progress = try Read.member(json, "progress", in: "dragLaw")
        low = try Read.number(progress, "low", in: "dragLaw.progress")
        top = try Read.number(progress, "top", in: "dragLaw.progress")
        finishThreshold = try Read.numberOrNull(json, "finishThreshold", in: "dragLaw")
        axis = try Read.string(json, "axis", in: "dragLaw")
        sign = try Read.number(json, "sign", in: "dragLaw")
    }

    /// The translation a pointer that moved by (dx, dy) screen points since the drag began sends.
    func translation(dx: Double, dy: Double) -> Double { sign * (axis == "x" ? dx : dy) }

    /// Steps 1–3: the candidate, limited by the bounds, clamped or resisted past them.
    func constant(_ translation: Double, in s: ClientSegment) -> Double {
        let candidate = s.start + (translation - s.base)
        if let u = upper, candidate > u {
            guard let band = rubberBand else { return u }
            return u + (1 - 1 / ((candidate - u) * band.coefficient / band.dimension + 1)) * band.dimension
        }
        if let l = lower, candidate < l {
            guard let band = rubberBand else { return l }
            return l - (1 - 1 / ((l - candidate) * band.coefficient / band.dimension + 1)) * band.dimension
        }
        return candidate
    }

    /// `full` at and above `fullAt`, 0 at and below `clearAt`, linear between.
    func dimmerAlpha(at c: Double) -> Double {
        if full == 0 { return 0 }
        if c <= fullAt { return full }
        if c >= clearAt { return 0 }
        return full * (clearAt - c) / (clearAt - fullAt)
    }

    /// 0 at `low`, 1 at `top`, linear and unclamped; 1 where the two are less than 1e-9 apart.
    func progress(at c: Double) -> Double {
        abs(low - top) < 1e-9 ? 1 : (low - c) / (low - top)
    }

    func card(_ translation: Double, in s: ClientSegment) -> ClientCard {
        let c = constant(translation, in: s)
        return ClientCard(
            constant: c, dimmerAlpha: dimmerAlpha(at: c), progress: progress(at: c),
            finishes: s.finish?.isReached(at: c) ?? false)
    }
}

// MARK: - The service's JSON

func rendered(_ law: DragLaw) throws -> JSONValue {
    var w = JSONWriter()
    ReplyJSON.dragLaw(law, into: &w)
    return try JSONReader.parse(w.takeBytes())
}

func rendered(_ law: ReleaseLaw) throws -> JSONValue {
    var w = JSONWriter()
    ReplyJSON.releaseLaw(law, into: &w)
    return try JSONReader.parse(w.takeBytes())
}

func rendered(_ segment: DragSegment) throws -> JSONValue {
    var w = JSONWriter()
    ReplyJSON.dragSegment(segment, into: &w)
    return try JSONReader.parse(w.takeBytes())
}

/// Options as the JSON a client would send (for failure messages).
func describe(_ options: [(key: String, value: OptionValue)], _ g: Geometry) -> String {
    var w = JSONWriter()
    w.beginObject()
    for (k, v) in options {
        w.key(k)
        w.option(v)
    }
    w.endObject()
    return "options \(w.text) on \(g.height)×(\(g.safeAreaTop), \(g.safeAreaBottom))"
}

/// Whether two optional numbers are the same double, bit for bit (the writer and the reader must
/// lose nothing).
func same(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }
