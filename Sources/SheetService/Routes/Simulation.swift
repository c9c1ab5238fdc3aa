import MicroHTTP
import SheetPhysics

/// POST /simulate: a configuration and a list of timed events in; every result, the last
/// animation and its frames, and the final snapshot out. Stateless and on the client clock, so
/// the same request always gives the same bytes.
enum Simulation {
    static let maxEvents = 10_000

    static func run(_ body: [UInt8]) throws -> HTTPResponse {
        guard let json = try Decode.json(body) else {
            throw Problem.invalid(
                "invalid-value", "the body must be {\"events\": [...]} with an optional config and fps")
        }
        var f = try FieldReader(json)
        let (profile, start) = try Decode.configuration(f.take("config"), path: "config")
        let fpsValue = try f.number("fps", limit: 240) ?? 60
        guard fpsValue >= 1, fpsValue == fpsValue.rounded() else {
            throw Problem.invalid("invalid-value", "fps must be an integer from 1 to 240", field: "fps")
        }
        let fps = Int(fpsValue)
        guard case let .array(events)? = f.take("events"), !events.isEmpty, events.count <= maxEvents else {
            throw Problem.invalid(
                "invalid-value", "events must be an array of 1 to \(maxEvents) events", field: "events")
        }
        try f.finish(known: "config, events, fps")

        var session = start
        let model = profile.model
        var w = JSONWriter(capacity: 256 + events.count * 300)
        w.beginObject()
        w.member("results")
        w.beginArray()
        var last: Animation?
        var time = 0.0
        for (i, event) in events.enumerated() {
            let path = "events[\(i)]"
            var ef = try FieldReader(event, path: path)
            let type = try ef.string("type") ?? "pan"
            guard let t = try Decode.time(&ef, required: true) else { continue }
            time = t
            let sheetEvent: SheetEvent
            var phase: PanPhase?
            // The rest of the event is what the matching endpoint takes.
            var rest = JSONObject()
            for name in ["phase", "translation", "velocity", "scrollOffset", "detent", "reducedMotion"] {
                if let v = ef.take(name) { rest.append(key: name, value: v) }
            }
            try ef.finish(known: "type, time, phase, translation, velocity, scrollOffset, detent, reducedMotion")
            var reduced: Bool?
            switch type {
            case "pan":
                let (pan, _) = try Decode.pan(.object(rest), preset: model.preset, clock: .server, path: path)
                sheetEvent = .pan(pan)
                phase = pan.phase
            case "show":
                let (detent, _, r) = try Decode.show(.object(rest), clock: .server, path: path)
                sheetEvent = .show(detent: detent)
                reduced = r
            case "dismiss":
                reduced = try Decode.dismiss(.object(rest), clock: .server, path: path).reducedMotion
                sheetEvent = .dismiss
            default:
                throw Problem.invalid(
                    "invalid-value", "\(path).type must be pan, show or dismiss, got \"\(type)\"", field: "\(path).type"
                )
            }
            let outcome = session.handle(sheetEvent, at: t, reducedMotion: reduced)
            switch outcome.action {
            case let .conflict(c):
                var p = Problem(c)
                p.detail = "\(path): \(p.detail)"
                p.field = path
                throw p
            case let .invalid(e):
                var p = Problem(e)
                p.field = "\(path).\(e.field)"
                throw p
            case let .settle(a, _): last = a
            case .dragged, .unchanged: break
            }
            ReplyJSON.result(outcome, phase: phase?.rawValue, profile: profile, into: &w)
        }
        w.endArray()
        w.member("animation")
        if let last { ReplyJSON.animation(last, into: &w) } else { w.null() }
        w.member("frames")
        w.beginArray()
        if let last {
            for k in 0..<last.frameCount(fps: fps) {
                ReplyJSON.frame(animation: last.id, index: k, last.frame(k, fps: fps), profile: profile, into: &w)
            }
        }
        w.endArray()
        w.member("final")
        let end = max(time, session.animation(at: time)?.endTime ?? time)
        ReplyJSON.snapshot(id: nil, profile: profile, session.snapshot(at: end), into: &w)
        w.endObject()
        return SheetResponder.json(200, w.takeBuffer())
    }
}
