// The release law as a client reads it: `releaseLaw` parsed from the service's JSON and evaluated
// by the steps openapi.yaml gives (`ReleaseLaw`), with nothing from the engine but the closed-form
// oscillator for a spring's settle time. DragLawPropertyTests' generated drags end with a release or a
// cancel, answered by the engine and predicted by this client.

import SheetPhysics

@testable import SheetService

/// What a client could not read.
struct ClientReadError: Error, CustomStringConvertible {
    let description: String
}

/// Reading members as a client does: each missing or mistyped member is an error naming its path.
enum Read {
    /// `value[key]`, where `value` must be an object that has the member.
    static func member(_ value: JSONValue, _ key: String, in path: String) throws -> JSONValue {
        guard case .object(let o) = value else { throw ClientReadError(description: "\(path) is not an object") }
        guard let m = o[key] else { throw ClientReadError(description: "\(path).\(key) is missing") }
        return m
    }

    static func number(_ value: JSONValue, _ key: String, in path: String) throws -> Double {
        let m = try member(value, key, in: path)
        guard case .number(let x) = m else { throw ClientReadError(description: "\(path).\(key) is \(m.kindName)") }
        return x
    }

    static func numberOrNull(_ value: JSONValue, _ key: String, in path: String) throws -> Double? {
        let m = try member(value, key, in: path)
        if m.isNull { return nil }
        guard case .number(let x) = m else { throw ClientReadError(description: "\(path).\(key) is \(m.kindName)") }
        return x
    }

    static func string(_ value: JSONValue, _ key: String, in path: String) throws -> String {
        let m = try member(value, key, in: path)
        guard case .string(let s) = m else { throw ClientReadError(description: "\(path).\(key) is \(m.kindName)") }
        return s
    }

    static func bool(_ value: JSONValue, _ key: String, in path: String) throws -> Bool {
        let m = try member(value, key, in: path)
        guard case .bool(let b) = m else { throw ClientReadError(description: "\(path).\(key) is \(m.kindName)") }
        return b
    }

    static func array(_ value: JSONValue, _ key: String, in path: String) throws -> [JSONValue] {
        let m = try member(value, key, in: path)
        guard case .array(let a) = m else { throw ClientReadError(description: "\(path).\(key) is \(m.kindName)") }
        return a
    }
}

/// What the client predicts for a release: the snap and its animation's parameters.
struct ClientRelease: Equatable, CustomStringConvertible {
    var detent: String
    var projected: Double?
    var curve: String
    var duration: Double
    var from: Double
    var to: Double
    /// durationSpring's initial velocity (distances per second), spring's velocity (pt/s); else 0.
    var velocity: Double
    /// Step 5: where the release hands the momentum to the content, when (seconds after the
    /// release) and with what velocity.
    var handOff: (after: Double, velocity: Double)? = nil

    static func == (a: ClientRelease, b: ClientRelease) -> Bool {
        a.detent == b.detent && a.projected == b.projected && a.curve == b.curve && a.duration == b.duration
            && a.from == b.from && a.to == b.to && a.velocity == b.velocity
            && a.handOff?.after == b.handOff?.after && a.handOff?.velocity == b.handOff?.velocity
    }

    var description: String {
        "\(detent) by \(curve) from \(from) to \(to) in \(duration) s, velocity \(velocity), projected \(projected.map { "\($0)" } ?? "–")"
    }
}

/// `releaseLaw`, read.
struct ClientReleaseLaw {
    struct Condition {
        var origin: String?
        var quantity: String?
        var comparison: String?
        var value: Double
        var to: Double
        var from: Double
        var toward: Double
    }
    struct Rule {
        var when: [Condition]
        var detent: String?
        var candidates: [String]
        var ofProjection: Bool
        var clamp: Bool
    }
    struct Motion {
        var toHidden: Bool
        var releasedAbove: Double?
        var curve: JSONValue
    }

