// The public check values of sheetd's physics (docs/PHYSICS.md), once: the engine's tests
// (SheetPhysicsTests) and the HTTP tests (SheetServiceTests) replay the same rows. Default geometry
// (844, 47, 34): S = 763, H = 797. Constants in points to 0.01, alpha to 1e-4, velocities in
// points per second. Presets are named by their wire names, so the tables need neither the engine
// nor the service.

/// A row of "Release decisions": drag a resting sheet to `constant`, release with `velocity`.
public struct ReleaseCheck: Sendable, CustomStringConvertible {
    public let preset: String
    public let constant: Double
    public let velocity: Double
    /// The detent the release snaps to, and its constant.
    public let detent: String
    public let snapConstant: Double
    /// The rule the row checks.
    public let rule: String

    init(_ preset: String, _ constant: Double, _ velocity: Double, _ detent: String, _ snap: Double, _ rule: String) {
        (self.preset, self.constant, self.velocity, self.detent, self.snapConstant, self.rule) =
            (preset, constant, velocity, detent, snap, rule)
    }

    public var description: String { "\(preset) \(constant) v\(velocity) → \(detent) (\(rule))" }
}

/// A row of "Dimmer alpha while dragging": the alpha when a drag holds the sheet at `constant`.
public struct DimmerCheck: Sendable, CustomStringConvertible {
    public let preset: String
    public let constant: Double
    public let alpha: Double
    public let rule: String

    init(_ preset: String, _ constant: Double, _ alpha: Double, _ rule: String) {
        (self.preset, self.constant, self.alpha, self.rule) = (preset, constant, alpha, rule)
    }

    public var description: String { "\(preset) at \(constant) → \(alpha) (\(rule))" }
}

/// A row of "Drag limits": from `startDetent` (at `start`), a drag by `translation` reaches `constant`.
public struct DragLimitCheck: Sendable, CustomStringConvertible {
    public let preset: String
    public let startDetent: String
    public let start: Double
    public let translation: Double
    public let constant: Double
    public let rule: String

    init(
        _ preset: String, _ startDetent: String, _ start: Double, _ translation: Double, _ constant: Double,
        _ rule: String
    ) {
        (self.preset, self.startDetent, self.start, self.translation, self.constant, self.rule) =
            (preset, startDetent, start, translation, constant, rule)
    }

    public var description: String { "\(preset) \(start) + \(translation) → \(constant) (\(rule))" }
}

/// "Frames at 30 fps of show from hidden": the frame count and sampled frames (t in seconds).
public struct ShowFramesCheck: Sendable, CustomStringConvertible {
    public let preset: String
    public let target: String
    public let frameCount: Int
    public let frames: [(t: Double, constant: Double, alpha: Double)]
    public let rule: String

    public var description: String { "\(preset) show → \(target) (\(rule))" }
}

/// The fluid spring check: a release from `from` with `velocity` to `to` lasts `duration`, and
/// passes `samples` (elapsed seconds, constant).
public struct SpringCheck: Sendable {
    public let preset: String
    public let startDetent: String
    public let from: Double
    public let velocity: Double
    public let detent: String
    public let to: Double
    public let duration: Double
    public let samples: [(elapsed: Double, constant: Double)]
}

/// One change of a row of "Layout changes" (fields left nil keep their value).
public struct LayoutStep: Sendable {
    public let keyboardInset: Double?
    public let contentHeight: Double?
    /// (height, safeAreaTop, safeAreaBottom).
    public let geometry: (Double, Double, Double)?
    /// An anchored row's `buy` detent moved to this point (the `detents` option sent again).
    public var anchor: Double? = nil

    public static func keyboard(_ k: Double) -> LayoutStep {
        LayoutStep(keyboardInset: k, contentHeight: nil, geometry: nil)
    }
    public static func content(_ h: Double) -> LayoutStep {
        LayoutStep(keyboardInset: nil, contentHeight: h, geometry: nil)
    }
    public static func screen(_ h: Double, _ st: Double, _ sb: Double) -> LayoutStep {
        LayoutStep(keyboardInset: nil, contentHeight: nil, geometry: (h, st, sb))
    }
    public static func anchor(_ y: Double) -> LayoutStep {
        LayoutStep(keyboardInset: nil, contentHeight: nil, geometry: nil, anchor: y)
    }
}

