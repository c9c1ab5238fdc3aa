import SheetPhysics
import SheetdTesting
import Testing

// Properties over many generated cases: frame rates agree, last frames are exact, alpha stays in
// [0, 1], timed curves are monotone, springs settle within T.

/// Random releases of every preset: an animation per case.
func generatedAnimations(count: Int, seed: UInt64) throws -> [Animation] {
    var rng = SplitMix64(seed: seed)
    var result: [Animation] = []
    for k in 0..<count {
        let preset = PresetName.allCases[k % PresetName.allCases.count]
        var options: [(key: String, value: OptionValue)] = []
        if preset == .fluid {
            options = [
                ("dampingRatio", .number([0.3, 0.7, 1.0, 1.6].randomElement(using: &rng)!)),
                ("response", .number(Double.random(in: 0.2...0.8, using: &rng))),
            ]
        }
        if preset == .transition { options = [("finishThreshold", .null)] }
        let model = try SheetModel(preset: preset, options: options)
        let start = model.detents.filter { !$0.isHidden }.randomElement(using: &rng)!
        var s = try SheetSession(model: model, initialDetent: start.name)
        _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
        _ = s.handle(.pan(PanEvent(phase: .changed, translation: Double.random(in: -400...400, using: &rng))), at: 0.05)
        let v = Double.random(in: -4000...4000, using: &rng)
        if let a = s.handle(.pan(PanEvent(phase: .ended, velocity: v)), at: 0.1).animation { result.append(a) }
    }
    return result
}

@Test func framesAt60And240AgreeAtSharedInstants() throws {
    for a in try generatedAnimations(count: 300, seed: 1) {
        let f60 = a.frames(fps: 60)
        let f240 = a.frames(fps: 240)
        // Frame k at 60 fps is frame 4k at 240 fps, up to the last frame (both exact targets).
        for k in 0..<(f60.count - 1) where 4 * k < f240.count - 1 {
            #expect(f60[k] == f240[4 * k], "animation \(a.curve.name) frame \(k)")
        }
        #expect(f60.last! == f240.last!)
    }
}

@Test func lastFrameIsTheTargetExactly() throws {
    for a in try generatedAnimations(count: 300, seed: 2) {
        for fps in [1, 24, 30, 60, 90, 120, 144, 240] {
            let n = a.frameCount(fps: fps)
            let last = a.frame(n - 1, fps: fps)
            #expect(last.constant == a.to)
            #expect(last.t == a.duration)
            #expect(last.velocity == 0)
            // n = ceil(T·fps), at least 1: the frame before the last is strictly before T.
            #expect(n >= 2)
            if n > 2 { #expect(a.frameTime(n - 2, fps: fps) < a.duration) }
        }
    }
}

@Test func alphaStaysInZeroToOne() throws {
    for a in try generatedAnimations(count: 300, seed: 3) {
        for f in a.frames(fps: 120) {
            #expect(f.dimmerAlpha >= 0 && f.dimmerAlpha <= 1)
            #expect(f.constant.isFinite && f.velocity.isFinite && f.progress.isFinite)
        }
    }
}

@Test(arguments: TimingCurve.Name.allCases)
func timedCurvesAreMonotone(_ name: TimingCurve.Name) {
    let curve = TimingCurve.named(name)
    var last = 0.0
    for k in 0...10_000 {
        let p = curve.progress(at: Double(k) / 10_000)
        #expect(p >= last - 1e-12)
        last = p
    }
    #expect(curve.progress(at: 0) == 0)
    #expect(curve.progress(at: 1) == 1)
}

@Test func timedCurveSolvesXToBetterThan1e7() {
    // Bisection to the bone as a reference: the solver's x(s) must be within 1e-7 of x.
    for name in TimingCurve.Name.allCases {
        let c = TimingCurve.named(name)
        for k in 1..<1000 {
            let x = Double(k) / 1000
            var lo = 0.0
            var hi = 1.0
            for _ in 0..<200 {
                let s = (lo + hi) / 2
                let xs = 3 * (1 - s) * (1 - s) * s * c.x1 + 3 * (1 - s) * s * s * c.x2 + s * s * s
                if xs < x { lo = s } else { hi = s }
            }
            let s = (lo + hi) / 2
            let y = 3 * (1 - s) * (1 - s) * s * c.y1 + 3 * (1 - s) * s * s * c.y2 + s * s * s
            #expect(abs(c.progress(at: x) - y) < 1e-7)
        }
    }
}

@Test func springsSettleWithinT() throws {
    for a in try generatedAnimations(count: 600, seed: 4) {
        guard case .spring = a.curve else { continue }
        // Settled at T: within 0.25 pt and 5 pt/s just before the exact final frame.
        let atT = a.sample(elapsed: a.duration - 1e-12)
        #expect(abs(atT.constant - a.to) <= 0.25 + 1e-6)
        #expect(abs(atT.velocity) <= 5 + 1e-6)
        // And not settled 1 ms earlier (T is the first such multiple of 1 ms).
        if a.duration > 0 {
            let before = a.sample(elapsed: a.duration - 0.001)
            #expect(abs(before.constant - a.to) > 0.25 || abs(before.velocity) > 5)
        }
    }
}

@Test func closedFormSpringMatchesItsDifferentialEquation() {
    // x'' + 2ζω x' + ω² x = 0, checked by central differences for each regime.
    for zeta in [0.2, 0.9, 1.0, 1.0 + 1e-13, 1.5, 4] {
        let osc = DampedOscillator(omega: 15, dampingRatio: zeta, x0: 300, v0: -1200)
        #expect(osc.state(at: 0).x == 300)
        #expect(abs(osc.state(at: 0).v + 1200) < 1e-9)
        for t in stride(from: 0.01, through: 1.0, by: 0.07) {
            let h = 1e-4
            let (x, v) = osc.state(at: t)
            let acc = (osc.state(at: t + h).v - osc.state(at: t - h).v) / (2 * h)
            let vel = (osc.state(at: t + h).x - osc.state(at: t - h).x) / (2 * h)
            #expect(abs(vel - v) < 1e-3 * max(1, abs(v)))
            #expect(abs(acc + 2 * zeta * 15 * v + 225 * x) < 1e-2 * max(1, abs(acc)))
        }
    }
}
