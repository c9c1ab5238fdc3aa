// The drag and release laws as clients get them: generated options and geometries of every preset,
// the laws and each drag's segment rendered by the service's own writer (ReplyJSON) and read back with
// JSONReader, evaluated by the small clients (DragLawClient.swift, ReleaseLawClient.swift), must
// give exactly the constant, dimmer alpha and progress `SheetSession.handle` gives, and the snap
// and animation of `ended` and `cancelled`.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - Generators

/// Random values for generated cases, from the shared seeded generator.
struct Gen {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func int(_ n: Int) -> Int { Int.random(in: 0..<n, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func uniform(_ a: Double, _ b: Double) -> Double {
        a < b ? Double.random(in: a...b, using: &rng) : a
    }
    /// 10^uniform(log a, log b): every order of magnitude alike.
    mutating func logUniform(_ a: Double, _ b: Double) -> Double {
        min(max(pow(10, uniform(log10(a), log10(b))), a), b)
    }
    mutating func sign() -> Double { chance(0.5) ? 1 : -1 }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    /// A screen: the standard one, a common phone or tablet, or an extreme one.
    mutating func geometry() -> Geometry {
        let h: Double
        let top: Double
        let bottom: Double
        switch int(10) {
        case 0: return .standard
        case 1:
            h = logUniform(1, 1e5)
            top = uniform(0, 0.45) * h
            bottom = uniform(0, 0.45) * h
        default:
            h = chance(0.5) ? uniform(400, 1400).rounded() : uniform(400, 1400)
            top = chance(0.2) ? 0 : uniform(0, 60)
            bottom = chance(0.2) ? 0 : uniform(0, 40)
        }
        return (try? Geometry(height: h, safeAreaTop: top, safeAreaBottom: bottom)) ?? .standard
    }

    /// Options for `preset` on `g`: mostly valid, some the engine refuses (those are skipped).
    mutating func options(_ preset: PresetName, _ g: Geometry) -> [(key: String, value: OptionValue)] {
        let h = g.height
        let H = g.availableHeight
        var o: [(key: String, value: OptionValue)] = []
        func maybe(_ p: Double = 0.6) -> Bool { chance(p) }
        switch preset {
        case .facebook:
            if maybe(0.8) {
                let e = pick([uniform(0, H / 2), 0, uniform(0, H / 2).rounded(.down), H / 2, uniform(H / 2, H)])
                o.append(("expandedOffset", .number(e)))
            }
        case .twitter:
            if maybe() { o.append(("cardHeightRatio", .number(pick([uniform(0, 1), 1, 1e-6, 0.5])))) }
            if maybe() { o.append(("maxDimAlpha", .number(pick([uniform(0, 1), 0, 1])))) }
        case .glide:
            if maybe() { o.append(("segmented", .bool(chance(0.5)))) }
            if maybe(0.4) {
                var hs = [uniform(0, H), uniform(0, H), uniform(0, H)].sorted(by: >)
                if chance(0.05) { hs.shuffle(using: &rng) }  // refused unless still ordered
                var members: [(key: String, value: OptionValue)] = []
                for (k, name) in ["open", "compressed", "closed"].enumerated() where chance(0.8) {
                    members.append((name, .number(hs[k])))
                }
                o.append(("segmentHeights", .object(members)))
            }
            if maybe() {
                let d: OptionValue =
                    chance(0.3)
                    ? .object([("custom", .number(pick([uniform(0, 1.5 * h), 0, h, uniform(0, h).rounded()])))])
                    : .string(pick(["fullScreen", "half", "oneFourth", "oneThird"]))
                o.append(("concreteDimension", d))
            }
            if maybe(0.4) { o.append(("navigationBar", .bool(chance(0.5)))) }
            if maybe(0.5) { o.append(("headerHeight", .number(pick([uniform(0, H), 0, uniform(0, 120)])))) }
            if maybe(0.2) { o.append(("grabber", .bool(chance(0.5)))) }
        case .transition:
            if maybe() { o.append(("miniHeight", .number(pick([uniform(0, h - g.safeAreaBottom), 0, 60])))) }
            if maybe(0.8) {
                o.append(("finishThreshold", pick([.null, .number(uniform(0, 1)), .number(1), .number(1e-6)])))
            }
            if maybe(0.3) { o.append(("duration", .number(uniform(0.01, 2)))) }
            if maybe(0.3) { o.append(("completionSpeed", .number(uniform(0.1, 3)))) }
        case .swipeCell:
            if maybe(0.8) { o.append(("swipeDistance", .number(pick([uniform(0, h), h, 1, uniform(0, 200)])))) }
        case .fluid:
            var names: [String] = []
            if maybe(0.8) {
                var specs: [(key: String, value: OptionValue)] = []
                let pool = ["full", "large", "half", "medium", "tip", "peek", "d6", "d7"].shuffled(using: &rng)
                for name in pool.prefix(1 + int(4)) {
                    let spec: (String, Double)
                    switch int(3) {
                    case 0: spec = ("fromTop", pick([uniform(0, H), 0, H]))
                    case 1: spec = ("fraction", pick([uniform(0, 1), 0, 1, 0.5]))
                    default: spec = ("height", pick([uniform(0, H), 0, H, 69]))
                    }
                    specs.append((name, .object([(spec.0, .number(spec.1))])))
                    names.append(name)
                }
                o.append(("detents", .object(specs)))
            } else {
                names = ["full", "half", "tip"]
            }
            if maybe() { o.append(("hideable", .bool(chance(0.5)))) }
            if maybe() { o.append(("rubberBand", .bool(chance(0.5)))) }
            if maybe(0.4) { o.append(("undimmedDetent", .string(chance(0.05) ? "nowhere" : pick(names)))) }
            if maybe(0.4) { o.append(("maxDimAlpha", .number(pick([uniform(0, 1), 0, 1])))) }
            if maybe(0.2) { o.append(("skipDetents", .bool(chance(0.5)))) }
            // Where the content scrolls, who takes an upward drag first, and the hand-off of a
            // spring's momentum to the content (with springs that overshoot, so that it happens).
            if maybe(0.3) { o.append(("contentScrollsAt", pick([.string("everywhere"), .string("topMost")]))) }
            if maybe(0.3) { o.append(("dragFirst", .string(pick(["content", "sheet"])))) }
            if maybe(0.4) {
                o.append(("momentumHandOff", .bool(true)))
                if chance(0.5) { o.append(("dampingRatio", .number(pick([0.5, 0.7, 1, 1.3])))) }
            }
        }
        o.shuffle(using: &rng)  // the order of options does not matter
        return o
    }

    /// A finger position for the drag `s` under `law`: inside the bounds, at them, far past them,
    /// tiny movements, ±1e6, and around transition's finish point.
    mutating func translation(_ s: ClientSegment, _ law: ClientLaw) -> Double {
        let lo = law.lower ?? (law.upper.map { min($0, s.start) - 400 } ?? s.start - 400)
        let hi = law.upper ?? max(lo, s.start) + 400
        let span = max(hi - lo, 1)
        func at(_ candidate: Double) -> Double { candidate - s.start + s.base }
        switch int(20) {
        case 0: return sign() * 1e6
        case 1, 2: return sign() * logUniform(1e3, 1e6)
        case 3, 4: return s.base + sign() * logUniform(1e-15, 1e-2)
        case 5: return pick([s.base, 0, -0.0, s.base.nextUp, s.base.nextDown])
        case 6, 7:
            guard let b = [law.lower, law.upper, s.finish?.point].compactMap({ $0 }).randomElement(using: &rng)
            else { return at(uniform(lo, hi)) }
            let t = at(b)
            return pick([t, t.nextUp, t.nextDown, t + sign() * logUniform(1e-12, 1e-6)])
        case 8: return at(uniform(lo - 3 * span, hi + 3 * span)).rounded()
        default:
            if let f = s.finish, chance(0.9) {
                // Mostly short of the finish point, so that transition drags last.
                return f.toward > f.from ? at(uniform(lo - span / 2, f.point)) : at(uniform(f.point, hi + span / 2))
            }
            return at(uniform(lo - span / 2, hi + span / 2))
        }
    }
}

// MARK: - 1. The evaluation agrees with the engine

/// What a generated run compared.
private struct Tally {
    var configs = 0
    var refused = 0
    var drags = 0
    var translations = 0
    var settles = 0
    var rebases = 0
    /// Releases and cancels predicted from the release law.
    var releases = 0
    /// Releases that handed the card's momentum to the content (fluid's `momentumHandOff`).
    var handOffs = 0
    var failures: [String] = []

