import Foundation

/// The one thread that sends realtime frames, keep-alives and instant streams' booked blocks
/// (`InstantFrameBudget`) when their time comes: a min-heap
/// of due times, and a condition variable it sleeps on until the earliest. A stream with nothing
/// due costs nothing; a slow reader only fills its own bounded buffer.
final class FramePacer: @unchecked Sendable {
    // @unchecked: `heap`, `sequence` and `stopped` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var heap: [Entry] = []
    private var sequence: UInt64 = 0
    private var stopped = false
    private let clock: Stopwatch
    /// Seconds between keep-alive comments on an idle stream.
    let keepAliveInterval: Double

    enum Kind: Sendable {
        /// A realtime frame, a keep-alive comment, an instant stream's block booked with the budget.
        case frame, keepAlive, refill
    }

    struct Entry {
        let due: Double
        /// Ties go to the first scheduled, so one stream's frames never overtake each other.
        let sequence: UInt64
        let kind: Kind
        let stream: FrameStream
        let generation: Int

        func before(_ other: Entry) -> Bool {
            due < other.due || (due == other.due && sequence < other.sequence)
        }
    }

    init(clock: Stopwatch, keepAliveInterval: Double) {
        self.clock = clock
        self.keepAliveInterval = keepAliveInterval
        // The thread holds the pacer until `stop()` ends its loop.
        let thread = Thread { self.run() }
        thread.name = "sheetd-frames"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Asks for `stream` to be called at server time `time`.
    func schedule(_ kind: Kind, _ stream: FrameStream, at time: Double, generation: Int) {
        condition.lock()
        sequence += 1
        let entry = Entry(due: time, sequence: sequence, kind: kind, stream: stream, generation: generation)
        let wake = heap.isEmpty || entry.before(heap[0])
        push(entry)
        if wake { condition.signal() }
        condition.unlock()
    }

    /// Ends the thread; entries not yet due are dropped.
    func stop() {
        condition.lock()
        stopped = true
        heap.removeAll()
        condition.signal()
        condition.unlock()
    }

    private func run() {
        var due: [Entry] = []
        condition.lock()
        while !stopped {
            guard let first = heap.first else {
                condition.wait()
                continue
            }
            let now = clock.now
            if first.due > now {
                _ = condition.wait(until: Date(timeIntervalSinceNow: first.due - now))
                continue
            }
            while let top = heap.first, top.due <= now { due.append(pop()) }
            condition.unlock()
            for entry in due {
                switch entry.kind {
                case .frame:
                    entry.stream.tick(generation: entry.generation, due: entry.due, now: clock.now, pacer: self)
                case .keepAlive:
                    entry.stream.keepAlive(now: clock.now, interval: keepAliveInterval, pacer: self)
                case .refill:
                    entry.stream.refill(now: clock.now, pacer: self, booked: true)
                }
            }
            due.removeAll(keepingCapacity: true)
            condition.lock()
        }
        condition.unlock()
    }

    // MARK: Binary heap on `before`

    private func push(_ e: Entry) {
        heap.append(e)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].before(heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private func pop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < heap.count, heap[l].before(heap[m]) { m = l }
                if r < heap.count, heap[r].before(heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
