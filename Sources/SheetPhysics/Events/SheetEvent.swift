/// Something that happens to a session.
public enum SheetEvent: Sendable, Hashable {
    case pan(PanEvent)
    /// Present or move to a detent (nil: the preset's default).
    case show(detent: String?)
    /// The tap on the dimmer.
    case dismiss
}
