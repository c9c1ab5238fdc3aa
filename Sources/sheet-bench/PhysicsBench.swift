import SheetPhysics

// Release-build micro-benchmarks of the engine: the cost of a `changed` event, of an `ended`
// with its snap and animation set-up, and of sampling one frame. Medians of several rounds;
// the sums are printed so the optimizer cannot drop the work.

/// One measured figure.
struct BenchFigure {
    let name: String
    let nanosecondsPerOp: Double
}

/// Times `body` over `iterations` operations, `rounds` times, and returns the median ns/op.
func medianNanoseconds(rounds: Int, iterations: Int, _ body: (Int) -> Double) -> (Double, Double) {
    var perOp: [Double] = []
    var sink = 0.0
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        let start = clock.now
        sink += body(iterations)
        let elapsed = clock.now - start
        let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        perOp.append(ns / Double(iterations))
    }
    perOp.sort()
    return (perOp[perOp.count / 2], sink)
}

/// The engine's figures.
func runPhysicsBench(rounds: Int, iterations: Int) throws -> [BenchFigure] {
    var figures: [BenchFigure] = []
    var sink = 0.0

    // `changed`: a drag in progress, one event per 1/120 s (a 120 Hz touch screen).
    // Each from a detent in the middle of its range, so the drag moves both ways.
    for (preset, start) in [(PresetName.facebook, "normal"), (.fluid, "half")] {
        var s = try SheetSession(model: SheetModel(preset: preset), initialDetent: start)
        _ = s.handle(.pan(PanEvent(phase: .began)), at: 0)
        var t = 0.0
        let (ns, sum) = medianNanoseconds(rounds: rounds, iterations: iterations) { n in
            var acc = 0.0
            for k in 0..<n {
                t += 1.0 / 120
                let out = s.handle(.pan(PanEvent(phase: .changed, translation: Double(k & 255) - 128)), at: t)
                acc += out.snapshot.constant
            }
            return acc
        }
        sink += sum
        figures.append(BenchFigure(name: "changed (\(preset.rawValue))", nanosecondsPerOp: ns))
    }

    // `ended`: snap decision and animation set-up, from a prepared drag with 12 samples.
    for (preset, start) in [
        (PresetName.facebook, "normal"), (.twitter, "open"), (.glide, "compressed"), (.fluid, "half"),
    ] {
        var prepared = try SheetSession(model: SheetModel(preset: preset), initialDetent: start)
        _ = prepared.handle(.pan(PanEvent(phase: .began)), at: 0)
        for k in 1...12 {
            _ = prepared.handle(.pan(PanEvent(phase: .changed, translation: Double(k) * 8)), at: Double(k) / 120)
        }
        let (ns, sum) = medianNanoseconds(rounds: rounds, iterations: iterations / 4) { n in
            var acc = 0.0
            for k in 0..<n {
                var s = prepared
                let v: Double? = k & 1 == 0 ? Double(k & 1023) - 512 : nil  // client and estimated velocity
                let out = s.handle(.pan(PanEvent(phase: .ended, velocity: v)), at: 0.11)
                acc += out.animation?.duration ?? 0
            }
            return acc
        }
        sink += sum
        figures.append(BenchFigure(name: "ended + snap (\(preset.rawValue))", nanosecondsPerOp: ns))
    }

    // One frame sampled from each curve family.
    let curves: [(String, PresetName, SheetEvent)] = [
        ("frame: timed easeIn (facebook)", .facebook, .show(detent: nil)),
        ("frame: duration spring (twitter)", .twitter, .show(detent: nil)),
        ("frame: physical spring (fluid)", .fluid, .show(detent: "full")),
    ]
    for (name, preset, event) in curves {
        var s = try SheetSession(model: SheetModel(preset: preset))
        let a = s.handle(event, at: 0).animation!
        let n = a.frameCount(fps: 240)
        let (ns, sum) = medianNanoseconds(rounds: rounds, iterations: iterations) { count in
            var acc = 0.0
            for k in 0..<count { acc += a.frame(k % n, fps: 240).constant }
            return acc
        }
        sink += sum
        figures.append(BenchFigure(name: name, nanosecondsPerOp: ns))
    }
    if sink == 42 { print("") }  // keeps `sink` alive
    return figures
}
