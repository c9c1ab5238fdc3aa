import SheetPhysics
import Testing

// The rules of docs/PHYSICS.md beyond the public check values: every release threshold on both
// sides, every drag limit and dimmer rule, and the state machine's edges.

struct BoundaryRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let start: String
    let constant: Double
    let velocity: Double
    let detent: String
    let rule: String
    var testDescription: String { "\(preset): \(rule)" }

    init(
        _ preset: PresetName, from start: String, _ constant: Double, _ velocity: Double, _ detent: String,
        _ rule: String, options: [(key: String, value: OptionValue)] = []
    ) {
        self.preset = preset
        self.start = start
        self.constant = constant
        self.velocity = velocity
        self.detent = detent
        self.rule = rule
        self.options = options
    }
}

@Test(arguments: [
    BoundaryRow(.facebook, from: "normal", 300, 1500, "normal", "velocity 1500 is not > 1500"),
    BoundaryRow(.facebook, from: "normal", 300, 1500.001, "hidden", "velocity just over 1500 dismisses"),
    BoundaryRow(.facebook, from: "normal", 199.24, 0, "expanded", "just above 0.25·H = 199.25"),
    BoundaryRow(.facebook, from: "normal", 199.25, 0, "normal", "at 0.25·H is not < 0.25·H"),
    BoundaryRow(.facebook, from: "normal", 692.99, 0, "normal", "just above S − 70 = 693"),
    BoundaryRow(.facebook, from: "normal", 693, -1000, "hidden", "at S − 70 hides even moving up"),
    BoundaryRow(.facebook, from: "normal", 30, 0, "expanded", "at the drag limit E"),
    BoundaryRow(.twitter, from: "open", -0.99, 400, "hidden", "trunc(−0.99) = 0 is not < 0: velocity decides"),
    BoundaryRow(.twitter, from: "open", -1, 400, "open", "trunc(−1) < 0 opens whatever the velocity"),
    BoundaryRow(.twitter, from: "open", 100, 299.99, "open", "slow downward release near open"),
    BoundaryRow(.twitter, from: "open", 100, 300, "hidden", "velocity 300 is not < 300"),
    BoundaryRow(.twitter, from: "open", 180.5, 100, "hidden", "trunc(180.5) = 180 is not < 180"),
    BoundaryRow(.twitter, from: "open", 179.99, 100, "open", "trunc(179.99) = 179 < 180"),
    BoundaryRow(.twitter, from: "open", 600, 0, "open", "velocity 0 counts as upward"),
    BoundaryRow(.twitter, from: "open", 600, 0.001, "hidden", "any downward velocity far from open"),
    BoundaryRow(.glide, from: "compressed", 398.49, 1, "compressed", "above K moving down → compressed"),
    BoundaryRow(.glide, from: "compressed", 398.49, 0, "open", "above K, velocity 0 counts as up"),
    BoundaryRow(.glide, from: "compressed", 762.99, 1, "closed", "below K above S moving down"),
    BoundaryRow(.glide, from: "compressed", 762.99, -1, "compressed", "below K above S moving up"),
    BoundaryRow(.glide, from: "compressed", 763, -5000, "closed", "at S closes whatever the velocity"),
    BoundaryRow(
        .glide, from: "open", 421.9, 100, "open", "not segmented: above K moving down → open",
        options: [("segmented", .bool(false))]),
    BoundaryRow(
        .glide, from: "open", 422, 100, "closed", "not segmented: K = open = h/2 = 422",
        options: [("segmented", .bool(false))]),
    BoundaryRow(
        .glide, from: "open", 500, -100, "open", "not segmented: below K moving up → open",
        options: [("segmented", .bool(false))]),
    BoundaryRow(.transition, from: "mini", 375, 0, "mini", "percent 0.5 is not > 0.5: back"),
    BoundaryRow(.transition, from: "mini", 374.9, 0, "large", "percent just over 0.5 → the other detent"),
    BoundaryRow(.transition, from: "large", 375.1, -3000, "mini", "from large: velocity is ignored"),
    BoundaryRow(.swipeCell, from: "initial", -10, -1, "top", "any upward velocity → top"),
    BoundaryRow(.swipeCell, from: "initial", -70, 1, "initial", "any downward velocity → initial"),
    BoundaryRow(.swipeCell, from: "initial", -40, 0, "initial", "at rest, a tie goes to initial"),
    BoundaryRow(.swipeCell, from: "initial", -40.01, 0, "top", "at rest, the nearer one"),
    BoundaryRow(.fluid, from: "half", 600, 1083.5, "hidden", "removal: 1083.5 / 197 = 5.5 exactly"),
    BoundaryRow(.fluid, from: "half", 600, 1083.4, "tip", "just under the removal velocity"),
    BoundaryRow(
        .fluid, from: "half", 600, 5000, "tip", "not hideable: no removal",
        options: [("hideable", .bool(false))]),
    BoundaryRow(
        .fluid, from: "half", 100, 1200, "tip", "skipDetents lets the projection pass half",
        options: [("skipDetents", .bool(true))]),
    BoundaryRow(.fluid, from: "half", 208.25, 0, "full", "a tie between full and half goes to the upper one"),
    BoundaryRow(.fluid, from: "half", 208.26, 0, "half", "just below the midpoint"),
    BoundaryRow(.fluid, from: "half", 762.51, 0, "hidden", "between tip and hidden, nearer hidden"),
    BoundaryRow(.fluid, from: "half", 762.5, 0, "tip", "the midpoint of tip and hidden goes up"),
])
func releaseBoundary(_ row: BoundaryRow) throws {
    var s = try resting(row.preset, at: row.start, options: row.options + [])
    if row.preset == .transition {
        // No finish threshold, so the drag reaches the release.
        s = try resting(row.preset, at: row.start, options: [("finishThreshold", .null)])
    }
    dragged(&s, to: row.constant)
    #expect(close(s.snapshot(at: 0.05).constant, row.constant, 1e-9), "drag reached \(s.snapshot(at: 0.05).constant)")
    let out = s.handle(.pan(PanEvent(phase: .ended, velocity: row.velocity)), at: 0.1)
    #expect(out.snap?.detent.name == row.detent, "reason: \(out.snap?.reason ?? "none")")
    #expect(out.snap?.reason.isEmpty == false)
}

