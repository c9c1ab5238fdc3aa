import SheetPhysics
import Testing

// Every public check value of PHYSICS.md, row for row. Default geometry (844, 47, 34): S = 763,
// H = 797. Constants to 0.01, alpha to 1e-4.

struct ReleaseRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let constant: Double
    let velocity: Double
    let detent: String
    let snapConstant: Double
    var testDescription: String { "\(preset) \(constant) @ \(velocity) → \(detent)" }
}

@Test(arguments: [
    ReleaseRow(preset: .facebook, constant: 150, velocity: -300, detent: "expanded", snapConstant: 30.0),  // < 0.25·H
    ReleaseRow(preset: .facebook, constant: 150, velocity: 1600, detent: "hidden", snapConstant: 797.0),  // velocity > 1500 first
    ReleaseRow(preset: .facebook, constant: 250, velocity: 0, detent: "normal", snapConstant: 398.5),  // < S − 70
    ReleaseRow(preset: .facebook, constant: 600, velocity: 0, detent: "normal", snapConstant: 398.5),  // < S − 70
    ReleaseRow(preset: .facebook, constant: 700, velocity: 0, detent: "hidden", snapConstant: 797.0),  // ≥ S − 70
    ReleaseRow(preset: .facebook, constant: 693, velocity: 10, detent: "hidden", snapConstant: 797.0),  // exactly S − 70
    ReleaseRow(preset: .facebook, constant: 500, velocity: 1499, detent: "normal", snapConstant: 398.5),  // 1499 not > 1500
    ReleaseRow(preset: .twitter, constant: -0.5, velocity: 0, detent: "open", snapConstant: 0.0),  // trunc(−0.5) = 0, still
    ReleaseRow(preset: .twitter, constant: -3, velocity: -50, detent: "open", snapConstant: 0.0),  // above open
    ReleaseRow(preset: .twitter, constant: 100, velocity: 250, detent: "open", snapConstant: 0.0),  // slow, near open
    ReleaseRow(preset: .twitter, constant: 100, velocity: 350, detent: "hidden", snapConstant: 633.0),  // fast down
    ReleaseRow(preset: .twitter, constant: 179.9, velocity: 299, detent: "open", snapConstant: 0.0),  // trunc 179 < 180
    ReleaseRow(preset: .twitter, constant: 181, velocity: 100, detent: "hidden", snapConstant: 633.0),  // far from open
    ReleaseRow(preset: .twitter, constant: 50, velocity: 0, detent: "open", snapConstant: 0.0),  // still → open
    ReleaseRow(preset: .twitter, constant: 300, velocity: -10, detent: "open", snapConstant: 0.0),  // upward → open
    ReleaseRow(preset: .glide, constant: 300, velocity: 200, detent: "compressed", snapConstant: 398.5),  // above K, down
    ReleaseRow(preset: .glide, constant: 300, velocity: -200, detent: "open", snapConstant: 44.0),  // above K, up
    ReleaseRow(preset: .glide, constant: 500, velocity: 10, detent: "closed", snapConstant: 717.0),  // below K, down
    ReleaseRow(preset: .glide, constant: 500, velocity: -10, detent: "compressed", snapConstant: 398.5),  // below K, up
    ReleaseRow(preset: .glide, constant: 770, velocity: -900, detent: "closed", snapConstant: 717.0),  // below S
    ReleaseRow(preset: .glide, constant: 398.5, velocity: 0, detent: "compressed", snapConstant: 398.5),  // at K, 0 is up
    ReleaseRow(preset: .fluid, constant: 398.5, velocity: -800, detent: "full", snapConstant: 18.0),  // projected past full
    ReleaseRow(preset: .fluid, constant: 398.5, velocity: -100, detent: "half", snapConstant: 398.5),  // short projection
    ReleaseRow(preset: .fluid, constant: 600, velocity: 300, detent: "tip", snapConstant: 728.0),  // clamped at tip
    ReleaseRow(preset: .fluid, constant: 700, velocity: -200, detent: "tip", snapConstant: 728.0),  // nearest to p
    ReleaseRow(preset: .fluid, constant: 650, velocity: 900, detent: "hidden", snapConstant: 797.0),  // removal velocity
    ReleaseRow(preset: .fluid, constant: 500, velocity: 1600, detent: "tip", snapConstant: 728.0),  // one detent at most
    ReleaseRow(preset: .fluid, constant: 100, velocity: 2500, detent: "half", snapConstant: 398.5),  // one detent at most
])
func releaseDecision(_ row: ReleaseRow) throws {
    let start = SheetModel.defaultStart(row.preset)
    var s = try resting(row.preset, at: start)
    dragged(&s, to: row.constant)
    #expect(close(s.snapshot(at: 0.05).constant, row.constant, 1e-9))
    let out = s.handle(.pan(PanEvent(phase: .ended, velocity: row.velocity)), at: 0.1)
    let snap = try #require(out.snap)
    #expect(snap.detent.name == row.detent)
    #expect(close(snap.detent.constant, row.snapConstant, 0.01))
    #expect(out.velocitySource == .client)
}

