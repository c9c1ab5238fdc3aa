/// What an accessibility step did, for the announcement a screen reader makes and the value it
/// reads (the service words them): the direction, the detent the card goes to (or stays at), its
/// place among the visible detents, and whether it moved.
public struct StepFacts: Sendable, Hashable {
    /// Up (expand) or down (collapse).
    public let expand: Bool
    /// Where the card goes, or stays.
    public let detent: Detent
    /// 1-based among the visible detents, top-down; 0 for hidden.
    public let position: Int
    /// The number of visible detents.
    public let count: Int
    /// Whether the step moved the card (false: it was already at the end it stepped toward).
    public let moved: Bool
    /// Whether the card was hidden before (a step up presents it).
    public let presented: Bool
}