struct DragRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let start: String
    let translation: Double
    let constant: Double
    let rule: String
    var testDescription: String { "\(preset): \(rule)" }
}

@Test(arguments: [
    DragRow(preset: .facebook, options: [], start: "expanded", translation: 900, constant: 930, rule: "no lower limit"),
    DragRow(
        preset: .twitter, options: [], start: "open", translation: 800, constant: 800, rule: "no limit below hidden"),
    DragRow(preset: .glide, options: [], start: "closed", translation: 200, constant: 917, rule: "no lower limit"),
    DragRow(
        preset: .transition, options: [("finishThreshold", .null)], start: "mini", translation: -900, constant: 0,
        rule: "clamped at large"),
    DragRow(preset: .transition, options: [], start: "mini", translation: 100, constant: 750, rule: "clamped at mini"),
    DragRow(preset: .swipeCell, options: [], start: "initial", translation: -200, constant: -80, rule: "clamped at −d"),
    DragRow(preset: .swipeCell, options: [], start: "initial", translation: 30, constant: 0, rule: "clamped at 0"),
    DragRow(
        preset: .fluid, options: [("rubberBand", .bool(false))], start: "full", translation: -50, constant: 18,
        rule: "clamped at the top without rubber band"),
    DragRow(
        preset: .fluid, options: [("rubberBand", .bool(false))], start: "tip", translation: 500, constant: 797,
        rule: "clamped at hidden without rubber band"),
    DragRow(
        preset: .fluid, options: [("hideable", .bool(false))], start: "tip", translation: 0.0001, constant: 728.0001,
        rule: "rubber band starts at tip when not hideable"),
    DragRow(
        preset: .fluid, options: [], start: "half", translation: 100, constant: 498.5, rule: "free between detents"),
])
func dragRule(_ row: DragRow) throws {
    var s = try resting(row.preset, at: row.start, options: row.options)
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    let out = s.handle(.pan(PanEvent(phase: .changed, translation: row.translation)), at: 0.05)
    #expect(close(out.snapshot.constant, row.constant, 1e-3), "got \(out.snapshot.constant)")
}

struct DimmerRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let options: [(key: String, value: OptionValue)]
    let constant: Double
    let alpha: Double
    let rule: String
    var testDescription: String { "\(preset): \(rule)" }
}

