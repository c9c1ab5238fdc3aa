/// A request the server refuses on its own, before the responder's `respond(to:)` sees it: HTTP
/// framing that libmicrohttpd lets through but that would let a front end and this server read
/// different requests (RFC 9112 §6.3, §5.2), limits, and deadlines.
///
/// The server never writes a refusal's body itself: it hands the refusal to
/// `HTTPResponder.refused(_:_:)`, so an application answers every error in its one format.
public struct HTTPRefusal: Sendable, Equatable {
    /// Which rule the request broke.
    public enum Reason: Sendable, Equatable {
        /// A control character or an extra space in the request target (400).
        case malformedRequestLine
        /// A header name that is not a token, e.g. with whitespace before the colon (400).
        case malformedHeaderName
        /// A header name that continues a framing header's name: libmicrohttpd 0.9.75 glues an
        /// obs-fold continuation onto the name ("Transfer-Encoding:\r\n chunked" arrives as
        /// "Transfer-Encodingchunked"), which a front end that unfolds would frame otherwise (400).
        case foldedFramingHeader
        /// More than one Content-Length field, equal or not (400).
        case repeatedContentLength
        /// More than one Host field (400).
        case repeatedHost
        /// An HTTP/1.1 request without Host (RFC 9112 §3.2; 400).
        case missingHost
        /// Content-Length together with Transfer-Encoding (RFC 9112 §6.3; 400).
        case lengthWithTransferEncoding
        /// A chunked body on a server configured to take bodies with a Content-Length only (411).
        case chunkedBody
        /// A transfer coding other than chunked (501).
        case unsupportedTransferCoding
        /// A body over `HTTPServer.Configuration.maxBodyBytes` (413).
        case bodyTooLarge
        /// A head that arrived after the request deadline (408).
        case requestTimeout
        /// The responder's answer could not be sent as given (500).
        case unusableResponse
        /// A deferred answer (`DeferredResponse`) was not given by the request deadline (503).
        case answerTimeout
        /// A deferred answer was still awaited when the server stopped (503).
        case serverStopping
    }

    /// Which rule the request broke.
    public var reason: Reason
    /// What was wrong, for a person: names the offending header or value.
    public var detail: String

    /// A refusal for `reason`, explained by `detail`.
    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The status code the refusal is answered with.
    public var status: Int {
        switch reason {
        case .malformedRequestLine, .malformedHeaderName, .foldedFramingHeader, .repeatedContentLength,
            .repeatedHost, .missingHost, .lengthWithTransferEncoding:
            400
        case .chunkedBody: 411
        case .unsupportedTransferCoding: 501
        case .bodyTooLarge: 413
        case .requestTimeout: 408
        case .unusableResponse: 500
        case .answerTimeout, .serverStopping: 503
        }
    }

    /// A stable machine-readable name for the refusal (RFC 9457 problems carry it as `code`).
    public var code: String {
        switch reason {
        case .malformedRequestLine: "bad-request-line"
        case .malformedHeaderName, .foldedFramingHeader, .repeatedContentLength, .repeatedHost, .missingHost,
            .lengthWithTransferEncoding:
            "bad-framing"
        case .chunkedBody: "length-required"
        case .unsupportedTransferCoding: "not-implemented"
        case .bodyTooLarge: "body-too-large"
        case .requestTimeout: "request-timeout"
        case .unusableResponse: "internal"
        case .answerTimeout: "answer-timeout"
        case .serverStopping: "shutting-down"
        }
    }

    /// Whether the request's framing was ambiguous, the request-smuggling family a front end and
    /// this server could read differently (what an operator counts apart from plain bad requests).
    public var isAmbiguousFraming: Bool {
        switch reason {
        case .malformedHeaderName, .foldedFramingHeader, .repeatedContentLength, .repeatedHost, .missingHost,
            .lengthWithTransferEncoding, .unsupportedTransferCoding:
            true
        case .malformedRequestLine, .chunkedBody, .bodyTooLarge, .requestTimeout, .unusableResponse, .answerTimeout,
            .serverStopping:
            false
        }
    }

    /// The refusal as a plain-text answer: its status, and its detail as the body.
    public var plainTextResponse: HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array((detail + "\n").utf8))
    }

    /// Whether the head's fields were read whole and well-formed, so that an answer may act on them
    /// (echo a request id, add CORS headers); false when the head itself is what is wrong.
    public var headIsReadable: Bool {
        switch reason {
        case .malformedRequestLine, .malformedHeaderName, .foldedFramingHeader, .requestTimeout: false
        default: true
        }
    }
}
