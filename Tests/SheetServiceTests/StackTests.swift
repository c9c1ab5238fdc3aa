// Stacks of sheets (issue 28): a session names a `parent`; while it is open the parent is covered
// (it takes no event but a layout change) and is drawn by the child's recede law. In process: the
// subject is what the service answers, not the socket.

import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    @Suite struct StackTests {}
}

/// A recede law as a client holds it (from `recedeLaw` and `dragLaw.progress`), evaluated as
/// openapi.yaml's `RecedeLaw` says, one double operation a step.
struct ClientRecedeLaw {
    let scale: Double
    let lift: Double
    let cornerRadius: Double
    let alpha: Double
    let low: Double
    let top: Double

    /// From an answer's bytes, read exactly (sheetd's own reader: every double as written).
    init(laws body: [UInt8]) throws {
        let laws = try JSONReader.parse(body)
        let law = try #require(laws["recedeLaw"], "no recedeLaw")
        let progress = try #require(laws["dragLaw"]?["progress"])
        scale = try #require(law["scale"]?.double)
        lift = try #require(law["lift"]?.double)
        cornerRadius = try #require(law["cornerRadius"]?.double)
        alpha = try #require(law["alpha"]?.double)
        low = try #require(progress["low"]?.double)
        top = try #require(progress["top"]?.double)
    }

    /// [scale, lift, cornerRadius, alpha] with the card at `c`.
    func transform(at c: Double) -> [Double] {
        let raw = abs(low - top) < 1e-9 ? 1 : (low - c) / (low - top)
        let p = min(max(raw, 0), 1)
        return [1 + (scale - 1) * p, lift * p, cornerRadius * p, alpha * p]
    }
}

/// The transform member `name` of an answer, read exactly: [scale, lift, cornerRadius, alpha].
private func transform(_ r: Response, _ name: String) -> [Double]? {
    guard let t = (try? JSONReader.parse(r.body))?[name] else { return nil }
    let members = ["scale", "lift", "cornerRadius", "alpha"].compactMap { t[$0]?.double }
    return members.count == 4 ? members : nil
}

/// Bit for bit: a client evaluating the law gets exactly what sheetd answers.
private func identical(_ a: [Double]?, _ b: [Double]?) -> Bool {
    guard let a, let b, a.count == b.count else { return a == nil && b == nil }
    return zip(a, b).allSatisfy { $0.bitPattern == $1.bitPattern }
}

/// A configuration a stack refuses, and what it must answer.
struct StackRefusalRow: Sendable, CustomTestStringConvertible {
    let id: String
    let body: String
    let status: Int
    let code: String
    let field: String?
    let rule: String

    var testDescription: String { rule }
}

extension ServiceIntegration.StackTests {
    /// With `root` (server clock) covered by `kid`, and `client` on the client clock.
    static let refusals: [StackRefusalRow] = [
        StackRefusalRow(
            id: "x", body: #"{"preset": "fluid", "parent": "nobody"}"#, status: 409, code: "parent-not-found",
            field: "parent", rule: "a parent that does not exist"),
        StackRefusalRow(
            id: "x", body: #"{"preset": "fluid", "parent": "x"}"#, status: 409, code: "parent-cycle", field: "parent",
            rule: "a session stacked on itself"),
        StackRefusalRow(
            id: "root", body: #"{"preset": "fluid", "parent": "kid"}"#, status: 409, code: "parent-cycle",
            field: "parent", rule: "a cycle: root stacked on its own child"),
        StackRefusalRow(
            id: "x", body: #"{"preset": "fluid", "parent": "client"}"#, status: 409, code: "parent-clock",
            field: "parent", rule: "a stack shares one clock"),
        StackRefusalRow(
            id: "x", body: #"{"preset": "fluid", "parent": "root"}"#, status: 409, code: "parent-covered",
            field: "parent", rule: "a sheet carries one open child at a time"),
        StackRefusalRow(
            id: "x", body: #"{"preset": "fluid", "parent": "not an id"}"#, status: 400, code: "invalid-value",
            field: "parent", rule: "a parent that is not an id"),
        StackRefusalRow(
            id: "x", body: #"{"preset": "fluid", "parent": 7}"#, status: 400, code: "invalid-value", field: "parent",
            rule: "a parent that is not a string"),
    ]

