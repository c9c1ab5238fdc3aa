// Reduced motion per request (issue 28): every motion an event starts (an `ended`, a `cancelled`,
// transition's finish, a `fling`, `show`, `dismiss`, `step`) may say its own `reducedMotion`,
// overriding the session's setting for that one motion. Generated sessions of every preset, under
// reduced motion or not, take generated events with a request setting of nil, true or false; a
// client that reads the rendered release law (ReleaseLawClient.swift: the session's motions, or
// `requestOverride`'s where the request asks the other setting) predicts every animation, the
// setting the answer says it applied, and that a jump has no intermediate frame; the engine's
// answers must agree, and the session's own setting must never change.

import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

/// What a generated run compared.
private struct MotionTally {
    var configs = 0
    var events = 0
    /// Motions predicted from the release law and compared.
    var motions = 0
    /// Of those, the ones whose request overrode the session's setting.
    var overridden = 0
    var jumps = 0
    var mismatches = 0
    var failures: [String] = []

    mutating func fail(_ message: @autoclosure () -> String) {
        mismatches += 1
        if failures.count < 20 { failures.append(message()) }
    }
}

private let configsPerPreset = 150
private let eventsPerConfig = 120

/// A session of `preset` on a generated layout, under reduced motion or not.
private func generatedModel(_ preset: PresetName, _ gen: inout Gen) -> SheetModel? {
    let g = gen.geometry()
    var layout = Layout(geometry: g)
    layout.reducedMotion = gen.chance(0.5)
    return try? SheetModel(preset: preset, layout: layout, options: gen.options(preset, g))
}

private func runGenerated(_ preset: PresetName) throws -> MotionTally {
    var gen = Gen(seed: 0x28_0000 + UInt64(PresetName.allCases.firstIndex(of: preset)!))
    var tally = MotionTally()
    var attempts = 0
    while tally.configs < configsPerPreset, attempts < 20 * configsPerPreset {
        attempts += 1
        guard let model = generatedModel(preset, &gen) else { continue }
        tally.configs += 1
        try run(model, &gen, &tally)
    }
    return tally
}

/// The request settings generated: the session's, reduced, animated.
private let requestSettings: [Bool?] = [nil, true, false]

