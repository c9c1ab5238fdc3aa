#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// The header fields in the order received (read once; the fields below come from them).
    public internal(set) var headers: HTTPHeaders
    /// The protocol version, e.g. "HTTP/1.1".
    public var version: String
    /// The address of the connection the request came on (nil when unknown, e.g. a request
    /// made in a test without a server).
    public var client: ClientAddress?

    /// The body's length as declared by the one Content-Length field (nil: none, or more than one).
    /// The server has refused a declared length over its limit before the head reaches a responder.
    public internal(set) var contentLength: Int?
    /// The Content-Type field's value, as sent.
    public internal(set) var contentType: String?
    /// The first X-Request-Id field's value, as sent: the id a front end gave the request.
    public internal(set) var requestID: String?
    /// The first `traceparent` field's value, as sent (W3C Trace Context).
    public internal(set) var traceparent: String?
    /// The first Origin field's value, as sent (a browser's cross-origin request): kept from the
    /// one pass over the fields, so that answering it needs no second search of them.
    public internal(set) var origin: String?
    /// How many fields are none of those kept apart above nor Host or Transfer-Encoding: where it
    /// is 0, a search of `headers` for any other name would find nothing, and need not be made
    /// (a search costs ≈ 190 instructions on a two-field head).
    public internal(set) var otherFields = 0

    /// Where the "?" of the target is, found once so `path` and `query` need no search.
    private var queryStart: String.Index?

    /// A head with the given parts; `target` is the raw request target (path and optional query).
    public init(method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), version: String = "HTTP/1.1") {
        self.method = method
        self.target = target
        self.headers = headers
        self.version = version
        self.queryStart = Self.queryStart(of: target)
        _ = HeadReader.read(fieldsOf: &self)
    }

    /// A head with no fields yet, in `fields` (empty, with room for a typical head's); the server
    /// fills them in.
    init(method: String, target: String, version: String, emptyFields fields: consuming HTTPHeaders) {
        self.method = method
        self.target = target
        self.headers = fields
        self.version = version
        self.queryStart = Self.queryStart(of: target)
    }

    /// Where the first "?" of `target` is, searched in its contiguous UTF-8 with `memchr` (a
    /// generic `firstIndex(of:)` on the UTF-8 view cost ≈ 570 instructions per request, on the
    /// contiguous bytes ≈ 130).
    private static func queryStart(of target: String) -> String.Index? {
        var target = target
        let offset: Int? = target.withUTF8 { bytes in
            guard let base = bytes.baseAddress, let found = memchr(base, Int32(UInt8(ascii: "?")), bytes.count)
            else { return nil }
            return UnsafeRawPointer(found) - UnsafeRawPointer(base)
        }
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
