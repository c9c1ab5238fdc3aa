/// A drag in progress.
struct Drag: Sendable {
    /// The constant the current segment of the drag started from, points.
    var start: Double
    /// The translation at which the current segment started, points (re-based on scroll → sheet).
    var base: Double
    /// The detent a cancel returns to (an index into the model's detents: keeps Drag plain data).
    var origin: Int
    /// The card's constant now, points.
    var constant: Double
    /// The translation of the previous event of this drag, points.
    var lastTranslation: Double
    /// fluid: the drag began resting at a detent where the content scrolls.
    var canScroll: Bool
    /// fluid: who took the last `changed`.
    var consumer: Consumer
}
