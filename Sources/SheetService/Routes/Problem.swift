import SheetPhysics

/// An error that carries its HTTP status, rendered as an RFC 9457 `application/problem+json`
/// body. `code` is a stable machine slug; `detail` says what to do about it.
public struct Problem: Error, Sendable {
    public var status: Int
    public var code: String
    public var detail: String
    /// The offending field as a JSON path (`options.expandedOffset`, `events[3]`), if any.
    public var field: String?
    /// Extra response headers (`Allow`, `Retry-After`).
    public var headers: [(name: String, value: String)]
    /// `stale-sequence` and `sequence-gap`: the session's last applied `seq` (0: none), an
    /// extension member (RFC 9457 §3.2) a client compares with the last `seq` it saw acknowledged.
    public var lastSeq: Int?

    public init(
        status: Int, code: String, detail: String, field: String? = nil,
        headers: [(name: String, value: String)] = []
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field
        self.headers = headers
    }

    /// The reason phrase for `status` (RFC 9110).
    public var title: String { Self.reasonPhrase(status) }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    /// 400 for a body or field the service cannot use.
    static func invalid(_ code: String, _ detail: String, field: String? = nil) -> Problem {
        Problem(status: 400, code: code, detail: detail, field: field)
    }

    /// 401 with the RFC 6750 challenge (`invalid`: a credential was sent and is wrong).
    static func unauthorized(_ detail: String, invalid: Bool) -> Problem {
        Problem(
            status: 401, code: "unauthorized", detail: detail,
            headers: [
                (
                    "WWW-Authenticate",
                    invalid ? #"Bearer realm="sheetd", error="invalid_token""# : #"Bearer realm="sheetd""#
                )
            ])
    }

    /// 404 for a session id nobody created.
    static func sessionNotFound(_ id: String) -> Problem {
        Problem(
            status: 404, code: "session-not-found",
            detail:
                "no session \"\(id)\": create it with PUT /sessions/\(id) (body: a configuration such as {\"preset\": \"facebook\"}, or empty for the defaults), or POST /sessions for a generated id"
        )
    }

    /// The engine's configuration errors, with their field.
    init(_ error: ConfigurationError) {
        let code: String
        switch error {
        case .invalidGeometry: code = "bad-geometry"
        case .unknownPreset: code = "unknown-preset"
        case .unknownOption: code = "unknown-option"
        case .invalidOption: code = "invalid-value"
        case .unknownDetent: code = "unknown-detent"
        }
        self.init(status: 400, code: code, detail: error.description, field: error.field)
    }

    /// The engine's conflicts (409).
    init(_ conflict: SheetConflict) {
        let code: String
        switch conflict {
        case .clockBackwards: code = "clock-backwards"
        case .hidden, .noDrag: code = "conflict"
        case .keyboardLocked: code = "keyboard-locked"
        case .noScroll, .stepWhileDragging: code = "conflict"
        }
        self.init(status: 409, code: code, detail: conflict.description)
    }
}
