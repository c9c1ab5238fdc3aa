import MicroHTTP
import SheetPhysics

// Strict decoding of request bodies: every field the service does not know is a 400 naming it,
// every number is checked (finite, in range), and nothing is guessed.

/// The decoders of each request body.
enum Decode {
    /// The body as JSON, or nil when empty.
    static func json(_ body: [UInt8]) throws(Problem) -> JSONValue? {
        if body.isEmpty { return nil }
        do {
            return try JSONReader.parse(body)
        } catch {
            throw .invalid("invalid-json", "the body is not valid JSON: \(error.message)")
        }
    }

    /// A session configuration: the profile and the new session.
    static func configuration(_ value: JSONValue?, path: String = "") throws(Problem) -> (SessionProfile, SheetSession)
    {
        var f = try FieldReader(value, path: path)
        let presetName = try f.string("preset") ?? PresetName.facebook.rawValue
        guard let preset = PresetName(rawValue: presetName) else {
            throw Problem(ConfigurationError.unknownPreset(presetName)).at(f.path("preset"))
        }
        var geometry = Geometry.standard
        if let g = f.take("geometry") { geometry = try Self.geometry(g, path: f.path("geometry")) }
        // The keyboard and the content's height, where the preset takes them (else unknown fields).
        var keyboardInset = 0.0
        if preset.has(.keyboard) {
            keyboardInset = try nonNegative(&f, "keyboardInset", what: "the points the keyboard covers") ?? 0
        }
        let contentHeight =
            preset.has(.contentFit)
            ? try nonNegative(&f, "contentHeight", what: "the content's height in points") : nil
        var options: [(key: String, value: OptionValue)] = []
        if let o = f.take("options") {
            guard case let .object(members) = o else {
                throw .invalid("invalid-value", "\(f.path("options")) must be an object", field: f.path("options"))
            }
            options = members.map { ($0.key, optionValue($0.value)) }
        }
        let initialDetent = try f.string("initialDetent")
        let clockName = try f.string("clock") ?? SessionClock.server.rawValue
        guard let clock = SessionClock(rawValue: clockName) else {
            throw .invalid(
                "invalid-value", "\(f.path("clock")) must be \"server\" or \"client\"", field: f.path("clock"))
        }
        let reducedMotion = try bool(&f, "reducedMotion") ?? false
        let parent = try f.string("parent")
        if let parent {
            var checked = parent
            guard checked.withUTF8({ SheetResponder.isID($0[...]) }) else {
                throw .invalid(
                    "invalid-value",
                    "\(f.path("parent")) must be a session id (1–64 characters of A–Z a–z 0–9 . _ ~ -)",
                    field: f.path("parent"))
            }
        }
        var known = "preset, geometry, reducedMotion, parent, "
        if preset.has(.keyboard) { known += "keyboardInset, " }
        if preset.has(.contentFit) { known += "contentHeight, " }
        try f.finish(known: known + "options, initialDetent, clock")
        do {
            var layout = try Layout(geometry: geometry, keyboardInset: keyboardInset, contentHeight: contentHeight)
            layout.reducedMotion = reducedMotion
            let model = try SheetModel(preset: preset, layout: layout, options: options)
            let session = try SheetSession(model: model, initialDetent: initialDetent)
            return (SessionProfile(model: model, clock: clock, parent: parent), session)
        } catch {
            var p = Problem(error)
            if !path.isEmpty, let field = p.field { p.field = "\(path).\(field)" }
            throw p
        }
    }

    static func optionValue(_ v: JSONValue) -> OptionValue {
        switch v {
        case .null: .null
        case let .bool(b): .bool(b)
        case let .number(x): .number(x)
        case let .string(s): .string(s)
        case let .array(items): .array(items.map(optionValue))
        case let .object(o): .object(o.members.map { ($0.key, optionValue($0.value)) })
        }
    }

    /// A client-clock time: finite, |t| ≤ 1e9 s.
    static func time(_ f: inout FieldReader, required: Bool) throws(Problem) -> Double? {
        let t = try f.number("time", limit: 1e9)
        if required, t == nil {
            throw .invalid(
                "invalid-value",
                "\(f.path("time")) is required: this session runs on the client clock, so every event carries its time in seconds",
                field: f.path("time"))
        }
        return t
    }