@Test(arguments: [
    DimmerRow(preset: .transition, options: [], constant: 0, alpha: 0.7, rule: "large: 0.7"),
    DimmerRow(preset: .transition, options: [], constant: 375, alpha: 0.35, rule: "0.7 · progress"),
    DimmerRow(preset: .transition, options: [], constant: 750, alpha: 0, rule: "mini: 0"),
    DimmerRow(preset: .transition, options: [], constant: 844, alpha: 0, rule: "hidden below mini: clamped to 0"),
    DimmerRow(preset: .swipeCell, options: [], constant: -80, alpha: 0, rule: "no dimmer"),
    DimmerRow(preset: .twitter, options: [("maxDimAlpha", .number(0.4))], constant: 0, alpha: 0.4, rule: "maxDimAlpha"),
    DimmerRow(
        preset: .fluid, options: [("detents", .object([("only", .object([("fraction", .number(0.5))]))]))], constant: 0,
        alpha: 0, rule: "one visible detent: never dimmed"),
    DimmerRow(
        preset: .fluid, options: [("undimmedDetent", .string("half"))], constant: 398.5, alpha: 0, rule: "undimmed half"
    ),
    DimmerRow(
        preset: .fluid, options: [("undimmedDetent", .string("half"))], constant: 208.25, alpha: 0.15,
        rule: "halfway to full"),
    DimmerRow(
        preset: .fluid, options: [("undimmedDetent", .string("full"))], constant: 0, alpha: 0,
        rule: "undimmed top-most: never dimmed"),
    DimmerRow(
        preset: .fluid, options: [("maxDimAlpha", .number(0.5))], constant: -30, alpha: 0.5,
        rule: "overshoot above full stays at max"),
])
func dimmerRule(_ row: DimmerRow) throws {
    let model = try SheetModel(preset: row.preset, options: row.options)
    #expect(close(model.alpha(at: row.constant), row.alpha, 1e-9))
}

@Test func interruptionCatchesTheCardWhereItIs() throws {
    var s = try resting(.facebook, at: "normal")
    let show = s.handle(.show(detent: "expanded"), at: 10)
    let a = try #require(show.animation)
    let mid = a.sample(at: 10.1).constant
    // A grab mid-flight starts the drag where the card is on screen, not at the target.
    let grab = s.handle(.pan(PanEvent(phase: .began)), at: 10.1)
    #expect(grab.interrupted == a)
    #expect(grab.snapshot.state == .dragging)
    #expect(grab.snapshot.constant == mid)
    let moved = s.handle(.pan(PanEvent(phase: .changed, translation: 20)), at: 10.15)
    #expect(close(moved.snapshot.constant, mid + 20, 1e-9))
    // Cancel goes to the interrupted animation's target, with a velocity-0 release animation.
    let cancel = s.handle(.pan(PanEvent(phase: .cancelled)), at: 10.2)
    #expect(cancel.snap?.detent.name == "expanded")
    #expect(cancel.animation?.from == mid + 20)
    #expect(cancel.animation?.curve == .timed(.easeIn))
    #expect(s.snapshot(at: 11).state == .resting)
    #expect(s.snapshot(at: 11).detent?.name == "expanded")
}

@Test func cancelReturnsToTheDetentTheDragBeganAt() throws {
    var s = try resting(.twitter, at: "open")
    dragged(&s, to: 300)
    let out = s.handle(.pan(PanEvent(phase: .cancelled)), at: 0.1)
    #expect(out.snap?.detent.name == "open")
    // twitter's release to open from 300 at velocity 0 is its 0.3 s duration spring.
    #expect(out.animation?.curve == .durationSpring(dampingRatio: 0.9, initialVelocity: 3))
    #expect(out.animation?.duration == 0.3)
    #expect(s.snapshot(at: 0.4).constant == 0)
}

struct ConflictRow: Sendable, CustomTestStringConvertible {
    let events: [SheetEvent]
    let refused: SheetEvent
    let conflict: SheetConflict
    let rule: String
    var testDescription: String { rule }
}

