/// How one of fluid's named detents is placed on a layout: the `detents` option's spec as data, so
/// that a client re-resolves the detents of a new layout as the engine does (`LayoutLaw`).
public struct DetentRule: Sendable, Hashable {
    /// How the constant follows the layout. H is the available height (h − st), points.
    public enum Kind: String, Sendable, CaseIterable {
        /// c = value: a fixed distance from the top.
        case fromTop
        /// c = H − H · value: a fraction of the available height.
        case fraction
        /// c = H − value: a fixed height.
        case height
        /// c = H − (contentHeight + value): the card shows its content and `value` more points,
        /// clamped to [the top-most non-content detent (0 without one), H]; unreachable while the
        /// content height is unknown.
        case content
    }

    /// The detent's name.
    public let name: String
    /// The rule.
    public let kind: Kind
    /// Its parameter, points (a fraction for `fraction`).
    public let value: Double

    /// A rule from its parts.
    public init(name: String, kind: Kind, value: Double) {
        self.name = name
        self.kind = kind
        self.value = value
    }

    /// The constant before clamping (content: nil without a content height).
    func unclamped(H: Double, contentHeight: Double?) -> Double? {
        switch kind {
        case .fromTop: value
        case .fraction: H - H * value
        case .height: H - value
        case .content: contentHeight.map { H - ($0 + value) }
        }
    }
}
