/// The rules of a stack of sheets: a session may name a `parent`, the sheet it is stacked on.
/// While the child is open the parent is covered: it takes no event but a layout change (the
/// screen changed under the whole stack), and it is drawn by the child's `RecedeLaw`.
public enum StackRule {
    /// Whether a card in `child`'s state covers its parent: anything but hidden at rest (a child
    /// still animating out covers it until it is gone).
    @inline(__always) public static func covers(_ child: SheetSnapshot) -> Bool { child.state != .hidden }

    /// Whether a covered sheet takes `event`: only a layout change.
    @inline(__always) public static func coveredSheetTakes(_ event: SheetEvent) -> Bool {
        if case .layout = event { return true }
        return false
    }

    /// The most sheets one stack may hold (a chain of parents): each hop is a lookup on every
    /// event of the sheets beneath, so the chain is bounded.
    public static let maxDepth = 8
}