@Test(arguments: [
    ConflictRow(
        events: [], refused: .pan(PanEvent(phase: .changed, translation: 5)),
        conflict: .noDrag(.changed, state: .resting), rule: "changed while resting"),
    ConflictRow(
        events: [], refused: .pan(PanEvent(phase: .ended)), conflict: .noDrag(.ended, state: .resting),
        rule: "ended while resting"),
    ConflictRow(
        events: [], refused: .pan(PanEvent(phase: .cancelled)), conflict: .noDrag(.cancelled, state: .resting),
        rule: "cancelled while resting"),
    ConflictRow(
        events: [.show(detent: "expanded")], refused: .pan(PanEvent(phase: .changed, translation: 1)),
        conflict: .noDrag(.changed, state: .animating), rule: "changed while animating"),
    ConflictRow(
        events: [.pan(PanEvent(phase: .began)), .pan(PanEvent(phase: .ended, velocity: 0))],
        refused: .pan(PanEvent(phase: .ended, velocity: 0)), conflict: .noDrag(.ended, state: .animating),
        rule: "a second ended"),
    ConflictRow(
        events: [.dismiss], refused: .pan(PanEvent(phase: .began)), conflict: .hidden,
        rule: "began on a card being hidden counts once it is hidden"),
])
func conflictsChangeNothing(_ row: ConflictRow) throws {
    var s = try resting(.facebook, at: "normal")
    var t = 0.0
    for e in row.events {
        _ = s.handle(e, at: t)
        t += 0.01
    }
    if row.conflict == .hidden { t += 1 }  // let the dismissal finish
    let before = s.snapshot(at: t)
    let count = s.animationCount
    let out = s.handle(row.refused, at: t)
    #expect(out.conflict == row.conflict)
    #expect(s.snapshot(at: t) == before)
    #expect(s.animationCount == count)
    #expect(!out.conflict!.description.isEmpty)
}

@Test func clientClockGoingBackwardsIsAConflict() throws {
    var s = try resting(.facebook, at: "normal")
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 5)
    let out = s.handle(.pan(PanEvent(phase: .changed, translation: 10)), at: 4.999)
    #expect(out.conflict == .clockBackwards(time: 4.999, last: 5))
    #expect(s.snapshot(at: 5).constant == 398.5)
    // The same time again is fine: the clock must never decrease, it may stand still.
    #expect(s.handle(.pan(PanEvent(phase: .changed, translation: 10)), at: 5).conflict == nil)
}

struct VelocityRow: Sendable, CustomTestStringConvertible {
    /// (time, translation) of the changed events.
    let samples: [(Double, Double)]
    let endedAt: Double
    let velocity: Double
    let rule: String
    var testDescription: String { rule }
}

@Test(arguments: [
    VelocityRow(
        samples: [(0.00, 0), (0.02, 10), (0.04, 20)], endedAt: 0.05, velocity: 500, rule: "a straight line: its slope"),
    VelocityRow(
        samples: [(0.00, 0), (0.5, 300), (0.52, 290), (0.54, 280)], endedAt: 0.55, velocity: -500,
        rule: "only the last 0.1 s counts"),
    VelocityRow(
        samples: [(0.45, 300), (0.46, 310)], endedAt: 0.55, velocity: 1000, rule: "t ≥ t(ended) − 0.1 is inclusive"),
    VelocityRow(samples: [(0.10, 5)], endedAt: 0.11, velocity: 0, rule: "one sample gives 0"),
    VelocityRow(samples: [(0.10, 5), (0.10, 9)], endedAt: 0.11, velocity: 0, rule: "samples all at one time give 0"),
    VelocityRow(
        samples: [(0.0, 0), (0.01, 2), (0.02, 2), (0.03, 6)], endedAt: 0.03, velocity: 180,
        rule: "least squares, not end points"),
    VelocityRow(samples: [], endedAt: 0.03, velocity: 0, rule: "no samples give 0"),
])
func velocityEstimation(_ row: VelocityRow) throws {
    var s = try resting(.fluid, at: "half")
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    for (t, x) in row.samples { _ = s.handle(.pan(PanEvent(phase: .changed, translation: x)), at: t) }
    // ended's own translation is not a sample.
    let out = s.handle(.pan(PanEvent(phase: .ended, translation: 999)), at: row.endedAt)
    #expect(out.velocitySource == .estimated)
    #expect(close(out.velocity ?? .nan, row.velocity, 1e-6), "got \(out.velocity ?? .nan)")
}