    var velocityWindow: Double
    var decelerationRate: Double?
    var rules: [Rule]
    var motions: [Motion]
    /// `handOff.detent`: the detent a spring hands its momentum to the content at (step 5).
    var handOff: String?
    /// `reducedMotion`: the session's setting, which `motions` and `handOff` follow.
    var reducedMotion: Bool
    /// `requestOverride`: the motions and hand-off of a request that asks the other setting.
    var override: (reducedMotion: Bool, motions: [Motion], handOff: String?)

    init(json: JSONValue) throws {
        velocityWindow = try Read.number(json, "velocityWindow", in: "releaseLaw")
        let projection = try Read.member(json, "projection", in: "releaseLaw")
        decelerationRate = projection.isNull ? nil : try Read.number(projection, "decelerationRate", in: "projection")
        rules = try Read.array(json, "rules", in: "releaseLaw").map { rule in
            let when = try Read.array(rule, "when", in: "rules[]").map { w in
                Condition(
                    origin: w["origin"]?.string, quantity: w["quantity"]?.string,
                    comparison: w["is"]?.string, value: w["value"]?.double ?? .nan,
                    to: w["to"]?.double ?? .nan, from: w["from"]?.double ?? .nan,
                    toward: w["toward"]?.double ?? .nan)
            }
            let nearest = rule["nearest"]
            return Rule(
                when: when, detent: rule["detent"]?.string,
                candidates: try nearest.map { try Read.array($0, "candidates", in: "nearest").compactMap(\.string) }
                    ?? [],
                ofProjection: nearest?["of"]?.string == "projection",
                clamp: nearest?["clampToNeighbours"] == .bool(true))
        }
        (motions, handOff) = try Self.variant(json, in: "releaseLaw")
        reducedMotion = try Read.bool(json, "reducedMotion", in: "releaseLaw")
        let other = try Read.member(json, "requestOverride", in: "releaseLaw")
        let (otherMotions, otherHandOff) = try Self.variant(other, in: "releaseLaw.requestOverride")
        override = (try Read.bool(other, "reducedMotion", in: "releaseLaw.requestOverride"), otherMotions, otherHandOff)
    }

    /// `motions` and `handOff` of a law or of its `requestOverride`.
    private static func variant(_ json: JSONValue, in path: String) throws -> ([Motion], String?) {
        let h = try Read.member(json, "handOff", in: path)
        let handOff = h.isNull ? nil : try Read.string(h, "detent", in: "\(path).handOff")
        let motions = try Read.array(json, "motions", in: path).map { motion in
            let when = try Read.array(motion, "when", in: "motions[]")
            return Motion(
                toHidden: when.contains { $0["toHidden"] == .bool(true) },
                releasedAbove: when.compactMap { $0["releasedAbove"]?.double }.first,
                curve: try Read.member(motion, "curve", in: "motions[]"))
        }
        return (motions, handOff)
    }

    /// The law a request evaluates: its own `reducedMotion` (nil: the session's) picks the
    /// session's motions and hand-off, or `requestOverride`'s where it differs from
    /// `reducedMotion`. Returns the law and the setting applied.
    func forRequest(reducedMotion requested: Bool?) -> (law: ClientReleaseLaw, reducedMotion: Bool) {
        guard let requested, requested != reducedMotion else { return (self, reducedMotion) }
        var law = self
        law.motions = override.motions
        law.handOff = override.handOff
        law.reducedMotion = override.reducedMotion
        law.override = (reducedMotion, motions, handOff)
        return (law, override.reducedMotion)
    }

