// The drag and release laws as clients get them. The service sends `dragLaw` and `releaseLaw`
// (every snapshot) and `drag` (the answer to `began`); a client that evaluates them by the rules
// at the top of DragLaw.swift and ReleaseLaw.swift must get exactly the constant, dimmer alpha and
// progress that `changed` answers, and the snap and animation of `ended` and `cancelled`. Three
// parts:
// - a property test: generated options and geometries of every preset, the laws and each drag's
//   segment rendered by the service's own writer (Wire) and read back with JSONReader, evaluated
//   by the small clients below and in ReleaseLawClient.swift, against `SheetSession.handle`;
// - a table of each preset's default law (and of typical drag segments) on the standard geometry;
// - an HTTP round trip against a real server: batches of pan events on the client clock,
//   each answer checked against the client's evaluation, and the batch refusals.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - The client

/// Where a client draws the card for one pointer event.
private struct ClientCard {
    var constant: Double
    var dimmerAlpha: Double
    var progress: Double
    /// transition: this position finishes the drag (the engine settles).
    var finishes: Bool
}

/// `drag.finish`: the point at which a transition drag completes by itself.
private struct ClientFinish {
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
private struct ClientSegment {
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
private struct ClientLaw {
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
    }

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

private func rendered(_ law: DragLaw) throws -> JSONValue {
    var w = JSONWriter()
    Wire.dragLaw(law, into: &w)
    return try JSONReader.parse(w.takeBytes())
}

private func rendered(_ law: ReleaseLaw) throws -> JSONValue {
    var w = JSONWriter()
    Wire.releaseLaw(law, into: &w)
    return try JSONReader.parse(w.takeBytes())
}

private func rendered(_ segment: DragSegment) throws -> JSONValue {
    var w = JSONWriter()
    Wire.dragSegment(segment, into: &w)
    return try JSONReader.parse(w.takeBytes())
}

/// Options as the JSON a client would send (for failure messages).
private func describe(_ options: [(key: String, value: OptionValue)], _ g: Geometry) -> String {
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
private func same(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }

// MARK: - Generators

/// Random values for generated cases, from the shared seeded generator.
private struct Gen {
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
        if preset == .fluid, segment.contentCanScroll, gen.chance(0.02) {
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
    var engine = answered(snap, a)
    if event.phase == .cancelled || scrolled { engine.projected = nil }
    if !agree(client, engine) {
        tally.fail("\(preset) \(config) \(how), \(event.phase) v \(v): client \(client), engine \(engine)")
    }
    tally.releases += 1
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
        #expect(tally.failures.isEmpty, "\(preset): \(tally.failures.joined(separator: "\n"))")
        #expect(tally.configs == configsPerPreset)
        #expect(tally.translations >= 100_000)
        if preset == .transition { #expect(tally.settles > 1_000) }
        if preset == .fluid { #expect(tally.rebases > 100) }
        #expect(tally.releases > 200)  // transition: most drags finish by themselves first
    }
}

// MARK: - 2. Each preset's law, literally

/// A configuration on the standard geometry (844 × (47, 34): H = 797) and the law it sends.
struct DefaultLawRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let law: JSONValue

    init(_ preset: PresetName, _ options: [(key: String, value: OptionValue)] = [], law: JSONValue) {
        self.preset = preset
        self.options = options
        self.law = law
    }

    var testDescription: String { "\(preset.rawValue) \(describe(options, .standard))" }
}

private let defaultLaws: [DefaultLawRow] = [
    DefaultLawRow(
        .facebook,
        law: [
            "lower": 30, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 398.5, "clearAt": 797],
            "progress": ["low": 797, "top": 30], "finishThreshold": nil,
        ]),  // clamps at expandedOffset 30 above, free below; dimmer 0.7 at normal H/2, clear at hidden H
    DefaultLawRow(
        .twitter,
        law: [
            "lower": nil, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 0, "clearAt": 633],
            "progress": ["low": 633, "top": 0], "finishThreshold": nil,
        ]),  // unbounded both ways (may be pulled above open); card C = 0.75·844 = 633
    DefaultLawRow(
        .glide,
        law: [
            "lower": 0, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 398.5, "clearAt": 717],
            "progress": ["low": 717, "top": 44], "finishThreshold": nil,
        ]),  // clamps at 0 above, free below; no hidden detent: progress 0 at closed 797 − 80
    DefaultLawRow(
        .glide, [("segmented", .bool(false))],
        law: [
            "lower": 0, "upper": nil, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 422, "clearAt": 797],
            "progress": ["low": 797, "top": 422], "finishThreshold": nil,
        ]),  // unsegmented: opens at h/2 = 422 (half), closes at H − headerHeight 0
    DefaultLawRow(
        .transition,
        law: [
            "lower": 0, "upper": 750, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 0, "clearAt": 750],
            "progress": ["low": 750, "top": 0], "finishThreshold": 0.8,
        ]),  // clamps between large 0 and mini 844 − 34 − 60; finishes 80 % of the way
    DefaultLawRow(
        .transition, [("finishThreshold", .null)],
        law: [
            "lower": 0, "upper": 750, "rubberBand": nil, "dimmer": ["full": 0.7, "fullAt": 0, "clearAt": 750],
            "progress": ["low": 750, "top": 0], "finishThreshold": nil,
        ]),  // finishThreshold null: a drag never finishes by itself
    DefaultLawRow(
        .swipeCell,
        law: [
            "lower": -80, "upper": 0, "rubberBand": nil, "dimmer": ["full": 0, "fullAt": 0, "clearAt": 0],
            "progress": ["low": 0, "top": -80], "finishThreshold": nil,
        ]),  // clamps between top −swipeDistance and initial 0; never dims
    DefaultLawRow(
        .fluid,
        law: [
            "lower": 18, "upper": 797, "rubberBand": ["coefficient": 0.55, "dimension": 844],
            "dimmer": ["full": 0.3, "fullAt": 398.5, "clearAt": 728], "progress": ["low": 797, "top": 18],
            "finishThreshold": nil,
        ]),  // free from full 18 to hidden H, rubber band (0.55, h) past both; dims above tip 797 − 69
    DefaultLawRow(
        .fluid, [("rubberBand", .bool(false)), ("hideable", .bool(false))],
        law: [
            "lower": 18, "upper": 728, "rubberBand": nil, "dimmer": ["full": 0.3, "fullAt": 398.5, "clearAt": 728],
            "progress": ["low": 728, "top": 18], "finishThreshold": nil,
        ]),  // no band: clamps at full and at tip, the lowest detent without hidden; progress 0 at tip
    DefaultLawRow(
        .fluid, [("undimmedDetent", .string("full"))],
        law: [
            "lower": 18, "upper": 797, "rubberBand": ["coefficient": 0.55, "dimension": 844],
            "dimmer": ["full": 0, "fullAt": 0, "clearAt": 0], "progress": ["low": 797, "top": 18],
            "finishThreshold": nil,
        ]),  // undimmed at the top-most detent: never dims
]