@Test func manyFastSamplesStayBounded() throws {
    // 10,000 changed events at 1 kHz: the estimate uses the last 0.1 s only.
    var s = try resting(.fluid, at: "half")
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    for k in 0..<10_000 {
        let t = Double(k) / 1000
        _ = s.handle(.pan(PanEvent(phase: .changed, translation: k < 9_000 ? 0 : Double(k - 9_000) * 0.2)), at: t)
    }
    let out = s.handle(.pan(PanEvent(phase: .ended)), at: 9.999)
    #expect(close(out.velocity!, 200, 1e-6))
}

struct ScrollStep: Sendable {
    let translation: Double
    let scrollOffset: Double?
    let consumer: Consumer
    let constant: Double
}

struct ScrollRow: Sendable, CustomTestStringConvertible {
    let start: String
    let steps: [ScrollStep]
    let endsAt: String
    let rule: String
    var testDescription: String { rule }
}

@Test(arguments: [
    ScrollRow(
        start: "full",
        steps: [
            ScrollStep(translation: 10, scrollOffset: 40, consumer: .scroll, constant: 18),
            ScrollStep(translation: 30, scrollOffset: 20, consumer: .scroll, constant: 18),
        ], endsAt: "full", rule: "content scrolled down: the sheet stays and settles where it began"),
    ScrollRow(
        start: "full",
        steps: [
            ScrollStep(translation: 10, scrollOffset: 0, consumer: .sheet, constant: 28),
            ScrollStep(translation: 40, scrollOffset: 0, consumer: .sheet, constant: 58),
        ], endsAt: "full", rule: "content at its top, finger down: the sheet moves"),
    ScrollRow(
        start: "full",
        steps: [
            ScrollStep(translation: -10, scrollOffset: 0, consumer: .scroll, constant: 18),
            ScrollStep(translation: 20, scrollOffset: 0, consumer: .sheet, constant: 48),
        ], endsAt: "full", rule: "finger up scrolls; switching back re-bases at the previous translation"),
    ScrollRow(
        start: "full",
        steps: [
            ScrollStep(translation: 10, scrollOffset: 5, consumer: .scroll, constant: 18),
            ScrollStep(translation: 30, scrollOffset: 0, consumer: .sheet, constant: 38),
            ScrollStep(translation: 300, scrollOffset: 0, consumer: .sheet, constant: 308),
        ], endsAt: "half", rule: "scroll → sheet: the switching event's own 20 pt move the card"),
    ScrollRow(
        start: "half",
        steps: [
            ScrollStep(translation: -10, scrollOffset: 50, consumer: .sheet, constant: 388.5)
        ], endsAt: "half", rule: "not at the top-most detent: the sheet takes every movement"),
    ScrollRow(
        start: "full",
        steps: [
            ScrollStep(translation: 10, scrollOffset: nil, consumer: .sheet, constant: 28)
        ], endsAt: "full", rule: "no scrollOffset: the sheet takes the movement"),
])
func scrollHandOff(_ row: ScrollRow) throws {
    var s = try resting(.fluid, at: row.start)
    let began = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    #expect(began.consumer == .sheet)
    var t = 0.0
    for step in row.steps {
        t += 0.016
        let out = s.handle(
            .pan(PanEvent(phase: .changed, translation: step.translation, scrollOffset: step.scrollOffset)), at: t)
        #expect(out.consumer == step.consumer)
        #expect(close(out.snapshot.constant, step.constant, 1e-9), "got \(out.snapshot.constant)")
    }
    let end = s.handle(.pan(PanEvent(phase: .ended, velocity: 0)), at: t + 0.016)
    #expect(end.snap?.detent.name == row.endsAt, "\(end.snap?.reason ?? "")")
}

@Test func scrollHandOffNeverForADragThatInterruptedAnAnimation() throws {
    var s = try resting(.fluid, at: "half")
    _ = s.handle(.show(detent: "full"), at: 0)
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0.05)
    let out = s.handle(.pan(PanEvent(phase: .changed, translation: -5, scrollOffset: 30)), at: 0.06)
    #expect(out.consumer == .sheet)
}

