// Starting the real service for a test, and the checks and requests every service suite shares.
// The service without a server is InProcessService.swift; the HTTP/SSE client, redis-server and
// waiting come from SheetdTesting.

import SheetdTesting
import Testing

@testable import SheetService

/// A started server on an ephemeral port of 127.0.0.1.
func startServer(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> SheetServer {
    var configuration = ServiceConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configure(&configuration)
    let server = try SheetServer(configuration: configuration)
    try server.start()
    return server
}

/// Every service test runs in this suite, side by side: a test answered in process
/// (`InProcessService`) has a responder of its own, and a test on sockets a server of its own on
/// port 0; neither shares a port, a log handler, metrics or a thread (a request's trace is in its
/// thread's slot, set and cleared within the one call that answers it). What does share state
/// is serialized: `StoreIntegration`.
@Suite enum ServiceIntegration {}

extension ServiceIntegration {
    /// The store's tests (StoreTests, StoreFaultTests, StoreOutageTests), one at a time: each holds
    /// `ProcessResource.redisSubscriberThreads` for its whole body (every server with a store
    /// starts a redis-subscribe thread, which another suite's leak check counts), so side by side
    /// they would only wait for that lock, each waiting one holding a thread other tests could run on.
    @Suite(.serialized) enum StoreIntegration {}
}

/// Checks an RFC 9457 problem: status, media type, the five members, and the code.
@discardableResult
func expectProblem(
    _ r: Response, status: Int, code: String?, sourceLocation: SourceLocation = #_sourceLocation
) -> [String: Any] {
    #expect(r.status == status, "\(r)", sourceLocation: sourceLocation)
    #expect(
        r.headers["Content-Type"]?.hasPrefix("application/problem+json") == true, "\(r)",
        sourceLocation: sourceLocation)
    guard let json = r.json else {
        Issue.record("the problem body is not a JSON object: \(r)", sourceLocation: sourceLocation)
        return [:]
    }
    #expect(json["type"] is String, "type in \(r.text)", sourceLocation: sourceLocation)
    #expect((json["title"] as? String)?.isEmpty == false, "title in \(r.text)", sourceLocation: sourceLocation)
    #expect(num(json["status"]) == Double(status), "status in \(r.text)", sourceLocation: sourceLocation)
    #expect((json["detail"] as? String)?.isEmpty == false, "detail in \(r.text)", sourceLocation: sourceLocation)
    #expect(json["code"] is String, "code in \(r.text)", sourceLocation: sourceLocation)
    if let code {
        #expect(json["code"] as? String == code, "code in \(r.text)", sourceLocation: sourceLocation)
    }
    return json
}

// MARK: - Session requests

extension HTTPClient {
    /// PUT /sessions/{id} with a configuration (empty: no body).
    func put(_ id: String, _ config: String = "") throws -> Response {
        try request("PUT", "/sessions/\(id)", body: config.isEmpty ? nil : bytes(config))
    }

    func pan(_ id: String, _ json: String) throws -> Response {
        try request("POST", "/sessions/\(id)/pan", json: json)
    }

    func show(_ id: String, _ json: String = "") throws -> Response {
        try request("POST", "/sessions/\(id)/show", body: json.isEmpty ? nil : bytes(json))
    }

    func dismiss(_ id: String, _ json: String = "") throws -> Response {
        try request("POST", "/sessions/\(id)/dismiss", body: json.isEmpty ? nil : bytes(json))
    }
}

/// A started server (see `startServer`) and a connection to it; the caller stops the server.
func connectedServer(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> (
    SheetServer, HTTPConnection
) {
    let server = try startServer(configure)
    return (server, try HTTPConnection(port: server.port))
}
