import CoreMetrics
import Prometheus
import RedisClient

/// The service's metrics, through swift-metrics handles backed by a Prometheus registry of this
/// server's own (so several servers in one test process never share counters). Every handle is
/// made once at start-up: a request only increments.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// The statuses the service answers with; anything else counts as "other".
    private static let statuses = [200, 201, 204, 400, 401, 404, 405, 408, 409, 411, 413, 415, 500, 501, 503]
    /// requests[route][status index]
    private let requests: [[CoreMetrics.Counter]]
    /// Request latency in seconds, by route: a histogram over Double buckets with the exposition
    /// of swift-prometheus's (`LatencyHistogram`; a Timer's Duration buckets cost 128-bit compares
    /// on every request, a swift-metrics Recorder's generic `record` went through an unspecialized
    /// floating-point conversion, and swift-prometheus's own histogram counts every bucket above
    /// the value).
    private let latency: LatencyHistogram
    let liveSessions: CoreMetrics.Gauge
    /// The session cap (`--max-sessions`), for an alert on how near the live count is to it.
    let maxSessions: CoreMetrics.Gauge
    let evictions: CoreMetrics.Counter
    let animationsStarted: CoreMetrics.Counter
    /// Retried requests answered with their first answer (`seq`), not applied again.
    let replays: CoreMetrics.Counter
    let sessionsCreated: CoreMetrics.Counter
    /// Requests refused for their framing before routing (docs/HTTP.md's smuggling cases).
    let rejectedFraming: CoreMetrics.Counter
    /// Requests whose body was still arriving at the request deadline (connection closed).
    let cutOff: CoreMetrics.Counter
    /// Sessions this process loaded from the store (a request for a session it did not hold).
    let sessionsRestored: CoreMetrics.Counter
    /// Requests answered 503 for the store: a load that failed, or a write a creation,
    /// replacement or deletion waited for that the store did not confirm by the deadline.
    let storeErrors: CoreMetrics.Counter
    /// The store's writes still waiting, and their bytes (sampled when /metrics is read); the
    /// writer's own counters (written, refused, dropped) are sampled into the exposition text.
    let storePending: CoreMetrics.Gauge
    let storePendingBytes: CoreMetrics.Gauge
    /// Times the store answered again after an outage, or another server answered (each time the
    /// sessions held here are written back), and the sessions written back.
    let storeReturns: CoreMetrics.Counter
    let sessionsRewritten: CoreMetrics.Counter
    let framesSent: CoreMetrics.Counter
    /// Frames a slow reader never got: its unsent frames were replaced by the latest one.
    let framesDropped: CoreMetrics.Counter
    /// Realtime frames passed over because the pacer fell more than a frame behind (a starved CPU).
    let framesSkipped: CoreMetrics.Counter
    /// Instant-pace blocks booked for later because the server's instant frame budget was spent.
    let instantBlocksBooked: CoreMetrics.Counter
    /// How late the pacer handed realtime frames to their streams, against their due time (time
    /// in the stream's buffer and libmicrohttpd's send queue comes on top).
    let frameLateness: CoreMetrics.Timer
    let streamsOpen: CoreMetrics.Meter

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        requests = Route.allCases.map { route in
            (Self.statuses.map { String($0) } + ["other"]).map { status in
                CoreMetrics.Counter(
                    label: "sheetd_requests_total", dimensions: [("route", route.template), ("status", status)],
                    factory: factory)
            }
        }
        // Seconds: 50 µs to 1 s, the range a 15 µs request and a slow one both land in.
        let latencyBuckets = [0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 0.25, 1]
        latency = LatencyHistogram(
            name: "sheetd_request_duration_seconds", help: "Time from the request line to the answer, by route.",
            buckets: latencyBuckets, routes: Route.allCases.map(\.template))
        liveSessions = CoreMetrics.Gauge(label: "sheetd_sessions_live", factory: factory)
        maxSessions = CoreMetrics.Gauge(label: "sheetd_sessions_max", factory: factory)
        evictions = CoreMetrics.Counter(label: "sheetd_sessions_evicted_total", factory: factory)
        sessionsCreated = CoreMetrics.Counter(label: "sheetd_sessions_created_total", factory: factory)
        animationsStarted = CoreMetrics.Counter(label: "sheetd_animations_started_total", factory: factory)
        replays = CoreMetrics.Counter(label: "sheetd_replays_total", factory: factory)
        rejectedFraming = CoreMetrics.Counter(label: "sheetd_requests_rejected_framing_total", factory: factory)
        cutOff = CoreMetrics.Counter(label: "sheetd_requests_cut_off_total", factory: factory)
        sessionsRestored = CoreMetrics.Counter(label: "sheetd_sessions_restored_total", factory: factory)
        storeErrors = CoreMetrics.Counter(label: "sheetd_store_errors_total", factory: factory)
        storePending = CoreMetrics.Gauge(label: "sheetd_store_pending", factory: factory)
        storePendingBytes = CoreMetrics.Gauge(label: "sheetd_store_pending_bytes", factory: factory)
        storeReturns = CoreMetrics.Counter(label: "sheetd_store_returns_total", factory: factory)
        sessionsRewritten = CoreMetrics.Counter(label: "sheetd_sessions_rewritten_total", factory: factory)
        framesSent = CoreMetrics.Counter(label: "sheetd_frames_sent_total", factory: factory)
        framesDropped = CoreMetrics.Counter(label: "sheetd_frames_dropped_total", factory: factory)
        framesSkipped = CoreMetrics.Counter(label: "sheetd_frames_skipped_total", factory: factory)
        instantBlocksBooked = CoreMetrics.Counter(label: "sheetd_instant_blocks_booked_total", factory: factory)
        streamsOpen = CoreMetrics.Meter(label: "sheetd_streams_open", factory: factory)
        // Lateness: 100 µs to 250 ms.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(4), .milliseconds(8), .milliseconds(16), .milliseconds(33), .milliseconds(100),
            .milliseconds(250),
        ]
        frameLateness = CoreMetrics.Timer(label: "sheetd_frame_lateness_seconds", factory: factory)
    }

    /// Counts one answered request and its latency.
    @inline(__always)
    func record(route: Route, status: Int, nanoseconds: Int64) {
        let i = Self.statuses.firstIndex(of: status) ?? Self.statuses.count
        requests[route.index][i].increment()
        latency.record(route: route.index, seconds: Double(nanoseconds) * 1e-9)
    }

    /// The Prometheus text exposition: the registry's metrics, the store's write counters (when
    /// there is a store, sampled from its writer) and the process metrics.
    func exposition(store: RedisWriter.Statistics?) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        latency.emit(into: &buffer)
        var text = ""
        if let store {
            for (name, help, value) in [
                ("sheetd_store_written_total", "Session writes the store acknowledged.", store.written),
                ("sheetd_store_failed_total", "Session writes dropped or refused by the store.", store.failed),
                (
                    "sheetd_store_refused_total", "Session writes the store refused (a final error reply).",
                    store.refused
                ),
                (
                    "sheetd_store_deferred_total",
                    "Session write attempts kept for a retry: a temporary error reply (LOADING, READONLY, NOREPLICAS, MASTERDOWN, BUSY, TRYAGAIN), a server that is not the primary, or a failover under way.",
                    store.deferred
                ),
                (
                    "sheetd_store_dropped_total",
                    "Session writes never sent: over the backlog's bound while the store was away, or left at exit.",
                    store.dropped
                ),
                (
                    "sheetd_store_stale_total",
                    "Session writes the store refused because it held a version at least as new (another instance's).",
                    store.stale
                ),
                (
                    "sheetd_store_reset_total",
                    "Session writes that replaced a stored record whose version could not be read.", store.reset
                ),
            ] {
                text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
            }
            // By the code of Redis's reply, sorted so the exposition is stable.
            for (name, help, counts) in [
                (
                    "sheetd_store_refused_by_code_total", "sheetd_store_refused_total by Redis's error code.",
                    store.refusedByCode
                ),
                ("sheetd_store_deferred_by_code_total", "sheetd_store_deferred_total by code.", store.deferredByCode),
            ] where !counts.isEmpty {
                text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
                for (code, value) in counts.sorted(by: { $0.key < $1.key }) {
                    text += "\(name){code=\"\(code)\"} \(value)\n"
                }
            }
        }
        text += ProcessStatus.exposition()
        buffer.append(contentsOf: text.utf8)
        return buffer
    }
}
