import SheetPhysics

// The layout event, `{"phase": "layout", "time": t, …}` on `POST /sessions/{id}/pan`: alone or
// inside a batch, so that its order relative to the pan events it arrives with holds.

extension Decode {
    /// The fields a layout event may carry for `preset`, for the unknown-field message.
    static func layoutFields(_ preset: PresetName) -> String {
        (["phase", "time"] + layoutChanges(preset) + ["motion"]).joined(separator: ", ")
    }

    /// The fields that change a layout (one of them is required), for `preset`.
    static func layoutChanges(_ preset: PresetName) -> [String] {
        var changes = ["geometry"]
        if preset.has(.keyboard) { changes.append("keyboardInset") }
        if preset.has(.contentFit) { changes.append("contentHeight") }
        return changes + ["options", "reducedMotion"]
    }

    /// An event of the pan route: a pan event, or a layout change (phase `layout`).
    static func panRouteEvent(
        _ value: JSONValue?, preset: PresetName, clock: SessionClock, path: String = ""
    ) throws(Problem) -> (SheetEvent, Double?) {
        if case let .object(o)? = value, let phase = o.members.first(where: { $0.key == "phase" })?.value {
            if phase == .string("layout") { return try layout(value, preset: preset, clock: clock, path: path) }
            if phase == .string("fling"), preset.has(.scrollHandOff) {
                return try fling(value, clock: clock, path: path)
            }
        }
        let (pan, time) = try pan(value, preset: preset, clock: clock, path: path)
        return (.pan(pan), time)
    }

    /// A layout event: at least one of geometry, keyboardInset (presets with the keyboard),
    /// contentHeight (presets with content-fit detents) and options, and an optional motion.
    static func layout(
        _ value: JSONValue?, preset: PresetName, clock: SessionClock, path: String = ""
    ) throws(Problem) -> (SheetEvent, Double?) {
        var f = try FieldReader(value, path: path)
        _ = f.take("phase")
        var change = LayoutChange()
        if let g = f.take("geometry") { change.geometry = try geometry(g, path: f.path("geometry")) }
        if preset.has(.keyboard) {
            change.keyboardInset = try nonNegative(&f, "keyboardInset", what: "the points the keyboard covers")
        }
        if preset.has(.contentFit) {
            change.contentHeight = try nonNegative(&f, "contentHeight", what: "the content's height in points")
        }
        if let o = f.take("options") {
            guard case let .object(members) = o else {
                throw .invalid("invalid-value", "\(f.path("options")) must be an object", field: f.path("options"))
            }
            change.options = members.map { ($0.key, optionValue($0.value)) }
        }
        change.reducedMotion = try bool(&f, "reducedMotion")
        if let m = f.take("motion") { change.motion = try motion(m, path: f.path("motion")) }
        let time = try time(&f, required: clock == .client)
        try f.finish(known: layoutFields(preset))
        guard
            change.geometry != nil || change.keyboardInset != nil || change.contentHeight != nil
                || change.options != nil || change.reducedMotion != nil
        else {
            throw .invalid(
                "invalid-value",
                "a layout event changes at least one of \(layoutChanges(preset).joined(separator: ", ")) (motion only says how)",
                field: path.isEmpty ? nil : path)
        }
        return (.layout(change), time)
    }

    /// A fling event: the content's momentum, `{"phase": "fling", "velocity": v > 0, "time": t}`.
    static func fling(_ value: JSONValue?, clock: SessionClock, path: String = "") throws(Problem) -> (
        SheetEvent, Double?
    ) {
        var f = try FieldReader(value, path: path)
        _ = f.take("phase")
        guard let v = try f.number("velocity") else {
            throw .invalid(
                "invalid-value",
                "\(f.path("velocity")) is required: the content's velocity (pt/s, > 0) as its fling reached its top",
                field: f.path("velocity"))
        }
        guard v > 0 else {
            throw .invalid(
                "invalid-value",
                "\(f.path("velocity")) must be > 0 (downward): a content fling reaches the content's top moving down, got \(v)",
                field: f.path("velocity"))
        }
        let time = try time(&f, required: clock == .client)
        let reducedMotion = try bool(&f, "reducedMotion")
        try f.finish(known: "phase, velocity, time, reducedMotion")
        return (.fling(velocity: v, reducedMotion: reducedMotion), time)
    }

    /// A geometry object: every member optional, the standard geometry's where absent (no width,
    /// side insets 0).
    static func geometry(_ value: JSONValue, path: String) throws(Problem) -> Geometry {
        var gf = try FieldReader(value, path: path)
        let height = try gf.number("height") ?? Geometry.standard.height
        let top = try gf.number("safeAreaTop") ?? Geometry.standard.safeAreaTop
        let bottom = try gf.number("safeAreaBottom") ?? Geometry.standard.safeAreaBottom
        let width = try gf.number("width")
        let left = try gf.number("safeAreaLeft") ?? 0
        let right = try gf.number("safeAreaRight") ?? 0
        try gf.finish(known: "height, safeAreaTop, safeAreaBottom, width, safeAreaLeft, safeAreaRight")
        do {
            return try Geometry(
                height: height, safeAreaTop: top, safeAreaBottom: bottom, width: width, safeAreaLeft: left,
                safeAreaRight: right)
        } catch {
            throw Problem(error).at(path)
        }
    }

    /// A boolean, if present.
    static func bool(_ f: inout FieldReader, _ key: String) throws(Problem) -> Bool? {
        guard let value = f.take(key) else { return nil }
        guard case let .bool(b) = value else {
            throw .invalid("invalid-value", "\(f.path(key)) must be true or false", field: f.path(key))
        }
        return b
    }

    /// A number ≥ 0 (points), if present.
    static func nonNegative(_ f: inout FieldReader, _ key: String, what: String) throws(Problem) -> Double? {
        guard let x = try f.number(key) else { return nil }
        guard x >= 0 else {
            throw .invalid(
                "invalid-value", "\(f.path(key)) is \(what) and must be ≥ 0, got \(x)", field: f.path(key))
        }
        return x
    }

    /// `"release"`, `"none"` or `{"curve": name, "duration": s}`.
    static func motion(_ value: JSONValue, path: String) throws(Problem) -> LayoutMotion {
        let curves = TimingCurve.Name.allCases.map(\.rawValue).joined(separator: ", ")
        let expected =
            "must be \"release\", \"none\" or {\"curve\": one of \(curves), \"duration\": seconds in (0, 10]}"
        if case let .string(name) = value, let m = LayoutMotion.named(name, duration: nil) { return m }
        guard case .object = value else { throw .invalid("invalid-value", "\(path) \(expected)", field: path) }
        var mf = try FieldReader(value, path: path)
        let name = try mf.string("curve")
        let duration = try mf.number("duration", limit: 10)
        try mf.finish(known: "curve, duration")
        guard let name, let m = LayoutMotion.named(name, duration: duration), case .timed = m else {
            throw .invalid("invalid-value", "\(path) \(expected)", field: path)
        }
        return m
    }
}

extension SheetEvent {
    /// Whether this is a pan `changed` (the one event a held session applies without asking the
    /// store for a newer version first).
    var isChanged: Bool {
        if case let .pan(p) = self { return p.phase == .changed }
        return false
    }

    /// The `phase` an answer names: the pan phase, or `layout`; nil for show and dismiss.
    var phaseName: String? {
        switch self {
        case let .pan(p): p.phase.rawValue
        case .layout: "layout"
        case .fling: "fling"
        case .show, .dismiss, .step: nil
        }
    }
}
