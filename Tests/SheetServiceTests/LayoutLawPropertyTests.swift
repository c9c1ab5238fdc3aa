// Layout changes as clients predict them: generated fluid configurations (content-fit detents,
// each keyboard policy and layout motion), generated sequences of pan and layout events. Before
// each layout event's answer, a client evaluating the `layoutLaw` it holds (LayoutLawClient.swift)
// predicts the new detents, the unreachable ones and the card's move; after it, it draws the drag
// with the laws the answer carries. Every prediction must equal the engine's, within 1e-9.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

/// What a generated run compared.
private struct LayoutTally {
    var configs = 0
    var events = 0
    var layouts = 0
    var moves = 0
    var rebases = 0
    var refused = 0
    /// Layout changes after which a `contentAnchor` detent was placed, and after which it was
    /// unreachable (its point past the content's end, or no content height).
    var anchorsPlaced = 0
    var anchorsUnreachable = 0
    var failures: [String] = []

    mutating func fail(_ message: String) {
        if failures.count < 20 { failures.append(message) }
    }
}

private func close(_ x: Double, _ y: Double) -> Bool {
    x.bitPattern == y.bitPattern || abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
}

extension Gen {
    /// A fluid configuration: detents of every kind (content-fit ones too), a keyboard policy and a
    /// layout motion.
    mutating func layoutOptions() -> [(key: String, value: OptionValue)] {
        var specs: [(key: String, value: OptionValue)] = []
        let pool = ["full", "large", "half", "fit", "tip", "peek"].shuffled(using: &rng)
        for name in pool.prefix(1 + int(4)) {
            let spec: (String, Double)
            switch int(5) {
            case 0: spec = ("fromTop", pick([uniform(0, 900), 0, 18]))
            case 1: spec = ("fraction", pick([uniform(0, 1), 0.5, 1]))
            case 2: spec = ("height", pick([uniform(0, 900), 69]))
            case 3: spec = ("contentAnchor", pick([uniform(0, 900), 0, 240, 300]))
            default: spec = ("content", pick([uniform(0, 120), 0, 34]))
            }
            var members: [(key: String, value: OptionValue)] = [(spec.0, .number(spec.1))]
            if spec.0 == "contentAnchor", chance(0.6) {
                members.append(("offset", .number(pick([uniform(0, 120), 62]))))
            }
            specs.append((name, .object(members)))
        }
        var o: [(key: String, value: OptionValue)] = [("detents", .object(specs))]
        o.append(("keyboard", .string(pick(["lift", "extend", "none"]))))
        if chance(0.3) { o.append(("layoutMotion", .string(pick(["release", "none"])))) }
        if chance(0.3) { o.append(("hideable", .bool(chance(0.5)))) }
        if chance(0.3) { o.append(("rubberBand", .bool(chance(0.5)))) }
        if chance(0.2) { o.append(("dampingRatio", .number(pick([0.5, 0.8, 1, 1.5])))) }
        // Every edge: the law says it, and the client takes its geometry along that axis.
        if chance(0.4) { o.append(("edge", .string(pick(["top", "left", "right"])))) }
        return o
    }

    /// A change of layout: the keyboard up or down, the content's height, a rotation, sometimes
    /// several at once, with or without its own motion.
    mutating func layoutChange(_ current: Layout) -> LayoutChange {
        var change = LayoutChange()
        switch int(6) {
        case 0, 1: change.keyboardInset = current.keyboardIsUp ? 0 : pick([uniform(200, 350), 291, 1])
        case 2, 3: change.contentHeight = pick([uniform(0, 1200), 0, 240, uniform(100, 400)])
        case 4:
            let g = current.geometry
            // A rotation: width and height swap (a phone is 390 wide), insets move.
            let h = g.height > 600 ? pick([390, 430, uniform(300, 600)]) : pick([844, 932, uniform(600, 1200)])
            // The width is the old height (side sheets move along it); the notch goes to the sides in landscape.
            change.geometry = try? Geometry(
                height: h, safeAreaTop: h > 600 ? 47 : 0, safeAreaBottom: h > 600 ? 34 : 21, width: g.height,
                safeAreaLeft: h > 600 ? 0 : 47, safeAreaRight: h > 600 ? 0 : 47)
        default:
            change.keyboardInset = current.keyboardIsUp ? 0 : uniform(1, 400)
            change.contentHeight = uniform(0, 900)
        }
        if chance(0.3) {
            change.motion = pick([
                .release, LayoutMotion.none, .timed(.easeOut, duration: 0.25), .timed(.linear, duration: 0.5),
            ])
        }
        return change
    }
}