/// One session of `model`: events at rest (each after the last animation ended), every motion
/// compared with the client's evaluation of the rendered laws.
private func run(_ model: SheetModel, _ gen: inout Gen, _ tally: inout MotionTally) throws {
    let law = try ClientLaw(json: try rendered(model.dragLaw))
    let releaseLaw = try ClientReleaseLaw(json: try rendered(model.releaseLaw))
    let detentMap = Dictionary(uniqueKeysWithValues: model.detents.map { ($0.name, $0.constant) })
    let visible = model.detents.filter { !$0.isHidden }
    let sessionSetting = model.layout.reducedMotion
    var session = try SheetSession(model: model, initialDetent: gen.pick(visible).name)
    var time = 0.0
    var handled = 0
    let config = "\(model.preset) reducedMotion \(sessionSetting)"

    /// Compares one started motion with the client's prediction under the request's setting.
    func check(
        _ o: SheetOutcome, requested: Bool?, _ context: String,
        predict: (ClientReleaseLaw, Snap, Animation) throws -> ClientRelease
    ) throws {
        guard case .settle(let a, let snap) = o.action else {
            tally.fail("\(config) \(context): answered \(o.action), no motion")
            return
        }
        let (requestLaw, applied) = releaseLaw.forRequest(reducedMotion: requested)
        let client = try predict(requestLaw, snap, a)
        let engine = answered(o, snap, a)
        tally.motions += 1
        if requested != nil, requested != sessionSetting { tally.overridden += 1 }
        if !agree(client, engine) {
            tally.fail("\(config) \(context) r \(String(describing: requested)): client \(client), engine \(engine)")
        }
        if o.reducedMotion != applied {
            tally.fail("\(config) \(context): applied \(String(describing: o.reducedMotion)), client \(applied)")
        }
        if applied {
            tally.jumps += 1
            // A jump: duration 0 and every frame at the target (no intermediate frame).
            if a.duration != 0 || a.frames(fps: 60).contains(where: { $0.constant != a.to }) {
                tally.fail("\(config) \(context): a reduced motion with an intermediate frame")
            }
        }
    }

    while handled < eventsPerConfig {
        // At rest: past the end of whatever runs.
        if let a = session.animation(at: time) { time = a.endTime }
        time += 0.01
        let now = session.snapshot(at: time)
        let requested = gen.pick(requestSettings)
        let kind = gen.int(10)
        if now.state == .hidden || kind < 2 {
            // show: to a named visible detent, or the preset's default.
            let name: String? = gen.chance(0.5) ? gen.pick(visible).name : nil
            let o = session.handle(.show(detent: name), at: time, reducedMotion: requested)
            handled += 1
            try check(o, requested: requested, "show(\(name ?? "–")) from \(now.constant)") { l, snap, _ in
                try l.motion(from: now.constant, to: snap.detent.name, velocity: 0, detents: detentMap, isShow: true)
            }
        } else if kind == 2 {
            let o = session.handle(.dismiss, at: time, reducedMotion: requested)
            handled += 1
            try check(o, requested: requested, "dismiss from \(now.constant)") { l, snap, _ in
                try l.motion(from: now.constant, to: snap.detent.name, velocity: 0, detents: detentMap)
            }
        } else if kind == 3 {
            let expand = gen.chance(0.5)
            let o = session.handle(.step(expand: expand), at: time, reducedMotion: requested)
            handled += 1
            if o.animation == nil { continue }  // at an end: nothing moves
            try check(o, requested: requested, "step(\(expand)) from \(now.constant)") { l, snap, _ in
                try l.motion(
                    from: now.constant, to: snap.detent.name, velocity: 0, detents: detentMap,
                    isShow: o.step?.presented ?? false)
            }
        } else if kind == 4, model.preset.has(.scrollHandOff), let origin = now.detent {
            let v = gen.uniform(1, 6000)
            let o = session.handle(.fling(velocity: v, reducedMotion: requested), at: time)
            handled += 1
            if case .conflict = o.action { continue }  // the content does not scroll at this detent
            try check(o, requested: requested, "fling \(v) at \(origin.name)") { l, _, _ in
                try l.release(constant: origin.constant, velocity: v, origin: origin.name, detents: detentMap)
            }
        } else {
            // A drag: began, a few changed (each may finish a transition), then ended or cancelled.
            let began = session.handle(.pan(PanEvent(phase: .began)), at: time)
            handled += 1
            guard let start = began.drag else { continue }  // a locked or refused began
            let segment = try ClientSegment(json: try rendered(start))
            var c = began.snapshot.constant
            var finished = false
            var samples: [(t: Double, x: Double)] = []
            for _ in 0..<(1 + gen.int(6)) {
                time += 0.008
                let x = gen.uniform(-400, 400)
                let r = gen.pick(requestSettings)
                let o = session.handle(.pan(PanEvent(phase: .changed, translation: x, reducedMotion: r)), at: time)
                handled += 1
                samples.append((time, x))
                let card = law.card(x, in: segment)
                if card.finishes {
                    try check(o, requested: r, "finish at \(card.constant)") { l, snap, _ in
                        try l.motion(from: card.constant, to: snap.detent.name, velocity: 0, detents: detentMap)
                    }
                    finished = true
                    break
                }
                c = card.constant
            }
            if finished { continue }
            time += 0.008
            if gen.chance(0.2) {
                let o = session.handle(.pan(PanEvent(phase: .cancelled, reducedMotion: requested)), at: time)
                handled += 1
                try check(o, requested: requested, "cancelled at \(c)") { l, _, _ in
                    try l.motion(from: c, to: segment.origin, velocity: 0, detents: detentMap)
                }
            } else {
                let given: Double? = gen.chance(0.6) ? gen.uniform(-6000, 6000) : nil
                let o = session.handle(
                    .pan(PanEvent(phase: .ended, velocity: given, reducedMotion: requested)), at: time)
                handled += 1
                let v = given ?? releaseLaw.velocity(samples: samples, endingAt: time)
                try check(o, requested: requested, "ended at \(c) v \(v)") { l, _, _ in
                    try l.release(constant: c, velocity: v, origin: segment.origin, detents: detentMap)
                }
            }
        }
        // The request's setting is that request's: the session's never changes.
        if session.model.layout.reducedMotion != sessionSetting || session.model !== model {
            tally.fail("\(config): a request changed the session's setting")
        }
    }
    tally.events += handled
}

@Suite struct MotionLawPropertyTests {
    @Test(
        "a request's reducedMotion: a client evaluating the release law predicts every motion",
        arguments: PresetName.allCases)
    func clientMatchesEngine(_ preset: PresetName) throws {
        let t = try runGenerated(preset)
        print(
            "MotionLawPropertyTests \(preset): \(t.configs) configurations, \(t.events) events, \(t.motions) motions (\(t.overridden) overriding the session, \(t.jumps) jumps), \(t.mismatches) mismatches"
        )
        #expect(t.failures.isEmpty, "\(preset): \(t.failures.joined(separator: "\n"))")
        #expect(t.configs == configsPerPreset)
        #expect(t.events >= 18_000)
        #expect(t.overridden > 1_000)
    }
}
