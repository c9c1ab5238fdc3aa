import Foundation
import MicroHTTP

/// Cross-origin access (the Fetch standard's CORS protocol): the allowed origins, the headers an
/// answer gets, and the OPTIONS preflight.
extension SheetResponder {
    func originAllowed(_ origin: String) -> Bool {
        allowAnyOrigin || configuration.corsOrigins.contains(origin)
    }

    func addCORS(_ headers: inout HTTPHeaders, origin: String?) {
        guard let origin, originAllowed(origin), !headers.contains("Access-Control-Allow-Origin") else { return }
        headers.append(name: "Access-Control-Allow-Origin", value: allowAnyOrigin ? "*" : origin)
        if !allowAnyOrigin { headers.append(name: "Vary", value: "Origin") }
        headers.append(
            name: "Access-Control-Expose-Headers", value: "Location, Retry-After, Allow, WWW-Authenticate, X-Request-Id"
        )
    }

    /// OPTIONS: the CORS preflight, answered for every route.
    func preflight(_ allowed: [String], _ request: HTTPRequest) -> HTTPResponse {
        var headers = HTTPHeaders()
        let methods = (allowed + ["OPTIONS"]).joined(separator: ", ")
        headers.append(name: "Allow", value: methods)
        if let origin = request.head.origin, originAllowed(origin) {
            headers.append(name: "Access-Control-Allow-Methods", value: methods)
            // An empty or blank request list counts as none (echoing it made an empty header,
            // which libmicrohttpd refuses: a 500 found by schemathesis).
            let asked = request.headers["access-control-request-headers"]?.trimmingCharacters(in: .whitespaces)
            headers.append(
                name: "Access-Control-Allow-Headers",
                value: asked.flatMap { $0.isEmpty ? nil : $0 } ?? "Content-Type, Last-Event-ID, Authorization")
            headers.append(name: "Access-Control-Max-Age", value: "600")
        }
        return HTTPResponse(status: 204, headers: headers)
    }
}
