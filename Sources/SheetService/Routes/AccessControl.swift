import Foundation
import MicroHTTP

/// Who may call what: the API key and the per-session tokens (RFC 6750 bearer credentials).
extension SheetResponder {
    /// Lets a request through when no key is needed for its route, or when it presents the API key,
    /// or (on a session's own routes) that session's token. Probes, the demo page's files and the
    /// contract stay open: load balancers and browsers fetch them without credentials.
    func authorize(_ route: Route, id: String?, _ request: HTTPRequest) throws(Problem) {
        guard let access = route.path?.access, access != .open else { return }
        let presented = Self.bearer(request, route: route)
        if let apiKey, let presented, Self.equalInConstantTime(presented, apiKey) { return }
        // A session's token opens that session's routes (not creation: PUT of a new id needs the
        // key when there is one, and otherwise is open as POST is). Fail closed: a session whose
        // existence cannot be established (the store unreachable or refilling) is never taken for
        // absent; the store's 503 is the answer, and nothing changes.
        if configuration.sessionTokens, let id, let box = try accessCopy(id, method: request.method),
            let token = box.token
        {
            if let presented, Self.equalInConstantTime(presented, Array(token.utf8)) { return }
            throw Problem.unauthorized(
                presented == nil
                    ? "this session needs its token: send Authorization: Bearer <token> (the token came with the session's creation)"
                    : "the token does not open this session", invalid: presented != nil)
        }
        guard apiKey != nil else { return }
        throw Problem.unauthorized(
            presented == nil ? "send Authorization: Bearer <API key>" : "the API key is not valid",
            invalid: presented != nil)
    }

    /// The copy of session `id` a request is authorised against, without taking it into this
    /// process (a refused request must change nothing on any instance: loading it here would tell
    /// the instance that holds it to drop it and close its streams): the table's, or else the
    /// store's; for PUT and DELETE the store's when it has one, since another instance may have
    /// replaced the session since this copy, with a token of its own. nil: no such session.
    /// Throws the store's 503 when the store cannot tell.
    func accessCopy(_ id: String, method: String) throws(Problem) -> SessionBox? {
        let held = table.get(id)
        guard store != nil, held == nil || method == "PUT" || method == "DELETE" else { return held }
        guard let stored = try stored(id) else { return held }
        // A tombstone there: deleted elsewhere, but the copy here (if any) still asks for its token.
        return stored.box ?? held
    }

    /// Whether the request's credential opens `box`: its token, or the API key (a session without
    /// a token, made before tokens were on, is open).
    func opens(_ box: SessionBox, _ request: HTTPRequest) -> Bool {
        guard let token = box.token else { return true }
        guard let presented = Self.bearer(request, route: .unmatched) else { return false }
        if let apiKey, Self.equalInConstantTime(presented, apiKey) { return true }
        return Self.equalInConstantTime(presented, Array(token.utf8))
    }

    /// The bearer credential: the Authorization header's, or on the frames route (EventSource
    /// cannot set headers) the `access_token` query parameter (RFC 6750 §2.3).
    static func bearer(_ request: HTTPRequest, route: Route) -> [UInt8]? {
        if let value = request.headers["authorization"] {
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            return Array(parts[1].trimmingCharacters(in: .whitespaces).utf8)
        }
        if route.path?.access == .tokenInQuery, let token = request.head.queryValue(for: "access_token") {
            return Array(token.utf8)
        }
        return nil
    }

    /// Whether two secrets are equal, taking the same time wherever they differ (a timing side
    /// channel must not reveal a key byte by byte).
    static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<b.count { difference |= (i < a.count ? a[i] : 0) ^ b[i] }
        return difference == 0 && a.count == b.count
    }
}
