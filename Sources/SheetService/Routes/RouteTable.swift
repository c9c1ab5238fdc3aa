import MicroHTTP

/// The service's routes, one row each: the method, the path template (as openapi.yaml names it),
/// who may call it, and its handler. Everything else about routes is derived from this table
/// (`Route.swift`): the matcher's tables, each path's methods (405 and Allow, HEAD with GET,
/// OPTIONS for every path), the metrics' and the access log's route label, and the list the tests
/// check against openapi.yaml.
///
/// To add a route: a row here, its handler in the file of its concern, and its description in
/// openapi.yaml (and HTTP.md).
extension SheetResponder {
    static let routeTable: [RouteRow] = [
        // The demo page, its client module, the element, the examples and the contract: open,
        // browsers fetch them as they are (ETag, 304, gzip: `StaticFile`).
        RouteRow(.get, "/", .open) { r, request, _ in r.document(.page, request) },
        RouteRow(.get, "/sheet-client.js", .open) { r, request, _ in r.document(.clientModule, request) },
        RouteRow(.get, "/sheet-view.js", .open) { r, request, _ in r.document(.elementModule, request) },
        RouteRow(.get, "/examples/{id}", .open) { r, request, name in try r.example(name, request) },
        RouteRow(.get, "/layout.html", .open) { r, request, _ in r.document(.layoutPage, request) },
        RouteRow(.get, "/edges.html", .open) { r, request, _ in r.document(.edgesPage, request) },
        RouteRow(.get, "/stacks.html", .open) { r, request, _ in r.document(.stacksPage, request) },
        RouteRow(.get, "/openapi.yaml", .open) { r, request, _ in r.document(.contract, request) },
        RouteRow(.get, "/presets") { r, request, _ in r.document(.presets, request) },
        // Sessions and the events that move their cards.
        RouteRow(.post, "/sessions") { r, request, _ in try r.createSession(request) },
        RouteRow(.get, "/sessions/{id}") { r, _, id in try r.getSession(id) },
        RouteRow(.put, "/sessions/{id}") { r, request, id in try r.putSession(id, request) },
        RouteRow(.delete, "/sessions/{id}") { r, _, id in try r.deleteSession(id) },
        RouteRow(.post, "/sessions/{id}/pan") { r, request, id in try r.pan(id, request) },
        RouteRow(.post, "/sessions/{id}/show") { r, request, id in try r.show(id, request) },
        RouteRow(.post, "/sessions/{id}/dismiss") { r, request, id in try r.dismiss(id, request) },
        RouteRow(.post, "/sessions/{id}/step") { r, request, id in try r.step(id, request) },
        // EventSource cannot send headers: the token may come in the query.
        RouteRow(.get, "/sessions/{id}/frames", .tokenInQuery) { r, request, id in try r.frames(id, request) },
        RouteRow(.post, "/simulate") { _, request, _ in try Simulation.run(request.body) },
        // Probes (load balancers call them without credentials) and metrics.
        RouteRow(.get, "/healthz", .open) { r, _, _ in r.health() },
        RouteRow(.get, "/livez", .open) { r, _, _ in r.health() },
        RouteRow(.get, "/readyz", .open) { r, _, _ in r.readiness() },
        RouteRow(.get, "/metrics") { r, _, _ in r.metricsExposition() },
    ]
}

/// One row of the route table.
struct RouteRow: Sendable {
    /// The methods the table uses (HEAD and OPTIONS are derived: HEAD answers as GET does,
    /// OPTIONS is the preflight every path takes).
    enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
        case put = "PUT"
        case delete = "DELETE"
    }

    /// Who may call a route when an API key or session tokens are on.
    enum Access: Sendable {
        /// The API key, or on a session's routes that session's token (Authorization: Bearer).
        case credentials
        /// As `credentials`, and the token may also come as `?access_token=` (RFC 6750 §2.3).
        case tokenInQuery
        /// Anyone: probes, the page's files and the contract.
        case open
    }

    /// A route's handler: given the responder, the request and the `{id}` its path named ("" on
    /// a path without one). The request is passed as it is, not in a struct of the two (building
    /// one copied the request, a retain and a release per field: ≈ 580 instructions a request).
    typealias Handler = @Sendable (SheetResponder, HTTPRequest, _ id: String) throws -> HTTPResponse

    let method: Method
    let template: StaticString
    let access: Access
    let handler: Handler

    init(_ method: Method, _ template: StaticString, _ access: Access = .credentials, _ handler: @escaping Handler) {
        self.method = method
        self.template = template
        self.access = access
        self.handler = handler
    }
}