@Test func transitionFinishesAtItsThreshold() throws {
    var s = try resting(.transition, at: "mini")
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    // 0.79 of the way up: still a drag.
    let before = s.handle(.pan(PanEvent(phase: .changed, translation: -0.79 * 750)), at: 0.1)
    #expect(before.snapshot.state == .dragging)
    #expect(close(before.snapshot.dimmerAlpha, 0.7 * 0.79, 1e-9))
    // 0.8: the transition completes at once with the remaining-fraction animation.
    let finish = s.handle(.pan(PanEvent(phase: .changed, translation: -0.8 * 750)), at: 0.2)
    let a = try #require(finish.animation)
    #expect(a.detent.name == "large")
    #expect(close(a.duration, 0.35 * 0.2 / 0.75, 1e-12))
    #expect(a.alphaRule == .position)
    // Later events of that drag: 200 with the current state and no snap.
    let later = s.handle(.pan(PanEvent(phase: .changed, translation: -700)), at: 0.21)
    #expect(later.action == .unchanged)
    #expect(later.snapshot.state == .animating)
    #expect(s.handle(.pan(PanEvent(phase: .ended, velocity: 10)), at: 0.3).action == .unchanged)
    #expect(s.handle(.pan(PanEvent(phase: .cancelled)), at: 0.31).action == .unchanged)
    // Until the next began.
    #expect(s.handle(.pan(PanEvent(phase: .began)), at: 0.4).action == .dragged)
}

struct ShowRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let show: String
    let dismiss: String
    let dismissEndsHidden: Bool
    var testDescription: String { "\(preset)" }
}

@Test(arguments: [
    ShowRow(preset: .facebook, show: "normal", dismiss: "hidden", dismissEndsHidden: true),
    ShowRow(preset: .twitter, show: "open", dismiss: "hidden", dismissEndsHidden: true),
    ShowRow(preset: .glide, show: "compressed", dismiss: "closed", dismissEndsHidden: false),
    ShowRow(preset: .transition, show: "large", dismiss: "mini", dismissEndsHidden: false),
    ShowRow(preset: .swipeCell, show: "top", dismiss: "initial", dismissEndsHidden: false),
    ShowRow(preset: .fluid, show: "tip", dismiss: "hidden", dismissEndsHidden: true),
])
func showAndDismissDefaults(_ row: ShowRow) throws {
    var s = try SheetSession(model: SheetModel(preset: row.preset))
    let show = s.handle(.show(detent: nil), at: 0)
    #expect(show.snap?.detent.name == row.show)
    let dismiss = s.handle(.dismiss, at: 5)
    #expect(dismiss.snap?.detent.name == row.dismiss)
    #expect(dismiss.snap?.detent.isHidden == row.dismissEndsHidden)
    #expect(s.snapshot(at: 100).state == (row.dismissEndsHidden ? .hidden : .resting))
}

@Test func showDuringADragEndsIt() throws {
    var s = try resting(.glide, at: "compressed")
    dragged(&s, to: 500)
    let out = s.handle(.show(detent: "open"), at: 0.1)
    #expect(out.animation?.from == 500)
    #expect(s.handle(.pan(PanEvent(phase: .changed, translation: 1)), at: 0.2).conflict != nil)
}

@Test func showKeepsTheVelocityOfAMovingFluidCard() throws {
    var s = try resting(.fluid, at: "tip")
    let first = try #require(s.handle(.show(detent: "full"), at: 0).animation)
    let moving = first.sample(at: 0.05)
    let second = try #require(s.handle(.show(detent: "half"), at: 0.05).animation)
    #expect(second.from == moving.constant)
    #expect(second.curve == .spring(response: 0.4, dampingRatio: 1, velocity: moving.velocity))
}

@Test func aReleaseAtItsTargetAtRestIsAZeroLengthSpring() throws {
    var s = try resting(.fluid, at: "half")
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    let out = s.handle(.pan(PanEvent(phase: .ended, velocity: 0)), at: 0.1)
    let a = try #require(out.animation)
    #expect(a.duration == 0)
    let frames = a.frames(fps: 60)
    #expect(frames.count == 2)
    #expect(frames.allSatisfy { $0.t == 0 && $0.constant == 398.5 })
}

@Test func dismissingAHiddenCardChangesNothing() throws {
    var s = try SheetSession(model: SheetModel(preset: .facebook))
    let out = s.handle(.dismiss, at: 0)
    #expect(out.action == .unchanged)
    #expect(s.animationCount == 0)
}

