import MicroHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// From a request's raw target to a `Route` and a session id, on the undecoded bytes, with tables
/// derived from the route table (`RouteTable.swift`).
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
            guard let slash = rest.firstIndex(of: 0x2F) else {
                return lookUp(rest, in: RouteTables.fixed).map { ($0, nil) }
            }
            guard let collection = RouteTables.collections.first(where: { equal(p[1..<slash], $0.name) }) else {
                return nil
            }
            let tail = p[(slash + 1)...]
            let next = tail.firstIndex(of: 0x2F)
            let idBytes = p[(slash + 1)..<(next ?? p.endIndex)]
            // A bad id goes the general way, which names the problem.
            guard Self.isID(idBytes) else { return nil }
            guard let next else { return collection.item.map { ($0, String(decoding: idBytes, as: UTF8.self)) } }
            return lookUp(p[(next + 1)...], in: collection.actions).map {
                ($0, String(decoding: idBytes, as: UTF8.self))
            }
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
        if segments.count <= 1, let route = lookUp(segments.first ?? "", in: RouteTables.fixed) { return (route, nil) }
        if segments.count == 2 || segments.count == 3,
            let collection = RouteTables.collections.first(where: { $0.name == segments[0] })
        {
            if segments.count == 2, let item = collection.item { return (item, try validID(segments[1])) }
            if segments.count == 3, let route = lookUp(segments[2], in: collection.actions) {
                return (route, try validID(segments[1]))
            }
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
}

/// The matcher's tables, derived from `RoutePath.all` once: scanned in order (a dozen short names
/// compare faster than they hash).
enum RouteTables {
    /// The paths of one segment ("/" is the empty one), by that segment.
    static let fixed: [(name: String, route: Route)] = RoutePath.all.indices.compactMap { i in
        let p = RoutePath.all[i]
        return p.segments.count == 1 ? (p.segments[0]!, Route(index: i)) : nil
    }

    /// A collection of items with ids ("/sessions"): its item path ("/sessions/{id}") and its
    /// actions ("/sessions/{id}/pan"), by their last segment.
    struct Collection {
        let name: String
        let item: Route?
        let actions: [(name: String, route: Route)]
    }

    static let collections: [Collection] = {
        var names: [String] = []
        for p in RoutePath.all where p.segments.count > 1 && !names.contains(p.segments[0]!) {
            names.append(p.segments[0]!)
        }
        return names.map { name in
            let mine = RoutePath.all.indices.filter {
                RoutePath.all[$0].segments.count > 1 && RoutePath.all[$0].segments[0] == name
            }
            return Collection(
                name: name,
                item: mine.first { RoutePath.all[$0].segments.count == 2 }.map(Route.init(index:)),
                actions: mine.compactMap { i in
                    RoutePath.all[i].segments.count == 3 ? (RoutePath.all[i].segments[2]!, Route(index: i)) : nil
                })
        }
    }()
}
