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
        /// c = H − (value + offset): the card shows its content down to the point `value` points
        /// below the content's top (the bottom of a Buy button), and `offset` more (what the card
        /// shows above its content, a header); clamped like `content`; unreachable while the
        /// content height is unknown or the point lies past the content's end (value >
        /// contentHeight).
        case contentAnchor

        /// Whether the kind follows the content (placed only with a content height, clamped up to
        /// the top-most detent of the other kinds).
        var followsContent: Bool { self == .content || self == .contentAnchor }
    }

    /// The detent's name.
    public let name: String
    /// The rule.
    public let kind: Kind
    /// Its parameter, points (a fraction for `fraction`).
    public let value: Double
    /// `contentAnchor`: the points the card shows beyond the anchor (0 for the other kinds).
    public let offset: Double

    /// A rule from its parts.
    public init(name: String, kind: Kind, value: Double, offset: Double = 0) {
        self.name = name
        self.kind = kind
        self.value = value
        self.offset = offset
    }

    /// The constant before clamping (content: nil without a content height).
    func unclamped(H: Double, contentHeight: Double?) -> Double? {
        switch kind {
        case .fromTop: value
        case .fraction: H - H * value
        case .height: H - value
        case .content: contentHeight.map { H - ($0 + value) }
        case .contentAnchor: contentHeight.flatMap { value <= $0 ? H - (value + offset) : nil }
        }
    }
}
