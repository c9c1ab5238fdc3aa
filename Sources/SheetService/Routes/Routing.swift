import MicroHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// From a request's raw target to a `Route` and a session id, on the undecoded bytes, and the
/// methods each route takes.
extension SheetResponder {
    /// The route of a request head, and the session id in it.
    static func match(_ head: borrowing HTTPRequestHead) throws(Problem) -> (Route, String?) {
        var path = head.path
        // Without a '%' nothing needs decoding, so the raw parts are the segments: matched here on
        // the bytes, without building an array (every gesture comes this way). Anything else, and
        // every miss (for its 404's detail), goes the general way, decoding segment by segment.
        let fast: (route: Route, id: String?)? = path.withUTF8 { p in
            guard p.first == 0x2F, !p.contains(0x25) else { return nil }
            let rest = p[1...]
            guard let slash = rest.firstIndex(of: 0x2F) else { return lookUp(rest, in: fixedRoutes).map { ($0, nil) } }
            guard Self.equal(p[1..<slash], "sessions") else { return nil }
            let tail = p[(slash + 1)...]
            let next = tail.firstIndex(of: 0x2F)
            let idBytes = p[(slash + 1)..<(next ?? p.endIndex)]
            // A bad id goes the general way, which names the problem.
            guard Self.isID(idBytes) else { return nil }
            let id = String(decoding: idBytes, as: UTF8.self)
            guard let next else { return (.session, id) }
            return lookUp(p[(next + 1)...], in: actions).map { ($0, id) }
        }
        guard let fast else {
            // RFC 9112 §3.2: origin-form starts with "/"; "*" is OPTIONS's (answered 404 here:
            // the server has no server-wide options to tell).
            if path.utf8.first != 0x2F && !(path == "*" && head.method == "OPTIONS") {
                throw .invalid("bad-target", "the request target must be a path starting with /")
            }
            return try match(head.pathSegments)
        }
        return fast
    }

    /// The routes without an id, by their one path segment, and the routes under /sessions/{id}/
    /// by their last: scanned in order (ten short names compare faster than they hash).
    static let fixedRoutes: [(name: String, route: Route)] = [
        ("", .root), ("sheet-client.js", .clientModule), ("sessions", .sessions), ("simulate", .simulate),
        ("presets", .presets), ("healthz", .healthz), ("livez", .livez), ("readyz", .readyz), ("metrics", .metrics),
        ("openapi.yaml", .openapi),
    ]

    static let actions: [(name: String, route: Route)] = [
        ("pan", .pan), ("show", .show), ("dismiss", .dismiss), ("frames", .frames),
    ]

    static func lookUp(_ segment: String, in table: [(name: String, route: Route)]) -> Route? {
        table.first { $0.name == segment }?.route
    }

    static func lookUp(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, in table: [(name: String, route: Route)])
        -> Route?
    {
        table.first { equal(bytes, $0.name) }?.route
    }

    /// Whether `bytes` are the UTF-8 of `text` (compared with memcmp: the generic
    /// `elementsEqual` cost ≈ 100 instructions per call on every request).
    static func equal(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { t in
            bytes.count == t.count
                && (bytes.isEmpty || memcmp(bytes.base.baseAddress! + bytes.startIndex, t.baseAddress!, t.count) == 0)
        }
    }

    /// The route of a decoded path, and the session id in it.
    static func match(_ segments: [String]?) throws(Problem) -> (Route, String?) {
        guard let segments else {
            throw .invalid("bad-path", "the path has an invalid percent-encoding")
        }
        switch segments.count {
        case 0: return (.root, nil)
        case 1: if let route = lookUp(segments[0], in: fixedRoutes) { return (route, nil) }
        case 2 where segments[0] == "sessions":
            return (.session, try validID(segments[1]))
        case 3 where segments[0] == "sessions":
            guard let route = lookUp(segments[2], in: actions) else { throw notFound(segments) }
            return (route, try validID(segments[1]))
        default: break
        }
        throw notFound(segments)
    }

    static func notFound(_ segments: [String]) -> Problem {
        Problem(
            status: 404, code: "not-found",
            detail: "no route /\(segments.joined(separator: "/")); the routes are listed in /openapi.yaml")
    }

    /// Ids: 1–64 characters of A–Z a–z 0–9 . _ ~ - (checked after percent-decoding).
    static func validID(_ id: String) throws(Problem) -> String {
        var id = id
        guard id.withUTF8({ isID($0[...]) }) else {
            throw .invalid("bad-id", "session ids are 1–64 characters of A–Z a–z 0–9 . _ ~ -", field: "id")
        }
        return id
    }

    /// Whether `bytes` are an id: 1–64 of A–Z a–z 0–9 . _ ~ - (one bit per ASCII byte in two
    /// 64-bit masks: about 4 instructions a byte).
    static func isID(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        // Bytes 0–63: - . 0–9.
        let low: UInt64 = 0x03FF_6000_0000_0000
        // Bytes 64–127: A–Z _ a–z ~.
        let high: UInt64 = 0x47FF_FFFE_87FF_FFFE
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        for b in bytes where b >= 128 || ((b < 64 ? low : high) >> UInt64(b & 63)) & 1 == 0 { return false }
        return true
    }

    /// The methods each route takes (HEAD goes with GET; OPTIONS is answered for all).
    static func methods(_ route: Route) -> [String] { methodTable[route.rawValue] }

    /// The methods of every route, indexed by its raw value: built once, so a request allocates
    /// nothing to check its method.
    static let methodTable: [[String]] = Route.allCases.map { route in
        switch route {
        case .root, .clientModule, .frames, .presets, .healthz, .livez, .readyz, .metrics, .openapi: ["GET", "HEAD"]
        case .sessions, .pan, .show, .dismiss, .simulate: ["POST"]
        case .session: ["GET", "HEAD", "PUT", "DELETE"]
        case .unmatched: []
        }
    }
}
