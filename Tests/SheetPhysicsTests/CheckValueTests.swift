import Foundation
import PhysicsCheckValues
import SheetPhysics
import Testing

// The physics check values (PhysicsCheckValues, the same rows SheetServiceTests replays through
// HTTP) on the engine itself. Default geometry (844, 47, 34): S = 763, H = 797.

/// The preset a check row names.
func preset(_ name: String) throws -> PresetName {
    try #require(PresetName(rawValue: name), "a check row names preset \(name)")
}

/// A session of `name` resting at its check-table detent.
func restingForChecks(_ name: String, options: [(key: String, value: OptionValue)] = []) throws -> SheetSession {
    let rest = try #require(CheckValues.restingDetent[name], "no resting detent for \(name)")
    return try resting(preset(name), at: rest.name, options: options)
}

@Test(arguments: CheckValues.releases)
func releaseDecision(_ row: ReleaseCheck) throws {
    var s = try restingForChecks(row.preset)
    dragged(&s, to: row.constant)
    #expect(close(s.snapshot(at: 0.05).constant, row.constant, 1e-9))
    let out = s.handle(.pan(PanEvent(phase: .ended, velocity: row.velocity)), at: 0.1)
    let snap = try #require(out.snap)
    #expect(snap.detent.name == row.detent)
    #expect(close(snap.detent.constant, row.snapConstant, 0.01))
    #expect(out.velocitySource == .client)
}

@Test(arguments: CheckValues.dimmer)
func dimmerWhileDragging(_ row: DimmerCheck) throws {
    let name = try preset(row.preset)
    var s = try restingForChecks(row.preset, options: name == .fluid ? [("rubberBand", .bool(false))] : [])
    dragged(&s, to: row.constant)
    let snap = s.snapshot(at: 0.05)
    #expect(snap.state == .dragging)
    if name != .facebook || row.constant >= 30 {
        #expect(close(snap.constant, row.constant, 1e-9))
    }
    #expect(close(try SheetModel(preset: name).alpha(at: row.constant), row.alpha, 1e-4))
    #expect(close(snap.dimmerAlpha, try SheetModel(preset: name).alpha(at: snap.constant), 1e-12))
}

@Test(arguments: CheckValues.dragLimits)
func dragLimit(_ row: DragLimitCheck) throws {
    var s = try resting(preset(row.preset), at: row.startDetent)
    #expect(close(s.snapshot(at: 0).constant, row.start, 1e-9))
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    let out = s.handle(.pan(PanEvent(phase: .changed, translation: row.translation)), at: 0.05)
    #expect(close(out.snapshot.constant, row.constant, 0.01))
}

@Test(arguments: CheckValues.showFrames)
func showFrames(_ row: ShowFramesCheck) throws {
    var s = try SheetSession(model: SheetModel(preset: preset(row.preset)))
    let out = s.handle(.show(detent: nil), at: 0)
    let a = try #require(out.animation)
    #expect(a.detent.name == row.target)
    let frames = a.frames(fps: 30)
    #expect(frames.count == row.frameCount)
    for (t, constant, alpha) in row.frames {
        let f = try #require(frames.first { close($0.t, t, 1e-3) }, "a frame at t = \(t)")
        #expect(close(f.constant, constant, 0.01), "constant at \(t): \(f.constant)")
        #expect(close(f.dimmerAlpha, alpha, 1e-4), "alpha at \(t): \(f.dimmerAlpha)")
    }
    #expect(frames.last!.constant == a.to)
}

@Test func fluidSpringCheckValue() throws {
    let check = CheckValues.fluidSpring
    let rest = try #require(CheckValues.restingDetent[check.preset])
    var s = try resting(preset(check.preset), at: check.startDetent)
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    _ = s.handle(.pan(PanEvent(phase: .changed, translation: check.from - rest.constant)), at: 0.01)
    let out = s.handle(.pan(PanEvent(phase: .ended, velocity: check.velocity)), at: 0.02)
    let a = try #require(out.animation)
    #expect(a.detent.name == check.detent)
    #expect(a.from == check.from)
    #expect(a.to == check.to)
    #expect(close(a.duration, check.duration, 1e-9))
    for (elapsed, constant) in check.samples {
        #expect(close(a.sample(elapsed: elapsed).constant, constant, 0.01), "constant at \(elapsed)")
    }
}