@Test func animationNumbersIncrease() throws {
    var s = try SheetSession(model: SheetModel(preset: .facebook))
    var ids: [Int] = []
    for (k, e) in [SheetEvent.show(detent: nil), .show(detent: "expanded"), .dismiss].enumerated() {
        ids.append(s.handle(e, at: Double(k)).animation!.id)
    }
    #expect(ids == [1, 2, 3])
}

@Test func showRefusesUnknownAndHiddenDetents() throws {
    var s = try resting(.facebook, at: "normal")
    let unknown = s.handle(.show(detent: "expandd"), at: 0)
    guard case let .invalid(error) = unknown.action else {
        Issue.record("expected invalid")
        return
    }
    #expect(error == .unknownDetent(field: "detent", name: "expandd", known: ["expanded", "normal"]))
    guard case .invalid = s.handle(.show(detent: "hidden"), at: 0).action else {
        Issue.record("expected invalid")
        return
    }
    #expect(s.animationCount == 0)
}

@Test func animationsNeverLastLongerThanTheCap() throws {
    // transition from hidden over a 1-point mini span at the slowest speed: 844 spans' worth of a
    // 60 s transition at speed 1e-6 would be ~5e10 s; it is cut to Animation.maxDuration.
    let model = try SheetModel(
        preset: .transition,
        options: [("miniHeight", .number(844 - 34 - 1)), ("duration", .number(60)), ("completionSpeed", .number(1e-6))])
    var s = try SheetSession(model: model)
    let a = try #require(s.handle(.show(detent: nil), at: 0).animation)
    #expect(a.duration == Animation.maxDuration)
    #expect(a.frameCount(fps: 240) == 14_401)
    // A spring too weak to settle within the cap ends there too, exactly at its target.
    var weak = try resting(.fluid, at: "half", options: [("response", .number(10)), ("dampingRatio", .number(0.05))])
    let spring = try #require(weak.handle(.show(detent: "full"), at: 0).animation)
    #expect(spring.duration == Animation.maxDuration)
    #expect(spring.frame(spring.frameCount(fps: 60) - 1, fps: 60).constant == 18)
}

/// A refusal leaves the session exactly as it was, even when its time is past the end of a running
/// animation: an event accepted afterwards at an earlier time still finds the card animating
/// (concurrent clients take the session's lock in any order; found by IntegrationTests/concurrency-test).
@Test(arguments: [
    // changed without a drag, after the show's end
    SheetEvent.pan(PanEvent(phase: .changed, translation: 5)),
    // ended without a drag
    SheetEvent.pan(PanEvent(phase: .ended, velocity: 100)),
    // cancelled without a drag
    SheetEvent.pan(PanEvent(phase: .cancelled)),
    // show of an unknown detent (invalid, not a conflict)
    SheetEvent.show(detent: "nowhere"),
])
func refusedEventPastAnAnimationsEndChangesNothing(refused: SheetEvent) throws {
    var s = try resting(.facebook, at: "normal")
    let show = try #require(s.handle(.show(detent: "expanded"), at: 10).animation)
    let before = s.archive
    let refusal = s.handle(refused, at: show.endTime + 0.1)
    switch refusal.action {
    case .conflict, .invalid: break
    default: Issue.record("expected a refusal, got \(refusal.action)")
    }
    #expect(s.archive == before)
    // began mid-animation catches the card where the show has it then.
    let grab = s.handle(.pan(PanEvent(phase: .began, translation: 0)), at: 10.125)
    #expect(grab.snapshot.constant == show.sample(at: 10.125).constant)
    #expect(grab.interrupted == show)
}

/// Detents a vanishing span apart (accepted by the decoders) keep progress finite: the fuzzer
/// found `"cardHeightRatio": 1e-310` (a subnormal) made it ±∞ (rendered as null).
@Test(arguments: [1e-300, Double.leastNormalMagnitude / 1e4, Double.leastNonzeroMagnitude])
func progressStaysFiniteForAVanishingSpan(ratio: Double) throws {
    var s = try SheetSession(model: SheetModel(preset: .twitter, options: [("cardHeightRatio", .number(ratio))]))
    for event in [
        SheetEvent.show(detent: nil), .pan(PanEvent(phase: .began)), .pan(PanEvent(phase: .changed, translation: 3)),
    ] {
        let o = s.handle(event, at: 1)
        #expect(o.snapshot.progress.isFinite)
    }
}
