import SheetPhysics

/// Mode "E": one engine session driven straight from bytes, with the numbers the service's
/// decoders let through (finite; geometry and pan values up to 1e6 in magnitude, times up to 1e9,
/// option values any finite number), so the step is fuzzed without the cost of JSON around it.
///
/// Layout (ByteReader: every read past the end is 0):
///
///     preset        1 byte, index into PresetName.allCases
///     flags         1 byte: bit 0 a geometry follows, bit 1 an initial detent follows,
///                   bits 2–3 the number of options (0–3)
///     geometry      height, safeAreaTop, safeAreaBottom (ByteReader.number)
///     options       each: 1 byte name (the preset's catalog, then one unknown), a value
///     initialDetent 1 byte: one of the model's detents, or an unknown name
///     start time    a number
///     events        until the input ends: 1 byte op, a time step, then the op's arguments
///
/// Every outcome, snapshot and animation is checked (Invariants.swift), and at the end the same
/// events are replayed on a fresh session: the engine is a pure function of its events and
/// times, so the outcomes must be identical.
enum EngineTarget {
    /// Strings and object keys option values are built from: the names the presets look for,
    /// and a few they do not.
    private static let strings = [
        "half", "fullScreen", "oneFourth", "oneThird", "tip", "full", "hidden", "expanded", "normal", "open",
        "compressed", "closed", "custom", "", "a",
    ]
    private static let keys = [
        "open", "compressed", "closed", "custom", "full", "half", "tip", "fromTop", "fraction", "height", "hidden",
        "content", "contentAnchor", "offset", "a", "b", "c",
    ]

    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        var r = ByteReader(bytes)
        let preset = PresetName.allCases[r.index(PresetName.allCases.count)]
        let flags = r.byte()
        var geometry = Geometry.standard
        if flags & 1 != 0 {
            let height = r.number(limit: 1e6)
            let top = r.number(limit: 1e6)
            let bottom = r.number(limit: 1e6)
            // An invalid geometry is the decoder's 400: nothing of the engine to run.
            guard let g = try? Geometry(height: height, safeAreaTop: top, safeAreaBottom: bottom) else { return }
            geometry = g
        }
        var options: [(key: String, value: OptionValue)] = []
        let names = preset.optionNames + ["bogus"]
        for _ in 0..<Int((flags >> 2) & 3) {
            let name = names[r.index(names.count)]
            let value = optionValue(&r, depth: 0)
            // The JSON reader refuses duplicate keys, so the engine never sees them.
            if !options.contains(where: { $0.key == name }) { options.append((name, value)) }
        }
        let model: SheetModel
        do {
            model = try SheetModel(preset: preset, geometry: geometry, options: options)
        } catch {
            if tracing { trace("engine: \(preset) \(geometry) \(options): \(error)") }
            return
        }
        if tracing { trace("engine: \(preset) \(geometry) \(options): detents \(model.detents.map(\.name))") }
        for d in model.detents {
            check(d.constant.isFinite, "\(preset) detent \(d.name) has constant \(d.constant) (options \(options))")
        }
        var initial: String?
        if flags & 2 != 0 {
            let i = r.index(model.detents.count + 1)
            initial = i < model.detents.count ? model.detents[i].name : "bogus"
        }
        guard let start = try? SheetSession(model: model, initialDetent: initial) else {
            if tracing { trace("engine: initial detent \(initial ?? "nil") refused") }
            return
        }
        var session = start
        var time = r.number(limit: 1e9)
        checkSnapshot(session.snapshot(at: time), "\(preset) initial snapshot")
        var history: [(event: SheetEvent, time: Double, action: SheetAction, snapshot: SheetSnapshot)] = []
        while !r.isEmpty {
            let op = r.byte()
            time = min(max(time + r.number(limit: 10), -1e9), 1e9)
            let event: SheetEvent
            switch op & 7 {
            case 0: event = .pan(pan(.began, op, &r, preset))
            case 1, 2: event = .pan(pan(.changed, op, &r, preset))
            case 3: event = .pan(pan(.ended, op, &r, preset))
            case 4: event = .pan(pan(.cancelled, op, &r, preset))
            case 5:
                // One of the model's detents, the default (nil), or a name it does not have.
                let i = r.index(model.detents.count + 2)
                let names = model.detents.map(\.name) + [nil, "bogus"]
                event = .show(detent: names[i])
            case 6: event = .dismiss
            default:
                switch op & 0x38 {
                case 0x08, 0x10:
                    // A layout change: any inset and content height the decoders accept, or a
                    // screen (the engine refuses an inset taller than it).
                    var change = LayoutChange()
                    if preset.has(.keyboard), op & 0x40 != 0 { change.keyboardInset = abs(r.number(limit: 1e6)) }
                    if preset.has(.contentFit), op & 0x80 != 0 { change.contentHeight = abs(r.number(limit: 1e6)) }
                    if op & 0x10 != 0 {
                        change.geometry = try? Geometry(
                            height: abs(r.number(limit: 1e6)), safeAreaTop: abs(r.number(limit: 1e6)),
                            safeAreaBottom: abs(r.number(limit: 1e6)))
                    }
                    change.motion = [LayoutMotion.release, .none, .timed(.easeOut, duration: 0.25)][r.index(3)]
                    event = .layout(change)
                case 0x18 where preset.has(.scrollHandOff):
                    event = .fling(velocity: max(abs(r.number(limit: 1e6)), 1e-9))
                default:
                    // A look without an event: the session sampled where an animation may be mid-way.
                    checkSnapshot(session.snapshot(at: time), "\(preset) snapshot at \(time)")
                    continue
                }
            }
            let outcome = session.handle(event, at: time)
            let what = "\(preset) \(event) at \(time)"
            if tracing {
                trace("engine: \(what) → \(outcome.action) \(outcome.snapshot.state) \(outcome.snapshot.constant)")
            }
            checkSnapshot(outcome.snapshot, what)
            if let v = outcome.velocity { check(v.isFinite, "\(what): release velocity \(v)") }
            if let a = outcome.animation { checkAnimation(a, what) }
            if let a = outcome.interrupted { checkAnimation(a, "\(what), interrupted") }
            for later in [0.001, 0.1, 1] {
                checkSnapshot(session.snapshot(at: time + later), "\(what), \(later) s later")
            }
            history.append((event, time, outcome.action, outcome.snapshot))
        }
        // Replayability (docs/HTTP.md: client-clock sessions are fully replayable).
        var again = start
        for (i, step) in history.enumerated() {
            let outcome = again.handle(step.event, at: step.time)
            check(
                outcome.action == step.action && outcome.snapshot == step.snapshot,
                "\(preset) event \(i) (\(step.event) at \(step.time)) gave another outcome when replayed")
        }
    }

    /// A pan event as Decode.pan builds it: translation optional except on changed (required),
    /// velocity only on ended (nil: estimated), scrollOffset only with scroll hand-off; the
    /// request's own reducedMotion by the op's top bits (none, true, false, none).
    private static func pan(_ phase: PanPhase, _ op: UInt8, _ r: inout ByteReader, _ preset: PresetName) -> PanEvent {
        let translation: Double? = phase == .changed || op & 0x10 != 0 ? r.number(limit: 1e6) : nil
        let velocity: Double? = phase == .ended && op & 0x08 == 0 ? r.number(limit: 1e6) : nil
        let scrollOffset: Double? = preset.has(.scrollHandOff) && op & 0x20 != 0 ? r.number(limit: 1e6) : nil
        let reducedMotion: Bool? = [nil, true, false, nil][Int(op >> 6)]
        return PanEvent(
            phase: phase, translation: translation, velocity: velocity, scrollOffset: scrollOffset,
            reducedMotion: reducedMotion)
    }

    /// An option value of any JSON shape; numbers may be any finite Double (the reader refuses
    /// only what overflows), objects have distinct keys (the reader refuses duplicates).
    private static func optionValue(_ r: inout ByteReader, depth: Int) -> OptionValue {
        switch r.byte() % 6 {
        case 0: return .number(r.number(limit: .greatestFiniteMagnitude))
        case 1: return .bool(r.byte() & 1 != 0)
        case 2: return .null
        case 3: return .string(strings[r.index(strings.count)])
        case 4 where depth < 3:
            var members: [(key: String, value: OptionValue)] = []
            for _ in 0..<r.index(5) {
                let key = keys[r.index(keys.count)]
                let value = optionValue(&r, depth: depth + 1)
                if !members.contains(where: { $0.key == key }) { members.append((key, value)) }
            }
            return .object(members)
        case 5 where depth < 3:
            return .array((0..<r.index(4)).map { _ in optionValue(&r, depth: depth + 1) })
        default: return .number(r.number(limit: 1e6))
        }
    }
}
