/// A complete HTTP request: the head and the whole body.
public struct HTTPRequest: Sendable {
    /// The request line and header fields.
    public var head: HTTPRequestHead
    /// The body bytes, complete (chunked bodies are already de-chunked); empty when there is none.
    public var body: [UInt8]
    /// When the server parsed the request line, on the monotonic `ContinuousClock` (never jumps
    /// with wall-clock changes; compare with `ContinuousClock.now` for latency).
    public var receivedAt: ContinuousClock.Instant
    /// The same instant in `BootClock` nanoseconds: a latency read as `BootClock.nanoseconds() -
    /// receivedNanoseconds` builds no instants (subtracting two and taking the `components` of
    /// the difference, a 128-bit division, cost ≈ 250 instructions a request).
    package var receivedNanoseconds: Int64

    /// A request with the given parts.
    public init(head: HTTPRequestHead, body: [UInt8] = [], receivedAt: ContinuousClock.Instant = .now) {
        self.head = head
        self.body = body
        self.receivedAt = receivedAt
        self.receivedNanoseconds = BootClock.nanoseconds() - BootClock.nanoseconds(of: .now - receivedAt)
    }

    /// A request received at `receivedAt`, which is `receivedNanoseconds` on the `BootClock`.
    init(
        head: consuming HTTPRequestHead, body: [UInt8], receivedAt: ContinuousClock.Instant, receivedNanoseconds: Int64
    ) {
        self.head = head
        self.body = body
        self.receivedAt = receivedAt
        self.receivedNanoseconds = receivedNanoseconds
    }

    /// The method token, e.g. "GET".
    public var method: String { head.method }
    /// The raw request target (path plus "?query").
    public var target: String { head.target }
    /// The raw, undecoded path.
    public var path: String { head.path }
    /// The raw, undecoded query, or nil.
    public var query: String? { head.query }
    /// The header fields in the order received.
    public var headers: HTTPHeaders { head.headers }
    /// The protocol version, e.g. "HTTP/1.1".
    public var version: String { head.version }
    /// The address of the connection the request came on, when known.
    public var client: ClientAddress? { head.client }
    /// The path segments, each percent-decoded on its own; nil if an escape is invalid.
    public var pathSegments: [String]? { head.pathSegments }
    /// The decoded query items, in order.
    public var queryItems: [(name: String, value: String)] { head.queryItems }
}
