import SheetPhysics
import Testing

/// A session of `preset` on the standard geometry, resting at `detent`.
func resting(_ preset: PresetName, at detent: String, options: [(key: String, value: OptionValue)] = []) throws
    -> SheetSession
{
    try SheetSession(model: SheetModel(preset: preset, options: options), initialDetent: detent)
}

/// Drags a resting session to `constant` (began at t0, changed at t0 + 0.05) and returns the session.
func dragged(_ s: inout SheetSession, to constant: Double, at t0: Double = 0) {
    let start = s.snapshot(at: t0).constant
    _ = s.handle(.pan(PanEvent(phase: .began)), at: t0)
    _ = s.handle(.pan(PanEvent(phase: .changed, translation: constant - start)), at: t0 + 0.05)
}

/// |a − b| ≤ tolerance.
func close(_ a: Double, _ b: Double, _ tolerance: Double) -> Bool { abs(a - b) <= tolerance }

extension SheetOutcome {
    /// The conflict, if the event was refused.
    var conflict: SheetConflict? {
        if case let .conflict(c) = action { return c }
        return nil
    }
}
