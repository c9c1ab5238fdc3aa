/// What a rule's reason may quote.
struct ReleaseFacts {
    let constant: Double
    let velocity: Double
    let origin: Detent
    /// The momentum projection, where the law has one.
    let projected: Double?
    /// The neighbour the projection was clamped to, when it was.
    let beyond: Detent?
}
