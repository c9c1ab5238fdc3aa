/// The screen edge a card comes from (fluid's `edge` option). The engine keeps one axis: the
/// constant is the distance of the card's leading edge from the far safe edge, points, and a
/// translation is signed along the sheet's axis with "toward closing" positive, so the state
/// machine and every law are the bottom sheet's. An edge only says how the screen maps onto that
/// axis (`Geometry.along(_:)`) and how a client maps the pointer onto it (`axis`, `sign`).
public enum Edge: String, Sendable, Hashable, CaseIterable {
    /// The card rises from the bottom (the classic sheet): closing is downward, +y.
    case bottom
    /// The card drops from the top: closing is upward, −y.
    case top
    /// A drawer from the left: closing is leftward, −x.
    case left
    /// A drawer from the right: closing is rightward, +x.
    case right

    /// A screen axis a client reads pointer deltas along.
    public enum Axis: String, Sendable, Hashable {
        /// Horizontal (left and right drawers).
        case x
        /// Vertical (bottom and top sheets).
        case y
    }

    /// The pointer axis the card moves along.
    public var axis: Axis {
        switch self {
        case .bottom, .top: .y
        case .left, .right: .x
        }
    }

    /// translation = sign · (pointer delta along `axis`, screen points with y downward and x
    /// rightward): +1 where closing goes toward growing screen coordinates (bottom, right), −1
    /// where it goes toward shrinking ones (top, left).
    public var sign: Double {
        switch self {
        case .bottom, .right: 1
        case .top, .left: -1
        }
    }

    /// Whether the main dimension is the width (a side sheet: the geometry must give it).
    public var isSide: Bool { axis == .x }
}
