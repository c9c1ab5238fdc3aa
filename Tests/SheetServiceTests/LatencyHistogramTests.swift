import Prometheus
import SheetdTesting
import Testing

@testable import SheetService

/// The request-latency histogram writes what swift-prometheus's value histogram writes for the
/// same observations, line for line.
@Suite struct LatencyHistogramTests {
    @Test func exposesWhatSwiftPrometheusExposes() {
        let buckets = [0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 0.25, 1]
        let routes = ["/sessions/{id}/pan", "/healthz", #"a "quoted\ \#nroute"#]
        let ours = LatencyHistogram(
            name: "sheetd_request_duration_seconds", help: #"Time from the request line to the answer, by route \ x."#,
            buckets: buckets, routes: routes)
        let registry = PrometheusCollectorRegistry()
        let descriptor = MetricNameDescriptor(
            namespace: "sheetd", metricName: "request_duration", unitName: "seconds",
            helpText: #"Time from the request line to the answer, by route \ x."#)
        let theirs = routes.map {
            registry.makeValueHistogram(descriptor: descriptor, labels: [("route", $0)], buckets: buckets)
        }
        var rng = SplitMix64(seed: 5)
        var values = buckets + buckets.map(\.nextUp) + buckets.map(\.nextDown) + [0, 2, 1e-9]
        for _ in 0..<5000 { values.append(Double(rng.next() % 2_000_000) * 1e-6) }
        for (i, value) in values.enumerated() {
            ours.record(route: i % routes.count, seconds: value)
            theirs[i % routes.count].record(value)
        }
        var a: [UInt8] = []
        ours.emit(into: &a)
        var b: [UInt8] = []
        registry.emit(into: &b)
        // The family's lines (the registry writes a family's series in no fixed order).
        let ourLines = String(decoding: a, as: UTF8.self).split(separator: "\n").sorted()
        let theirLines = String(decoding: b, as: UTF8.self).split(separator: "\n").sorted()
        #expect(ourLines == theirLines)
        #expect(ourLines.count == 2 + routes.count * (buckets.count + 3))
    }
}