@Test(arguments: CheckValues.layouts)
func layoutChange(_ row: LayoutCheck) throws {
    var options: [(key: String, value: OptionValue)] = [("keyboard", .string(row.keyboard))]
    if let specs = row.detentSpecs {
        options.append(
            ("detents", .object(specs.map { name, spec in (name, .object(spec.map { ($0.0, .number($0.1)) })) })))
    }
    let layout = try Layout(geometry: .standard, keyboardInset: 0, contentHeight: row.contentHeight)
    var s = try SheetSession(
        model: SheetModel(preset: .fluid, layout: layout, options: options), initialDetent: row.detent)
    for (i, step) in row.steps.enumerated() {
        var change = LayoutChange(
            keyboardInset: step.keyboardInset, contentHeight: step.contentHeight, motion: LayoutMotion.none)
        if let (h, st, sb) = step.geometry {
            change.geometry = try Geometry(height: h, safeAreaTop: st, safeAreaBottom: sb)
        }
        if let y = step.anchor, let specs = row.detentSpecs(anchor: y) {
            change.options = [
                ("detents", .object(specs.map { name, spec in (name, .object(spec.map { ($0.0, .number($0.1)) })) }))
            ]
        }
        let out = s.handle(.layout(change), at: Double(i + 1))
        #expect(out.relaid, "step \(i): \(out.action)")
    }
    #expect(s.model.detents.map(\.name) == row.detents.map(\.0))
    for (d, expected) in zip(s.model.detents, row.detents) {
        #expect(close(d.constant, expected.1, 0.01), "\(d.name): \(d.constant)")
    }
    #expect(s.model.unreachable == row.unreachable)
    let snap = s.snapshot(at: Double(row.steps.count + 1))
    #expect(snap.state == .resting)
    #expect(snap.detent?.name == row.rest.0)
    #expect(close(snap.constant, row.rest.1, 0.01))
}

@Test(arguments: CheckValues.scrolls)
func momentumAcrossTheBoundary(_ row: ScrollCheck) throws {
    var s = try SheetSession(
        model: SheetModel(
            preset: .fluid,
            options: [("momentumHandOff", .bool(row.momentumHandOff)), ("dampingRatio", .number(row.dampingRatio))]),
        initialDetent: row.detent)
    let out: SheetOutcome
    if row.fling {
        out = s.handle(.fling(velocity: row.velocity), at: 1)
    } else {
        _ = s.handle(.pan(PanEvent(phase: .began)), at: 1)
        out = s.handle(.pan(PanEvent(phase: .ended, velocity: row.velocity)), at: 1)
    }
    let a = try #require(out.animation, "\(out.action)")
    #expect(a.detent.name == row.target)
    if let (after, velocity) = row.handOff {
        let handed = try #require(out.scrollFling)
        #expect(close(handed.time - 1, after, 1e-6))
        #expect(close(handed.velocity, velocity, 1e-4))
        #expect(close(a.duration, after, 1e-6))
        #expect(a.sample(elapsed: a.duration).constant == a.to)
    } else {
        #expect(out.scrollFling == nil)
    }
}

@Test(arguments: CheckValues.shapedReleases)
func shapedRelease(_ row: ShapedReleaseCheck) throws {
    // The row's options as the engine takes them (a small JSON-to-OptionValue reading of its own
    // members: strings, numbers and one level of objects).
    var options: [(key: String, value: OptionValue)] = []
    if row.options.contains("thresholds") {
        options.append(
            (
                "thresholds",
                .object([("expand", .number(0.25)), ("collapse", .number(0.5)), ("dismiss", .number(0.75))])
            ))
    }
    if row.options.contains("\"lowest\"") { options.append(("dismissFrom", .string("lowest"))) }
    if row.options.contains("\"any\"") { options.append(("dismissFrom", .string("any"))) }
    var s = try SheetSession(model: SheetModel(preset: .fluid, options: options), initialDetent: row.detent)
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 1)
    let out = s.handle(.pan(PanEvent(phase: .ended, velocity: row.velocity)), at: 1)
    #expect(out.snap?.detent.name == row.target, "\(out.snap?.reason ?? "no snap")")
}

