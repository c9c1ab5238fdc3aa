// docs/PHYSICS.md, "Every edge": a fluid sheet (default options) from each edge, its detents on its
// axis geometry, the drag law's pointer mapping, a drag and its release. Replayed on the engine
// (SheetPhysicsTests/CheckValueTests.swift) and through HTTP (SheetServiceTests/CheckValueTests.swift).

/// A row of "Every edge": a fluid session from `edge` on `geometry` resting at `start`, dragged by
/// `translation` (along the axis, toward closing positive) and released with `velocity`.
public struct EdgeCheck: Sendable, CustomStringConvertible {
    /// The `edge` option.
    public let edge: String
    /// The geometry: height, safeAreaTop, safeAreaBottom, width, safeAreaLeft, safeAreaRight.
    public let geometry: (height: Double, top: Double, bottom: Double, width: Double?, left: Double, right: Double)
    /// The keyboard's inset (it acts on bottom sheets only).
    public let keyboardInset: Double
    /// The detents on the axis geometry.
    public let detents: [(String, Double)]
    /// The drag law's pointer mapping.
    public let axis: String
    public let sign: Double
    /// The drag: from `start`, by `translation`, to `constant`.
    public let start: String
    public let translation: Double
    public let constant: Double
    /// The release: with `velocity` to `snap` at `snapConstant`.
    public let velocity: Double
    public let snap: String
    public let snapConstant: Double
    /// The rule the row checks.
    public let rule: String

    /// The geometry as JSON.
    public var geometryJSON: String {
        let g = geometry
        let width = g.width.map { #", "width": \#($0)"# } ?? ""
        return
            #"{"height": \#(g.height), "safeAreaTop": \#(g.top), "safeAreaBottom": \#(g.bottom)\#(width), "safeAreaLeft": \#(g.left), "safeAreaRight": \#(g.right)}"#
    }

    /// The session's configuration as JSON.
    public var configuration: String {
        #"{"preset": "fluid", "geometry": \#(geometryJSON), "keyboardInset": \#(keyboardInset), "options": {"edge": "\#(edge)"}, "initialDetent": "\#(start)"}"#
    }

    public var description: String { "\(edge) \(start) \(translation) v\(velocity) → \(snap) (\(rule))" }
}

extension CheckValues {
    /// A landscape phone (844 × 390, notch insets 47 on both sides) and a 600-pt-wide panel.
    public static let edges: [EdgeCheck] = [
        EdgeCheck(
            edge: "left", geometry: (390, 0, 21, 844, 47, 47),
            keyboardInset: 0, detents: [("full", 18), ("half", 398.5), ("tip", 728), ("hidden", 797)], axis: "x",
            sign: -1, start: "half", translation: 100, constant: 498.5, velocity: 0, snap: "half", snapConstant: 398.5,
            rule:
                "left: main dimension w = 844, far inset sr = 47: H = 797, the standard bottom sheet's detents; 100 pt leftward closes by 100"
        ),
        EdgeCheck(
            edge: "right", geometry: (900, 20, 0, 600, 0, 20),
            keyboardInset: 0, detents: [("full", 18), ("half", 300), ("tip", 531), ("hidden", 600)], axis: "x", sign: 1,
            start: "tip", translation: -600, constant: -26.315813845797635, velocity: 0, snap: "full", snapConstant: 18,
            rule: "right: w = 600, far inset sl = 0: H = 600; past full the band over the width: 18 − f(87), f over 600"
        ),
        EdgeCheck(
            edge: "top", geometry: (844, 47, 34, nil, 0, 0), keyboardInset: 0,
            detents: [("full", 18), ("half", 405), ("tip", 741), ("hidden", 810)], axis: "y", sign: -1, start: "tip",
            translation: 0, constant: 741, velocity: 3000, snap: "hidden", snapConstant: 810,
            rule: "top: far inset sb = 34: H = 810; a closing fling (3000 / 69 ≥ 5.5 per s) removes it"
        ),
        EdgeCheck(
            edge: "left", geometry: (390, 0, 21, 844, 47, 47),
            keyboardInset: 300, detents: [("full", 18), ("half", 398.5), ("tip", 728), ("hidden", 797)], axis: "x",
            sign: -1, start: "half", translation: -200, constant: 198.5, velocity: -2000, snap: "full",
            snapConstant: 18,
            rule: "the keyboard (300 pt) is not along a side sheet's axis: nothing lifts; an opening fling reaches full"
        ),
        EdgeCheck(
            edge: "bottom", geometry: (844, 47, 34, 390, 0, 0),
            keyboardInset: 0, detents: [("full", 18), ("half", 398.5), ("tip", 728), ("hidden", 797)], axis: "y",
            sign: 1, start: "half", translation: 100, constant: 498.5, velocity: 0, snap: "half", snapConstant: 398.5,
            rule: "bottom: the width changes nothing; the left drawer of row 1 answers the same numbers"
        ),
    ]
}
