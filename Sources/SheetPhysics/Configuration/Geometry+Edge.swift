// The axis geometry: a sheet from any edge seen as a bottom sheet, so that one set of laws serves
// every edge (docs/PHYSICS.md, "Every edge").

extension Geometry {
    /// The geometry along `edge`'s axis, as a bottom sheet sees it: `height` is the main dimension
    /// (h for top and bottom, w for left and right), `safeAreaTop` the safe inset at the far side
    /// (the one the card opens toward) and `safeAreaBottom` the one at the near side (the edge the
    /// card comes from). bottom: far = top; top: far = bottom; left: far = right; right: far = left.
    /// A side edge without a width: `invalidGeometry` naming `geometry.width`.
    public func along(_ edge: Edge) throws(ConfigurationError) -> Geometry {
        switch edge {
        case .bottom: return self
        case .top: return Geometry(uncheckedAxis: height, far: safeAreaBottom, near: safeAreaTop)
        case .left, .right:
            guard let w = width else {
                throw .invalidGeometry(
                    "a \(edge.rawValue) sheet moves along the width: send geometry.width (points)",
                    field: "geometry.width")
            }
            return edge == .left
                ? Geometry(uncheckedAxis: w, far: safeAreaRight, near: safeAreaLeft)
                : Geometry(uncheckedAxis: w, far: safeAreaLeft, near: safeAreaRight)
        }
    }

    /// An axis geometry from parts a validated geometry already checked (main > 0, far + near <
    /// main), without a width: it has one dimension.
    private init(uncheckedAxis main: Double, far: Double, near: Double) {
        self.init(uncheckedHeight: main, safeAreaTop: far, safeAreaBottom: near)
    }

    /// sl, sr ≥ 0 and finite; with a width, w finite > 0 and sl + sr < w.
    static func checkSides(width: Double?, left: Double, right: Double) throws(ConfigurationError) {
        guard left.isFinite, left >= 0 else {
            throw .invalidGeometry(
                "safeAreaLeft must be a finite number ≥ 0, got \(Format.number(left))", field: "geometry.safeAreaLeft")
        }
        guard right.isFinite, right >= 0 else {
            throw .invalidGeometry(
                "safeAreaRight must be a finite number ≥ 0, got \(Format.number(right))",
                field: "geometry.safeAreaRight")
        }
        guard let w = width else { return }
        guard w.isFinite, w > 0 else {
            throw .invalidGeometry(
                "width must be a finite number > 0, got \(Format.number(w))", field: "geometry.width")
        }
        guard left + right < w else {
            throw .invalidGeometry(
                "safeAreaLeft + safeAreaRight (\(Format.number(left + right))) must be less than width (\(Format.number(w)))",
                field: "geometry.width")
        }
    }
}