/// A drag begun on the standard geometry and the segment `began` answers.
struct BeganSegmentRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let detent: String
    let translation: Double?
    let segment: JSONValue

    init(
        _ preset: PresetName, _ options: [(key: String, value: OptionValue)] = [], from detent: String,
        at translation: Double? = nil, segment: JSONValue
    ) {
        self.preset = preset
        self.options = options
        self.detent = detent
        self.translation = translation
        self.segment = segment
    }

    var testDescription: String { "\(preset.rawValue) from \(detent)" }
}

private let beganSegments: [BeganSegmentRow] = [
    BeganSegmentRow(
        .facebook, from: "normal",
        segment: ["start": 398.5, "base": 0, "origin": "normal", "contentCanScroll": false, "finish": nil]
    ),  // starts at the detent, base 0 for a began with no translation
    BeganSegmentRow(
        .glide, from: "compressed", at: 12,
        segment: ["start": 398.5, "base": 12, "origin": "compressed", "contentCanScroll": false, "finish": nil]
    ),  // the began's translation is the base
    BeganSegmentRow(
        .transition, from: "mini",
        segment: [
            "start": 750, "base": 0, "origin": "mini", "contentCanScroll": false,
            "finish": ["from": 750, "toward": 0, "threshold": 0.8, "detent": "large"],
        ]),  // finishes 80 % of the way from mini toward large
    BeganSegmentRow(
        .transition, [("finishThreshold", .number(0.5))], from: "mini", at: -3,
        segment: [
            "start": 750, "base": -3, "origin": "mini", "contentCanScroll": false,
            "finish": ["from": 750, "toward": 0, "threshold": 0.5, "detent": "large"],
        ]),  // the configured threshold
    BeganSegmentRow(
        .transition, [("finishThreshold", .null)], from: "mini",
        segment: ["start": 750, "base": 0, "origin": "mini", "contentCanScroll": false, "finish": nil]
    ),  // no threshold, no finish
    BeganSegmentRow(
        .swipeCell, from: "initial",
        segment: ["start": 0, "base": 0, "origin": "initial", "contentCanScroll": false, "finish": nil]
    ),  // the cell at rest
    BeganSegmentRow(
        .fluid, from: "full",
        segment: ["start": 18, "base": 0, "origin": "full", "contentCanScroll": true, "finish": nil]
    ),  // fluid at its top-most detent: the content may take the movement
    BeganSegmentRow(
        .fluid, from: "half", at: 1e6,
        segment: ["start": 398.5, "base": 1e6, "origin": "half", "contentCanScroll": false, "finish": nil]
    ),  // any finite base, as sent
]

