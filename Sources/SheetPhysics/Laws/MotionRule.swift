/// One clause of a release law's motions: when every condition holds, `curve` moves the card.
public struct MotionRule: Sendable, Hashable {
    /// All must hold; none: always.
    public let conditions: [MotionCondition]
    /// The curve that moves the card.
    public let curve: CurveLaw

    init(_ conditions: [MotionCondition], _ curve: CurveLaw) {
        self.conditions = conditions
        self.curve = curve
    }
}
