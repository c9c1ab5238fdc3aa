import MicroHTTP

/// What operators and load balancers call: liveness and readiness probes, and the metrics.
extension SheetResponder {
    /// `GET /healthz`, `GET /livez`: the process answers (and says when it drains).
    func health() -> HTTPResponse {
        Self.json(200, draining.load(ordering: .relaxed) ? #"{"status":"draining"}"# : #"{"status":"ok"}"#)
    }

    /// `GET /readyz`: 503 with Retry-After once draining, so the load balancer stops sending.
    func readiness() -> HTTPResponse {
        guard draining.load(ordering: .relaxed) else { return Self.json(200, #"{"status":"ok"}"#) }
        var r = Self.json(503, #"{"status":"draining"}"#)
        r.headers.append(name: "Retry-After", value: String(configuration.retryAfter))
        return r
    }

    /// `GET /metrics`: the Prometheus text exposition, with the gauges sampled now.
    func metricsExposition() -> HTTPResponse {
        metrics.liveSessions.record(table.count)
        let statistics = store?.statistics
        if let s = statistics {
            metrics.storePending.record(s.pending)
            metrics.storePendingBytes.record(s.pendingBytes)
        }
        return Self.bytes(200, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition(store: statistics))
    }
}
