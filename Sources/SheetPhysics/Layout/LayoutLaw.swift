/// Where fluid's detents are on any layout and what the keyboard does, as data: the engine places
/// the detents of every layout by evaluating this value, and the service sends the same value to
/// clients (`layoutLaw`), so a client that evaluates it moves the card on the frame its layout
/// changes (the keyboard rises, the content grows), without waiting for the answer.
///
/// Evaluation on a layout (each step one IEEE-754 double operation, as written):
/// 0. the geometry is taken along `edge`'s axis (`Geometry.along(_:)`: height = the main
///    dimension, safeAreaTop = the far side's inset); every step below reads that axis geometry;
/// 1. H = geometry.height − geometry.safeAreaTop; each rule's constant by its kind (`DetentRule`),
///    clamped to [0, H];
/// 2. top = the smallest constant of the rules not of kind `content` or `contentAnchor` (0 where
///    every rule is); such a rule's constant is clamped to [top, H], and is unreachable without a
///    content height (a `contentAnchor` also where its point lies past the content's end);
/// 3. where a `content` detent is reachable, fit = the smallest such constant, and every other
///    detent above it (constant < fit) is unreachable: the card would show empty space below its
///    content;
/// 4. the reachable detents, ordered by constant (a tie keeps the order of `detents`);
/// 5. `edge` = bottom, `keyboard` = `lift` with k = min(keyboardInset, height) > 0: each constant c becomes
///    max(c − k, top) (top as in step 2: the top-most detent bounds the lift even where the
///    content cannot reach it);
/// 6. `hideable`: the detent `hidden` at H follows.
public struct LayoutLaw: Sendable, Hashable {
    /// The visible detents' rules, in the order the options named them.
    public let detents: [DetentRule]
    /// Whether the detent `hidden` at H is there.
    public let hideable: Bool
    /// What the keyboard does.
    public let keyboard: KeyboardPolicy
    /// Whether a drag may begin while the keyboard is up.
    public let keyboardDrag: Bool
    /// How a layout change moves a card that is not under the finger, unless the event says.
    public let motion: LayoutMotion
    /// The edge the card comes from: the screen's axis the detents are placed along. The keyboard
    /// covers the bottom of the screen, so it lifts (or extends, or locks) bottom sheets only.
    public let edge: Edge

    /// A law from its parts.
    public init(
        detents: [DetentRule], hideable: Bool, keyboard: KeyboardPolicy, keyboardDrag: Bool, motion: LayoutMotion,
        edge: Edge = .bottom
    ) {
        self.edge = edge
        self.detents = detents
        self.hideable = hideable
        self.keyboard = keyboard
        self.keyboardDrag = keyboardDrag
        self.motion = motion
    }

    /// The same law under reduced motion: a layout change jumps.
    var jumping: LayoutLaw {
        LayoutLaw(detents: detents, hideable: hideable, keyboard: keyboard, keyboardDrag: keyboardDrag, motion: .none)
    }

    /// The detents of `layout`: the reachable ones top-down (the hidden one last), and the names of
    /// the unreachable ones in the order of `detents`.
    public func resolve(_ layout: Layout) -> (detents: [Detent], unreachable: [String]) {
        // A side edge without a width never gets here: the preset refuses that geometry.
        let g = (try? layout.geometry.along(edge)) ?? layout.geometry
        let H = g.height - g.safeAreaTop
        var constants: [Double?] = detents.map { rule in
            rule.unclamped(H: H, contentHeight: layout.contentHeight).map { min(max($0, 0), H) }
        }
        var top: Double?
        for (rule, c) in zip(detents, constants) where !rule.kind.followsContent {
            if let c, c < (top ?? .infinity) { top = c }
        }
        var fit: Double?
        for (k, rule) in detents.enumerated() where rule.kind.followsContent {
            guard let c = constants[k] else { continue }
            let clamped = max(c, top ?? 0)
            constants[k] = clamped
            if rule.kind == .content, clamped < (fit ?? .infinity) { fit = clamped }
        }
        var reachable: [(index: Int, constant: Double)] = []
        var unreachable: [String] = []
        for (k, rule) in detents.enumerated() {
            guard let c = constants[k], rule.kind == .content || c >= (fit ?? -.infinity) else {
                unreachable.append(rule.name)
                continue
            }
            reachable.append((k, c))
        }
        reachable.sort { $0.constant != $1.constant ? $0.constant < $1.constant : $0.index < $1.index }
        var out = reachable.map { Detent(name: detents[$0.index].name, constant: $0.constant) }
        if keyboard == .lift, edge == .bottom, layout.keyboardInset > 0 {
            let bound = top ?? 0
            let k = min(layout.keyboardInset, g.height)
            out = out.map { Detent(name: $0.name, constant: max($0.constant - k, bound)) }
        }
        if hideable { out.append(Detent(name: "hidden", constant: H, isHidden: true)) }
        return (out, unreachable)
    }
}
