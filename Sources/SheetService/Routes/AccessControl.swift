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
        // key when there is one, and otherwise is open as POST is).
        if configuration.sessionTokens, let id, let box = try? session(id), let token = box.token {
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