    /// Steps 2–4 of openapi.yaml's `ReleaseLaw` for a release at `c` with `v` from `origin`.
    func release(
        constant c: Double, velocity v: Double, origin: String, detents: [String: Double], isShow: Bool = false
    ) throws -> ClientRelease {
        let projected = decelerationRate.map { r in c + (v / 1000) * r / (1 - r) }
        func quantity(_ w: Condition) -> Double {
            switch w.quantity {
            case "constant": c
            case "truncatedConstant": c.rounded(.towardZero)
            case "velocity": v
            case "velocityPerDistance": v / max(w.to - c, 1)
            case "fraction": w.toward - w.from == 0 ? 0 : (c - w.from) / (w.toward - w.from)
            case "projectedFraction": w.toward - w.from == 0 ? 0 : ((projected ?? c) - w.from) / (w.toward - w.from)
            default: .nan
            }
        }
        func holds(_ w: Condition) -> Bool {
            if let o = w.origin { return o == origin }
            let a = quantity(w)
            switch w.comparison {
            case "<": return a < w.value
            case "<=": return a <= w.value
            case ">": return a > w.value
            case ">=": return a >= w.value
            default: return false
            }
        }
        guard let rule = rules.first(where: { $0.when.allSatisfy(holds) }) else {
            throw ClientReadError(description: "no rule of releaseLaw applies")
        }
        var target: String
        if let d = rule.detent {
            target = d
        } else {
            let at = { (name: String) in detents[name] ?? .nan }
            var q = c
            if rule.ofProjection, let p = projected {
                q = p
                if rule.clamp {
                    let upper = rule.candidates.last { at($0) < c } ?? rule.candidates[0]
                    let lower = rule.candidates.first { at($0) > c } ?? rule.candidates[rule.candidates.count - 1]
                    if p < at(upper) { q = at(upper) } else if p > at(lower) { q = at(lower) }
                }
            }
            target = rule.candidates[0]
            for name in rule.candidates.dropFirst() where abs(at(name) - q) < abs(at(target) - q) { target = name }
        }
        var result = try motion(from: c, to: target, velocity: v, detents: detents, isShow: isShow)
        result.projected = projected
        handingOff(&result)
        return result
    }

    /// Step 5: a spring to `handOff`'s detent from below that crosses it before it settles ends
    /// there; the content takes the velocity (the crossing by the closed forms of openapi.yaml's
    /// `ReleaseLaw`, written here apart from the engine's).
    func handingOff(_ r: inout ClientRelease) {
        guard let h = handOff, r.detent == h, r.curve == "spring", r.from > r.to,
            let k = motions.first?.curve, let w = k["omega"]?.double, let z = k["dampingRatio"]?.double
        else { return }
        let x0 = r.from - r.to
        let v0 = r.velocity
        var t: Double?
        if abs(z - 1) <= 1e-12 {
            let b = v0 + w * x0
            if b != 0, -x0 / b > 0 { t = -x0 / b }
        } else if z < 1 {
            let decay = z * w
            let wd = w * (1 - z * z).squareRoot()
            var theta = Double.atan2(y: (v0 + decay * x0) / wd, x: x0) + Double.pi / 2
            while theta <= 0 { theta += Double.pi }
            while theta > Double.pi { theta -= Double.pi }
            t = theta / wd
        } else {
            let root = (z * z - 1).squareRoot()
            let r1 = -w * (z - root)
            let r2 = -w * (z + root)
            let c1 = (v0 - r2 * x0) / (r1 - r2)
            let ratio = -(x0 - c1) / c1
            if c1 != 0, ratio > 1 { t = Double.log(ratio) / (r1 - r2) }
        }
        guard let t, t < r.duration else { return }
        let v = DampedOscillator(omega: w, dampingRatio: z, x0: x0, v0: v0).state(at: t).v
        guard v < 0 else { return }
        r.duration = t
        r.handOff = (t, v)
    }