/// A row of "Layout changes": a fluid session (default detents, or full/fit/tip with fit
/// `{"content": 40}`), resting at `detent`, given `steps` (each a layout event with motion `none`):
/// the detents and where the card rests after the last.
public struct LayoutCheck: Sendable, CustomStringConvertible {
    /// Whether the session has the content-fit detents (full fromTop 18, fit content 40, tip height 69).
    public let contentFit: Bool
    /// The `keyboard` option.
    public let keyboard: String
    /// The content's height at creation.
    public let contentHeight: Double?
    public let detent: String
    public let steps: [LayoutStep]
    /// The reachable detents after the last step, top-down (hidden last), and the unreachable ones.
    public let detents: [(String, Double)]
    public let unreachable: [String]
    /// Where the card rests after the last step.
    public let rest: (String, Double)
    public let rule: String
    /// An anchored session instead: full fromTop 18, buy `{"contentAnchor": anchor}` (with
    /// `anchorOffset` where given), tip height 69.
    public let anchor: Double?
    public let anchorOffset: Double?

    init(
        _ contentFit: Bool, _ keyboard: String, _ contentHeight: Double?, _ detent: String, _ steps: [LayoutStep],
        _ detents: [(String, Double)], _ unreachable: [String], _ rest: (String, Double), _ rule: String,
        anchor: Double? = nil, anchorOffset: Double? = nil
    ) {
        (self.contentFit, self.keyboard, self.contentHeight, self.detent, self.steps) =
            (contentFit, keyboard, contentHeight, detent, steps)
        (self.detents, self.unreachable, self.rest, self.rule) = (detents, unreachable, rest, rule)
        (self.anchor, self.anchorOffset) = (anchor, anchorOffset)
    }

    /// The `detents` option: each detent's name and its spec's members, or nil for the default
    /// detents (`anchor`: the buy detent's point, where a step moved it).
    public var detentSpecs: [(String, [(String, Double)])]? { detentSpecs(anchor: anchor) }

    public func detentSpecs(anchor: Double?) -> [(String, [(String, Double)])]? {
        if let anchor {
            let buy = [("contentAnchor", anchor)] + (anchorOffset.map { [("offset", $0)] } ?? [])
            return [("full", [("fromTop", 18)]), ("buy", buy), ("tip", [("height", 69)])]
        }
        return contentFit ? [("full", [("fromTop", 18)]), ("fit", [("content", 40)]), ("tip", [("height", 69)])] : nil
    }