extension SheetModel {
    /// A resting detent every check row can be dragged from without a drag limit in the way.
    static func defaultStart(_ preset: PresetName) -> String {
        switch preset {
        case .facebook: "normal"
        case .twitter: "open"
        case .glide: "compressed"
        case .transition: "mini"
        case .swipeCell: "initial"
        case .fluid: "half"
        }
    }
}

struct AlphaRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let constant: Double
    let alpha: Double
    var testDescription: String { "\(preset) \(constant) → \(alpha)" }
}

@Test(arguments: [
    AlphaRow(preset: .facebook, constant: 20, alpha: 0.7),  // above H/2: full
    AlphaRow(preset: .facebook, constant: 398.5, alpha: 0.7),  // at H/2: full
    AlphaRow(preset: .facebook, constant: 500, alpha: 0.5217),  // linear between
    AlphaRow(preset: .facebook, constant: 700, alpha: 0.1704),  // the seed's intended product
    AlphaRow(preset: .facebook, constant: 797, alpha: 0.0),  // at H: clear
    AlphaRow(preset: .facebook, constant: 900, alpha: 0.0),  // below H: never negative
    AlphaRow(preset: .twitter, constant: -40, alpha: 0.7),  // above open: clamped
    AlphaRow(preset: .twitter, constant: 0, alpha: 0.7),  // open
    AlphaRow(preset: .twitter, constant: 100, alpha: 0.5894),  // linear in b / C
    AlphaRow(preset: .twitter, constant: 400, alpha: 0.2577),  // linear in b / C
    AlphaRow(preset: .twitter, constant: 633, alpha: 0.0),  // hidden
    AlphaRow(preset: .glide, constant: 44, alpha: 0.7),  // open
    AlphaRow(preset: .glide, constant: 398.5, alpha: 0.7),  // at K
    AlphaRow(preset: .glide, constant: 500, alpha: 0.4769),  // between K and closed
    AlphaRow(preset: .glide, constant: 717, alpha: 0.0),  // closed
    AlphaRow(preset: .fluid, constant: 18, alpha: 0.3),  // full: max dim
    AlphaRow(preset: .fluid, constant: 398.5, alpha: 0.3),  // the detent over the undimmed one
    AlphaRow(preset: .fluid, constant: 500, alpha: 0.2076),  // linear between half and tip
    AlphaRow(preset: .fluid, constant: 728, alpha: 0.0),  // undimmed detent
])
func dimmerWhileDragging(_ row: AlphaRow) throws {
    var s = try resting(
        row.preset, at: SheetModel.defaultStart(row.preset),
        options: row.preset == .fluid ? [("rubberBand", .bool(false))] : [])
    dragged(&s, to: row.constant)
    let snap = s.snapshot(at: 0.05)
    #expect(snap.state == .dragging)
    if row.preset != .facebook || row.constant >= 30 {
        #expect(close(snap.constant, row.constant, 1e-9))
    }
    #expect(close(try SheetModel(preset: row.preset).alpha(at: row.constant), row.alpha, 1e-4))
    #expect(close(snap.dimmerAlpha, try SheetModel(preset: row.preset).alpha(at: snap.constant), 1e-12))
}

struct LimitRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let start: String
    let translation: Double
    let constant: Double
    var testDescription: String { "\(preset) from \(start) by \(translation) → \(constant)" }
}

