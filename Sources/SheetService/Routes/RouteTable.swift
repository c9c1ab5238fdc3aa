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
        // The demo page, its client module and the contract: open, browsers fetch them as they are.
        RouteRow(.get, "/", .open) { r, _ in r.document(.page) },
        RouteRow(.get, "/sheet-client.js", .open) { r, _ in r.document(.clientModule) },
        RouteRow(.get, "/openapi.yaml", .open) { r, _ in r.document(.contract) },
        RouteRow(.get, "/presets") { r, _ in r.document(.presets) },
        // Sessions and the events that move their cards.
        RouteRow(.post, "/sessions") { r, q in try r.createSession(q.request) },
        RouteRow(.get, "/sessions/{id}") { r, q in try r.getSession(q.id) },
        RouteRow(.put, "/sessions/{id}") { r, q in try r.putSession(q.id, q.request) },
        RouteRow(.delete, "/sessions/{id}") { r, q in try r.deleteSession(q.id) },
        RouteRow(.post, "/sessions/{id}/pan") { r, q in try r.pan(q.id, q.request) },
        RouteRow(.post, "/sessions/{id}/show") { r, q in try r.show(q.id, q.request) },
        RouteRow(.post, "/sessions/{id}/dismiss") { r, q in try r.dismiss(q.id, q.request) },
        // EventSource cannot send headers: the token may come in the query.
        RouteRow(.get, "/sessions/{id}/frames", .tokenInQuery) { r, q in try r.frames(q.id, q.request) },
        RouteRow(.post, "/simulate") { _, q in try Simulation.run(q.request.body) },
        // Probes (load balancers call them without credentials) and metrics.
        RouteRow(.get, "/healthz", .open) { r, _ in r.health() },
        RouteRow(.get, "/livez", .open) { r, _ in r.health() },
        RouteRow(.get, "/readyz", .open) { r, _ in r.readiness() },
        RouteRow(.get, "/metrics") { r, _ in r.metricsExposition() },
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

    /// What a handler is given: the request, and the session id its path named.
    struct Call {
        let request: HTTPRequest
        /// The `{id}` of the path ("" on a path without one).
        let id: String
    }

    typealias Handler = @Sendable (SheetResponder, Call) throws -> HTTPResponse

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
