import Foundation
import Logging
import MicroHTTP
import SheetPhysics
import Synchronization

/// The HTTP face of the service: routing, strict decoding, the session store, problem+json
/// errors, CORS and metrics. Called synchronously on libmicrohttpd's threads.
package final class SheetResponder: HTTPResponder {
    let configuration: ServiceConfiguration
    let store: SessionStore
    let metrics: ServiceMetrics
    let clock: ServerClock
    let logger: Logger
    /// Whether every answer is logged (read once: `logger.logLevel` copies the log handler, an
    /// existential, on every read: ≈ 400 instructions a request).
    private let logsEveryAnswer: Bool
    /// Whether every answer gets an access-log line at info (`ServiceConfiguration.accessLog`).
    private let accessLog: Bool
    let draining = Atomic<Bool>(false)
    let pacer: FramePacer
    private let profiles = ProfileCache()
    private let presetsJSON: [UInt8]
    private let openAPIYAML: [UInt8]
    private let indexHTML: [UInt8]
    private let clientModule: [UInt8]
    private let allowAnyOrigin: Bool
    /// The API key's bytes (nil: no key required).
    private let apiKey: [UInt8]?
    /// Where sessions are kept beyond this process (nil: memory only).
    let archive: (any SessionArchive)?

    package init(configuration: ServiceConfiguration, logger: Logger, clock: ServerClock) throws {
        self.configuration = configuration
        self.store = SessionStore(capacity: configuration.maxSessions)
        self.metrics = ServiceMetrics()
        metrics.maxSessions.record(configuration.maxSessions)
        self.clock = clock
        self.logger = logger
        self.logsEveryAnswer = logger.logLevel <= .debug
        self.accessLog = configuration.accessLog && logger.logLevel <= .info
        self.presetsJSON = Wire.presets()
        self.openAPIYAML = try Self.resource("openapi", "yaml")
        self.indexHTML = try Self.resource("index", "html")
        self.clientModule = try Self.resource("sheet-client", "js")
        self.allowAnyOrigin = configuration.corsOrigins.contains("*")
        self.apiKey = configuration.apiKey.map { Array($0.utf8) }
        self.archive = try configuration.store.map { url in
            try RedisSessionArchive(url: url, ttlSeconds: Int(configuration.sessionTTL.rounded(.up)))
        }
        self.pacer = FramePacer(clock: clock, keepAliveInterval: configuration.keepAliveInterval)
    }

    /// A file shipped in the module's Resources folder.
    static func resource(_ name: String, _ ext: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Resources") else {
            throw Problem(
                status: 500, code: "missing-resource", detail: "Resources/\(name).\(ext) is not in the bundle")
        }
        return try [UInt8](Data(contentsOf: url))
    }

    // MARK: Before the body

    /// The service's own policy before a body byte is read: bodies are JSON (415). MicroHTTP has
    /// applied HTTP's framing rules and the body limit already (`refused` renders those).
    package func screen(_ head: HTTPRequestHead) -> HTTPResponse? {
        guard let type = head.contentType, let length = head.contentLength, length > 0,
            !Self.acceptsMediaType(type)
        else { return nil }
        let problem = Problem(
            status: 415, code: "unsupported-media-type",
            detail:
                "bodies are JSON: send Content-Type: application/json (application/*+json and curl's default application/x-www-form-urlencoded work too), not \(type)"
        )
        return answerBeforeBody(problem, head, origin: head.headers["origin"])
    }

    /// A refusal of MicroHTTP's (framing, limits, deadlines), answered as a problem like any other.
    package func refused(_ refusal: HTTPRefusal, _ head: HTTPRequestHead) -> HTTPResponse {
        if refusal.isAmbiguousFraming { metrics.rejectedFraming.increment() }
        let problem = Problem(status: refusal.status, code: refusal.code, detail: refusal.detail)
        // A head that is itself malformed gets no CORS headers: its Origin cannot be trusted.
        return answerBeforeBody(problem, head, origin: refusal.headIsReadable ? head.headers["origin"] : nil)
    }

    /// The answer to a request refused before its body: counted and logged here, since it never
    /// reaches `respond` (its latency is ~0: no body was read).
    private func answerBeforeBody(_ problem: Problem, _ head: HTTPRequestHead, origin: String?) -> HTTPResponse {
        var response = problemResponse(problem, origin: origin)
        let matched = try? Self.match(head)
        let route = matched?.0 ?? .unmatched
        metrics.record(route: route, status: response.status, nanoseconds: 0)
        let slot = TraceSlot.mine
        slot.trace = RequestTrace(head.headers)
        defer { slot.trace = nil }
        slot.trace?.sessionID = matched?.1
        finish(&response, head, route: route, nanoseconds: 0, slot)
        return response
    }

    package func deadlinePassed(_ head: HTTPRequestHead) {
        metrics.cutOff.increment()
        logger.notice("\(head.target): request still arriving at the request deadline; connection closed")
    }

    /// application/json, application/*+json, or curl's default form type (whose body is still JSON).
    static func acceptsMediaType(_ value: String) -> Bool {
        if value == "application/json" { return true }  // the common case, without allocating
        // "" and ";" have no media type (split drops empty pieces: found by fuzzing, it trapped).
        guard let first = value.split(separator: ";", maxSplits: 1).first else { return false }
        let type = first.trimmingCharacters(in: .whitespaces).lowercased()
        return type == "application/json" || type == "application/x-www-form-urlencoded"
            || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }

    // MARK: Routing

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        // Every line logged while answering carries the request's id (RequestTrace.metadataProvider).
        let slot = TraceSlot.mine
        slot.trace = RequestTrace(request.headers)
        defer { slot.trace = nil }
        let origin = request.headers["origin"]
        var route = Route.unmatched
        var response: HTTPResponse
        do {
            let (matched, id) = try Self.match(request.head)
            route = matched
            if let id { slot.trace?.sessionID = id }
            if apiKey != nil || configuration.sessionTokens, request.method != "OPTIONS" {
                try authorize(route, id: id, request)
            }
            response = try dispatch(route, id: id, request)
        } catch let problem as Problem {
            response = problemResponse(problem, origin: nil)
        } catch {
            response = problemResponse(Problem(status: 500, code: "internal", detail: "\(error)"), origin: nil)
        }
        addCORS(&response.headers, origin: origin)
        let (seconds, attoseconds) = (ContinuousClock.now - request.receivedAt).components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        metrics.record(route: route, status: response.status, nanoseconds: nanoseconds)
        finish(&response, request.head, route: route, nanoseconds: nanoseconds, slot)
        return response
    }

    /// What every answer gets on its way out, `respond`'s and `screen`'s refusals alike: the
    /// request id echoed, the access-log line (when on), and a line for a failure.
    private func finish(
        _ response: inout HTTPResponse, _ head: HTTPRequestHead, route: Route, nanoseconds: Int64, _ slot: TraceSlot
    ) {
        if let id = slot.trace?.id { response.headers.appendKeepingVetted(name: "X-Request-Id", value: id) }
        if accessLog {
            let bytes: Int? =
                switch response.body {
                case .bytes(let b): b.count
                case .buffer(let b): b.count
                case .stream: nil  // a frame stream: its line is written when it opens
                }
            // The record rides on the request's trace, as its id does: no metadata dictionary is
            // built for the line, and the JSON handler writes the fields straight from it.
            slot.trace?.access = AccessRecord(
                method: head.method, route: route, status: response.status, nanoseconds: nanoseconds, bytes: bytes,
                client: head.client)
            logger.info("access")
            slot.trace?.access = nil
        }
        if response.status >= 500 && response.status != 503 {
            logger.error("\(head.method) \(head.target) → \(response.status)")
        } else if response.status == 503 {
            // Draining or at the session cap: expected under those conditions, not a fault.
            logger.notice("\(head.method) \(head.target) → 503")
        } else if logsEveryAnswer {
            logger.debug("\(head.method) \(head.target) → \(response.status)")
        }
    }

    // MARK: Access

    /// Lets a request through when no key is needed for its route, or when it presents the API key,
    /// or (on a session's own routes) that session's token. Probes, the demo page's files and the
    /// contract stay open: load balancers and browsers fetch them without credentials.
    private func authorize(_ route: Route, id: String?, _ request: HTTPRequest) throws(Problem) {
        switch route {
        case .healthz, .livez, .readyz, .root, .clientModule, .openapi, .unmatched: return
        default: break
        }
        let presented = Self.bearer(request, route: route)
        if let apiKey, let presented, Self.equalInConstantTime(presented, apiKey) { return }
        // A session's token opens that session's routes (not creation: PUT of a new id needs the
        // key when there is one, and otherwise is open as POST is).
        if configuration.sessionTokens, let id, route != .sessions, let box = try? session(id), let token = box.token {
            if let presented, Self.equalInConstantTime(presented, Array(token.utf8)) { return }
            throw Problem.unauthorized(
                presented == nil
                    ? "this session needs its token: send Authorization: Bearer <token> (the token came with the session's creation)"
                    : "the token does not open this session", invalid: presented != nil)
        }
        guard apiKey != nil else { return }
        throw Problem.unauthorized(
            presented == nil ? "send Authorization: Bearer <API key>" : "the API key is not valid",
            invalid: presented != nil)
    }

    /// The bearer credential: the Authorization header's, or on the frames route (EventSource
    /// cannot set headers) the `access_token` query parameter (RFC 6750 §2.3).
    private static func bearer(_ request: HTTPRequest, route: Route) -> [UInt8]? {
        if let value = request.headers["authorization"] {
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            return Array(parts[1].trimmingCharacters(in: .whitespaces).utf8)
        }
        if route == .frames, let token = request.head.queryValue(for: "access_token") { return Array(token.utf8) }
        return nil
    }

    /// Whether two secrets are equal, taking the same time wherever they differ (a timing side
    /// channel must not reveal a key byte by byte).
    static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<b.count { difference |= (i < a.count ? a[i] : 0) ^ b[i] }
        return difference == 0 && a.count == b.count
    }

    /// The route of a request head, and the session id in it.
    static func match(_ head: HTTPRequestHead) throws(Problem) -> (Route, String?) {
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
    private static let fixedRoutes: [(name: String, route: Route)] = [
        ("", .root), ("sheet-client.js", .clientModule), ("sessions", .sessions), ("simulate", .simulate),
        ("presets", .presets), ("healthz", .healthz), ("livez", .livez), ("readyz", .readyz), ("metrics", .metrics),
        ("openapi.yaml", .openapi),
    ]
    private static let actions: [(name: String, route: Route)] = [
        ("pan", .pan), ("show", .show), ("dismiss", .dismiss), ("frames", .frames),
    ]

    private static func lookUp(_ segment: String, in table: [(name: String, route: Route)]) -> Route? {
        table.first { $0.name == segment }?.route
    }

    private static func lookUp(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, in table: [(name: String, route: Route)])
        -> Route?
    {
        table.first { equal(bytes, $0.name) }?.route
    }

    /// Whether `bytes` are the UTF-8 of `text` (compared with memcmp: the generic
    /// `elementsEqual` cost ≈ 100 instructions per call on every request).
    private static func equal(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ text: String) -> Bool {
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

    private static func notFound(_ segments: [String]) -> Problem {
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
    private static let methodTable: [[String]] = Route.allCases.map { route in
        switch route {
        case .root, .clientModule, .frames, .presets, .healthz, .livez, .readyz, .metrics, .openapi: ["GET", "HEAD"]
        case .sessions, .pan, .show, .dismiss, .simulate: ["POST"]
        case .session: ["GET", "HEAD", "PUT", "DELETE"]
        case .unmatched: []
        }
    }

    private func dispatch(_ route: Route, id: String?, _ request: HTTPRequest) throws -> HTTPResponse {
        let method = request.method
        let allowed = Self.methods(route)
        if method == "OPTIONS" { return preflight(allowed, request) }
        guard allowed.contains(method) else {
            throw Problem(
                status: 405, code: "method-not-allowed",
                detail: "\(route.template) takes \(allowed.joined(separator: ", ")), not \(method)",
                headers: [("Allow", (allowed + ["OPTIONS"]).joined(separator: ", "))])
        }
        switch route {
        case .root: return Self.bytes(200, "text/html; charset=utf-8", indexHTML)
        case .clientModule: return Self.bytes(200, "text/javascript; charset=utf-8", clientModule)
        case .openapi: return Self.bytes(200, "application/yaml", openAPIYAML)
        case .presets: return Self.bytes(200, "application/json", presetsJSON)
        case .healthz, .livez:
            return Self.json(200, draining.load(ordering: .relaxed) ? #"{"status":"draining"}"# : #"{"status":"ok"}"#)
        case .readyz:
            if draining.load(ordering: .relaxed) {
                var r = Self.json(503, #"{"status":"draining"}"#)
                r.headers.append(name: "Retry-After", value: String(configuration.retryAfter))
                return r
            }
            return Self.json(200, #"{"status":"ok"}"#)
        case .metrics:
            metrics.liveSessions.record(store.count)
            let statistics = archive?.statistics
            if let s = statistics { metrics.storePending.record(s.pending) }
            return Self.bytes(
                200, "text/plain; version=0.0.4; charset=utf-8",
                metrics.exposition(store: statistics.map { ($0.written, $0.failed) }))
        case .sessions: return try createSession(request)
        case .session:
            let id = id!
            switch method {
            case "PUT": return try putSession(id, request)
            case "DELETE": return try deleteSession(id)
            default: return try getSession(id)
            }
        case .pan: return try pan(id!, request)
        case .show: return try show(id!, request)
        case .dismiss: return try dismiss(id!, request)
        case .simulate: return try Simulation.run(request.body)
        case .frames: return try frames(id!, request)
        case .unmatched:
            throw Problem(status: 404, code: "not-found", detail: "no route \(request.path)")
        }
    }

    // MARK: Sessions

    private var busy: Problem {
        Problem(
            status: 503, code: "draining",
            detail: "the server is shutting down and takes no new sessions; retry on another instance",
            headers: [("Retry-After", String(configuration.retryAfter))])
    }

    private var full: Problem {
        Problem(
            status: 503, code: "session-limit",
            detail: "the session limit (\(configuration.maxSessions)) is reached; delete idle sessions or retry later",
            headers: [("Retry-After", String(configuration.retryAfter))])
    }

    private func createSession(_ request: HTTPRequest) throws -> HTTPResponse {
        if draining.load(ordering: .relaxed) { throw busy }
        let (profile, session) = try profiles.configuration(request.body)
        let now = clock.seconds(at: request.receivedAt)
        // 128 random bits from the system's cryptographic source, base64url: 22 characters.
        for _ in 0..<4 {
            let id = Self.generateID()
            let token = configuration.sessionTokens ? Self.generateID() : nil
            let box = SessionBox(id: id, profile: profile, session: session, now: now, token: token)
            switch store.insertNew(box) {
            case true?:
                metrics.sessionsCreated.increment()
                box.record.withLock { save(box, &$0) }
                var r = snapshotResponse(201, box, at: now, token: token)
                r.headers.append(name: "Location", value: "/sessions/\(id)")
                return r
            case false?: continue  // a 2^-128 collision: draw again
            case nil: throw full
            }
        }
        throw Problem(status: 500, code: "internal", detail: "could not draw a fresh session id")
    }

    static func generateID() -> String {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let a = rng.next() as UInt64
        let b = rng.next() as UInt64
        var out: [UInt8] = []
        out.reserveCapacity(22)
        var bits = a
        for _ in 0..<10 {
            out.append(alphabet[Int(bits & 63)])
            bits >>= 6
        }
        // 4 bits left of a, plus b: 68 bits in 12 characters (the last one partial).
        var rest = (bits & 0xF) | ((b & 0x3) << 4)
        out.append(alphabet[Int(rest)])
        rest = b >> 2
        for _ in 0..<11 {
            out.append(alphabet[Int(rest & 63)])
            rest >>= 6
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func putSession(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let (profile, session) = try profiles.configuration(request.body)
        if draining.load(ordering: .relaxed), store.get(id) == nil { throw busy }
        let now = clock.seconds(at: request.receivedAt)
        // A replaced session keeps its token (its holder authorized the PUT with it).
        let token = configuration.sessionTokens ? (store.get(id)?.token ?? Self.generateID()) : nil
        let box = SessionBox(id: id, profile: profile, session: session, now: now, token: token)
        switch store.put(box) {
        case .created:
            metrics.sessionsCreated.increment()
            box.record.withLock { save(box, &$0) }
            var r = snapshotResponse(201, box, at: now, token: token)
            r.headers.append(name: "Location", value: "/sessions/\(id)")
            return r
        case let .replaced(old):
            let version = old.record.withLock { r in
                r.closeStreams(reason: "replaced", now: now)
                return r.version
            }
            box.record.withLock { r in
                r.version = version
                save(box, &r)
            }
            return snapshotResponse(200, box, at: now, token: token)
        case .full:
            throw full
        }
    }

    private func deleteSession(_ id: String) throws -> HTTPResponse {
        guard let box = store.remove(id) else {
            // Held only in the archive (by another instance before): deleted there.
            guard archive != nil, let stored = try stored(id), stored.box != nil else {
                throw Problem.sessionNotFound(id)
            }
            bury(id, after: stored.version)
            return HTTPResponse(status: 204)
        }
        let now = clock.now
        let version = box.record.withLock { r in
            r.closeStreams(reason: "deleted", now: now)
            return r.version
        }
        bury(id, after: version)
        return HTTPResponse(status: 204)
    }

    /// The session `id`: from memory, or else from the archive (then kept in memory).
    private func session(_ id: String) throws(Problem) -> SessionBox {
        if let box = store.get(id) { return box }
        guard archive != nil, let box = try stored(id)?.box else { throw Problem.sessionNotFound(id) }
        switch store.insertNew(box) {
        case true?:
            metrics.sessionsRestored.increment()
            // Copies elsewhere are out of date from now on: they drop themselves (and send their
            // streams here, through the load balancer).
            archive?.announce(ArchiveNotice(kind: .taken, id: id, instance: ""))
            return box
        case false?:
            // Another request restored it meanwhile.
            return try session(id)
        case nil:
            throw full
        }
    }

    /// The session `id` as the archive last had it: a copy held here is checked against the
    /// archive (`current`), one loaded from it is current already.
    private func currentSession(_ id: String) throws(Problem) -> SessionBox {
        if let box = store.get(id) { return try current(box) }
        return try session(id)
    }

    /// The archive's copy of `id`, decoded onto this process's clocks; nil when there is none (or
    /// it cannot be read: logged, and the session counts as gone).
    private func stored(_ id: String) throws(Problem) -> ArchiveCodec.Restored? {
        guard let archive else { return nil }
        let bytes: [UInt8]?
        do {
            bytes = try archive.load(id)
        } catch {
            metrics.storeErrors.increment()
            logger.error("session store: loading \(id) failed: \(error)")
            throw Problem(
                status: 503, code: "store-unavailable",
                detail: "the session store cannot be reached, so session \(id) cannot be loaded; retry shortly",
                headers: [("Retry-After", String(configuration.retryAfter))])
        }
        guard let bytes else { return nil }
        do {
            return try ArchiveCodec.decode(
                bytes, id: id, profiles: profiles, serverNow: clock.now, wallNow: Date().timeIntervalSince1970)
        } catch {
            logger.error("session store: the stored session \(id) cannot be read: \(error)")
            return nil
        }
    }

    /// With an archive, a session held here may have moved on in another process since (a
    /// client routed there while this one was away, or a drain handed it over): where the archive
    /// holds a newer version, that one replaces the copy here, keeping its open streams; where it
    /// holds a deletion, the copy goes. Called where a gesture, an animation or a stream starts,
    /// and before refusing an event as a conflict; never on `changed` (which must not wait) nor
    /// on a GET.
    private func current(_ box: SessionBox) throws(Problem) -> SessionBox {
        // A store that cannot be reached leaves the copy here in charge (it is the freshest this
        // process can know of; loads of sessions it lacks are what fail then).
        guard archive != nil, let newer = try? stored(box.id) else { return box }
        let streams: [FrameStream]? = box.record.withLock { r in
            guard newer.version > r.version else { return nil }
            defer { r.streams = [] }
            return r.streams
        }
        guard let streams else { return box }
        guard let replacement = newer.box else {
            // Deleted elsewhere.
            if store.get(box.id) === box { _ = store.remove(box.id) }
            let now = clock.now
            for stream in streams { stream.close(reason: "deleted", now: now) }
            throw Problem.sessionNotFound(box.id)
        }
        replacement.record.withLock { $0.streams = streams }
        _ = store.put(replacement)
        logger.debug("session \(box.id): the store held a newer version; took it over")
        return replacement
    }

    /// Deletes `id` in the archive with a tombstone newer than `version`, and tells the other
    /// processes.
    private func bury(_ id: String, after version: Int) {
        guard let archive else { return }
        archive.save(id, ArchiveCodec.tombstone(version: Self.nextVersion(after: version)))
        archive.announce(ArchiveNotice(kind: .deleted, id: id, instance: ""))
    }

    /// Another process took a session over, or deleted it: the copy here is dropped and its
    /// streams are closed (`moved`: a client reconnects, through the load balancer, to where the
    /// session is now, and resumes by Last-Event-ID; `deleted`: it stops).
    func heard(_ notice: ArchiveNotice) {
        guard let box = store.get(notice.id), store.remove(box) else { return }
        let now = clock.now
        box.record.withLock { r in
            // Moved: reconnect soon (the session is being served elsewhere already).
            notice.kind == .deleted
                ? r.closeStreams(reason: "deleted", now: now) : r.closeStreams(reason: "moved", now: now, retry: 250)
        }
        logger.debug("session \(notice.id): \(notice.kind.rawValue) by another instance; dropped the copy here")
    }

    /// A version newer than `version`: microseconds of wall time, kept increasing, so that any
    /// process's later write outranks an earlier one (clocks of the instances in step).
    private static func nextVersion(after version: Int) -> Int {
        max(version + 1, Int(Date().timeIntervalSince1970 * 1e6))
    }

    /// Writes the session to the archive, if there is one (the caller holds its lock: `r`).
    /// Versions are microseconds of wall time, kept increasing, so that any process's later
    /// write outranks an earlier one.
    private func save(_ box: SessionBox, _ r: inout SessionRecord) {
        guard let archive else { return }
        r.version = Self.nextVersion(after: r.version)
        archive.save(
            box.id,
            ArchiveCodec.encode(
                box, r, version: r.version, serverNow: clock.now, wallNow: Date().timeIntervalSince1970))
    }

    /// Waits until the archive has every write queued so far (the drain's last step; every
    /// accepted event was queued as it was answered, so nothing else needs writing).
    func flushArchive(timeout: Double) {
        guard let archive else { return }
        let flushed = archive.flush(timeout: timeout)
        let s = archive.statistics
        logger.info(
            "session store: \(flushed ? "flushed" : "flush timed out") on drain (written \(s.written), failed \(s.failed), pending \(s.pending))"
        )
    }

    private func getSession(_ id: String) throws -> HTTPResponse {
        // A read does not ask the store (a copy out of date is dropped by the other instance's
        // notice; a GET that polls must not cost a round trip to Redis each time).
        let box = try session(id)
        let now = clock.seconds(at: .now)
        box.touch(now)
        return snapshotResponse(200, box, at: now)
    }

    /// The session's snapshot now: on the server clock, `now`; on the client clock, the time of
    /// its last event (the server cannot know the client's now).
    private func snapshotResponse(_ status: Int, _ box: SessionBox, at now: Double, token: String? = nil)
        -> HTTPResponse
    {
        let (snapshot, drag) = box.record.withLock { r in
            (r.sheet.snapshot(at: sessionTime(box, r, now: now)), r.sheet.dragSegment)
        }
        var w = JSONWriter(capacity: 1024)
        Wire.snapshot(id: box.id, profile: box.profile, snapshot, drag: drag, token: token, into: &w)
        return Self.json(status, w.takeBuffer())
    }

    // MARK: Events

    /// Applies one event to a session under its lock, at the event's time on the session's clock.
    private func apply(
        _ box: SessionBox, _ event: SheetEvent, clientTime: Double?, receivedAt: ContinuousClock.Instant
    ) throws(Problem) -> SheetOutcome {
        let now = clock.seconds(at: receivedAt)
        let outcome = box.record.withLock { r in
            // Server clock: the receive time, never before the session's last event (two
            // requests may take the lock in the other order than they were received).
            let time = box.profile.clock == .client ? clientTime! : max(now, r.sheet.lastTime)
            let outcome = r.sheet.handle(event, at: time)
            announce(outcome, box.profile.clock, &r, now: now)
            // Every accepted event is written behind (coalesced per session, never waited for):
            // a load balancer may send the next event to another instance at any time (a drain,
            // a failure, an instance coming back), and that one must find this state.
            switch outcome.action {
            case .settle, .dragged, .unchanged: save(box, &r)
            case .conflict, .invalid: break
            }
            return outcome
        }
        // Draining: the answer waits until the store has the state, so a client's next request,
        // which may reach another instance, finds it there.
        if archive != nil, draining.load(ordering: .relaxed) { _ = archive?.flush(timeout: 1) }
        box.touch(now)
        switch outcome.action {
        case let .conflict(c): throw Problem(c)
        case let .invalid(e): throw Problem(e)
        case .settle: metrics.animationsStarted.increment()
        case .dragged, .unchanged: break
        }
        return outcome
    }

    /// Frame streams hear of an outcome under the session's lock, so they see events in order.
    @inline(__always)
    private func announce(_ outcome: SheetOutcome, _ clock: SessionClock, _ r: inout SessionRecord, now: Double) {
        if let a = outcome.animation {
            let origin = clock == .server ? a.startTime : now
            r.remember(a, origin: origin)
            if !r.streams.isEmpty {
                r.streams.removeAll { $0.isDone }
                let grabbed = outcome.interrupted != nil ? outcome.snapshot : nil
                for stream in r.streams {
                    stream.begin(a, origin: origin, interrupted: grabbed, now: now, pacer: pacer)
                }
            }
        } else if outcome.interrupted != nil {
            for stream in r.streams { stream.interrupt(outcome.snapshot, now: now) }
        }
    }

    /// Applies a batch of pan events (client clock) all or nothing: on a copy of the state
    /// machine, committed only when every event is accepted. A refusal names the event's index
    /// and leaves the session as it was. Returns every outcome, in order.
    private func applyBatch(
        _ box: SessionBox, _ events: [(PanEvent, Double?)], receivedAt: ContinuousClock.Instant
    ) throws(Problem) -> [SheetOutcome] {
        let now = clock.seconds(at: receivedAt)
        let result: Result<[SheetOutcome], Problem> = box.record.withLock { r in
            var sheet = r.sheet
            var outcomes: [SheetOutcome] = []
            outcomes.reserveCapacity(events.count)
            for (i, (event, time)) in events.enumerated() {
                let outcome = sheet.handle(.pan(event), at: time!)
                switch outcome.action {
                case let .conflict(c):
                    var p = Problem(c)
                    p.detail = "events[\(i)] (\(event.phase.rawValue)): \(p.detail); no event of the batch was applied"
                    p.field = "events[\(i)]"
                    return .failure(p)
                case let .invalid(e):
                    var p = Problem(e)
                    p.field = "events[\(i)].\(e.field)"
                    return .failure(p)
                case .settle, .dragged, .unchanged: outcomes.append(outcome)
                }
            }
            r.sheet = sheet
            for outcome in outcomes { announce(outcome, box.profile.clock, &r, now: now) }
            save(box, &r)
            return .success(outcomes)
        }
        if archive != nil, draining.load(ordering: .relaxed) { _ = archive?.flush(timeout: 1) }
        box.touch(now)
        let outcomes = try result.get()
        for outcome in outcomes where outcome.animation != nil { metrics.animationsStarted.increment() }
        return outcomes
    }

    /// `apply`, and with an archive, once more on the stored version when the copy here refuses
    /// the event as a conflict (a drag that went on in another instance: a `changed` that finds
    /// no drag here may find it in the store).
    private func applyCurrent(
        _ box: SessionBox, _ event: SheetEvent, clientTime: Double?, receivedAt: ContinuousClock.Instant
    ) throws(Problem) -> SheetOutcome {
        try onCurrentVersion(box) { b throws(Problem) in
            try apply(b, event, clientTime: clientTime, receivedAt: receivedAt)
        }.result
    }

    /// Runs `body` on `box`, and with an archive, once more on the stored version when the copy
    /// here refuses with a conflict. Returns the box it ran on last and what it returned.
    @inline(__always)
    private func onCurrentVersion<T>(
        _ box: SessionBox, _ body: (SessionBox) throws(Problem) -> T
    ) throws(Problem) -> (box: SessionBox, result: T) {
        do {
            return (box, try body(box))
        } catch {
            guard error.status == 409, archive != nil else { throw error }
            let newer = try current(box)
            guard newer !== box else { throw error }
            return (newer, try body(newer))
        }
    }

    private func resultResponse(
        _ outcome: SheetOutcome, phase: PanPhase?, profile: SessionProfile, batch: BatchSummary? = nil,
        frames: FrameSampling? = nil
    ) -> HTTPResponse {
        // An `ended` reply is ≈ 490 bytes, and a string reserves room for escaping every byte
        // (6 per byte) before it is written: with 512, a quarter of the `ended` replies grew the
        // buffer (a second allocation and a copy). 960 with the buffer object's header stays
        // within glibc's per-thread cache (up to 1,032 bytes); 1,024 missed it (≈ 360 more
        // instructions per allocation).
        var w = JSONWriter(capacity: frames == nil ? 960 : 4096)
        Wire.result(outcome, phase: phase, profile: profile, batch: batch, frames: frames, into: &w)
        return Self.json(200, w.takeBuffer())
    }

    private func pan(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let held = store.get(id)
        var box: SessionBox
        let decoded: (PanEvent, Double?)
        let fps: Int?
        if let held,
            let direct = Decode.panDirect(request.body, preset: held.profile.model.preset, clock: held.profile.clock)
        {
            // The common case, a session held here and a plain body: read without a JSON tree
            // (≈ 100 ns against ≈ 600 ns).
            (box, decoded) = (held, direct)
            fps = try Self.framesQuery(request)
        } else {
            // The general way, in the order that gives the same error for a bad body as always
            // (invalid JSON before a missing session).
            let json = try Decode.json(request.body)
            box = try held ?? session(id)
            // As on show and dismiss: the body's JSON, the session, the query, then the fields.
            fps = try Self.framesQuery(request)
            if let events = try Decode.panBatch(json, preset: box.profile.model.preset, clock: box.profile.clock) {
                return try panBatch(box, events, held: held != nil, fps: fps, receivedAt: request.receivedAt)
            }
            decoded = try Decode.pan(json, preset: box.profile.model.preset, clock: box.profile.clock)
        }
        let (event, time) = decoded
        if event.phase != .changed, held != nil { box = try current(box) }
        let outcome = try applyCurrent(box, .pan(event), clientTime: time, receivedAt: request.receivedAt)
        return resultResponse(
            outcome, phase: event.phase, profile: box.profile,
            frames: fps.map { FrameSampling(fps: $0, animation: outcome.animation ?? outcome.snapshot.animation) })
    }

    /// A batch of pan events: applied all or nothing, answered with the last event's result and
    /// what the ones before it started.
    private func panBatch(
        _ held: SessionBox, _ events: [(PanEvent, Double?)], held isHeld: Bool, fps: Int?,
        receivedAt: ContinuousClock.Instant
    ) throws -> HTTPResponse {
        // As for a single event: anything but a batch of `changed` checks the store's version
        // first (a gesture may have moved on in another instance).
        var box = held
        if isHeld, events.contains(where: { $0.0.phase != .changed }) { box = try current(box) }
        let (used, outcomes) = try onCurrentVersion(box) { b throws(Problem) in
            try applyBatch(b, events, receivedAt: receivedAt)
        }
        box = used
        let last = outcomes[outcomes.count - 1]
        var summary = BatchSummary(count: outcomes.count, settles: [], drag: nil)
        for i in outcomes.indices {
            let o = outcomes[i]
            if let d = o.drag { summary.drag = d }
            guard i < outcomes.count - 1, let a = o.animation, let snap = o.snap else { continue }
            summary.settles.append((i, events[i].0.phase, snap, a))
            summary.drag = nil  // a drag begun before a release is over
        }
        if last.snapshot.state != .dragging { summary.drag = nil }
        return resultResponse(
            last, phase: events[events.count - 1].0.phase, profile: box.profile, batch: summary,
            frames: fps.map { FrameSampling(fps: $0, animation: last.animation ?? last.snapshot.animation) })
    }

    /// `?frames=FPS` on pan, show and dismiss: the answer carries the frames of the animation
    /// running after the request, sampled at FPS (1…240), so a client plays sheetd's own curve on
    /// its clock without a stream. nil: not asked.
    static func framesQuery(_ request: HTTPRequest) throws(Problem) -> Int? {
        guard request.head.query != nil else { return nil }
        var fps: Int?
        for (name, value) in request.queryItems {
            guard name == "frames" else {
                throw Problem.invalid(
                    "unknown-field", "unknown query parameter \"\(name)\"; this route takes frames (1 to 240)",
                    field: name)
            }
            guard let v = Int(value), (1...240).contains(v) else {
                throw Problem.invalid(
                    "invalid-value", "frames must be an integer from 1 to 240 (frames per second), got \"\(value)\"",
                    field: "frames")
            }
            fps = v
        }
        return fps
    }

    private func show(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let json = try Decode.json(request.body)
        let box = try currentSession(id)
        let fps = try Self.framesQuery(request)
        let (detent, time) = try Decode.show(json, clock: box.profile.clock)
        let outcome = try applyCurrent(box, .show(detent: detent), clientTime: time, receivedAt: request.receivedAt)
        return resultResponse(
            outcome, phase: nil, profile: box.profile,
            frames: fps.map { FrameSampling(fps: $0, animation: outcome.animation ?? outcome.snapshot.animation) })
    }

    private func dismiss(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let json = try Decode.json(request.body)
        let box = try currentSession(id)
        let fps = try Self.framesQuery(request)
        let time = try Decode.dismiss(json, clock: box.profile.clock)
        let outcome = try applyCurrent(box, .dismiss, clientTime: time, receivedAt: request.receivedAt)
        return resultResponse(
            outcome, phase: nil, profile: box.profile,
            frames: fps.map { FrameSampling(fps: $0, animation: outcome.animation ?? outcome.snapshot.animation) })
    }

    /// "Now" on a session's clock: the server's now, never before its last event; on the client
    /// clock, the time of its last event (the server cannot know the client's now).
    private func sessionTime(_ box: SessionBox, _ r: SessionRecord, now: Double) -> Double {
        box.profile.clock == .server ? max(now, r.sheet.lastTime) : (r.sheet.lastTime.isFinite ? r.sheet.lastTime : 0)
    }

    // MARK: Frames

    /// GET /sessions/{id}/frames: Server-Sent Events of every animation of the session.
    private func frames(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        var fps = 60
        var pace = FramePace.realtime
        var once = false
        for (name, value) in request.queryItems {
            switch name {
            case "fps":
                guard let v = Int(value), (1...240).contains(v) else {
                    throw Problem.invalid(
                        "invalid-value", "fps must be an integer from 1 to 240, got \"\(value)\"", field: "fps")
                }
                fps = v
            case "pace":
                guard let v = FramePace(rawValue: value) else {
                    throw Problem.invalid(
                        "invalid-value", "pace must be realtime or instant, got \"\(value)\"", field: "pace")
                }
                pace = v
            case "access_token":
                // A credential, checked before dispatch (and ignored when access control is
                // off); its form is the contract's either way, so a reconnection's 204 never
                // answers a malformed one.
                guard (1...256).contains(value.utf8.count) else {
                    throw Problem.invalid(
                        "invalid-value", "access_token must be 1 to 256 characters", field: "access_token")
                }
            case "once":
                guard value == "true" || value == "false" || value.isEmpty else {
                    throw Problem.invalid(
                        "invalid-value", "once must be true or false, got \"\(value)\"", field: "once")
                }
                once = value != "false"
            default:
                throw Problem.invalid(
                    "unknown-field",
                    "unknown query parameter \"\(name)\"; the stream takes fps, pace, once and access_token",
                    field: name)
            }
        }
        // Last-Event-ID: "n:k", the last frame the client saw (a reconnecting EventSource).
        let lastEventID = request.headers["last-event-id"]
        var resume: (animation: Int, index: Int)?
        if let parts = lastEventID?.split(separator: ":", omittingEmptySubsequences: false), parts.count == 2,
            let n = Int(parts[0]), let k = Int(parts[1]), n >= 0, k >= 0
        {
            resume = (n, k)
        }
        let box: SessionBox
        do {
            box = try currentSession(id)
        } catch {
            // A reconnection to a session that is gone: 204 is how an EventSource is told to stop
            // reconnecting (WHATWG HTML §9.2); a first connection gets the 404.
            guard error.status == 404, lastEventID != nil else { throw error }
            return Self.noMoreEvents
        }
        let http = HTTPStream(bufferLimit: configuration.streamBufferBytes)
        let stream = FrameStream(
            http: http, fps: fps, pace: pace, once: once, profile: box.profile, sessionID: box.id, metrics: metrics)
        let now = clock.now
        let opened: Bool = box.record.withLock { r in
            let known = resume.flatMap { resume in r.recent.first { $0.id == resume.animation } }
            if once, let resume, let known, resume.index >= known.frameCount(fps: fps) - 1 {
                // A `once` stream whose client has its animation's last frame (and its `settled`,
                // which carries that frame's id): nothing is left to send, so the reconnection ends
                // with 204 instead of a `settled` and a close that the client would reconnect to
                // again and again.
                return false
            }
            r.streams.removeAll { $0.isDone }
            r.streams.append(stream)
            let t = sessionTime(box, r, now: now)
            let running = r.sheet.animation(at: t)
            let origin = r.origin
            if let resume, let known {
                if known === running {
                    stream.begin(known, origin: origin, after: resume.index, interrupted: nil, now: now, pacer: pacer)
                    return true
                }
                stream.sendSettled(known, now: now)
            } else if lastEventID != nil {
                stream.sendSnapshot(r.sheet.snapshot(at: t), now: now)
            }
            if let running { stream.begin(running, origin: origin, interrupted: nil, now: now, pacer: pacer) }
            return true
        }
        guard opened else { return Self.noMoreEvents }
        box.openStreams.wrappingAdd(1, ordering: .relaxed)
        metrics.streamsOpen.increment()
        let metrics = self.metrics
        http.onClose {
            box.openStreams.wrappingSubtract(1, ordering: .relaxed)
            metrics.streamsOpen.decrement()
        }
        pacer.schedule(.keepAlive, stream, at: now + configuration.keepAliveInterval, generation: 0)
        var headers = HTTPHeaders()
        headers.append(name: "Content-Type", value: "text/event-stream")
        headers.append(name: "Cache-Control", value: "no-cache")
        headers.append(name: "X-Accel-Buffering", value: "no")
        return HTTPResponse(status: 200, headers: headers, stream: http)
    }

    /// The answer to a stream reconnection that has nothing more to hear: 204 No Content, after
    /// which an EventSource stops reconnecting (WHATWG HTML §9.2.3).
    static let noMoreEvents = HTTPResponse(status: 204, headers: HTTPHeaders(), body: [])

    // MARK: Responses

    static func bytes(_ status: Int, _ type: String, _ body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.append(name: "Content-Type", value: type)
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// The headers of every JSON reply, built once: a reply shares them (appending, e.g. CORS,
    /// copies them first), so answering allocates no header storage.
    private static let jsonHeaders = (["Content-Type": "application/json"] as HTTPHeaders).vetted()!

    /// A JSON reply sent from `buffer` (a writer's, `JSONWriter.takeBuffer()`) without a copy.
    static func json(_ status: Int, _ buffer: JSONBuffer) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: jsonHeaders,
            body: .buffer(ResponseBuffer(owner: buffer.storage, start: buffer.start, count: buffer.count)))
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: Array(text.utf8))
    }

    func problemResponse(_ p: Problem, origin: String?) -> HTTPResponse {
        var r = Self.bytes(p.status, "application/problem+json", Wire.problem(p))
        for (name, value) in p.headers { r.headers.append(name: name, value: value) }
        if let origin { addCORS(&r.headers, origin: origin) }
        return r
    }

    // MARK: CORS

    private func originAllowed(_ origin: String) -> Bool {
        allowAnyOrigin || configuration.corsOrigins.contains(origin)
    }

    private func addCORS(_ headers: inout HTTPHeaders, origin: String?) {
        guard let origin, originAllowed(origin), !headers.contains("Access-Control-Allow-Origin") else { return }
        headers.append(name: "Access-Control-Allow-Origin", value: allowAnyOrigin ? "*" : origin)
        if !allowAnyOrigin { headers.append(name: "Vary", value: "Origin") }
        headers.append(
            name: "Access-Control-Expose-Headers", value: "Location, Retry-After, Allow, WWW-Authenticate, X-Request-Id"
        )
    }

    /// OPTIONS: the CORS preflight, answered for every route.
    private func preflight(_ allowed: [String], _ request: HTTPRequest) -> HTTPResponse {
        var headers = HTTPHeaders()
        let methods = (allowed + ["OPTIONS"]).joined(separator: ", ")
        headers.append(name: "Allow", value: methods)
        if let origin = request.headers["origin"], originAllowed(origin) {
            headers.append(name: "Access-Control-Allow-Methods", value: methods)
            // An empty or blank request list counts as none (echoing it made an empty header,
            // which libmicrohttpd refuses: a 500 found by schemathesis).
            let asked = request.headers["access-control-request-headers"]?.trimmingCharacters(in: .whitespaces)
            headers.append(
                name: "Access-Control-Allow-Headers",
                value: asked.flatMap { $0.isEmpty ? nil : $0 } ?? "Content-Type, Last-Event-ID, Authorization")
            headers.append(name: "Access-Control-Max-Age", value: "600")
        }
        return HTTPResponse(status: 204, headers: headers)
    }
}