    /// The session's configuration as JSON (fluid, client clock).
    public var configuration: String {
        let detents =
            detentSpecs.map { specs in
                let members = specs.map { name, spec in
                    #""\#(name)": {"# + spec.map { #""\#($0.0)": \#($0.1)"# }.joined(separator: ", ") + "}"
                }
                return #""detents": {"# + members.joined(separator: ", ") + "}, "
            } ?? ""
        let content = contentHeight.map { #""contentHeight": \#($0), "# } ?? ""
        return
            #"{"preset": "fluid", \#(content)"options": {\#(detents)"keyboard": "\#(keyboard)"}, "initialDetent": "\#(detent)", "clock": "client"}"#
    }

    /// Step `i` as a layout event at time i + 1, with motion `none`.
    public func event(_ i: Int) -> String {
        let step = steps[i]
        var members = [#""phase": "layout""#, #""time": \#(i + 1)"#, #""motion": "none""#]
        if let k = step.keyboardInset { members.append(#""keyboardInset": \#(k)"#) }
        if let h = step.contentHeight { members.append(#""contentHeight": \#(h)"#) }
        if let (h, st, sb) = step.geometry {
            members.append(#""geometry": {"height": \#(h), "safeAreaTop": \#(st), "safeAreaBottom": \#(sb)}"#)
        }
        if let y = step.anchor, let specs = detentSpecs(anchor: y) {
            let detents = specs.map { name, spec in
                #""\#(name)": {"# + spec.map { #""\#($0.0)": \#($0.1)"# }.joined(separator: ", ") + "}"
            }
            members.append(#""options": {"detents": {"# + detents.joined(separator: ", ") + "}}")
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    public var description: String { rule }
}

/// A row of "Momentum across the boundary": a fluid session (`momentumHandOff`, `dampingRatio`)
/// resting at `detent`; either a drag begun and released at once with `velocity`, or (`fling`) the
/// content's fling reaching its top with it. Where the card goes, and the hand-off to the content.
public struct ScrollCheck: Sendable, CustomStringConvertible {
    public let momentumHandOff: Bool
    public let dampingRatio: Double
    public let detent: String
    public let fling: Bool
    public let velocity: Double
    public let target: String
    /// Seconds after the release and the velocity (pt/s) at which the content takes over; nil: none.
    public let handOff: (after: Double, velocity: Double)?
    public let rule: String

    init(
        _ momentumHandOff: Bool, _ dampingRatio: Double, _ detent: String, fling: Bool, _ velocity: Double,
        _ target: String, _ handOff: (Double, Double)?, _ rule: String
    ) {
        (self.momentumHandOff, self.dampingRatio, self.detent, self.fling, self.velocity) =
            (momentumHandOff, dampingRatio, detent, fling, velocity)
        (self.target, self.handOff, self.rule) = (target, handOff, rule)
    }

    /// The session's configuration as JSON (fluid, client clock).
    public var configuration: String {
        #"{"preset": "fluid", "options": {"momentumHandOff": \#(momentumHandOff), "dampingRatio": \#(dampingRatio)}, "initialDetent": "\#(detent)", "clock": "client"}"#
    }

    public var description: String { rule }
}

/// A row of "Release rules a designer shapes": a fluid session with `options` (JSON members)
/// resting at `detent`, a drag begun and released at once with `velocity`: where the card goes.
public struct ShapedReleaseCheck: Sendable, CustomStringConvertible {
    /// The options as JSON members, e.g. `"dismissFrom": "lowest"`.
    public let options: String
    public let detent: String
    public let velocity: Double
    public let target: String
    public let rule: String

    init(_ options: String, _ detent: String, _ velocity: Double, _ target: String, _ rule: String) {
        (self.options, self.detent, self.velocity, self.target, self.rule) = (options, detent, velocity, target, rule)
    }

    /// The session's configuration as JSON (fluid, client clock).
    public var configuration: String {
        #"{"preset": "fluid", "options": {\#(options)}, "initialDetent": "\#(detent)", "clock": "client"}"#
    }

    public var description: String { rule }
}

public enum CheckValues {
    /// The detent each preset rests at before a drag in the tables (no drag limit in the way), and
    /// its constant.
    public static let restingDetent: [String: (name: String, constant: Double)] = [
        "facebook": ("normal", 398.5),
        "twitter": ("open", 0),
        "glide": ("compressed", 398.5),
        "fluid": ("half", 398.5),
    ]

    public static let releases: [ReleaseCheck] = [
        ReleaseCheck("facebook", 150, -300, "expanded", 30, "constant < 0.25·H"),
        ReleaseCheck("facebook", 150, 1600, "hidden", 797, "velocity > 1500 wins over position"),
        ReleaseCheck("facebook", 250, 0, "normal", 398.5, "0.25·H ≤ constant < S − 70"),
        ReleaseCheck("facebook", 600, 0, "normal", 398.5, "below H/2 but above S − 70"),
        ReleaseCheck("facebook", 700, 0, "hidden", 797, "constant ≥ S − 70"),
        ReleaseCheck("facebook", 693, 10, "hidden", 797, "exactly S − 70 is not < S − 70"),
        ReleaseCheck("facebook", 500, 1499, "normal", 398.5, "velocity 1499 is not > 1500"),
        ReleaseCheck("twitter", -0.5, 0, "open", 0, "trunc(-0.5) = 0 is not < 0; v ≤ 0 → open"),
        ReleaseCheck("twitter", -3, -50, "open", 0, "trunc(constant) < 0 → open"),
        ReleaseCheck("twitter", 100, 250, "open", 0, "slow (< 300) and near (< 180) → open"),
        ReleaseCheck("twitter", 100, 350, "hidden", 633, "velocity ≥ 300 downward → hidden"),
        ReleaseCheck("twitter", 179.9, 299, "open", 0, "trunc(179.9) = 179 < 180, 299 < 300"),
        ReleaseCheck("twitter", 181, 100, "hidden", 633, "trunc(181) ≥ 180, downward → hidden"),
        ReleaseCheck("twitter", 50, 0, "open", 0, "velocity 0 → open"),
        ReleaseCheck("twitter", 300, -10, "open", 0, "upward → open"),
        ReleaseCheck("glide", 300, 200, "compressed", 398.5, "above K, downward → compressed"),
        ReleaseCheck("glide", 300, -200, "open", 44, "above K, upward → open"),
        ReleaseCheck("glide", 500, 10, "closed", 717, "between K and S, downward → closed"),
        ReleaseCheck("glide", 500, -10, "compressed", 398.5, "between K and S, upward → compressed"),
        ReleaseCheck("glide", 770, -900, "closed", 717, "below S → closed whatever the velocity"),
        ReleaseCheck("glide", 398.5, 0, "compressed", 398.5, "at K, velocity 0 counts as upward"),
        ReleaseCheck("fluid", 398.5, -800, "full", 18, "projection passes one detent up"),
        ReleaseCheck("fluid", 398.5, -100, "half", 398.5, "short projection stays"),
        ReleaseCheck("fluid", 600, 300, "tip", 728, "projection toward tip"),
        ReleaseCheck("fluid", 700, -200, "tip", 728, "projection clamped to the detent above: nearest is tip"),
        ReleaseCheck("fluid", 650, 900, "hidden", 797, "removal velocity 900/147 ≥ 5.5"),
        ReleaseCheck("fluid", 500, 1600, "tip", 728, "removal not reached (1600/297 < 5.5), one detent passed"),
        ReleaseCheck("fluid", 100, 2500, "half", 398.5, "skipDetents false: at most one detent passed"),
    ]

    public static let dimmer: [DimmerCheck] = [
        DimmerCheck("facebook", 20, 0.7, "above E the drag clamps to E; full dim at or above H/2"),
        DimmerCheck("facebook", 398.5, 0.7, "full dim at H/2"),
        DimmerCheck("facebook", 500, 0.5217, "linear between H/2 and H"),
        DimmerCheck("facebook", 700, 0.1704, "linear between H/2 and H (the seed's intended product)"),
        DimmerCheck("facebook", 797, 0.0, "0 at H"),
        DimmerCheck("facebook", 900, 0.0, "0 below H (never negative: the seed's bug is fixed)"),
        DimmerCheck("twitter", -40, 0.7, "pulled above open: clamp(b/C) = 0"),
        DimmerCheck("twitter", 0, 0.7, "open"),
        DimmerCheck("twitter", 100, 0.5894, "0.7·(1 − b/C)"),
        DimmerCheck("twitter", 400, 0.2577, "0.7·(1 − b/C)"),
        DimmerCheck("twitter", 633, 0.0, "at C (hidden)"),
        DimmerCheck("glide", 44, 0.7, "above K (open)"),
        DimmerCheck("glide", 398.5, 0.7, "at K"),
        DimmerCheck("glide", 500, 0.4769, "linear between K and closed"),
        DimmerCheck("glide", 717, 0.0, "at closed"),
        DimmerCheck("fluid", 18, 0.3, "maxDimAlpha at the top-most detent"),
        DimmerCheck("fluid", 398.5, 0.3, "maxDimAlpha at the detent above the undimmed one"),
        DimmerCheck("fluid", 500, 0.2076, "linear between half and tip"),
        DimmerCheck("fluid", 728, 0.0, "0 at the undimmed detent"),
    ]

    public static let dragLimits: [DragLimitCheck] = [
        DragLimitCheck("facebook", "normal", 398.5, -400, 30, "clamped at E (the seed stopped short)"),
        DragLimitCheck("glide", "compressed", 398.5, -500, 0, "clamped at 0"),
        DragLimitCheck("twitter", "open", 0, -80, -80, "unbounded above open"),
        DragLimitCheck("fluid", "full", 18, -50, -8.632, "rubber band past the top-most detent"),
        DragLimitCheck("fluid", "tip", 728, 172, 850.087, "rubber band past the bottom-most detent"),
    ]

    public static let showFrames: [ShowFramesCheck] = [
        ShowFramesCheck(
            preset: "facebook", target: "normal", frameCount: 9,
            frames: [
                (0.0000, 797.00, 0.0000), (0.0333, 785.31, 0.0205), (0.0667, 755.17, 0.0735),
                (0.1000, 711.38, 0.1504), (0.2333, 441.82, 0.6239), (0.2500, 398.50, 0.7000),
            ],
            rule: "easeIn, T = 0.25, alpha interpolated to 0.7"),
        ShowFramesCheck(
            preset: "twitter", target: "open", frameCount: 10,
            frames: [
                (0.0000, 633.00, 0.0000), (0.0333, 465.39, 0.1854), (0.0667, 266.14, 0.4057),
                (0.1000, 129.93, 0.5563), (0.2667, -0.94, 0.7000), (0.3000, 0.00, 0.7000),
            ],
            rule: "duration spring T 0.3, ζ 0.9, v 3; overshoot above open with alpha clamped"),
        ShowFramesCheck(
            preset: "glide", target: "compressed", frameCount: 13,
            frames: [
                (0.0000, 797.00, 0.0000), (0.0333, 727.06, 0.1229), (0.0667, 608.10, 0.3318),
                (0.1000, 508.70, 0.5064), (0.3667, 397.58, 0.7000), (0.4000, 398.50, 0.7000),
            ],
            rule: "duration spring T 0.4, ζ 0.8, from rest"),
    ]

    /// Fluid spring (response 0.4, ζ 1) from 300 to full (18) with velocity −1200: T = 0.577 s.
    public static let fluidSpring = SpringCheck(
        preset: "fluid", startDetent: "half", from: 300, velocity: -1200, detent: "full", to: 18, duration: 0.577,
        samples: [(0.05, 220.20), (0.1, 143.76), (0.2, 58.10)])

    /// "Layout changes" (default geometry: H = 797; the content-fit detents are full fromTop 18,
    /// fit content 40, tip height 69).
    public static let layouts: [LayoutCheck] = [
        LayoutCheck(
            false, "lift", nil, "half", [.keyboard(291)],
            [("full", 18), ("half", 107.5), ("tip", 437), ("hidden", 797)], [], ("half", 107.5),
            "lift: every visible detent rides up by the inset; hidden stays"),
        LayoutCheck(
            false, "lift", nil, "half", [.keyboard(500)],
            [("full", 18), ("half", 18), ("tip", 228), ("hidden", 797)], [], ("half", 18),
            "lift: never above the top-most detent"),
        LayoutCheck(
            false, "lift", nil, "half", [.keyboard(291), .keyboard(0)],
            [("full", 18), ("half", 398.5), ("tip", 728), ("hidden", 797)], [], ("half", 398.5),
            "lift: back when the keyboard goes, by the detent's name"),
        LayoutCheck(
            false, "extend", nil, "half", [.keyboard(291)],
            [("full", 18), ("half", 398.5), ("tip", 728), ("hidden", 797)], [], ("full", 18),
            "extend: to the top-most detent while the keyboard is up"),
        LayoutCheck(
            false, "extend", nil, "half", [.keyboard(291), .keyboard(0)],
            [("full", 18), ("half", 398.5), ("tip", 728), ("hidden", 797)], [], ("half", 398.5),
            "extend: back to the detent it left"),
        LayoutCheck(
            false, "none", nil, "half", [.keyboard(291)],
            [("full", 18), ("half", 398.5), ("tip", 728), ("hidden", 797)], [], ("half", 398.5),
            "none: the keyboard moves nothing"),
        LayoutCheck(
            true, "lift", 300, "fit", [],
            [("fit", 457), ("tip", 728), ("hidden", 797)], ["full"], ("fit", 457),
            "content: H − (contentHeight + 40); a detent above it is unreachable"),
        LayoutCheck(
            true, "lift", 300, "fit", [.content(100)],
            [("fit", 657), ("tip", 728), ("hidden", 797)], ["full"], ("fit", 657),
            "content: the detent follows the content's height"),
        LayoutCheck(
            true, "lift", 300, "fit", [.content(900)],
            [("full", 18), ("fit", 18), ("tip", 728), ("hidden", 797)], [], ("fit", 18),
            "content: never above the top-most other detent, which is then reachable"),
        LayoutCheck(
            true, "lift", 300, "fit", [.keyboard(291)],
            [("fit", 166), ("tip", 437), ("hidden", 797)], ["full"], ("fit", 166),
            "content and lift: the top-most detent bounds the lift though the content cannot reach it"),
        LayoutCheck(
            true, "lift", nil, "tip", [.content(300)],
            [("fit", 457), ("tip", 728), ("hidden", 797)], ["full"], ("tip", 728),
            "content: unreachable until the content's height is known"),
        LayoutCheck(
            false, "lift", nil, "half", [.screen(390, 0, 21)],
            [("full", 18), ("half", 195), ("tip", 321), ("hidden", 390)], [], ("half", 195),
            "rotation: the detents of the new screen, the card at its detent's new place"),
        LayoutCheck(
            false, "lift", 600, "tip", [],
            [("full", 18), ("buy", 377), ("tip", 728), ("hidden", 797)], [], ("tip", 728),
            "contentAnchor: H − 420 = 377, the card shows the content down to the Buy button", anchor: 420),
        LayoutCheck(
            false, "lift", 600, "buy", [.content(300)],
            [("full", 18), ("tip", 728), ("hidden", 797)], ["buy"], ("tip", 728),
            "contentAnchor: a point past the content's end is unreachable; the card goes to the nearest by progress",
            anchor: 420),
        LayoutCheck(
            false, "lift", nil, "tip", [.content(500)],
            [("full", 18), ("buy", 377), ("tip", 728), ("hidden", 797)], [], ("tip", 728),
            "contentAnchor: unreachable until the content's height is known", anchor: 420),
        LayoutCheck(
            false, "lift", 1000, "buy", [],
            [("full", 18), ("buy", 18), ("tip", 728), ("hidden", 797)], [], ("buy", 18),
            "contentAnchor: never above the top-most detent of the other kinds", anchor: 900),
        LayoutCheck(
            false, "lift", 600, "buy", [.keyboard(291)],
            [("full", 18), ("buy", 86), ("tip", 437), ("hidden", 797)], [], ("buy", 86),
            "contentAnchor and lift: rides up by the inset like every detent", anchor: 420),
        LayoutCheck(
            false, "lift", 600, "buy", [.content(500)],
            [("full", 18), ("buy", 315), ("tip", 728), ("hidden", 797)], [], ("buy", 315),
            "contentAnchor with offset 62: H − (420 + 62) = 315, kept while the content still reaches the point",
            anchor: 420, anchorOffset: 62),
        LayoutCheck(
            false, "lift", 600, "buy", [.anchor(300)],
            [("full", 18), ("buy", 497), ("tip", 728), ("hidden", 797)], [], ("buy", 497),
            "contentAnchor moved (the detents option sent again): re-placed by name, the card follows it",
            anchor: 420),
        LayoutCheck(
            false, "lift", 600, "buy", [.anchor(700)],
            [("full", 18), ("tip", 728), ("hidden", 797)], ["buy"], ("tip", 728),
            "contentAnchor moved past the content's end: unreachable, the card to the nearest by progress",
            anchor: 420),
    ]

    /// "Momentum across the boundary" (default detents: full 18, half 398.5, tip 728, hidden 797;
    /// ω = 2π/0.4 s).
    public static let scrolls: [ScrollCheck] = [
        ScrollCheck(
            true, 1, "half", fling: false, -8000, "full", (0.188076, -105.4364),
            "hand-off: a critical spring crosses the top-most detent when v0 < −ω·x0: t_c = −x0/(v0 + ω·x0)"),
        ScrollCheck(
            true, 0.5, "half", fling: false, -1000, "full", (0.142432, -1811.6301),
            "hand-off: an underdamped spring crosses at θ/ω_d"),
        ScrollCheck(
            true, 1, "half", fling: false, -1000, "full", nil,
            "no hand-off: the critical spring reaches the detent without crossing it"),
        ScrollCheck(
            false, 0.5, "half", fling: false, -1000, "full", nil, "no hand-off without momentumHandOff"),
        ScrollCheck(
            false, 1, "full", fling: true, 1200, "half", nil,
            "fling: the content's momentum released from full, projected and clamped to the next detent"),
        ScrollCheck(
            false, 1, "full", fling: true, 5000, "hidden", nil,
            "fling: v/(H − c) = 5000/779 ≥ 5.5 removes the card"),
    ]

    /// "Release rules a designer shapes" (default detents; projection p = c + (v/1000)·499).
    public static let shapedReleases: [ShapedReleaseCheck] = [
        ShapedReleaseCheck(
            #""thresholds": {"expand": 0.25, "collapse": 0.5, "dismiss": 0.75}"#, "half", -200, "full",
            "expand: p = 298.7 is 0.262 of the way to full ≥ 0.25"),
        ShapedReleaseCheck(
            #""thresholds": {"expand": 0.25, "collapse": 0.5, "dismiss": 0.75}"#, "half", 200, "half",
            "collapse: p = 498.3 is 0.303 of the way to tip < 0.5: stays"),
        ShapedReleaseCheck(
            #""thresholds": {"expand": 0.25, "collapse": 0.5, "dismiss": 0.75}"#, "tip", 100, "tip",
            "dismiss: p = 777.9 is 0.723 of the way to hidden < 0.75: stays"),
        ShapedReleaseCheck(
            #""thresholds": {"expand": 0.25, "collapse": 0.5, "dismiss": 0.75}"#, "tip", 120, "hidden",
            "dismiss: p = 787.88 is 0.868 of the way to hidden ≥ 0.75"),
        ShapedReleaseCheck(
            #""dismissFrom": "lowest""#, "half", 3000, "tip",
            "lowest: no removal from half (v/(H − c) = 7.5); the projection stops at tip"),
        ShapedReleaseCheck(
            #""dismissFrom": "any""#, "half", 3000, "hidden", "any: removal from half, v/(H − c) = 7.5 ≥ 5.5"),
        ShapedReleaseCheck(
            #""dismissFrom": "lowest""#, "tip", 400, "hidden", "lowest: removal from tip, v/(H − c) = 5.8 ≥ 5.5"),
    ]
}

/// A row of "Stacks": a fluid child (default geometry and detents) resting at `detent`, and how
/// its recede law draws what lies beneath it: [scale, lift, cornerRadius, alpha].
public struct StackCheck: Sendable, CustomStringConvertible {
    /// The child's `recede` option as JSON, or nil for the defaults.
    public let recede: String?
    public let detent: String
    public let transform: [Double]
    public let rule: String

    init(_ recede: String?, _ detent: String, _ transform: [Double], _ rule: String) {
        (self.recede, self.detent, self.transform, self.rule) = (recede, detent, transform, rule)
    }

    /// The child's configuration, stacked on `parent`.
    public func configuration(parent: String) -> String {
        let options = recede.map { #", "options": {"recede": \#($0)}"# } ?? ""
        return #"{"preset": "fluid", "parent": "\#(parent)", "initialDetent": "\#(detent)"\#(options)}"#
    }

    public var description: String { rule }
}

extension CheckValues {
    /// progress p = (797 − c) / 779 (hidden 797, full 18), clamped to [0, 1].
    public static let stacks: [StackCheck] = [
        StackCheck(nil, "full", [0.94, 10, 10, 0.2], "at the top-most detent p = 1: the whole recession"),
        StackCheck(
            nil, "half", [0.9693068035943517, 5.115532734274711, 5.115532734274711, 0.10231065468549423],
            "half: p = 398.5 / 779 = 0.5116; scale 1 + (0.94 − 1)·p"),
        StackCheck(
            nil, "tip", [0.9946854942233633, 0.8857509627727856, 0.8857509627727856, 0.017715019255455714],
            "tip: p = 69 / 779 = 0.0886"),
        StackCheck(
            #"{"scale": 0.9, "lift": 16, "cornerRadius": 12, "alpha": 0.4}"#, "half",
            [0.9488446726572529, 8.184852374839538, 6.138639281129654, 0.20462130937098846],
            "a designer's recession at half: each member times p"),
        StackCheck(
            #"{"scale": 1, "lift": 0, "cornerRadius": 0, "alpha": 0}"#, "full", [1, 0, 0, 0],
            "a recession of nothing: the parent stays as it is"),
    ]
}

/// A row of "Reduced motion per request": fluid with the default detents on the client clock,
/// resting at tip (728), the session's own `reducedMotion`, and one request at t = 5 (a release
/// or a cancel: `began` at 5, the event at 5.1) with its own `reducedMotion` (nil: it says none);
/// the motion it starts.
public struct MotionCheck: Sendable, CustomStringConvertible {
    /// What the request does.
    public enum Request: Sendable {
        case show(detent: String)
        case dismiss
        case step(expand: Bool)
        /// `began`, then `ended` with this velocity (pt/s).
        case release(velocity: Double)
        /// `began`, then `cancelled`.
        case cancel
    }

    /// The session's own setting.
    public let session: Bool
    public let request: Request
    /// The request's own `reducedMotion`.
    public let asked: Bool?
    /// `snap.reducedMotion`: the setting the motion followed.
    public let applied: Bool
    /// The motion's target detent and constant (points), its curve's name and its duration (seconds).
    public let detent: String
    public let constant: Double
    public let curve: String
    public let duration: Double
    public let rule: String

    public var description: String { rule }
}

extension CheckValues {
    /// Fluid's default detents on the default geometry: full 18, half 398.5, tip 728, hidden 797.
    public static let motions: [MotionCheck] = [
        MotionCheck(
            session: false, request: .show(detent: "full"), asked: true, applied: true, detent: "full", constant: 18,
            curve: "linear", duration: 0, rule: "a show that asks for reduced motion jumps on a session with motion"),
        MotionCheck(
            session: false, request: .show(detent: "full"), asked: nil, applied: false, detent: "full", constant: 18,
            curve: "spring", duration: 0.662, rule: "a request that says nothing takes the session's motion"),
        MotionCheck(
            session: true, request: .show(detent: "full"), asked: false, applied: false, detent: "full", constant: 18,
            curve: "spring", duration: 0.662,
            rule: "reducedMotion false animates one show on a session under reduced motion"),
        MotionCheck(
            session: true, request: .show(detent: "full"), asked: nil, applied: true, detent: "full", constant: 18,
            curve: "linear", duration: 0, rule: "the session's reduced motion otherwise"),
        MotionCheck(
            session: false, request: .dismiss, asked: true, applied: true, detent: "hidden", constant: 797,
            curve: "linear", duration: 0, rule: "a dismiss jumps"),
        MotionCheck(
            session: false, request: .step(expand: true), asked: true, applied: true, detent: "half", constant: 398.5,
            curve: "linear", duration: 0, rule: "a step jumps"),
        MotionCheck(
            session: true, request: .step(expand: true), asked: false, applied: false, detent: "half", constant: 398.5,
            curve: "spring", duration: 0.608, rule: "a step animates on a reduced session"),
        MotionCheck(
            session: false, request: .release(velocity: -3000), asked: true, applied: true, detent: "half",
            constant: 398.5, curve: "linear", duration: 0,
            rule: "an ended jumps to where the release law sends it"),
        MotionCheck(
            session: true, request: .cancel, asked: false, applied: false, detent: "tip", constant: 728,
            curve: "spring", duration: 0, rule: "a cancelled animates back on a reduced session, already there"),
    ]
}
