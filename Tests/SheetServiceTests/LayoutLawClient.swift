// The layout law as a client reads it: `layoutLaw` parsed from the service's JSON and evaluated by
// the steps of LayoutLaw.swift on the client's own new layout, before any answer: where each
// detent is, which are unreachable, and where a card at rest or animating goes. LayoutLawPropertyTests
// checks the engine against it.

import SheetPhysics

@testable import SheetService

/// `layoutLaw`, read.
struct ClientLayoutLaw {
    struct Rule {
        var name: String
        var kind: String
        var value: Double
        /// `contentAnchor`: the points shown beyond the anchor.
        var offset: Double
    }
    var rules: [Rule]
    var hideable: Bool
    /// What the keyboard does, as a client applies it: the law's `keyboard` on a bottom sheet,
    /// `none` on any other (the keyboard is not along its axis).
    var keyboard: String
    /// Whether a drag may begin while the keyboard is up (always, off the bottom edge).
    var keyboardDrag: Bool
    var motion: String
    /// The edge: the axis the client takes its geometry along (step 0).
    var edge: String

    init(json: JSONValue) throws {
        rules = try Read.array(json, "detents", in: "layoutLaw").map { r in
            Rule(
                name: try Read.string(r, "name", in: "layoutLaw.detents[]"),
                kind: try Read.string(r, "kind", in: "layoutLaw.detents[]"),
                value: try Read.number(r, "value", in: "layoutLaw.detents[]"),
                offset: r["offset"]?.double ?? 0)
        }
        guard case .bool(let h) = try Read.member(json, "hideable", in: "layoutLaw"),
            case .bool(let d) = try Read.member(json, "keyboardDrag", in: "layoutLaw")
        else { throw ClientReadError(description: "layoutLaw.hideable or keyboardDrag is not a boolean") }
        hideable = h
        edge = try Read.string(json, "edge", in: "layoutLaw")
        keyboardDrag = d || edge != "bottom"
        keyboard = edge == "bottom" ? try Read.string(json, "keyboard", in: "layoutLaw") : "none"
        motion = try Read.string(json, "motion", in: "layoutLaw")
    }

    /// Step 0, then steps 1–6: the geometry along the edge's axis (main dimension, far inset).
    func resolve(_ g: Geometry, keyboardInset k: Double, contentHeight ch: Double?)
        -> (detents: [(name: String, constant: Double)], unreachable: [String])
    {
        let (main, far): (Double, Double)
        switch edge {
        case "top": (main, far) = (g.height, g.safeAreaBottom)
        case "left": (main, far) = (g.width ?? .nan, g.safeAreaRight)
        case "right": (main, far) = (g.width ?? .nan, g.safeAreaLeft)
        default: (main, far) = (g.height, g.safeAreaTop)
        }
        return resolve(height: main, safeAreaTop: far, keyboardInset: edge == "bottom" ? k : 0, contentHeight: ch)
    }

    /// Steps 1–6 on a layout: the reachable detents top-down (hidden last) and the unreachable names.
    func resolve(height h: Double, safeAreaTop st: Double, keyboardInset k: Double, contentHeight ch: Double?)
        -> (detents: [(name: String, constant: Double)], unreachable: [String])
    {
        let H = h - st
        var constants: [Double?] = rules.map { r in
            let c: Double?
            switch r.kind {
            case "fromTop": c = r.value
            case "fraction": c = H - H * r.value
            case "height": c = H - r.value
            case "contentAnchor": c = ch.flatMap { r.value <= $0 ? H - (r.value + r.offset) : nil }
            default: c = ch.map { H - ($0 + r.value) }
            }
            return c.map { min(max($0, 0), H) }
        }
        var top = Double.infinity
        let followsContent = { (kind: String) in kind == "content" || kind == "contentAnchor" }
        for (r, c) in zip(rules, constants) where !followsContent(r.kind) { if let c, c < top { top = c } }
        var fit = Double.infinity
        for k in rules.indices where followsContent(rules[k].kind) {
            guard let c = constants[k] else { continue }
            constants[k] = max(c, top == .infinity ? 0 : top)
            if rules[k].kind == "content" { fit = min(fit, constants[k]!) }
        }
        var reachable: [(index: Int, constant: Double)] = []
        var unreachable: [String] = []
        for k in rules.indices {
            if let c = constants[k], rules[k].kind == "content" || fit == .infinity || c >= fit {
                reachable.append((k, c))
            } else {
                unreachable.append(rules[k].name)
            }
        }
        reachable.sort { $0.constant != $1.constant ? $0.constant < $1.constant : $0.index < $1.index }
        var out = reachable.map { (name: rules[$0.index].name, constant: $0.constant) }
        if keyboard == "lift", k > 0 {
            let bound = top == .infinity ? 0 : top
            let covered = min(k, h)
            out = out.map { ($0.name, max($0.constant - covered, bound)) }
        }
        if hideable { out.append(("hidden", H)) }
        return (out, unreachable)
    }
}

/// The card a client predicts after its layout changed, before the answer: which detent it goes
/// to (by name; where the name is gone, the visible detent nearest by progress), by `extend`.
func clientDestination(
    of name: String, oldConstant: Double, oldProgress: (Double) -> Double,
    detents: [(name: String, constant: Double)], keyboard: String, rose: Bool, fell: Bool,
    keyboardReturn: inout String?
) -> String {
    var placed = name
    if !detents.contains(where: { $0.name == name }) {
        let low = detents.first(where: { $0.name == "hidden" })?.constant ?? detents[detents.count - 1].constant
        let top = detents[0].constant
        func progress(_ c: Double) -> Double { abs(low - top) < 1e-9 ? 1 : (low - c) / (low - top) }
        let p = oldProgress(oldConstant)
        var best: (name: String, constant: Double)?
        for d in detents where d.name != "hidden" {
            guard let b = best else {
                best = d
                continue
            }
            if abs(progress(d.constant) - p) < abs(progress(b.constant) - p) { best = d }
        }
        placed = best?.name ?? detents[0].name
    }
    if keyboard == "extend", rose, placed != "hidden", placed != detents[0].name {
        keyboardReturn = placed
        return detents[0].name
    }
    if fell, let back = keyboardReturn {
        keyboardReturn = nil
        if placed == detents[0].name, detents.contains(where: { $0.name == back }) { return back }
    }
    return placed
}

/// The laws of a model as an answer carries them, read back.
func renderedLaws(_ model: SheetModel, revision: Int = 0) throws -> JSONValue {
    try JSONReader.parse(Array("{".utf8) + ReplyJSON.lawMembers(model, revision: revision) + Array("}".utf8))
}
