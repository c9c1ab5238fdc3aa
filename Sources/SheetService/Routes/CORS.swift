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
            name: "Access-Control-Expose-Headers",
            value: "Location, Retry-After, Allow, WWW-Authenticate, X-Request-Id, Sheetd-Replay"
        )
    }

    /// OPTIONS: the CORS preflight, answered for every route.
    func preflight(_ allowed: [String], _ request: HTTPRequest) -> HTTPResponse {
        var headers = HTTPHeaders()
        let methods = (allowed + ["OPTIONS"]).joined(separator: ", ")
        headers.append(name: "Allow", value: methods)
        if let origin = request.head.origin, originAllowed(origin) {
            headers.append(name: "Access-Control-Allow-Methods", value: methods)
            // The request's list is echoed only when it is a list of field names (RFC 9110 tokens,
            // commas and spaces): an empty or blank one made an empty header and a control byte an
            // unusable one, each refused by libmicrohttpd as a 500 (found by schemathesis and by the
            // attack suite); either counts as none.
            let asked = request.headers["access-control-request-headers"]?.trimmingCharacters(in: .whitespaces)
            headers.append(
                name: "Access-Control-Allow-Headers",
                value: asked.flatMap { Self.isFieldNameList($0) ? $0 : nil }
                    ?? "Content-Type, Last-Event-ID, Authorization, Sheetd-Seq")
            headers.append(name: "Access-Control-Max-Age", value: "600")
        }
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Whether `value` is a non-empty list of field names: tchar (RFC 9110 §5.6.2), commas and
    /// spaces.
    static func isFieldNameList(_ value: String) -> Bool {
        !value.isEmpty
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "!#$%&'*+-.^_`|~, ".utf8.contains(byte)
                }
            }
    }
}
