import Foundation
import SheetPhysics

/// The file being replayed (replay mode only), named in a failed check's message. Written by the
/// one replay thread before each input and read on that thread: no other thread touches it.
nonisolated(unsafe) var replayingFile: String?

/// SHEET_FUZZ_TRACE set: what each input does goes to stderr (for writing and checking seeds).
let tracing = ProcessInfo.processInfo.environment["SHEET_FUZZ_TRACE"] != nil

/// Writes one line of the trace (only call it behind `if tracing`: the message costs).
func trace(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Traps with `message` when `condition` is false. A trap is what libFuzzer records as a crash
/// (with the input saved), so every invariant the harness holds the service to goes through here.
@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// Traps with a message naming the broken invariant (and the replayed file, if any).
func fail(_ message: String) -> Never {
    let file = replayingFile.map { " (input \($0))" } ?? ""
    fatalError("sheet-fuzz invariant violated\(file): \(message)")
}

/// The numbers every snapshot and frame must satisfy, wherever they come from (engine or wire):
/// finite constant, alpha and progress, and an alpha inside [0, 1].
func checkCard(constant: Double, alpha: Double, progress: Double, _ what: @autoclosure () -> String) {
    check(constant.isFinite, "\(what()): constant is \(constant)")
    check(alpha.isFinite, "\(what()): dimmerAlpha is \(alpha)")
    check(progress.isFinite, "\(what()): progress is \(progress)")
    check(alpha >= 0 && alpha <= 1, "\(what()): dimmerAlpha \(alpha) is outside [0, 1]")
}

/// A snapshot of the engine: the card's numbers, its velocity and time.
func checkSnapshot(_ s: SheetSnapshot, _ what: @autoclosure () -> String) {
    checkCard(constant: s.constant, alpha: s.dimmerAlpha, progress: s.progress, what())
    check(s.velocity.isFinite, "\(what()): velocity is \(s.velocity)")
}

/// An animation's parameters and a spread of its frames: every sample finite, alpha in [0, 1],
/// and the last frame exactly at the target (Animation.frame documents it).
func checkAnimation(_ a: Animation, _ what: @autoclosure () -> String) {
    for (name, x) in [
        ("from", a.from), ("to", a.to), ("duration", a.duration), ("startTime", a.startTime),
        ("fromAlpha", a.fromAlpha), ("toAlpha", a.toAlpha),
    ] {
        check(x.isFinite, "\(what()): animation \(name) is \(x)")
    }
    check(
        a.duration >= 0 && a.duration <= Animation.maxDuration,
        "\(what()): animation duration \(a.duration) is outside [0, \(Animation.maxDuration)]")
    check(a.fromAlpha >= 0 && a.fromAlpha <= 1, "\(what()): fromAlpha \(a.fromAlpha) is outside [0, 1]")
    check(a.toAlpha >= 0 && a.toAlpha <= 1, "\(what()): toAlpha \(a.toAlpha) is outside [0, 1]")
    // A 60 s animation at 240 fps has 14,401 frames: 33 spread over them (both ends included)
    // find a bad region as surely, at a fraction of the cost per input.
    for fps in [1, 60, 240] {
        let n = a.frameCount(fps: fps)
        check(n >= 2, "\(what()): \(n) frames at \(fps) fps")
        let probes = min(n, 33)
        for i in 0..<probes {
            let k = probes == 1 ? 0 : i * (n - 1) / (probes - 1)
            let f = a.frame(k, fps: fps)
            checkCard(
                constant: f.constant, alpha: f.dimmerAlpha, progress: f.progress,
                "\(what()): frame \(k)/\(n) at \(fps) fps")
            check(f.velocity.isFinite && f.t.isFinite, "\(what()): frame \(k) at \(fps) fps: t \(f.t), v \(f.velocity)")
        }
        let last = a.frame(n - 1, fps: fps)
        check(
            last.constant == a.to,
            "\(what()): the last frame at \(fps) fps (t = \(last.t)) is at \(last.constant), not the target \(a.to)")
    }
    // Between frames too: the closed forms are evaluated at any time, before and after the ends.
    for fraction in [-1.0, 0, 0.001, 0.25, 0.5, 0.999, 1, 2] {
        let s = a.sample(elapsed: a.duration * fraction)
        checkCard(
            constant: s.constant, alpha: s.dimmerAlpha, progress: s.progress,
            "\(what()): sample at \(fraction) of the duration")
        check(s.velocity.isFinite, "\(what()): sample at \(fraction): velocity is \(s.velocity)")
    }
}
