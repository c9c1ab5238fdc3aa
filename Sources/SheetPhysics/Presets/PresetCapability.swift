/// What a preset's sessions can do beyond the common state machine (began, changed, ended,
/// cancelled, show, dismiss). The service, the demo and the checks decide by these, never by a
/// preset's name; `GET /presets` lists them by their raw values.
public enum PresetCapability: String, Sendable, CaseIterable {
    /// A drag may hand the finger's movement to an inner scroll view: pan events may carry
    /// `scrollOffset` (elsewhere an unknown field), and pan answers say who took the movement.
    case scrollHandOff
    /// A drag may finish by itself once it passes a fraction of the way to the other detent
    /// (`DragLaw.finishThreshold`; an option may switch it off).
    case dragFinish
    /// Layout events may carry `keyboardInset`, and the `keyboard` option says what it does to the
    /// card (`KeyboardPolicy`).
    case keyboard
    /// Detents may fit the content (kind `content`), and layout events may carry `contentHeight`.
    case contentFit
}
