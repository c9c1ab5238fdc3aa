/// The head of an HTTP request: the request line and the header fields, as the client sent them.
///
/// Nothing here is percent-decoded: `target`, `path` and `query` are the raw bytes of the request
/// line, so a router can tell `/a%2Fb` from `/a/b`. Use `pathSegments` and `queryItems` for the
/// decoded forms.
public struct HTTPRequestHead: Sendable {
    /// The method token, e.g. "GET".
    public var method: String
    /// The request target exactly as sent (path plus "?query"), undecoded.
    public var target: String {
        didSet { queryStart = Self.queryStart(of: target) }
    }
    /// The header fields in the order received.
    public var headers: HTTPHeaders {
        didSet { (contentLength, contentType, requestID, traceparent) = Self.knownFields(of: headers) }
    }
    /// The protocol version, e.g. "HTTP/1.1".
    public var version: String
    /// The address of the connection the request came on (nil when unknown, e.g. a request
    /// made in a test without a server).
    public var client: ClientAddress?

    /// The body's length as declared by the one Content-Length field (nil: none, or more than one).
    /// The server has refused a declared length over its limit before the head reaches a responder.
    public private(set) var contentLength: Int?
    /// The Content-Type field's value, as sent.
    public private(set) var contentType: String?
    /// The first X-Request-Id field's value, as sent: the id a front end gave the request.
    public private(set) var requestID: String?
    /// The first `traceparent` field's value, as sent (W3C Trace Context).
    public private(set) var traceparent: String?

    /// Where the "?" of the target is, found once so `path` and `query` need no search.
    private var queryStart: String.Index?

    /// A head with the given parts; `target` is the raw request target (path and optional query).
    public init(method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), version: String = "HTTP/1.1") {
        self.method = method
        self.target = target
        self.headers = headers
        self.version = version
        self.queryStart = Self.queryStart(of: target)
        (contentLength, contentType, requestID, traceparent) = Self.knownFields(of: headers)
    }

    /// A head whose known fields the server already read in its one pass over the headers.
    init(method: String, target: String, version: String, reader: HeadReader) {
        self.method = method
        self.target = target
        self.headers = reader.headers
        self.version = version
        self.queryStart = Self.queryStart(of: target)
        self.contentLength = reader.declaredLength
        self.contentType = reader.contentType
        self.requestID = reader.requestID
        self.traceparent = reader.traceparent
    }

    /// The declared length (when exactly one Content-Length), the Content-Type, and the first
    /// X-Request-Id and traceparent of `headers`, for a head made without a socket.
    private static func knownFields(of headers: HTTPHeaders) -> (Int?, String?, String?, String?) {
        let lengths = headers.values(for: "content-length")
        return (
            lengths.count == 1 ? Int(lengths[0]) : nil, headers["content-type"], headers["x-request-id"],
            headers["traceparent"]
        )
    }

    /// Where the first "?" of `target` is, searched in its contiguous UTF-8 (a generic
    /// `firstIndex(of:)` on the UTF-8 view cost ≈ 570 instructions per request).
    private static func queryStart(of target: String) -> String.Index? {
        var target = target
        let offset = target.withUTF8 { $0.firstIndex(of: UInt8(ascii: "?")) }
        return offset.map { target.utf8.index(target.utf8.startIndex, offsetBy: $0) }
    }

    /// The raw path: the target up to the first "?", not percent-decoded.
    public var path: String {
        guard let queryStart else { return target }
        return String(target[..<queryStart])
    }

    /// The raw query: what follows the first "?" of the target, or nil when there is no "?".
    public var query: String? {
        guard let queryStart else { return nil }
        return String(target[target.utf8.index(after: queryStart)...])
    }

    /// The path split on "/" with each segment percent-decoded on its own.
    ///
    /// The leading "/" is dropped, so "/" gives `[]` and "/a/" gives `["a", ""]`. Because the path
    /// is split before decoding, "%2F" stays inside its segment and never creates a new one.
    /// A "+" stays a "+" (form encoding applies to queries only). Nil when an escape is not "%"
    /// followed by two hex digits or a segment does not decode to valid UTF-8.
    public var pathSegments: [String]? {
        var raw = Substring(path)
        if raw.first == "/" { raw = raw.dropFirst() }
        if raw.isEmpty { return [] }
        var segments: [String] = []
        for piece in raw.split(separator: "/", omittingEmptySubsequences: false) {
            guard let decoded = PercentDecoding.strict(piece.utf8) else { return nil }
            segments.append(decoded)
        }
        return segments
    }

    /// The query as decoded `name=value` pairs, in order.
    ///
    /// Follows the `application/x-www-form-urlencoded` parser of the WHATWG URL standard: pairs are
    /// split on "&" (empty pieces skipped), then on the first "=" (no "=" means an empty value),
    /// "+" becomes a space, valid "%HH" escapes are decoded, invalid ones are kept literally, and
    /// invalid UTF-8 becomes U+FFFD. Empty when there is no query.
    public var queryItems: [(name: String, value: String)] {
        guard let query else { return [] }
        var items: [(name: String, value: String)] = []
        for piece in query.utf8.split(separator: UInt8(ascii: "&")) {
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                items.append(
                    (
                        name: PercentDecoding.lenientForm(piece[..<equals]),
                        value: PercentDecoding.lenientForm(piece[piece.index(after: equals)...])
                    ))
            } else {
                items.append((name: PercentDecoding.lenientForm(piece), value: ""))
            }
        }
        return items
    }

    /// The value of the first query item with this name (names compared after decoding, exactly).
    public func queryValue(for name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}

