/// One clause of a release law: when every condition holds, `target` picks the detent.
public struct ReleaseRule: Sendable {
    /// All must hold; none: always.
    public let conditions: [ReleaseCondition]
    /// Which detent the card goes to.
    public let target: ReleaseTarget
    /// The reason people read in the snap (not part of the law a client evaluates).
    let explain: @Sendable (ReleaseFacts) -> String

    init(
        _ conditions: [ReleaseCondition], _ target: ReleaseTarget,
        because explain: @escaping @Sendable (ReleaseFacts) -> String
    ) {
        self.conditions = conditions
        self.target = target
        self.explain = explain
    }
}
