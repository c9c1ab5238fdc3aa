/// Something that happens to a session.
public enum SheetEvent: Sendable, Equatable {
    case pan(PanEvent)
    /// Present or move to a detent (nil: the preset's default).
    case show(detent: String?)
    /// The tap on the dimmer.
    case dismiss
    /// The layout around the card changed (the keyboard, the content's height, the screen, the
    /// options): the detents are placed anew and the card follows (`SheetSession.relayout`).
    case layout(LayoutChange)
    /// A fling of the content reached the content's top with this velocity (pt/s, > 0): the card
    /// takes the momentum (a preset with scroll hand-off, resting where its content scrolls);
    /// `reducedMotion`: the request's own setting for the motion it starts (nil: the session's).
    case fling(velocity: Double, reducedMotion: Bool? = nil)
    /// An accessibility step (a screen reader's increment or decrement, an arrow key): to the next
    /// detent up (`expand`) or down (collapse; from the lowest, where the card can hide, away).
    case step(expand: Bool)
}