/// A complete HTTP request: the head and the whole body.
public struct HTTPRequest: Sendable {
    /// The request line and header fields.
    public var head: HTTPRequestHead
    /// The body bytes, complete (chunked bodies are already de-chunked); empty when there is none.
    public var body: [UInt8]
    /// When the server parsed the request line, on the monotonic `ContinuousClock` (never jumps
    /// with wall-clock changes; compare with `ContinuousClock.now` for latency).
    public var receivedAt: ContinuousClock.Instant

    /// A request with the given parts.
    public init(head: HTTPRequestHead, body: [UInt8] = [], receivedAt: ContinuousClock.Instant = .now) {
        self.head = head
        self.body = body
        self.receivedAt = receivedAt
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

/// Percent-decoding of URL components (RFC 3986 §2.1), without Foundation.
enum PercentDecoding {
    /// Decodes "%HH" escapes; nil on a malformed escape or invalid UTF-8 (for path segments,
    /// where a bad escape must be refused, not guessed at).
    static func strict(_ raw: some Collection<UInt8>) -> String? {
        // Fast path: nothing to decode, and the bytes came from a String, so they are valid UTF-8.
        if !raw.contains(UInt8(ascii: "%")) {
            return String(decoding: raw, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            if byte == UInt8(ascii: "%") {
                let first = raw.index(after: index)
                guard first != raw.endIndex else { return nil }
                let second = raw.index(after: first)
                guard second != raw.endIndex, let high = hexValue(raw[first]), let low = hexValue(raw[second]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
                index = raw.index(after: second)
            } else {
                bytes.append(byte)
                index = raw.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Form decoding ("+" is a space, bad escapes kept literally, invalid UTF-8 replaced), as the
    /// WHATWG URL standard's urlencoded parser does for query strings.
    static func lenientForm(_ raw: some Collection<UInt8>) -> String {
        if !raw.contains(UInt8(ascii: "%")) && !raw.contains(UInt8(ascii: "+")) {
            return String(decoding: raw, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                let first = raw.index(after: index)
                if first != raw.endIndex {
                    let second = raw.index(after: first)
                    if second != raw.endIndex, let high = hexValue(raw[first]), let low = hexValue(raw[second]) {
                        bytes.append(high << 4 | low)
                        index = raw.index(after: second)
                        continue
                    }
                }
                bytes.append(byte)
            } else {
                bytes.append(byte)
            }
            index = raw.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of one hex digit, or nil.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