    /// A pan event and its client time.
    static func pan(_ value: JSONValue?, preset: PresetName, clock: SessionClock, path: String = "") throws(Problem)
        -> (PanEvent, Double?)
    {
        guard value != nil else {
            throw .invalid("invalid-value", "a pan event needs a body such as {\"phase\": \"began\"}")
        }
        var f = try FieldReader(value, path: path)
        guard let phaseName = try f.string("phase") else {
            throw .invalid(
                "invalid-value", "\(f.path("phase")) is required: began, changed, ended or cancelled",
                field: f.path("phase"))
        }
        guard let phase = PanPhase(rawValue: phaseName) else {
            throw .invalid(
                "invalid-value",
                "\(f.path("phase")) must be began, changed, ended or cancelled (or layout\(preset.has(.scrollHandOff) ? ", fling" : "") on the pan route), got \"\(phaseName)\"",
                field: f.path("phase"))
        }
        let translation = try f.number("translation")
        if phase == .changed, translation == nil {
            throw .invalid(
                "invalid-value", "\(f.path("translation")) is required for changed", field: f.path("translation"))
        }
        let velocity = try f.number("velocity")
        // scrollOffset belongs to a preset with scroll hand-off; elsewhere it is an unknown field.
        let scrolls = preset.has(.scrollHandOff)
        var scrollOffset: Double?
        if scrolls {
            scrollOffset = try f.number("scrollOffset")
        }
        let time = try time(&f, required: clock == .client)
        // How the motion the event starts moves (began starts none: it changes nothing there).
        let reducedMotion = try bool(&f, "reducedMotion")
        try f.finish(
            known: scrolls
                ? "phase, translation, velocity, time, scrollOffset, reducedMotion"
                : "phase, translation, velocity, time, reducedMotion")
        // began, changed and cancelled take translation as sent (0 when absent on began).
        let event = PanEvent(
            phase: phase, translation: translation, velocity: phase == .ended ? velocity : nil,
            scrollOffset: scrollOffset, reducedMotion: reducedMotion)
        return (event, time)
    }

    /// The most events one batch may carry (a 16 KiB body holds about 250 plain ones).
    static let maxBatch = 256

    /// A batch of the pan route's events, `{"events": [event, …]}`, each as `panRouteEvent` reads
    /// it (paths `events[i].…`); nil when `value` is not a batch (a single event).
    static func panBatch(_ value: JSONValue?, preset: PresetName, clock: SessionClock) throws(Problem)
        -> [(SheetEvent, Double?)]?
    {
        guard case let .object(o)? = value, o.members.contains(where: { $0.key == "events" }) else { return nil }
        var f = try FieldReader(value)
        let events = f.take("events")
        try f.finish(known: "events (a batch is {\"events\": [...]} and nothing else)")
        guard case let .array(items)? = events, !items.isEmpty, items.count <= maxBatch else {
            throw .invalid(
                "invalid-value", "events must be an array of 1 to \(maxBatch) pan events", field: "events")
        }
        guard clock == .client else {
            throw .invalid(
                "invalid-value",
                "a batch needs a session on the client clock (\"clock\": \"client\"): the times its events carry are what space them; send events one at a time on the server clock",
                field: "events")
        }
        var decoded: [(SheetEvent, Double?)] = []
        decoded.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            decoded.append(try panRouteEvent(item, preset: preset, clock: clock, path: "events[\(i)]"))
        }
        return decoded
    }

    /// A show request: the detent (optional), client time and the request's reduced motion.
    static func show(_ value: JSONValue?, clock: SessionClock, path: String = "") throws(Problem) -> (
        String?, Double?, reducedMotion: Bool?
    ) {
        var f = try FieldReader(value, path: path)
        let detent = try f.string("detent")
        let time = try time(&f, required: clock == .client)
        let reducedMotion = try bool(&f, "reducedMotion")
        try f.finish(known: "detent, time, reducedMotion")
        return (detent, time, reducedMotion)
    }

    /// A step request: `{"direction": "expand" | "collapse"}` and the client time.
    static func step(_ value: JSONValue?, clock: SessionClock, path: String = "") throws(Problem) -> (
        Bool, Double?, reducedMotion: Bool?
    ) {
        var f = try FieldReader(value, path: path)
        let direction = try f.string("direction")
        let time = try time(&f, required: clock == .client)
        let reducedMotion = try bool(&f, "reducedMotion")
        try f.finish(known: "direction, time, reducedMotion")
        guard let direction, direction == "expand" || direction == "collapse" else {
            throw .invalid(
                "invalid-value",
                "\(f.path("direction")) is required: \"expand\" (the next detent up) or \"collapse\" (the next one down)",
                field: f.path("direction"))
        }
        return (direction == "expand", time, reducedMotion)
    }

    /// A dismiss request: the client time, and whether the open sheets stacked on the session
    /// go with it (`cascade`).
    static func dismiss(_ value: JSONValue?, clock: SessionClock, path: String = "") throws(Problem) -> (
        Double?, cascade: Bool, reducedMotion: Bool?
    ) {
        var f = try FieldReader(value, path: path)
        let time = try time(&f, required: clock == .client)
        let cascade = try bool(&f, "cascade") ?? false
        let reducedMotion = try bool(&f, "reducedMotion")
        try f.finish(known: "time, cascade, reducedMotion")
        return (time, cascade, reducedMotion)
    }
}

extension Problem {
    /// The same problem, naming `field` (unless it names a deeper one already).
    func at(_ field: String) -> Problem {
        var p = self
        if p.field == nil || p.field == "geometry" || p.field == "preset" { p.field = field }
        return p
    }
}
