import Foundation
import Logging
import MicroHTTP

/// What is answered before a request's body is read: the service's own policy (bodies are
/// JSON) and MicroHTTP's refusals (framing, limits, deadlines) rendered as problems.
extension SheetResponder {
    /// The service's own policy before a body byte is read: bodies are JSON (415). MicroHTTP has
    /// applied HTTP's framing rules and the body limit already (`refused` renders those).
    package func screen(_ head: HTTPRequestHead) -> HTTPResponse? {
        guard let type = head.contentType, let length = head.contentLength, length > 0,
            !Self.acceptsMediaType(type)
        else { return nil }
        let problem = Problem(
            status: 415, code: "unsupported-media-type",
            detail:
                "bodies are JSON: send Content-Type: application/json (application/*+json and curl's default application/x-www-form-urlencoded work too), not \(type)"
        )
        return answerBeforeBody(problem, head, origin: head.headers["origin"])
    }

    /// A refusal of MicroHTTP's (framing, limits, deadlines), answered as a problem like any other.
    package func refused(_ refusal: HTTPRefusal, _ head: HTTPRequestHead) -> HTTPResponse {
        if refusal.isAmbiguousFraming { metrics.rejectedFraming.increment() }
        let problem = Problem(status: refusal.status, code: refusal.code, detail: refusal.detail)
        // A head that is itself malformed gets no CORS headers: its Origin cannot be trusted.
        return answerBeforeBody(problem, head, origin: refusal.headIsReadable ? head.headers["origin"] : nil)
    }

    /// The answer to a request refused before its body: counted and logged here, since it never
    /// reaches `respond` (its latency is ~0: no body was read).
    func answerBeforeBody(_ problem: Problem, _ head: HTTPRequestHead, origin: String?) -> HTTPResponse {
        var response = problemResponse(problem, origin: origin)
        let matched = try? Self.match(head)
        let route = matched?.0 ?? .unmatched
        metrics.record(route: route, status: response.status, nanoseconds: 0)
        let slot = TraceSlot.mine
        slot.begin(head)
        defer { slot.end() }
        slot.sessionID = matched?.1
        finish(&response, head, route: route, nanoseconds: 0, slot)
        return response
    }

    package func deadlinePassed(_ head: HTTPRequestHead) {
        metrics.cutOff.increment()
        logger.notice("\(LoggedTarget.of(head)): request still arriving at the request deadline; connection closed")
    }

    /// application/json, application/*+json, or curl's default form type (whose body is still JSON).
    static func acceptsMediaType(_ value: String) -> Bool {
        if value == "application/json" { return true }  // the common case, without allocating
        // "" and ";" have no media type (split drops empty pieces: found by fuzzing, it trapped).
        guard let first = value.split(separator: ";", maxSplits: 1).first else { return false }
        let type = first.trimmingCharacters(in: .whitespaces).lowercased()
        return type == "application/json" || type == "application/x-www-form-urlencoded"
            || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }
}