@Test(arguments: [
    LimitRow(preset: .facebook, start: "normal", translation: -400, constant: 30.0),  // clamped at E
    LimitRow(preset: .glide, start: "compressed", translation: -500, constant: 0.0),  // clamped at 0
    LimitRow(preset: .twitter, start: "open", translation: -80, constant: -80),  // unbounded
    LimitRow(preset: .fluid, start: "full", translation: -50, constant: -8.632),  // rubber band above full
    LimitRow(preset: .fluid, start: "tip", translation: 172, constant: 850.087),  // rubber band below hidden
])
func dragLimit(_ row: LimitRow) throws {
    var s = try resting(row.preset, at: row.start)
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    let out = s.handle(.pan(PanEvent(phase: .changed, translation: row.translation)), at: 0.05)
    #expect(close(out.snapshot.constant, row.constant, 0.01))
}

struct FrameRow: Sendable, CustomTestStringConvertible {
    let preset: PresetName
    let detent: String
    let count: Int
    /// (t, constant, alpha) at the listed frames.
    let samples: [(Double, Double, Double)]
    var testDescription: String { "\(preset) show → \(detent)" }
}

@Test(arguments: [
    // facebook: easeIn, T = 0.25, alpha interpolated to 0.7.
    FrameRow(
        preset: .facebook, detent: "normal", count: 9,
        samples: [
            (0.0000, 797.00, 0.0000), (0.0333, 785.31, 0.0205), (0.0667, 755.17, 0.0735), (0.1000, 711.38, 0.1504),
            (0.2333, 441.82, 0.6239), (0.2500, 398.50, 0.7000),
        ]),
    // twitter: duration spring T 0.3, ζ 0.9, v 3; overshoot above open with alpha clamped.
    FrameRow(
        preset: .twitter, detent: "open", count: 10,
        samples: [
            (0.0000, 633.00, 0.0000), (0.0333, 465.39, 0.1854), (0.0667, 266.14, 0.4057), (0.1000, 129.93, 0.5563),
            (0.2667, -0.94, 0.7000), (0.3000, 0.00, 0.7000),
        ]),
    // glide: duration spring T 0.4, ζ 0.8, from rest.
    FrameRow(
        preset: .glide, detent: "compressed", count: 13,
        samples: [
            (0.0000, 797.00, 0.0000), (0.0333, 727.06, 0.1229), (0.0667, 608.10, 0.3318), (0.1000, 508.70, 0.5064),
            (0.3667, 397.58, 0.7000), (0.4000, 398.50, 0.7000),
        ]),
])
func showFrames(_ row: FrameRow) throws {
    var s = try SheetSession(model: SheetModel(preset: row.preset))
    let out = s.handle(.show(detent: nil), at: 0)
    let a = try #require(out.animation)
    #expect(a.detent.name == row.detent)
    let frames = a.frames(fps: 30)
    #expect(frames.count == row.count)
    for (t, constant, alpha) in row.samples {
        let f = try #require(frames.first { close($0.t, t, 1e-3) }, "a frame at t = \(t)")
        #expect(close(f.constant, constant, 0.01), "constant at \(t): \(f.constant)")
        #expect(close(f.dimmerAlpha, alpha, 1e-4), "alpha at \(t): \(f.dimmerAlpha)")
    }
    #expect(frames.last!.constant == a.to)
}

@Test func fluidSpringCheckValue() throws {
    // Fluid spring (response 0.4, ζ 1) from 300 to 18 with velocity −1200: T = 0.577 s.
    let model = try SheetModel(preset: .fluid)
    var s = try SheetSession(model: model, initialDetent: "half")
    _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
    _ = s.handle(.pan(PanEvent(phase: .changed, translation: 300 - 398.5)), at: 0.01)
    let out = s.handle(.pan(PanEvent(phase: .ended, velocity: -1200)), at: 0.02)
    let a = try #require(out.animation)
    #expect(a.detent.name == "full")
    #expect(a.from == 300)
    #expect(close(a.duration, 0.577, 1e-9))
    #expect(close(a.sample(elapsed: 0.05).constant, 220.20, 0.01))
    #expect(close(a.sample(elapsed: 0.1).constant, 143.76, 0.01))
    #expect(close(a.sample(elapsed: 0.2).constant, 58.10, 0.01))
}