@Test(arguments: CheckValues.edges)
func everyEdge(_ row: EdgeCheck) throws {
    let g = row.geometry
    let geometry = try Geometry(
        height: g.height, safeAreaTop: g.top, safeAreaBottom: g.bottom, width: g.width, safeAreaLeft: g.left,
        safeAreaRight: g.right)
    let layout = try Layout(geometry: geometry, keyboardInset: row.keyboardInset, contentHeight: nil)
    let model = try SheetModel(preset: .fluid, layout: layout, options: [("edge", .string(row.edge))])
    #expect(model.detents.map(\.name) == row.detents.map(\.0))
    for (d, (name, constant)) in zip(model.detents, row.detents) {
        #expect(close(d.constant, constant, 0.01), "\(name)")
    }
    #expect(model.dragLaw.edge.axis.rawValue == row.axis && model.dragLaw.edge.sign == row.sign)
    var s = try SheetSession(model: model, initialDetent: row.start)
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    let moved = s.handle(.pan(PanEvent(phase: .changed, translation: row.translation)), at: 0.05)
    #expect(close(moved.snapshot.constant, row.constant, 0.01), "\(moved.snapshot.constant)")
    let ended = s.handle(.pan(PanEvent(phase: .ended, velocity: row.velocity)), at: 0.1)
    #expect(ended.snap?.detent.name == row.snap)
    #expect(close(ended.snap?.detent.constant ?? .nan, row.snapConstant, 0.01))
}

@Test(arguments: CheckValues.stacks)
func stackedTransform(_ row: StackCheck) throws {
    // The row's recede option, read as the service reads options (`Decode.optionValue` of JSON).
    var options: [(key: String, value: OptionValue)] = []
    if let recede = row.recede {
        let members = recede.dropFirst().dropLast().split(separator: ",").map { pair in
            let kv = pair.split(separator: ":")
            let key = kv[0].trimmingCharacters(in: .whitespaces).trimmingCharacters(
                in: CharacterSet(charactersIn: "\""))
            return (key, OptionValue.number(Double(kv[1].trimmingCharacters(in: .whitespaces))!))
        }
        options.append(("recede", .object(members)))
    }
    let model = try SheetModel(preset: .fluid, options: options)
    let at = try #require(model.detent(named: row.detent)).constant
    let t = model.recede.transform(at: at)
    #expect([t.scale, t.lift, t.cornerRadius, t.alpha] == row.transform, "\(row.rule)")
}

/// "Reduced motion per request" on the engine: the request's own setting (the parameter of
/// `handle`, or the pan event's) decides the motion it starts, and the session's setting stays.
@Test(arguments: CheckValues.motions)
func requestMotion(_ row: MotionCheck) throws {
    var layout = Layout.standard
    layout.reducedMotion = row.session
    var s = try SheetSession(model: SheetModel(preset: .fluid, layout: layout, options: []), initialDetent: "tip")
    let out: SheetOutcome
    switch row.request {
    case .show(let detent): out = s.handle(.show(detent: detent), at: 5, reducedMotion: row.asked)
    case .dismiss: out = s.handle(.dismiss, at: 5, reducedMotion: row.asked)
    case .step(let expand): out = s.handle(.step(expand: expand), at: 5, reducedMotion: row.asked)
    case .release(let velocity):
        _ = s.handle(.pan(PanEvent(phase: .began)), at: 5)
        out = s.handle(.pan(PanEvent(phase: .ended, velocity: velocity, reducedMotion: row.asked)), at: 5.1)
    case .cancel:
        _ = s.handle(.pan(PanEvent(phase: .began)), at: 5)
        out = s.handle(.pan(PanEvent(phase: .cancelled, reducedMotion: row.asked)), at: 5.1)
    }
    let a = try #require(out.animation, "\(row.rule): a motion started")
    #expect(out.reducedMotion == row.applied, "\(row.rule)")
    #expect(a.detent.name == row.detent && a.to == row.constant, "\(row.rule): to \(a.detent.name) \(a.to)")
    #expect(a.curve.name == row.curve, "\(row.rule): \(a.curve.name)")
    #expect(close(a.duration, row.duration, 5e-4), "\(row.rule): \(a.duration)")
    if row.applied {
        // A jump: every frame at the target.
        #expect(a.frames(fps: 60).allSatisfy { $0.constant == row.constant }, "\(row.rule)")
    }
    // The session's own setting, and so its release law, stay.
    #expect(s.model.releaseLaw.reducedMotion == row.session, "\(row.rule)")
}
