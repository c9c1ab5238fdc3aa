import Synchronization

/// Request latency by route, the Prometheus histogram `sheetd_request_duration_seconds`: the text
/// swift-prometheus's `ValueHistogram` writes (each route's cumulative buckets, `+Inf`, `_sum` and
/// `_count`, numbers as `description` prints them, the family's HELP and TYPE lines), recorded
/// with one lock and one count per request. swift-prometheus's histogram adds one to every bucket
/// at or above the value, with a copy-on-write check for each (≈ 270 instructions a request); here
/// a request counts in its own bucket only, and the buckets are summed when written out.
final class LatencyHistogram: Sendable {
    /// One route's series.
    private final class Series: Sendable {
        struct State {
            /// Requests whose latency fell in each bucket and not in the one before it; the last
            /// count is above every bucket.
            var counts: [Int]
            var sum = 0.0
            var count = 0
        }

        /// `route="…"`, as the exposition writes it.
        let labels: [UInt8]
        let state: Mutex<State>

        init(labels: [UInt8], buckets: Int) {
            self.labels = labels
            self.state = Mutex(State(counts: Array(repeating: 0, count: buckets + 1)))
        }
    }

    private let name: String
    private let help: String
    /// Upper bounds, ascending.
    private let buckets: [Double]
    /// By route index.
    private let series: [Series]

    init(name: String, help: String, buckets: [Double], routes: [String]) {
        precondition(zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }, "buckets ascend")
        self.name = name
        self.help = help
        self.buckets = buckets
        self.series = routes.map { route in
            Series(
                labels: Array("route=\"".utf8) + Self.escapedLabelValue(route) + [UInt8(ascii: "\"")],
                buckets: buckets.count)
        }
    }

    /// Records one request of the route at `index` that took `seconds`.
    @inline(__always)
    func record(route index: Int, seconds: Double) {
        var bucket = 0
        while bucket < buckets.count && buckets[bucket] < seconds { bucket &+= 1 }
        series[index].state.withLock { state in
            state.counts[bucket] &+= 1
            state.sum += seconds
            state.count &+= 1
        }
    }

    /// The family in the Prometheus text format.
    func emit(into buffer: inout [UInt8]) {
        if !help.isEmpty {
            buffer += Array("# HELP \(name) ".utf8)
            for byte in help.utf8 {
                if byte == UInt8(ascii: "\\") { buffer += Array(#"\\"#.utf8) } else { buffer.append(byte) }
            }
            buffer.append(UInt8(ascii: "\n"))
        }
        buffer += Array("# TYPE \(name) histogram\n".utf8)
        for one in series {
            let state = one.state.withLock { $0 }
            var cumulative = 0
            for (bound, count) in zip(buckets, state.counts) {
                cumulative += count
                buffer += Array("\(name)_bucket{".utf8) + one.labels
                buffer += Array(",le=\"\(bound.description)\"} \(cumulative)\n".utf8)
            }
            buffer += Array("\(name)_bucket{".utf8) + one.labels + Array(",le=\"+Inf\"} \(state.count)\n".utf8)
            buffer += Array("\(name)_sum{".utf8) + one.labels + Array("} \(state.sum.description)\n".utf8)
            buffer += Array("\(name)_count{".utf8) + one.labels + Array("} \(state.count)\n".utf8)
        }
    }

    /// A label value escaped as the Prometheus text format wants it (backslash, quote, line feed).
    private static func escapedLabelValue(_ value: String) -> [UInt8] {
        var escaped: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): escaped += Array(#"\\"#.utf8)
            case UInt8(ascii: "\""): escaped += Array(#"\""#.utf8)
            case UInt8(ascii: "\n"): escaped += Array(#"\n"#.utf8)
            default: escaped.append(byte)
            }
        }
        return escaped
    }
}
