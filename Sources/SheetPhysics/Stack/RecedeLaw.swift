/// What a card does to what lies beneath it as it opens, as data a client evaluates: the sheet
/// it is stacked on (a session naming a `parent`) or, with `backdrop`, the page behind a root
/// sheet. The covered thing recedes with the card's progress, so one frame of the card moves
/// both: a client draws the parent from the child's constant, never from a second answer.
///
/// Evaluation at the card's constant c, each step one IEEE-754 double operation, as written:
/// 1. p = min(max(`progress.progress(of: c)`, 0), 1);
/// 2. scale = 1 + (`scale` − 1) · p, lift = `lift` · p, cornerRadius = `cornerRadius` · p,
///    alpha = `alpha` · p.
public struct RecedeLaw: Sendable, Hashable {
    /// The covered thing's scale with the card at its top-most detent (0, 1].
    public let scale: Double
    /// Points the covered thing moves away from its edge then.
    public let lift: Double
    /// Its corner radius then, points.
    public let cornerRadius: Double
    /// The shade's alpha over it then, [0, 1].
    public let alpha: Double
    /// Whether a root card (one with no parent) recedes the page behind it as well.
    public let backdrop: Bool
    /// The card's progress (the drag law's): 0 hidden, 1 at the top-most detent.
    public let progress: ProgressScale

    /// A law from its parts.
    public init(
        scale: Double, lift: Double, cornerRadius: Double, alpha: Double, backdrop: Bool, progress: ProgressScale
    ) {
        self.scale = scale
        self.lift = lift
        self.cornerRadius = cornerRadius
        self.alpha = alpha
        self.backdrop = backdrop
        self.progress = progress
    }

    /// The recession every preset has unless its options say otherwise: UIKit's stacked sheet
    /// (≈ 6 % smaller, 10 pt up, 10 pt corners, a light shade); the page behind stays.
    public static func standard(_ progress: ProgressScale) -> RecedeLaw {
        RecedeLaw(
            scale: standardScale, lift: standardLift, cornerRadius: standardCornerRadius, alpha: standardAlpha,
            backdrop: false, progress: progress)
    }

    static let standardScale = 0.94
    static let standardLift = 10.0
    static let standardCornerRadius = 10.0
    static let standardAlpha = 0.2

    /// How the covered thing is drawn with the card at `constant` (steps 1–2).
    @inline(__always) public func transform(at constant: Double) -> SheetTransform {
        let p = min(max(progress.progress(of: constant), 0), 1)
        return SheetTransform(
            scale: 1 + (scale - 1) * p, lift: lift * p, cornerRadius: cornerRadius * p, alpha: alpha * p)
    }
}
