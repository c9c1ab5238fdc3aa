import SheetPhysics
import SheetdTesting
import Testing

// A session archived at any point and restored carries on exactly as the original: the rule a
// session store relies on when another process takes a session over.

/// A random event for a session of `model` at `time`.
private func randomEvent(_ model: SheetModel, using rng: inout SplitMix64) -> SheetEvent {
    switch Int.random(in: 0..<10, using: &rng) {
    case 0: return .pan(PanEvent(phase: .began, scrollOffset: Bool.random(using: &rng) ? 0 : 12))
    case 1...5:
        return .pan(PanEvent(phase: .changed, translation: Double.random(in: -500...500, using: &rng)))
    case 6:
        return .pan(
            PanEvent(
                phase: .ended,
                velocity: Bool.random(using: &rng) ? Double.random(in: -3000...3000, using: &rng) : nil))
    case 7: return .pan(PanEvent(phase: .cancelled))
    case 8: return .show(detent: nil)
    case 9 where model.preset.has(.keyboard) && Bool.random(using: &rng):
        // A layout change: the keyboard, the content's height, or the screen.
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return .layout(LayoutChange(keyboardInset: Bool.random(using: &rng) ? 0 : 291))
        case 1: return .layout(LayoutChange(contentHeight: Double.random(in: 0...900, using: &rng)))
        default:
            return .layout(LayoutChange(geometry: try? Geometry(height: 390, safeAreaTop: 0, safeAreaBottom: 21)))
        }
    default: return .dismiss
    }
}

@Suite("Archive")
struct ArchiveTests {
    /// Every preset, 200 random event sequences each: archive after k events, restore, then the
    /// restored and the original sessions answer the remaining events identically (outcomes,
    /// snapshots, animations and their samples), bit for bit.
    @Test(arguments: PresetName.allCases)
    func restoredSessionContinuesIdentically(preset: PresetName) throws {
        var rng = SplitMix64(seed: 0xA5C1_0000 &+ UInt64(PresetName.allCases.firstIndex(of: preset)!))
        // fluid with content-fit and `extend`, so that layout events exercise `keyboardReturn`.
        let model =
            preset == .fluid
            ? try SheetModel(
                preset: .fluid, layout: try Layout(geometry: .standard, keyboardInset: 0, contentHeight: 300),
                options: [
                    (
                        "detents",
                        .object([
                            ("full", .object([("fromTop", .number(18))])), ("fit", .object([("content", .number(40))])),
                            ("tip", .object([("height", .number(69))])),
                        ])
                    ), ("keyboard", .string("extend")),
                ]) : try SheetModel(preset: preset)
        for _ in 0..<200 {
            var original = try SheetSession(model: model)
            var time = 0.0
            let events = (0..<Int.random(in: 2...30, using: &rng)).map { _ in randomEvent(model, using: &rng) }
            let cut = Int.random(in: 0..<events.count, using: &rng)
            for event in events[..<cut] {
                time += Double.random(in: 0.004...0.2, using: &rng)
                _ = original.handle(event, at: time)
            }
            // The model in effect (a layout event replaces it; the store keeps its configuration).
            var restored = try SheetSession(model: original.model, archive: original.archive)
            #expect(restored.archive == original.archive)
            for event in events[cut...] {
                time += Double.random(in: 0.004...0.2, using: &rng)
                let a = original.handle(event, at: time)
                let b = restored.handle(event, at: time)
                #expect(a.action == b.action)
                #expect(a.snapshot == b.snapshot)
                #expect(a.velocity == b.velocity)
                if let x = a.animation, let y = b.animation {
                    for t in stride(from: x.startTime, through: x.endTime, by: 1.0 / 60) {
                        #expect(x.sample(at: t) == y.sample(at: t))
                    }
                }
            }
        }
    }

    /// A server-clock session moved to a clock `delta` seconds ahead answers the same events,
    /// moved by `delta`, as it would have on its own clock (up to rounding in the sum).
    @Test func shiftedArchiveMovesEveryTime() throws {
        let model = try SheetModel(preset: .facebook)
        var s = try SheetSession(model: model, initialDetent: "normal")
        _ = s.handle(.pan(PanEvent(phase: .began)), at: 10)
        _ = s.handle(.pan(PanEvent(phase: .changed, translation: -100)), at: 10.05)
        _ = s.handle(.pan(PanEvent(phase: .ended, velocity: -900)), at: 10.1)
        let delta = 1000.0
        var moved = try SheetSession(model: model, archive: s.archive.shifted(by: delta))
        let a = s.snapshot(at: 10.2)
        let b = moved.snapshot(at: 10.2 + delta)
        #expect(a.detent == b.detent)
        #expect(close(a.constant, b.constant, 1e-9))
        #expect(moved.lastAnimation!.startTime == 10.1 + delta)
        // A time before the shifted last event is the clock going backwards.
        #expect(moved.handle(.dismiss, at: 10.05 + delta).conflict != nil)
    }

    /// Archives that do not fit the model are refused, never trusted.
    @Test(arguments: [
        // resting at a detent the model does not have
        SheetArchive(phase: .resting(detent: 9), samples: [], animationCount: 0, lastTime: 0, finishedDrag: false),
        // a drag returning to a detent out of range
        SheetArchive(
            phase: .dragging(
                DragArchive(
                    start: 0, base: 0, origin: -1, constant: 0, lastTranslation: 0, canScroll: false,
                    consumer: .sheet)), samples: [], animationCount: 0, lastTime: 0, finishedDrag: false),
        // a non-finite drag value
        SheetArchive(
            phase: .dragging(
                DragArchive(
                    start: .nan, base: 0, origin: 0, constant: 0, lastTranslation: 0, canScroll: false,
                    consumer: .sheet)), samples: [], animationCount: 0, lastTime: 0, finishedDrag: false),
        // an animation numbered past the session's count
        SheetArchive(
            phase: .animating(
                AnimationArchive(
                    id: 3, curve: .timed(.easeIn), from: 0, to: 30, duration: 0.25, fromAlpha: 0, toAlpha: 0.7,
                    startTime: 0, detent: 0)), samples: [], animationCount: 1, lastTime: 0, finishedDrag: false),
        // a spring outside the bounds the engine accepts
        SheetArchive(
            phase: .animating(
                AnimationArchive(
                    id: 1, curve: .spring(response: 0, dampingRatio: 1, velocity: 0), from: 0, to: 30, duration: 1,
                    fromAlpha: 0, toAlpha: 0.7, startTime: 0, detent: 0)), samples: [], animationCount: 1,
            lastTime: 0, finishedDrag: false),
        // an infinite sample time
        SheetArchive(
            phase: .hidden, samples: [VelocitySample(time: .infinity, translation: 0)], animationCount: 0,
            lastTime: 0, finishedDrag: false),
    ])
    func mismatchedArchiveIsRefused(archive: SheetArchive) throws {
        let model = try SheetModel(preset: .facebook)
        #expect(throws: ArchiveMismatch.self) { try SheetSession(model: model, archive: archive) }
    }
}
