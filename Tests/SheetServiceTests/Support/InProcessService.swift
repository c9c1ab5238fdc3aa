// The service without a server, as Hummingbird's testing runs a router without one: a responder
// asked each request in the test's own thread. For tests whose subject is what the service
// answers (routes, decoding, problems, sessions, access, CORS, the operating endpoints), not the
// socket it answers on.

import Logging
import MicroHTTP
import SheetdTesting

@testable import SheetService

/// A `SheetResponder` for a configuration, asked each request as MicroHTTP's daemon asks it
/// (`Daemon.swift`, `handleAccess`): the framing rules and the service's `screen` on the head, a
/// refusal answered at once; otherwise `respond(to:)` on the whole request.
///
/// What the server adds on the way to the wire is not here: the Content-Length, Date and
/// Connection fields, HEAD answered without a body, a stream's frames (a stream's answer has its
/// status and fields and an empty body, `complete` false; the stream is finished at once, so its
/// session lets go of it), the client's address (nil, as for any request made without a server),
/// the sweeper of idle sessions, the request deadline and a body still arriving. Tests of those
/// start a server (`startServer`) and use a socket.
///
/// Independent of every other test: nothing listens and nothing is shared (the responder has its
/// own sessions, metrics and frame pacer; a request's trace lives in the calling thread's slot
/// for the one call that answers it), so the tests on it run side by side.
final class InProcessService: HTTPClient, Sendable {
    let responder: SheetResponder

    /// A responder for the default configuration changed by `configure`, logging to `logger`.
    init(logger: Logger = Logger(label: "sheetd"), _ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws
    {
        var configuration = ServiceConfiguration()
        configure(&configuration)
        responder = try SheetResponder(configuration: configuration, logger: logger, clock: Stopwatch())
    }

    /// Ends the frame pacer's thread (a server's `stop()` does this).
    deinit { responder.pacer.stop() }

    func execute(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]?) throws
        -> Response
    {
        let fields = HTTPConnection.fields(method, headers: headers, body: body).map { (name: $0.0, value: $0.1) }
        let head = HTTPRequestHead(method: method, target: target, headers: HTTPHeaders(fields))
        // The daemon's order: MicroHTTP's framing rules (as SheetServer configures them: bodies of a
        // declared length only), then the service's screen; either refuses before the body.
        let framing = HTTPRefusal.framing(
            of: head, maxBodyBytes: responder.configuration.maxBodyBytes, chunkedBodies: false)
        if let refusal = framing.map({ responder.refused($0, head) }) ?? responder.screen(head) {
            return Self.response(refusal)
        }
        return Self.response(responder.respond(to: HTTPRequest(head: head, body: body ?? [])))
    }

    /// Live sessions now.
    var sessionCount: Int { responder.table.count }

    /// The responder's answer as a client reads it: status, fields in order and the body's bytes.
    private static func response(_ answer: HTTPResponse) -> Response {
        var headers = Headers()
        headers.fields = answer.headers.map { (name: $0.name, value: $0.value) }
        guard let body = answer.body.completeBytes else {
            if case let .stream(stream) = answer.body { stream.finish() }
            return Response(
                status: answer.status, headers: headers, body: [], arrival: Monotonic.now(), complete: false)
        }
        return Response(status: answer.status, headers: headers, body: body, arrival: Monotonic.now())
    }
}
