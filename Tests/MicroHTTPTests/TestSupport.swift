import MicroHTTP
import SheetdTesting
import Synchronization

/// The responder every server test talks to. Routes on the raw path:
/// `/echo` echoes the body, `/describe…` describes how the target was parsed, `/header` reports the
/// `X-Probe` fields, `/stream` opens a stream handed to `onStream`, `/refuse` is refused by screen().
final class TestResponder: HTTPResponder {
    let respondCalls = Mutex(0)
    /// Headers vetted once and sent with every `/vetted` response.
    static let vettedHeaders = (["Content-Type": "text/plain", "X-Vetted": "yes"] as HTTPHeaders).vetted()!
    let onStream: @Sendable (HTTPStream) -> Void

    init(onStream: @escaping @Sendable (HTTPStream) -> Void = { _ in }) {
        self.onStream = onStream
    }

    /// The refusals the server handed over, in order.
    let refusals = Mutex<[HTTPRefusal]>([])
    let screenCalls = Mutex(0)
    /// The requests `/keep` was asked with, kept past their answers.
    let kept = Mutex<[HTTPRequest]>([])

    func screen(_ head: HTTPRequestHead) -> HTTPResponse? {
        screenCalls.withLock { $0 += 1 }
        return head.path == "/refuse" ? HTTPResponse(status: 403, body: Array("refused".utf8)) : nil
    }

    /// Records the refusal and answers as the protocol's default does (its detail as plain text).
    func refused(_ refusal: HTTPRefusal, _ head: HTTPRequestHead) -> HTTPResponse {
        refusals.withLock { $0.append(refusal) }
        return refusal.plainTextResponse
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        respondCalls.withLock { $0 += 1 }
        let path = request.path
        if path.hasPrefix("/describe") {
            let segments = request.pathSegments.map { $0.joined(separator: "|") } ?? "nil"
            let items = request.queryItems.map { "\($0.name)=\($0.value)" }.joined(separator: ";")
            let text = "path=\(path)\nquery=\(request.query ?? "nil")\nsegments=\(segments)\nitems=\(items)"
            return HTTPResponse(status: 200, body: Array(text.utf8))
        }
        switch path {
        case "/echo":
            return HTTPResponse(
                status: 200,
                headers: ["X-Method": request.method, "X-Body-Count": String(request.body.count)],
                body: request.body)
        case "/header":
            let values = request.headers.values(for: "x-PROBE").joined(separator: ",")
            let first = request.headers["X-probe"] ?? "nil"
            return HTTPResponse(status: 200, body: Array("\(first)|\(values)".utf8))
        case "/stream":
            let stream = HTTPStream(bufferLimit: 4096)
            onStream(stream)
            return HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], stream: stream)
        case "/close":
            return HTTPResponse(status: 200, body: Array("bye".utf8), closesConnection: true)
        case "/bad-header":
            return HTTPResponse(status: 200, headers: ["X-Echo": "a\r\nInjected: 1"], body: [])
        case "/bad-after-vetted":
            // Vetted headers, then a field appended to them: the append must undo the vetting. A
            // NUL, which libmicrohttpd's own check lets through (the C string just ends there).
            var headers = (["Content-Type": "text/plain"] as HTTPHeaders).vetted()!
            headers.append(name: "X-Echo", value: "a\u{0}Injected")
            return HTTPResponse(status: 200, headers: headers, body: [])
        case "/keep":
            kept.withLock { $0.append(request) }
            return HTTPResponse(status: 200, body: request.body)
        case "/vetted":
            return HTTPResponse(status: 200, headers: Self.vettedHeaders, body: Array("ok".utf8))
        case "/interim":
            return HTTPResponse(status: 100)
        default:
            return HTTPResponse(status: 404)
        }
    }
}

/// Starts a real server on port 0, runs `body`, and stops the server.
func withServer<T>(
    threads: Int = 1,
    maxBodyBytes: Int = 16 * 1024,
    chunkedBodies: Bool = true,
    responder: TestResponder = TestResponder(),
    _ body: (HTTPServer) throws -> T
) throws -> T {
    let server = HTTPServer(
        configuration: .init(port: 0, threads: threads, maxBodyBytes: maxBodyBytes, chunkedBodies: chunkedBodies),
        responder: responder)
    try server.start()
    defer { server.stop() }
    return try body(server)
}