    @Test(arguments: refusals) func refusedParents(_ row: StackRefusalRow) throws {
        let c = try InProcessService()
        #expect(try c.put("root", #"{"preset": "fluid", "initialDetent": "half"}"#).status == 201)
        #expect(try c.put("kid", #"{"preset": "fluid", "parent": "root", "initialDetent": "half"}"#).status == 201)
        #expect(try c.put("client", #"{"preset": "fluid", "clock": "client"}"#).status == 201)
        let before = try c.get("/sessions/\(row.id)")
        let p = expectProblem(try c.put(row.id, row.body), status: row.status, code: row.code)
        #expect(p["field"] as? String == row.field, "\(row.rule): \(p)")
        // Nothing changed: the id is as it was (absent, or the same session).
        let after = try c.get("/sessions/\(row.id)")
        #expect(after.status == before.status, "\(row.rule)")
        if before.status == 200 {
            #expect(after.json?["parent"] as? String == before.json?["parent"] as? String, "\(row.rule)")
        }
    }

    /// The depth bound: a chain of 8 sheets takes no ninth.
    @Test func stacksAreAtMostEightDeep() throws {
        let c = try InProcessService()
        #expect(try c.put("s1", #"{"preset": "fluid"}"#).status == 201)
        for k in 2...StackRule.maxDepth {
            #expect(try c.put("s\(k)", #"{"preset": "fluid", "parent": "s\#(k - 1)"}"#).status == 201)
        }
        let p = expectProblem(
            try c.put("s9", #"{"preset": "fluid", "parent": "s\#(StackRule.maxDepth)"}"#), status: 409,
            code: "stack-depth")
        #expect(p["field"] as? String == "parent")
        #expect(try c.get("/sessions/s9").status == 404)
    }

    /// `/simulate` runs one card alone: a parent is not looked up, and every frame draws it by
    /// the card's law, as a stacked card's frames do.
    @Test func simulateDrawsTheParentFromEachFrame() throws {
        let c = try InProcessService()
        let r = try c.request(
            "POST", "/simulate",
            json:
                #"{"config": {"preset": "fluid", "parent": "a"}, "events": [{"type": "show", "detent": "full", "time": 0}], "fps": 30}"#
        )
        #expect(r.status == 200, "\(r.text)")
        let body = try JSONReader.parse(r.body)
        let frames = try #require(body["frames"]?.array)
        let law = RecedeLaw.standard(ProgressScale(low: 797, top: 18))
        for f in frames {
            let t = law.transform(at: try #require(f["constant"]?.double))
            let sent = ["scale", "lift", "cornerRadius", "alpha"].compactMap { f["parentTransform"]?[$0]?.double }
            #expect(sent == [t.scale, t.lift, t.cornerRadius, t.alpha], "\(f)")
        }
        #expect(frames.count > 2)
    }

    /// Every event a covered sheet refuses, and the one it takes (a layout change); after the
    /// child is dismissed, the parent moves again.
    @Test func aCoveredParentTakesOnlyLayoutChanges() throws {
        let c = try InProcessService()
        #expect(try c.put("p", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        let kid = try c.put(
            "k", #"{"preset": "fluid", "parent": "p", "initialDetent": "full", "clock": "client"}"#)
        #expect(kid.json?["parent"] as? String == "p", "\(kid.text)")
        let refused: [(path: String, body: String, rule: String)] = [
            ("pan", #"{"phase": "began", "time": 1}"#, "a drag does not begin under a child"),
            (
                "pan",
                #"{"events": [{"phase": "began", "time": 1}, {"phase": "changed", "translation": 5, "time": 1.1}]}"#,
                "nor in a batch"
            ),
            ("show", #"{"detent": "full", "time": 1}"#, "show moves nothing"),
            ("step", #"{"direction": "expand", "time": 1}"#, "an accessibility step moves nothing"),
            ("dismiss", #"{"time": 1}"#, "dismiss without cascade moves nothing"),
            ("pan", #"{"phase": "fling", "velocity": 900, "time": 1}"#, "a fling of the content moves nothing"),
        ]
        let before = try c.get("/sessions/p")
        #expect(before.json?["coveredBy"] as? String == "k", "\(before.text)")
        for row in refused {
            let p = expectProblem(
                try c.request("POST", "/sessions/p/\(row.path)", json: row.body), status: 409, code: "covered")
            #expect((p["detail"] as? String)?.contains("k") == true, "\(row.rule): \(p)")
            #expect(try c.get("/sessions/p").body == before.body, "\(row.rule): the covered sheet changed")
        }
        // The screen turned under the whole stack: the covered sheet follows.
        let turned = try c.pan("p", #"{"phase": "layout", "geometry": {"height": 600}, "motion": "none", "time": 2}"#)
        #expect(turned.status == 200, "\(turned.text)")
        // The child goes; once it is hidden the parent is no longer covered.
        #expect(try c.request("POST", "/sessions/k/dismiss", json: #"{"time": 3}"#).status == 200)
        let gone = try c.request("POST", "/sessions/p/step", json: #"{"direction": "expand", "time": 30}"#)
        #expect(gone.status == 200, "\(gone.text)")
        #expect(try c.get("/sessions/p").json?["coveredBy"] == nil)
    }

    /// Dismiss with cascade closes the whole stack from its root, at one instant; the answer names
    /// the sheets it closed, top-most first, and each ends hidden.
    @Test func cascadeClosesTheWholeStack() throws {
        let c = try InProcessService()
        #expect(try c.put("a", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        #expect(
            try c.put("b", #"{"preset": "fluid", "parent": "a", "initialDetent": "half", "clock": "client"}"#).status
                == 201)
        #expect(try c.put("c", #"{"preset": "facebook", "parent": "b", "clock": "client"}"#).status == 201)
        #expect(try c.request("POST", "/sessions/c/show", json: #"{"time": 0.5}"#).status == 200)
        let r = try c.request("POST", "/sessions/a/dismiss", json: #"{"cascade": true, "time": 1}"#)
        #expect(r.status == 200, "\(r.text)")
        #expect(r.json?["cascade"] as? [String] == ["b", "c"], "\(r.text)")
        for id in ["a", "b", "c"] {
            let s = try c.get("/sessions/\(id)")
            let animation = obj(s.json?["animation"])
            // Every sheet of the stack set off for hidden at the same instant.
            #expect(animation?["dismiss"] as? Bool == true && num(animation?["startTime"]) == 1, "\(id): \(s.text)")
        }
        // A cascade on a sheet with nothing above it is a plain dismiss: nothing else listed.
        #expect(try c.put("solo", #"{"preset": "fluid", "initialDetent": "half", "clock": "client"}"#).status == 201)
        let solo = try c.request("POST", "/sessions/solo/dismiss", json: #"{"cascade": true, "time": 1}"#)
        #expect(solo.json?["cascade"] as? [String] == [], "\(solo.text)")
    }

    /// With session tokens, a stranger cannot stack a sheet on someone's session (that would cover
    /// it); its owner can, and the stack shares the token.
    @Test func stackingNeedsTheParentsToken() throws {
        let c = try InProcessService { $0.sessionTokens = true }
        let root = try c.request("POST", "/sessions", json: #"{"preset": "fluid"}"#)
        let id = try #require(root.json?["id"] as? String)
        let token = try #require(root.json?["token"] as? String)
        let body = #"{"preset": "fluid", "parent": "\#(id)"}"#
        expectProblem(try c.request("POST", "/sessions", json: body), status: 401, code: "unauthorized")
        expectProblem(
            try c.request(
                "POST", "/sessions", headers: [("Authorization", "Bearer AAAAAAAAAAAAAAAAAAAAAA")], json: body),
            status: 401, code: "unauthorized")
        #expect(try c.get("/sessions/\(id)").status == 401)
        let child = try c.request("POST", "/sessions", headers: [("Authorization", "Bearer \(token)")], json: body)
        #expect(child.status == 201, "\(child.text)")
        #expect(child.json?["token"] as? String == token, "one credential opens the stack: \(child.text)")
    }

    /// The property of issue 28: for generated sequences of events on a parent and its child, the
    /// parent's published transform is the child's recede law evaluated (as a client does) at the
    /// child's constant, bit for bit, and the child's own `parentTransform` is the same law at its
    /// constant; a covered parent never changes (each event it refuses leaves its snapshot's bytes
    /// as they were), and every answer agrees with an engine replaying the accepted events.
    @Test func transformsFollowTheLawAndCoveredParentsStayPut() throws {
        var events = 0
        var covered = 0
        var refusedCovered = 0
        var transforms = 0
        var failures: [String] = []
        for seed in 0..<stackSeeds {
            var gen = Gen(seed: 0x57AC_0000 &+ UInt64(seed))
            try runStack(&gen, &events, &covered, &refusedCovered, &transforms, &failures)
            if failures.count >= 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        // The run covered what it claims (a generator that never covers would prove nothing).
        #expect(
            events >= 10_000 && refusedCovered >= 500 && transforms >= 1_000,
            "\(events) \(refusedCovered) \(transforms)")
        print(
            "stacks: \(events) events, \(covered) checks while covered, \(refusedCovered) refused as covered, \(transforms) transforms compared, \(failures.count) mismatches"
        )
    }
}

private let stackSeeds = 400
private let stackEventsPerSeed = 30

/// A generated event: its wire body for the route, and the engine's.
private func stackEvent(_ gen: inout Gen, _ model: SheetModel, time: Double) -> (
    route: String, body: String, event: SheetEvent
) {
    let t = "\"time\": \(time)"
    switch gen.int(9) {
    case 0, 1:
        return ("pan", #"{"phase": "began", "translation": 0, \#(t)}"#, .pan(PanEvent(phase: .began, translation: 0)))
    case 2, 3:
        let x = gen.uniform(-400, 400).rounded()
        return (
            "pan", #"{"phase": "changed", "translation": \#(x), \#(t)}"#,
            .pan(PanEvent(phase: .changed, translation: x))
        )
    case 4:
        let v = gen.uniform(-3000, 3000).rounded()
        return ("pan", #"{"phase": "ended", "velocity": \#(v), \#(t)}"#, .pan(PanEvent(phase: .ended, velocity: v)))
    case 5:
        let names = model.detents.filter { !$0.isHidden }.map(\.name)
        if gen.chance(0.5), let name = names.isEmpty ? nil : gen.pick(names) {
            return ("show", #"{"detent": "\#(name)", \#(t)}"#, .show(detent: name))
        }
        return ("show", "{\(t)}", .show(detent: nil))
    case 6:
        return ("dismiss", "{\(t)}", .dismiss)
    case 7:
        let expand = gen.chance(0.5)
        return ("step", #"{"direction": "\#(expand ? "expand" : "collapse")", \#(t)}"#, .step(expand: expand))
    default:
        return ("pan", #"{"phase": "cancelled", \#(t)}"#, .pan(PanEvent(phase: .cancelled)))
    }
}

/// Whether the engine accepted an outcome (the service answers 200 exactly then).
private func accepted(_ o: SheetOutcome) -> Bool {
    switch o.action {
    case .settle, .dragged, .unchanged: true
    case .conflict, .invalid: false
    }
}

private func runStack(
    _ gen: inout Gen, _ events: inout Int, _ coveredChecks: inout Int, _ refusedCovered: inout Int,
    _ transforms: inout Int, _ failures: inout [String]
) throws {
    let c = try InProcessService()
    // The parent: any preset at its defaults. The child: fluid with a generated recession (and
    // edge), or another preset with the standard one.
    let parentPreset = gen.pick(PresetName.allCases)
    let parentModel = try SheetModel(preset: parentPreset)
    var childOptions: [(key: String, value: OptionValue)] = []
    let childPreset: PresetName = gen.chance(0.7) ? .fluid : gen.pick(PresetName.allCases)
    if childPreset == .fluid {
        var recede: [(key: String, value: OptionValue)] = []
        if gen.chance(0.7) { recede.append(("scale", .number(gen.pick([0.9, 0.94, 1, gen.uniform(0.01, 1)])))) }
        if gen.chance(0.7) { recede.append(("lift", .number(gen.uniform(0, 40)))) }
        if gen.chance(0.5) { recede.append(("cornerRadius", .number(gen.uniform(0, 24)))) }
        if gen.chance(0.5) { recede.append(("alpha", .number(gen.uniform(0, 1)))) }
        if gen.chance(0.3) { recede.append(("backdrop", .bool(gen.chance(0.5)))) }
        childOptions.append(("recede", .object(recede)))
        if gen.chance(0.3) { childOptions.append(("hideable", .bool(true))) }
    }
    let childModel = try SheetModel(preset: childPreset, options: childOptions)
    var w = JSONWriter()
    w.option(.object(childOptions))
    let childJSON =
        #"{"preset": "\#(childPreset.rawValue)", "parent": "p", "clock": "client", "options": \#(w.text)}"#
    guard try c.put("p", #"{"preset": "\#(parentPreset.rawValue)", "clock": "client"}"#).status == 201 else {
        failures.append("\(parentPreset): parent not created")
        return
    }
    let put = try c.put("c", childJSON)
    guard put.status == 201 else {
        failures.append("\(childJSON): \(put.text)")
        return
    }
    let law = try ClientRecedeLaw(laws: put.body)
    var parent = try SheetSession(model: parentModel)
    var child = try SheetSession(model: childModel)
    var time = 0.0
    for _ in 0..<stackEventsPerSeed {
        time += gen.pick([0.004, 0.016, 0.1, 0.4, 1.5])
        events += 1
        let onChild = gen.chance(0.5)
        let model = onChild ? childModel : parentModel
        let (route, body, event) = stackEvent(&gen, model, time: time)
        let id = onChild ? "c" : "p"
        let context = "\(parentPreset)/\(childJSON) t=\(time) \(id) \(route) \(body)"
        if onChild {
            let r = try c.request("POST", "/sessions/c/\(route)", json: body)
            let o = child.handle(event, at: time)
            if (r.status == 200) != accepted(o) { failures.append("\(context): \(r.status) vs \(o.action)") }
            if r.status == 200, !identical(transform(r, "parentTransform"), law.transform(at: o.snapshot.constant)) {
                failures.append("\(context): parentTransform \(r.text)")
            }
        } else {
            let before = try c.get("/sessions/p")
            let isCovered = StackRule.covers(child.snapshot(at: max(time, child.lastTime)))
            let r = try c.request("POST", "/sessions/p/\(route)", json: body)
            if isCovered {
                refusedCovered += 1
                if r.status != 409 || r.json?["code"] as? String != "covered" {
                    failures.append("\(context): covered, answered \(r.status) \(r.text)")
                }
                if try c.get("/sessions/p").body != before.body {
                    failures.append("\(context): a covered parent changed")
                }
            } else {
                let o = parent.handle(event, at: time)
                if (r.status == 200) != accepted(o) { failures.append("\(context): \(r.status) vs \(o.action)") }
            }
        }
        // The parent as published now, against the law a client holds, at the child's constant
        // at the same instant (the parent's last event time, or the child's if later).
        let parentTime = parent.lastTime.isFinite ? parent.lastTime : 0
        let at = max(parentTime, child.lastTime)
        let childNow = child.snapshot(at: at)
        let p = try c.get("/sessions/p")
        if StackRule.covers(childNow) {
            coveredChecks += 1
            transforms += 1
            if p.json?["coveredBy"] as? String != "c"
                || !identical(transform(p, "transform"), law.transform(at: childNow.constant))
            {
                failures.append("\(context): parent \(p.text.prefix(200))… vs law at \(childNow.constant)")
            }
        } else if p.json?["coveredBy"] != nil || p.json?["transform"] != nil {
            failures.append("\(context): an uncovered parent says it is covered")
        }
        // The child's own answer draws its parent by the same law at its constant.
        let s = try c.get("/sessions/c")
        let own = child.snapshot(at: child.lastTime.isFinite ? child.lastTime : 0)
        transforms += 1
        if !identical(transform(s, "parentTransform"), law.transform(at: own.constant)) {
            failures.append(
                "\(context): child parentTransform \(s.json?["parentTransform"] ?? "none") at \(own.constant)")
        }
        if failures.count >= 10 { return }
    }
}