    /// Step 4: the curve from `from` to the detent `target`.
    func motion(
        from: Double, to target: String, velocity v: Double, detents: [String: Double], isShow: Bool = false
    ) throws -> ClientRelease {
        guard let to = detents[target] else { throw ClientReadError(description: "no detent \(target)") }
        guard
            let motion = motions.first(where: { m in
                (!m.toHidden || target == "hidden")
                    && (m.releasedAbove.map { !isShow && from.rounded(.towardZero) < $0 } ?? true)
            })
        else { throw ClientReadError(description: "no motion of releaseLaw applies") }
        let k = motion.curve
        let name = try Read.string(k, "name", in: "curve")
        var out = ClientRelease(
            detent: target, projected: nil, curve: name, duration: 0, from: from, to: to, velocity: 0)
        switch name {
        case "durationSpring":
            out.duration = try Read.number(k, "duration", in: "curve")
            if let initial = k["initialVelocity"]?.double {
                out.velocity = initial
            } else {
                let distance = to - from
                let sign: Double = distance > 0 ? 1 : (distance < 0 ? -1 : 0)
                out.velocity = v * sign / max(abs(distance), 1)
            }
        case "spring":
            out.velocity = v
            let settle = try Read.member(k, "settle", in: "curve")
            let oscillator = DampedOscillator(
                omega: try Read.number(k, "omega", in: "curve"),
                dampingRatio: try Read.number(k, "dampingRatio", in: "curve"), x0: from - to, v0: v)
            let limit = Int((try Read.number(settle, "max", in: "settle") * 1000).rounded())
            let ms = oscillator.firstMillisecond(
                within: try Read.number(settle, "distance", in: "settle"),
                speed: try Read.number(settle, "speed", in: "settle"), limit: limit)
            out.duration = Double(ms) / 1000
        default:
            if let remaining = k["remaining"] {
                let span = try Read.number(remaining, "span", in: "remaining")
                let fraction = span == 0 ? 0 : abs(to - from) / span
                out.duration = min(
                    try Read.number(remaining, "whole", in: "remaining") * fraction
                        / Read.number(remaining, "speed", in: "remaining"),
                    try Read.number(remaining, "max", in: "remaining"))
            } else {
                out.duration = try Read.number(k, "duration", in: "curve")
            }
        }
        return out
    }

    /// Step 1: the least-squares slope of the samples with t ≥ end − window, in the documented order.
    func velocity(samples: [(t: Double, x: Double)], endingAt end: Double) -> Double {
        let inside = samples.filter { $0.t >= end - velocityWindow }
        guard inside.count >= 2 else { return 0 }
        var n = 0.0
        var st = 0.0
        var sx = 0.0
        for s in inside {
            n += 1
            st += s.t
            sx += s.x
        }
        let mt = st / n
        let mx = sx / n
        var num = 0.0
        var den = 0.0
        for s in inside {
            let dt = s.t - mt
            num += dt * (s.x - mx)
            den += dt * dt
        }
        return den == 0 ? 0 : num / den
    }
}

/// The engine's answer to a release, in the client's terms.
func answered(_ snap: Snap, _ a: Animation) -> ClientRelease {
    var velocity = 0.0
    switch a.curve {
    case .timed: velocity = 0
    case let .durationSpring(_, v): velocity = v
    case let .spring(_, _, v): velocity = v
    }
    return ClientRelease(
        detent: snap.detent.name, projected: snap.projected, curve: a.curve.name, duration: a.duration, from: a.from,
        to: a.to, velocity: velocity)
}

/// The engine's answer to a release, with its hand-off to the content (`scrollFling`).
func answered(_ o: SheetOutcome, _ snap: Snap, _ a: Animation) -> ClientRelease {
    var r = answered(snap, a)
    if let f = o.scrollFling { r.handOff = (f.time - a.startTime, f.velocity) }
    return r
}

/// Whether two predictions agree: the same detent and curve, numbers within 1e-9 relative.
func agree(_ a: ClientRelease, _ b: ClientRelease) -> Bool {
    func close(_ x: Double, _ y: Double) -> Bool {
        x.bitPattern == y.bitPattern || abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
    }
    let projections =
        (a.projected == nil && b.projected == nil)
        || (a.projected != nil && b.projected != nil && close(a.projected!, b.projected!))
    let handOffs =
        (a.handOff == nil && b.handOff == nil)
        || (a.handOff != nil && b.handOff != nil && close(a.handOff!.after, b.handOff!.after)
            && close(a.handOff!.velocity, b.handOff!.velocity))
    return a.detent == b.detent && a.curve == b.curve && projections && close(a.duration, b.duration)
        && close(a.from, b.from) && close(a.to, b.to) && close(a.velocity, b.velocity) && handOffs
}
