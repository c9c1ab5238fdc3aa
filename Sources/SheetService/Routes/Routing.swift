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
            guard let base = p.baseAddress, p.count > 0, base[0] == 0x2F, memchr(base, 0x25, p.count) == nil else {
                return nil
            }
            guard let slash = index(of: 0x2F, in: p, from: 1) else {
                return RouteTables.lookUp(p[1...], in: RouteTables.fixed).map { ($0, nil) }
            }
            guard let collection = RouteTables.collection(named: p[1..<slash]) else { return nil }
            let next = index(of: 0x2F, in: p, from: slash + 1)
            let idBytes = p[(slash + 1)..<(next ?? p.count)]
            // A bad id goes the general way, which names the problem.
            guard Self.isID(idBytes) else { return nil }
            guard let next else { return collection.item.map { ($0, String(decoding: idBytes, as: UTF8.self)) } }
            return RouteTables.lookUp(p[(next + 1)...], in: collection.actions).map {
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

    /// Where the first `byte` of `p` at or after `start` is (memchr: a generic search cost ≈ 5
    /// instructions a byte).
    @inline(__always)
    static func index(of byte: UInt8, in p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < p.count, let base = p.baseAddress, let found = memchr(base + start, Int32(byte), p.count - start)
        else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    /// The route of a decoded path, and the session id in it.
    static func match(_ segments: [String]?) throws(Problem) -> (Route, String?) {
        guard let segments else {
            throw .invalid("bad-path", "the path has an invalid percent-encoding")
        }
        if segments.count <= 1, let route = RouteTables.lookUp(segments.first ?? "", in: RouteTables.fixed) {
            return (route, nil)
        }
        if segments.count == 2 || segments.count == 3, let collection = RouteTables.collection(named: segments[0]) {
            if segments.count == 2, let item = collection.item { return (item, try validID(segments[1])) }
            if segments.count == 3, let route = RouteTables.lookUp(segments[2], in: collection.actions) {
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
/// compare faster than they hash). The names' bytes lie in one array and an entry names its bytes
/// by place, so a scan copies no strings or arrays (a table of `String` names retained and released
/// them as it went: ≈ 200 instructions a request).
enum RouteTables {
    /// A path segment's name (its bytes in `names`) and the route it leads to.
    struct Entry: Sendable {
        let start: Int
        let count: Int
        let route: Route
    }

    /// A collection of items with ids ("/sessions"): its name, its item path ("/sessions/{id}") and
    /// its actions ("/sessions/{id}/pan": the entries of `actions` in this range, by their last
    /// segment).
    struct Collection: Sendable {
        let name: Entry
        let item: Route?
        let actions: Range<Int>
    }

    /// The bytes of every name, one after the other.
    static let names: [UInt8] = tables.names
    /// The paths of one segment ("/" is the empty one), by that segment.
    static let fixed: [Entry] = tables.fixed
    static let collections: [Collection] = tables.collections
    /// The actions of every collection, each collection's together.
    static let actions: [Entry] = tables.actions

    /// The route named `bytes` among the entries of `fixed`.
    static func lookUp(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, in entries: [Entry]) -> Route? {
        lookUp(bytes, among: entries, entries.indices)
    }

    /// The route named `bytes` among the actions in `range`.
    static func lookUp(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, in range: Range<Int>) -> Route? {
        lookUp(bytes, among: actions, range)
    }

    /// The same for a decoded segment.
    static func lookUp(_ segment: String, in entries: [Entry]) -> Route? {
        var segment = segment
        return segment.withUTF8 { lookUp($0[...], in: entries) }
    }

    static func lookUp(_ segment: String, in range: Range<Int>) -> Route? {
        var segment = segment
        return segment.withUTF8 { lookUp($0[...], in: range) }
    }

    /// The collection named `bytes`.
    static func collection(named bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Collection? {
        names.withUnsafeBufferPointer { names in
            collections.withUnsafeBufferPointer { collections in
                for i in collections.indices where isName(collections[i].name, bytes, names) { return collections[i] }
                return nil
            }
        }
    }

    static func collection(named segment: String) -> Collection? {
        var segment = segment
        return segment.withUTF8 { collection(named: $0[...]) }
    }

    private static func lookUp(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, among entries: [Entry], _ range: Range<Int>)
        -> Route?
    {
        names.withUnsafeBufferPointer { names in
            entries.withUnsafeBufferPointer { entries in
                for i in range where isName(entries[i], bytes, names) { return entries[i].route }
                return nil
            }
        }
    }

    /// Whether `bytes` are the name of `entry` (compared with memcmp: the generic `elementsEqual`
    /// cost ≈ 100 instructions per call).
    @inline(__always)
    private static func isName(
        _ entry: Entry, _ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ names: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        // The length, then the first byte, then the rest (a memcmp call costs ≈ 20 instructions;
        // most names differ in the first byte).
        guard entry.count == bytes.count else { return false }
        guard entry.count > 0 else { return true }
        let mine = names.baseAddress! + entry.start
        let theirs = bytes.base.baseAddress! + bytes.startIndex
        return mine[0] == theirs[0] && memcmp(theirs + 1, mine + 1, entry.count - 1) == 0
    }

    /// Every table, made in one pass over the paths.
    private static let tables: (names: [UInt8], fixed: [Entry], collections: [Collection], actions: [Entry]) = {
        var names: [UInt8] = []
        func entry(_ name: String, _ route: Route) -> Entry {
            let made = Entry(start: names.count, count: name.utf8.count, route: route)
            names += Array(name.utf8)
            return made
        }
        let paths = RoutePath.all
        let fixed = paths.indices.compactMap { i in
            paths[i].segments.count == 1 ? entry(paths[i].segments[0]!, Route(index: i)) : nil
        }
        var collectionNames: [String] = []
        for p in paths where p.segments.count > 1 && !collectionNames.contains(p.segments[0]!) {
            collectionNames.append(p.segments[0]!)
        }
        var actions: [Entry] = []
        let collections = collectionNames.map { name in
            let mine = paths.indices.filter { paths[$0].segments.count > 1 && paths[$0].segments[0] == name }
            let first = actions.count
            for i in mine where paths[i].segments.count == 3 {
                actions.append(entry(paths[i].segments[2]!, Route(index: i)))
            }
            return Collection(
                name: entry(name, .unmatched),
                item: mine.first { paths[$0].segments.count == 2 }.map(Route.init(index:)),
                actions: first..<actions.count)
        }
        return (names, fixed, collections, actions)
    }()
}
