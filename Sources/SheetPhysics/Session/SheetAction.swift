/// What an event did. The service decides the I/O.
public enum SheetAction: Sendable, Equatable {
    /// The card follows the finger (began, changed, or the scroll view took the movement).
    case dragged
    /// An animation started toward a detent.
    case settle(Animation, Snap)
    /// Accepted with nothing to do (events of a drag that a finished transition ended; dismissing
    /// a hidden card).
    case unchanged
    /// Refused as conflicting with the session's state: the session did not change.
    case conflict(SheetConflict)
    /// Refused as invalid (a show to an unknown or hidden detent): the session did not change.
    case invalid(ConfigurationError)
}