    mutating func fail(_ message: String) {
        if failures.count < 20 { failures.append(message) }
    }

    /// Compares one answer with the client's card; false (and recorded) past 1e-9.
    @discardableResult
    mutating func compare(_ s: SheetSnapshot, _ card: ClientCard, _ context: @autoclosure () -> String) -> Bool {
        let constant = compare("constant", s.constant, card.constant, context)
        let alpha = compare("dimmerAlpha", s.dimmerAlpha, card.dimmerAlpha, context)
        let progress = compare("progress", s.progress, card.progress, context)
        return constant && alpha && progress
    }

    private mutating func compare(
        _ name: StaticString, _ engine: Double, _ client: Double, _ context: () -> String
    ) -> Bool {
        // Within 1e-9 (NaN fails; the same NaN or infinity passes).
        if engine.bitPattern == client.bitPattern || abs(engine - client) <= 1e-9 { return true }
        fail("\(context()): \(name) engine \(engine) client \(client)")
        return false
    }
}

/// Configurations per preset, and translations per configuration (drags of 20–200 `changed`
/// events each; transition's end early at the finish point).
private let configsPerPreset = 100
private let translationsPerConfig = 1_050

private func seed(_ preset: PresetName) -> UInt64 {
    0xD7A6_0000 + UInt64(PresetName.allCases.firstIndex(of: preset)!)
}

/// Generated configurations of `preset`, drags over each, every `changed` compared.
private func runGenerated(_ preset: PresetName) throws -> Tally {
    var gen = Gen(seed: seed(preset))
    var tally = Tally()
    var attempts = 0
    while tally.configs < configsPerPreset {
        attempts += 1
        guard attempts < 20 * configsPerPreset else {
            tally.fail("only \(tally.configs) configurations accepted in \(attempts) attempts")
            break
        }
        let g = gen.geometry()
        let options = gen.options(preset, g)
        guard let model = try? SheetModel(preset: preset, geometry: g, options: options) else {
            tally.refused += 1
            continue
        }
        tally.configs += 1
        let config = describe(options, g)
        // The law as the service writes it, read back as a client reads it.
        let lawJSON = try rendered(model.dragLaw)
        let law = try ClientLaw(json: lawJSON)
        let m = model.dragLaw
        if !(same(law.lower, m.lower) && same(law.upper, m.upper)
            && same(law.rubberBand?.coefficient, m.rubberBand?.coefficient)
            && same(law.rubberBand?.dimension, m.rubberBand?.dimension) && same(law.full, m.dimmer.full)
            && same(law.fullAt, m.dimmer.fullAt) && same(law.clearAt, m.dimmer.clearAt)
            && same(law.low, m.progress.low) && same(law.top, m.progress.top)
            && same(law.finishThreshold, m.finishThreshold))
        {
            tally.fail("\(preset) \(config): the law does not survive JSON: \(lawJSON)")
        }
        let releaseLaw = try ClientReleaseLaw(json: try rendered(model.releaseLaw))
        var budget = translationsPerConfig
        while budget > 0 {
            budget -= try drag(model, law, releaseLaw, &gen, &tally, budget: budget, config)
        }
    }
    return tally
}

/// One drag on a fresh session of `model`: set up (resting, caught mid-animation, a began with a
/// translation), then `changed` events compared with the client. Returns how many it compared.
private func drag(
    _ model: SheetModel, _ law: ClientLaw, _ releaseLaw: ClientReleaseLaw, _ gen: inout Gen, _ tally: inout Tally,
    budget: Int, _ config: String
) throws -> Int {
    let preset = model.preset
    let visible = model.detents.filter { !$0.isHidden }
    let rest = gen.pick(visible)
    var session = try SheetSession(model: model, initialDetent: rest.name)
    var time = 0.0
    var how = "from \(rest.name)"
    if gen.chance(0.25) {
        // Caught mid-animation: a show to another detent, or a dismissal.
        let event: SheetEvent = gen.chance(0.7) ? .show(detent: gen.pick(visible).name) : .dismiss
        let o = session.handle(event, at: 0)
        if let a = o.animation, a.duration > 0 {
            time = a.duration * gen.uniform(0, 0.9)
            how += " caught at \(time) s of \(event)"
        } else {
            // Already there (a dismissal from a detent at the hidden position is hidden at once).
            session = try SheetSession(model: model, initialDetent: rest.name)
        }
    }
    let beganAt: Double? = gen.chance(0.3) ? gen.pick([gen.uniform(-500, 500), 0, 1e6, -1e6, 1e-9]) : nil
    let began = session.handle(.pan(PanEvent(phase: .began, translation: beganAt)), at: time)
    guard case .dragged = began.action, let start = began.drag else {
        tally.fail("\(preset) \(config) \(how): began answered \(began.action)")
        return budget
    }
    if start != session.dragSegment { tally.fail("\(preset) \(config): began.drag ≠ the session's segment") }
    var segment = try ClientSegment(json: try rendered(start))
    if !same(segment.finish?.threshold, law.finishThreshold) || began.snapshot.constant != segment.start {
        tally.fail("\(preset) \(config) \(how): segment \(segment), answered \(began.snapshot.constant)")
    }
    tally.drags += 1
    var count = 0
    let length = min(budget, 20 + gen.int(181))
    var previous: (constant: Double, translation: Double) = (began.snapshot.constant, beganAt ?? 0)
    var scrolled = false
    // Every `changed` of the drag, as the client sent it: the velocity estimate's samples.
    var samples: [(t: Double, x: Double)] = []
    while count < length {
        time += 0.004
        if gen.chance(0.01) {
            // A second began (a lost `ended`): a new segment from where the card is.
            let t = gen.uniform(-300, 300)
            let again = session.handle(.pan(PanEvent(phase: .began, translation: t)), at: time)
            guard let d = again.drag, d.start == previous.constant, d.base == t else {
                tally.fail("\(preset) \(config) \(how): a second began gave \(String(describing: again.drag))")
                return max(count, 1)
            }
            segment = try ClientSegment(json: try rendered(d))
            previous.translation = t
            scrolled = false
            samples.removeAll()
            continue
        }
        let t = gen.translation(segment, law)
        if preset.has(.scrollHandOff), segment.contentCanScroll, gen.chance(0.02) {
            // The content takes the movement: the card stays; the next sheet event re-bases.
            let o = session.handle(.pan(PanEvent(phase: .changed, translation: t, scrollOffset: 10)), at: time)
            samples.append((time, t))
            if o.consumer != .scroll || o.snapshot.constant != previous.constant || o.drag != nil {
                tally.fail("\(preset) \(config) \(how): a scroll moved the card to \(o.snapshot.constant)")
            }
            previous.translation = t
            scrolled = true
            continue
        }
        let o = session.handle(.pan(PanEvent(phase: .changed, translation: t)), at: time)
        samples.append((time, t))
        count += 1
        tally.translations += 1
        if let d = o.drag {
            // The sheet takes the movement back: a new segment at the previous event.
            if !scrolled || d.start != previous.constant || d.base != previous.translation {
                tally.fail("\(preset) \(config) \(how): unexpected segment \(d) after \(previous)")
            }
            segment = try ClientSegment(json: try rendered(d))
            tally.rebases += 1
        } else if scrolled {
            tally.fail("\(preset) \(config) \(how): no new segment after the content scrolled")
        }
        scrolled = false
        let card = law.card(t, in: segment)
        // (Built only for a failure: describing a segment costs more than the whole comparison.)
        func context() -> String { "\(preset) \(config) \(how), segment \(segment), translation \(t)" }
        if card.finishes {
            // transition: the drag completes by itself, toward the finish detent.
            guard case .settle(let a, let snap) = o.action else {
                tally.fail("\(context()): the client reaches the finish (\(card.constant)); the engine \(o.action)")
                return count
            }
            if snap.detent.name != segment.finish?.detent || a.from != card.constant {
                tally.fail("\(context()): settles to \(snap.detent.name) from \(a.from), not from \(card.constant)")
            }
            let finish = try releaseLaw.motion(
                from: card.constant, to: snap.detent.name, velocity: 0, detents: detents(model))
            if !agree(finish, answered(snap, a)) {
                tally.fail("\(context()): the release law's finish \(finish), the engine's \(answered(snap, a))")
            }
            tally.settles += 1
            // Later events of the drag change nothing.
            let later = session.handle(.pan(PanEvent(phase: .changed, translation: t)), at: time + 0.001)
            if later.action != .unchanged { tally.fail("\(context()): after the finish, changed → \(later.action)") }
            return count
        }
        guard case .dragged = o.action, o.snapshot.state == .dragging else {
            tally.fail("\(context()): the client stays short of the finish; the engine \(o.action)")
            return count
        }
        tally.compare(o.snapshot, card, context())
        previous = (o.snapshot.constant, t)
    }
    // The release: ended (the velocity estimated from the samples, or the client's own, sometimes
    // with a last translation) or cancelled, predicted from the release law.
    time += gen.pick([0.004, 0.03, 0.2])
    let kind = gen.int(10)
    let event: PanEvent
    switch kind {
    case 0: event = PanEvent(phase: .cancelled)
    case 1, 2: event = PanEvent(phase: .ended, velocity: gen.uniform(-6000, 6000))
    case 3: event = PanEvent(phase: .ended, translation: gen.translation(segment, law))
    default: event = PanEvent(phase: .ended)
    }
    let o = session.handle(.pan(event), at: time)
    guard case .settle(let a, let snap) = o.action else {
        tally.fail("\(preset) \(config) \(how): \(event.phase) answered \(o.action)")
        return count
    }
    let c = event.translation.map { law.constant($0, in: segment) } ?? previous.constant
    let v = event.velocity ?? releaseLaw.velocity(samples: samples, endingAt: time)
    let client: ClientRelease
    if event.phase == .cancelled || scrolled {
        // A cancel goes back to the origin; a fluid release the content took stays there.
        client = try releaseLaw.motion(
            from: previous.constant, to: segment.origin, velocity: 0, detents: detents(model))
    } else {
        client = try releaseLaw.release(constant: c, velocity: v, origin: segment.origin, detents: detents(model))
    }
    var engine = answered(o, snap, a)
    if event.phase == .cancelled || scrolled { engine.projected = nil }
    if !agree(client, engine) {
        tally.fail("\(preset) \(config) \(how), \(event.phase) v \(v): client \(client), engine \(engine)")
    }
    tally.releases += 1
    if engine.handOff != nil { tally.handOffs += 1 }
    return count
}

/// The snapshot's `detents`: name → constant.
private func detents(_ model: SheetModel) -> [String: Double] {
    Dictionary(uniqueKeysWithValues: model.detents.map { ($0.name, $0.constant) })
}

@Suite struct DragLawPropertyTests {
    @Test(
        "a client evaluating the JSON answers what changed, ended and cancelled answer", arguments: PresetName.allCases)
    func clientMatchesEngine(_ preset: PresetName) throws {
        let tally = try runGenerated(preset)
        print(
            "DragLawPropertyTests \(preset): \(tally.configs) configurations, \(tally.translations) changed, \(tally.releases) releases, \(tally.rebases) re-bases, \(tally.handOffs) hand-offs"
        )
        #expect(tally.failures.isEmpty, "\(preset): \(tally.failures.joined(separator: "\n"))")
        #expect(tally.configs == configsPerPreset)
        #expect(tally.translations >= 100_000)
        // Drags that finish by themselves settle; hand-offs to the content re-base the drag.
        if preset.has(.dragFinish) { #expect(tally.settles > 1_000) }
        if preset.has(.scrollHandOff) {
            #expect(tally.rebases > 100)
            #expect(tally.handOffs > 20)
        }
        #expect(tally.releases > 200)  // with dragFinish most drags finish by themselves first

    }
}