@Suite struct DragLawTableTests {
    @Test("each preset's law as JSON", arguments: defaultLaws)
    func defaultLaw(_ row: DefaultLawRow) throws {
        let model = try SheetModel(preset: row.preset, options: row.options)
        let law = try rendered(model.dragLaw)
        #expect(law == row.law, "\(law)")
        // The snapshot's constant members carry the same law.
        let members = SessionProfile(model: model, clock: .client).staticMembers
        let snapshot = try JSONReader.parse([0x7B] + members + [0x7D])
        #expect(snapshot["dragLaw"] == row.law)
    }

    @Test("the segment began answers", arguments: beganSegments)
    func beganSegment(_ row: BeganSegmentRow) throws {
        let model = try SheetModel(preset: row.preset, options: row.options)
        var session = try SheetSession(model: model, initialDetent: row.detent)
        let began = session.handle(.pan(PanEvent(phase: .began, translation: row.translation)), at: 0)
        let drag = try #require(began.drag)
        #expect(try rendered(drag) == row.segment)
        #expect(session.dragSegment == drag)
        // A changed moves the card and starts no segment.
        let changed = session.handle(.pan(PanEvent(phase: .changed, translation: (row.translation ?? 0) + 1)), at: 1)
        #expect(changed.drag == nil)
    }
}

// MARK: - 3. Over HTTP, in batches

extension ServiceIntegration {
    @Suite struct DragLawHTTPTests {}
}

/// One pan event of a batch.
private struct BatchEvent {
    var phase: String
    var translation: Double?
    var time: Double
}

/// `{"events": [...]}`, written with the service's writer (numbers exactly as a client's
/// shortest round-trip formatting).
private func batchBody(_ events: [BatchEvent]) -> [UInt8] {
    var w = JSONWriter()
    w.beginObject()
    w.key("events")
    w.beginArray()
    for e in events {
        w.beginObject()
        w.key("phase")
        w.string(e.phase)
        if let t = e.translation {
            w.key("translation")
            w.number(t)
        }
        w.key("time")
        w.number(e.time)
        w.endObject()
    }
    w.endArray()
    w.endObject()
    return w.takeBytes()
}

private func postBatch(_ c: HTTPConnection, _ id: String, _ events: [BatchEvent]) throws -> Response {
    try c.request("POST", "/sessions/\(id)/pan", body: batchBody(events))
}

/// The answer's body, read as a client reads it.
private func parsed(_ r: Response) throws -> JSONValue { try JSONReader.parse(r.body) }

/// A client checking a batch answer against its own evaluation.
private func expectCard(
    _ answer: JSONValue, _ card: ClientCard, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    for (name, client) in [
        ("constant", card.constant), ("dimmerAlpha", card.dimmerAlpha), ("progress", card.progress),
    ] {
        let served = answer[name]?.double
        #expect(
            served.map { abs($0 - client) <= 1e-9 } == true,
            "\(context): \(name) served \(String(describing: served)), client \(client)",
            sourceLocation: sourceLocation)
    }
}