private let layoutConfigs = 200
private let eventsPerConfig = 520

private func runLayouts() throws -> LayoutTally {
    var gen = Gen(seed: 0x1A70_0027)
    var tally = LayoutTally()
    var attempts = 0
    while tally.configs < layoutConfigs, attempts < 20 * layoutConfigs {
        attempts += 1
        let options = gen.layoutOptions()
        let g0 = gen.chance(0.7) ? Geometry.standard : gen.geometry()
        // A width for side sheets (a portrait phone's 390, or any).
        let width = gen.chance(0.5) ? 390 : gen.uniform(200, 1400)
        let g =
            (try? Geometry(
                height: g0.height, safeAreaTop: g0.safeAreaTop, safeAreaBottom: g0.safeAreaBottom, width: width,
                safeAreaLeft: gen.chance(0.5) ? 0 : 40, safeAreaRight: gen.chance(0.5) ? 0 : 40)) ?? g0
        guard
            let first = try? Layout(
                geometry: g, keyboardInset: gen.chance(0.2) ? 291 : 0,
                contentHeight: gen.chance(0.8) ? gen.uniform(0, 900) : nil),
            let model = try? SheetModel(preset: .fluid, layout: first, options: options)
        else { continue }
        tally.configs += 1
        try run(model, options, &gen, &tally)
    }
    return tally
}

