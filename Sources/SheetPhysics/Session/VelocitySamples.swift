/// The (time, translation) samples of a drag's `changed` events, kept for 0.1 s behind the newest.
struct VelocitySamples: Sendable {
    /// Time and translation side by side, in one array: one allocation for a drag's samples and
    /// one capacity check per sample (two arrays, one of times and one of translations, cost a
    /// second allocation in a session's first drag, ≈ 400 instructions).
    private var samples: [VelocitySample] = []
    private var head = 0

    /// The least-squares window, seconds, with 1 ns of slack so that a sample exactly 0.1 s before
    /// `ended` counts even when the subtraction rounds (0.55 − 0.1 = 0.45000000000000007).
    static let window = 0.1 + 1e-9

    /// Samples there is room for once a drag starts.
    static let initialCapacity = 32

    /// Forgets every sample, keeping the storage for the next drag.
    mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        head = 0
    }

    mutating func append(time: Double, translation: Double) {
        // A drag at 60 Hz keeps up to ≈ 24 samples between compactions (below): room for 32 from
        // the first sample on, instead of growing 1, 2, 4 … 32 (five reallocations in a session's
        // first drag; the capacity is kept across drags).
        if samples.capacity == 0 { samples.reserveCapacity(Self.initialCapacity) }
        // Samples older than the newest minus the window can never be inside an `ended` window,
        // because the ended time is at least the newest sample time.
        while head < samples.count, samples[head].time < time - Self.window { head += 1 }
        if head > 16, head * 2 > samples.count {
            samples.removeFirst(head)
            head = 0
        }
        samples.append(VelocitySample(time: time, translation: translation))
    }

    /// The samples still inside the window, oldest first (what an archive keeps).
    var kept: [VelocitySample] { Array(samples[head...]) }

    /// Samples restored from an archive.
    init(_ samples: [VelocitySample]) {
        self.samples = samples
    }

    init() {}

    /// The least-squares slope of translation over time for samples with t ≥ end − 0.1 s; 0 for
    /// fewer than two samples or samples all at one time.
    func slope(endingAt end: Double) -> Double {
        var n = 0.0
        var st = 0.0
        var sx = 0.0
        var i = head
        while i < samples.count {
            if samples[i].time >= end - Self.window {
                n += 1
                st += samples[i].time
                sx += samples[i].translation
            }
            i += 1
        }
        guard n >= 2 else { return 0 }
        let mt = st / n
        let mx = sx / n
        var num = 0.0
        var den = 0.0
        i = head
        while i < samples.count {
            if samples[i].time >= end - Self.window {
                let dt = samples[i].time - mt
                num += dt * (samples[i].translation - mx)
                den += dt * dt
            }
            i += 1
        }
        return den == 0 ? 0 : num / den
    }
}