/// Creates `id` from `config` on the client clock, begins a drag, then sends `changed` events in
/// batches of 1 to 8 (a began inside one at `regrabAt`), each answer checked against the client's
/// evaluation of the `drag` and `dragLaw` it was given. Returns the client's law.
@discardableResult
private func dragInBatches(
    _ c: HTTPConnection, id: String, config: String, model: SheetModel, seed: UInt64, changes: Int = 200,
    regrabAt: Int? = nil
) throws -> (law: ClientLaw, finishes: Int, time: Double) {
    let created = try c.put(id, config)
    #expect(created.status == 201, "\(created)")
    let lawJSON = try #require(try parsed(created)["dragLaw"])
    #expect(lawJSON == (try rendered(model.dragLaw)), "\(id): the snapshot's law is the engine's")
    let law = try ClientLaw(json: lawJSON)

    var time = 0.0
    let began = try c.pan(id, #"{"phase": "began", "time": 0}"#)
    #expect(began.status == 200, "\(began)")
    let beganJSON = try parsed(began)
    #expect(beganJSON["dragLaw"] == lawJSON, "\(id): began carries the law again")
    let dragJSON = try #require(beganJSON["drag"], "\(id): began carries the drag")
    var segment = try ClientSegment(json: dragJSON)
    #expect(beganJSON["constant"]?.double == segment.start)
    // A snapshot taken while dragging carries the segment too.
    let got = try parsed(try c.get("/sessions/\(id)"))
    #expect(got["drag"] == dragJSON)
    #expect(got["dragLaw"] == lawJSON)

    var gen = Gen(seed: seed)
    var sent = 0
    var finishes = 0
    var regrabbed = false
    var last: ClientCard?
    while sent < changes {
        var events: [BatchEvent] = []
        var cards: [ClientCard] = []
        var regrabBase: Double?
        let size = min(1 + gen.int(8), changes - sent)
        while cards.count < size {
            if let at = regrabAt, !regrabbed, sent + cards.count >= at, let previous = cards.last ?? last {
                // A began inside the batch (a lost ended): the answer carries its segment.
                regrabbed = true
                let base = gen.uniform(-200, 200)
                time += 0.01
                events.append(BatchEvent(phase: "began", translation: base, time: time))
                segment.start = previous.constant
                segment.base = base
                regrabBase = base
                continue
            }
            let t = min(max(gen.translation(segment, law), -1e6), 1e6)
            time += 0.01
            events.append(BatchEvent(phase: "changed", translation: t, time: time))
            let card = law.card(t, in: segment)
            cards.append(card)
            if card.finishes { break }  // the drag ends here: the batch does too
        }
        let r = try postBatch(c, id, events)
        sent += cards.count
        let context = "\(id) after \(sent) changed events"
        #expect(r.status == 200, "\(context): \(r)")
        let answer = try parsed(r)
        #expect(answer["phase"] == "changed", "\(context)")
        #expect(answer["batch"]?["count"] == .number(Double(events.count)), "\(context)")
        let card = cards[cards.count - 1]
        last = card
        if let base = regrabBase {
            let served = try ClientSegment(json: try #require(answer["drag"], "\(context): the began's segment"))
            #expect(served.start == segment.start && served.base == base, "\(context): \(served)")
        } else {
            #expect(answer["drag"] == nil, "\(context): a batch without began carries no segment")
        }
        if card.finishes {
            // transition: the answer is the settle, from where the client put the card.
            finishes += 1
            // (Resting at once where the animation is over at its start: the card was at the
            // detent, or a few ulps from it.)
            let state = answer["state"]?.string
            let end = (answer["animation"]?["startTime"]?.double ?? 0) + (answer["animation"]?["duration"]?.double ?? 0)
            #expect(
                state == "animating" || (state == "resting" && end <= time), "\(context): \(state ?? "-") \(answer)")
            #expect(answer["snap"]?["detent"]?.string == segment.finish?.detent, "\(context)")
            #expect(answer["animation"]?["from"]?.double == card.constant, "\(context)")
            // The next drag catches the card mid-flight: a batch of one began gives its segment.
            time += 0.05
            let again = try postBatch(c, id, [BatchEvent(phase: "began", translation: 0, time: time)])
            #expect(again.status == 200, "\(again)")
            let againJSON = try parsed(again)
            segment = try ClientSegment(json: try #require(againJSON["drag"], "\(context): began's segment"))
            #expect(againJSON["dragLaw"] == lawJSON)
            last = nil
            continue
        }
        #expect(answer["state"] == "dragging", "\(context)")
        expectCard(answer, card, context)
    }
    if let at = regrabAt { #expect(regrabbed, "no began at \(at)") }
    return (law, finishes, time)
}

extension ServiceIntegration.DragLawHTTPTests {
    @Test func fluidBatchesMatchTheClient() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let g = try Geometry(height: 900, safeAreaTop: 50, safeAreaBottom: 30)
        let model = try SheetModel(preset: .fluid, geometry: g, options: [("maxDimAlpha", .number(0.45))])
        let config = #"""
            {"preset": "fluid", "clock": "client", "initialDetent": "half",
             "geometry": {"height": 900, "safeAreaTop": 50, "safeAreaBottom": 30}, "options": {"maxDimAlpha": 0.45}}
            """#
        let (_, _, time) = try dragInBatches(
            c, id: "dl-fluid", config: config, model: model, seed: 0xF1, regrabAt: 100)

        // Refused batches change nothing: a bad event at index 3 (400), then a conflict at index 2
        // (409: a changed after the batch's own ended).
        let before = try c.get("/sessions/dl-fluid")
        #expect(before.status == 200)
        let t = time + 1
        let bad = """
            {"events": [{"phase": "changed", "translation": 1, "time": \(t)},
                        {"phase": "changed", "translation": 2, "time": \(t + 0.01)},
                        {"phase": "changed", "translation": 3, "time": \(t + 0.02)},
                        {"phase": "changed", "translation": "far", "time": \(t + 0.03)}]}
            """
        let invalid = try c.request("POST", "/sessions/dl-fluid/pan", json: bad)
        let invalidProblem = expectProblem(invalid, status: 400, code: "invalid-value")
        #expect(invalidProblem["field"] as? String == "events[3].translation", "\(invalid)")
        #expect(try c.get("/sessions/dl-fluid").body == before.body)

        let conflicting = try postBatch(
            c, "dl-fluid",
            [
                BatchEvent(phase: "changed", translation: 40, time: t),
                BatchEvent(phase: "ended", translation: 40, time: t + 0.01),
                BatchEvent(phase: "changed", translation: 50, time: t + 0.02),
            ])
        let conflict = expectProblem(conflicting, status: 409, code: "conflict")
        #expect(conflict["field"] as? String == "events[2]", "\(conflicting)")
        #expect((conflict["detail"] as? String)?.contains("events[2]") == true, "\(conflicting)")
        #expect(try c.get("/sessions/dl-fluid").body == before.body)

        // The drag goes on where it was.
        let after = try postBatch(c, "dl-fluid", [BatchEvent(phase: "changed", translation: 0, time: t)])
        #expect(after.status == 200, "\(after)")
        #expect(try parsed(after)["state"] == "dragging")

        // A session on the server clock takes no batch.
        #expect(try c.put("dl-server", #"{"preset": "fluid", "initialDetent": "half"}"#).status == 201)
        let onServerClock = try postBatch(c, "dl-server", [BatchEvent(phase: "began", translation: 0, time: 1)])
        let serverProblem = expectProblem(onServerClock, status: 400, code: "invalid-value")
        #expect(serverProblem["field"] as? String == "events", "\(onServerClock)")
        #expect(try parsed(try c.get("/sessions/dl-server"))["state"] == "resting")
    }

    @Test func transitionBatchesMatchTheClient() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let model = try SheetModel(preset: .transition)
        let (law, finishes, _) = try dragInBatches(
            c, id: "dl-transition", config: #"{"preset": "transition", "clock": "client", "initialDetent": "mini"}"#,
            model: model, seed: 0x7A)
        #expect(law.finishThreshold == 0.8)
        #expect(finishes >= 3, "the drags reached the finish point \(finishes) times")
    }
}