/// One session: events until the budget is spent.
private func run(
    _ model: SheetModel, _ options: [(key: String, value: OptionValue)], _ gen: inout Gen, _ tally: inout LayoutTally
) throws {
    let config = describe(options, model.geometry)
    var laws = try renderedLaws(model)
    var layoutLaw = try ClientLayoutLaw(json: try Read.member(laws, "layoutLaw", in: "laws"))
    var dragLaw = try ClientLaw(json: try Read.member(laws, "dragLaw", in: "laws"))
    var releaseLaw = try ClientReleaseLaw(json: try Read.member(laws, "releaseLaw", in: "laws"))
    // The client's own view of its layout (it measured it) and of the detents (from the law).
    var layout = model.layout
    func predicted(_ l: Layout) -> (detents: [(name: String, constant: Double)], unreachable: [String]) {
        layoutLaw.resolve(l.geometry, keyboardInset: l.keyboardInset, contentHeight: l.contentHeight)
    }
    let first = predicted(layout)
    var detents = first.detents
    func same(_ p: (detents: [(name: String, constant: Double)], unreachable: [String]), _ m: SheetModel) -> Bool {
        p.unreachable == m.unreachable && p.detents.count == m.detents.count
            && zip(p.detents, m.detents).allSatisfy { $0.name == $1.name && close($0.constant, $1.constant) }
    }
    if !same(first, model) { tally.fail("\(config): first layout: client \(first), engine \(model.detents)") }
    let visible = model.detents.filter { !$0.isHidden }
    var session = try SheetSession(model: model, initialDetent: gen.pick(visible).name)
    var keyboardReturn: String?
    var segment: ClientSegment?
    var time = 0.0
    for _ in 0..<eventsPerConfig {
        time += gen.pick([0.004, 0.016, 0.1, 0.4])
        tally.events += 1
        let before = session.snapshot(at: time)
        if gen.chance(0.3) {
            // A layout change, predicted from the law the client holds.
            let change = gen.layoutChange(layout)
            var next = layout
            if let g = change.geometry { next.geometry = g }
            if let k = change.keyboardInset { next.keyboardInset = k }
            if let h = change.contentHeight { next.contentHeight = h }
            let o = session.handle(.layout(change), at: time)
            if case .invalid = o.action {
                // Refused (an inset taller than a rotated screen, no detent left): nothing changed.
                tally.refused += 1
                if session.snapshot(at: time) != before { tally.fail("\(config): a refused layout moved the card") }
                continue
            }
            tally.layouts += 1
            let rose = !layout.keyboardIsUp && next.keyboardIsUp
            let fell = layout.keyboardIsUp && !next.keyboardIsUp
            let expected = predicted(next)
            if !same(expected, session.model) {
                tally.fail("\(config) \(change): client \(expected), engine \(session.model.detents)")
                return
            }
            let oldProgress = dragLaw.progress(at:)
            layout = next
            detents = expected.detents
            for rule in layoutLaw.rules where rule.kind == "contentAnchor" {
                if expected.unreachable.contains(rule.name) {
                    tally.anchorsUnreachable += 1
                } else {
                    tally.anchorsPlaced += 1
                }
            }
            if !o.relaid { tally.fail("\(config): a layout answer without its laws") }
            laws = try renderedLaws(session.model, revision: session.layoutRevision)
            dragLaw = try ClientLaw(json: try Read.member(laws, "dragLaw", in: "laws"))
            releaseLaw = try ClientReleaseLaw(json: try Read.member(laws, "releaseLaw", in: "laws"))
            layoutLaw = try ClientLayoutLaw(json: try Read.member(laws, "layoutLaw", in: "laws"))
            let motion = change.motion.map { $0.name } ?? layoutLaw.motion
            switch before.state {
            case .hidden:
                keyboardReturn = nil
                if o.snapshot.state != .hidden { tally.fail("\(config): a hidden card moved") }
            case .resting, .animating:
                let from = before.detent!
                let target = clientDestination(
                    of: from.name, oldConstant: from.constant, oldProgress: oldProgress, detents: detents,
                    keyboard: layoutLaw.keyboard, rose: rose, fell: fell, keyboardReturn: &keyboardReturn)
                let to = detents.first { $0.name == target }!.constant
                if before.state == .resting, before.constant == to {
                    if o.animation != nil || o.snapshot.constant != to {
                        tally.fail("\(config): a card already there moved: \(o.action)")
                    }
                    continue
                }
                guard let a = o.animation, let snap = o.snap else {
                    tally.fail("\(config) \(change): the client moves the card to \(target); the engine \(o.action)")
                    continue
                }
                var client: ClientRelease
                switch motion {
                case "release":
                    client = try releaseLaw.motion(
                        from: before.constant, to: target, velocity: before.velocity,
                        detents: Dictionary(uniqueKeysWithValues: detents.map { ($0.name, $0.constant) }))
                case "none":
                    client = ClientRelease(
                        detent: target, projected: nil, curve: "linear", duration: 0, from: before.constant, to: to,
                        velocity: 0)
                default:
                    guard case let .timed(_, d)? = change.motion else { continue }
                    client = ClientRelease(
                        detent: target, projected: nil, curve: motion, duration: d, from: before.constant, to: to,
                        velocity: 0)
                }
                if !agree(client, answered(snap, a)) {
                    tally.fail(
                        "\(config) \(change) from \(before.state): client \(client), engine \(answered(snap, a))")
                }
                // Continuous: the new motion starts where the card is, at its speed where it can.
                // (`none` is a jump by definition, and a spring already within its settle distance
                // lasts 0 s: it ends at the detent at once, as after a release.)
                let s = a.sample(at: time)
                if motion != "none", a.duration > 0,
                    !close(s.constant, before.constant) || (motion == "release" && !close(s.velocity, before.velocity))
                {
                    tally.fail("\(config): a jump at the layout change: \(before.constant)→\(s.constant)")
                }
                tally.moves += 1
            case .dragging:
                if layoutLaw.keyboard == "extend", rose { keyboardReturn = session.archive.keyboardReturn }
                if fell { keyboardReturn = nil }
                guard let d = o.drag else {
                    tally.fail("\(config): a layout change mid-drag without a new segment")
                    continue
                }
                segment = try ClientSegment(json: try rendered(d))
                // The card stays under the finger (a clamping bound that moved past it takes it along).
                // The new law reaches every constant within its bounds, and past one up to the
                // rubber band's asymptote (a card dragged below a screen that shrank cannot stay;
                // within 1e-5 pt of it the stretch is capped: DragLaw.maxStretch).
                let reach = dragLaw.rubberBand.map { $0.dimension - 1e-5 } ?? 0
                let reachable =
                    (dragLaw.lower.map { before.constant > $0 - reach || before.constant == $0 } ?? true)
                    && (dragLaw.upper.map { before.constant < $0 + reach || before.constant == $0 } ?? true)
                if reachable, abs(o.snapshot.constant - before.constant) > 1e-9 {
                    tally.fail(
                        "\(config) \(change): the card left the finger by \(o.snapshot.constant - before.constant)")
                }
                tally.rebases += 1
            }
            continue
        }
        switch before.state {
        case .hidden:
            _ = session.handle(.show(detent: nil), at: time)
        case .resting, .animating:
            let o = session.handle(.pan(PanEvent(phase: .began)), at: time)
            if case .conflict(.keyboardLocked) = o.action {
                if layoutLaw.keyboardDrag || !layout.keyboardIsUp { tally.fail("\(config): a drag locked wrongly") }
                continue
            }
            guard let d = o.drag else {
                tally.fail("\(config): began answered \(o.action)")
                continue
            }
            segment = try ClientSegment(json: try rendered(d))
        case .dragging:
            guard let s = segment else { continue }
            if gen.chance(0.1) {
                let o = session.handle(.pan(PanEvent(phase: .ended, velocity: gen.uniform(-3000, 3000))), at: time)
                if o.animation == nil { tally.fail("\(config): ended answered \(o.action)") }
                segment = nil
                continue
            }
            let t = s.base + gen.uniform(-500, 500)
            let o = session.handle(.pan(PanEvent(phase: .changed, translation: t)), at: time)
            let card = dragLaw.card(t, in: s)
            if !close(o.snapshot.constant, card.constant) || !close(o.snapshot.dimmerAlpha, card.dimmerAlpha)
                || !close(o.snapshot.progress, card.progress)
            {
                tally.fail("\(config): changed \(t) engine \(o.snapshot.constant) client \(card.constant)")
            }
        }
    }
}

@Suite struct LayoutLawPropertyTests {
    @Test("a client evaluating the layout law predicts every layout change, and drags on after it")
    func clientMatchesEngine() throws {
        let tally = try runLayouts()
        print(
            "LayoutLawPropertyTests: \(tally.configs) configurations, \(tally.events) events, \(tally.layouts) layout changes (\(tally.refused) refused), \(tally.moves) moves predicted, \(tally.rebases) drags re-based, contentAnchor detents placed \(tally.anchorsPlaced) times and unreachable \(tally.anchorsUnreachable) times"
        )
        #expect(tally.failures.isEmpty, "\(tally.failures.joined(separator: "\n"))")
        #expect(tally.configs == layoutConfigs)
        #expect(tally.events >= 100_000)
        #expect(tally.layouts >= 20_000)
        #expect(tally.moves >= 2_000)
        #expect(tally.rebases >= 1_000)
        #expect(tally.anchorsPlaced >= 1_000 && tally.anchorsUnreachable >= 1_000)
    }
}
