/// An HTTP response: a status, header fields and a body that is either complete or streamed.
///
/// The server sets `Content-Length` (for `.bytes` and `.buffer`) or chunked framing (for `.stream`) itself; a
/// `Content-Length` field given here is ignored. `Date` is added unless given.
public struct HTTPResponse: Sendable {
    /// The body of a response.
    public enum Body: Sendable {
        /// A complete body, sent with `Content-Length`.
        case bytes([UInt8])
        /// A complete body, sent with `Content-Length` from the buffer's own memory, uncopied.
        case buffer(ResponseBuffer)
        /// A body written over time (e.g. Server-Sent Events), sent chunked to HTTP/1.1 clients
        /// (HTTP/1.0 clients get it delimited by the connection closing).
        case stream(HTTPStream)
        /// No answer yet: it is given later, from any thread, through the handle
        /// (`DeferredResponse`); the status and headers of this response are not used.
        case deferred(DeferredResponse)

        /// The bytes of a complete body (for `.buffer`, a copy); nil for a stream.
        public var completeBytes: [UInt8]? {
            switch self {
            case .bytes(let bytes): bytes
            case .buffer(let buffer): buffer.bytes
            case .stream, .deferred: nil
            }
        }
    }

    /// The status code, 200-999 (1xx codes are not valid final responses and become 500).
    public var status: Int
    /// The header fields, sent in order.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body
    /// Whether to close the connection after this response (sends `Connection: close`); a
    /// keep-alive connection otherwise stays open for the next request.
    public var closesConnection: Bool

    /// A response with a complete body (empty by default).
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], closesConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
        self.closesConnection = closesConnection
    }

    /// A response whose body is the given stream.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), stream: HTTPStream, closesConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
        self.closesConnection = closesConnection
    }

    /// A response with the given body.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body, closesConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closesConnection = closesConnection
    }
}
