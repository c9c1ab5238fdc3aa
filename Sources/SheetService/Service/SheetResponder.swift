import Foundation
import Logging
import MicroHTTP
import SheetPhysics
import Synchronization

/// The HTTP face of the service, called synchronously on libmicrohttpd's threads: what it holds
/// (configuration, sessions, metrics, the store), the way in (`respond(to:)`), the dispatch of a
/// route to its handler, and what every answer gets on its way out.
///
/// Each concern is an extension in a file of its name: `Refusals` (before the body), `Routing`,
/// `AccessControl`, `Sessions`, `ArchivedSessions`, `Events`, `FramesRoute`, `Replies`, `CORS`;
/// `/simulate` is `Simulation`.
package final class SheetResponder: HTTPResponder {
    let configuration: ServiceConfiguration
    let table: SessionTable
    let metrics: ServiceMetrics
    let clock: Stopwatch
    let logger: Logger

    /// Whether every answer is logged (read once: `logger.logLevel` copies the log handler, an
    /// existential, on every read: ≈ 400 instructions a request).
    private let logsEveryAnswer: Bool

    /// Where every answer's access-log line goes, if anywhere (`ServiceConfiguration.accessLog`).
    private let accessLog: AccessLog

    let draining = Atomic<Bool>(false)
    let pacer: FramePacer
    /// Instant-pace frames a second over all streams (`--instant-frame-rate`).
    let instantBudget: InstantFrameBudget
    let streamLimits: StreamLimits
    let profiles = ProfileCache()
    let documents: Documents
    let allowAnyOrigin: Bool

    /// The API key's bytes (nil: no key required).
    let apiKey: [UInt8]?

    /// Where sessions are kept beyond this process (nil: memory only).
    let store: (any SessionStore)?

    package init(configuration: ServiceConfiguration, logger: Logger, clock: Stopwatch) throws {
        self.configuration = configuration
        self.table = SessionTable(capacity: configuration.maxSessions)
        self.metrics = ServiceMetrics()
        metrics.maxSessions.record(configuration.maxSessions)
        self.clock = clock
        self.logger = logger
        self.logsEveryAnswer = logger.logLevel <= .debug
        self.accessLog = AccessLog(on: configuration.accessLog, logger: logger)
        self.documents = try Documents()
        self.allowAnyOrigin = configuration.corsOrigins.contains("*")
        self.apiKey = configuration.apiKey.map { Array($0.utf8) }
        self.store = try configuration.store.map { url in
            try RedisSessionStore(
                url: url, prefix: configuration.storePrefix, ttlSeconds: Int(configuration.sessionTTL.rounded(.up)),
                deadline: configuration.storeDeadline, backlogBytes: configuration.storeBacklogBytes, logger: logger)
        }
        self.pacer = FramePacer(clock: clock, keepAliveInterval: configuration.keepAliveInterval)
        self.instantBudget = InstantFrameBudget(
            framesPerSecond: configuration.instantFrameRate, block: FrameStream.refillFrames)
        self.streamLimits = StreamLimits(configuration: configuration)
    }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        // Every line logged while answering carries the request's id (RequestTrace.metadataProvider).
        let slot = TraceSlot.mine
        slot.begin(request.head)
        defer { slot.end() }
        // Kept by MicroHTTP's one pass over the fields (a second search of them cost ≈ 160
        // instructions a request).
        let origin = request.head.origin
        var route = Route.unmatched
        var response: HTTPResponse
        do {
            let (matched, id) = try Self.match(request.head)
            route = matched
            if let id { slot.sessionID = id }
            if apiKey != nil || configuration.sessionTokens, request.method != "OPTIONS" {
                try authorize(route, id: id, request)
            }
            response = try dispatch(route, id: id, request)
        } catch let problem as Problem {
            response = problemResponse(problem, origin: nil)
        } catch {
            response = problemResponse(Problem(status: 500, code: "internal", detail: "\(error)"), origin: nil)
        }
        // A creation, replacement or deletion answered once the store has it: later, the
        // connection suspended meanwhile.
        if let wait = slot.storeWait.take() {
            return answerLater(wait, route: route, origin: origin, request, slot)
        }
        addCORS(&response.headers, origin: origin)
        let nanoseconds = BootClock.nanoseconds() - request.receivedNanoseconds
        metrics.record(route: route, status: response.status, nanoseconds: nanoseconds)
        finish(&response, request.head, route: route, nanoseconds: nanoseconds, slot)
        return response
    }

    /// The name of the request id's field, found a token once.
    static let requestIDName = HTTPHeaders.TokenName("X-Request-Id")!
    /// The name of the caching field, found a token once.
    static let cacheControlName = HTTPHeaders.TokenName("Cache-Control")!

    /// What every answer gets on its way out, `respond`'s and `screen`'s refusals alike:
    /// `Cache-Control: no-store` unless it says otherwise (a session's state, a problem, a probe:
    /// nothing a cache may keep or serve again; the files of `StaticFile` and the frame streams
    /// set their own), the request id echoed, the access-log line (when on), and a line for a
    /// failure.
    func finish(
        _ response: inout HTTPResponse, _ head: borrowing HTTPRequestHead, route: Route, nanoseconds: Int64,
        _ slot: TraceSlot
    ) {
        if response.headers.sharesStorage(with: Self.jsonHeaders) {
            // Most answers: JSON, no field added (so no Cache-Control). Their fields go into the
            // thread's buffer for them, filled again answer after answer, with `no-store` in the
            // same copy (a copy of the shared fields for each answer was an allocation and a free;
            // searching them for Cache-Control and appending it, ≈ 400 instructions more).
            slot.replyFields.replaceFields(with: Self.jsonNoStoreHeaders)
            if slot.isAnswering {
                // A request id is a sane client's or one made here: fit as it is.
                slot.withIDBytes { slot.replyFields.appendKeepingVetted(Self.requestIDName, fitValue: $0) }
            }
            response.headers = slot.replyFields
        } else {
            if !response.headers.contains("Cache-Control") {
                response.headers.appendKeepingVetted(Self.cacheControlName, value: "no-store")
            }
            if slot.isAnswering {
                slot.withIDBytes { response.headers.appendKeepingVetted(Self.requestIDName, fitValue: $0) }
            }
        }
        if accessLog.isOn {
            let bytes: Int? =
                switch response.body {
                case .bytes(let b): b.count
                case .buffer(let b): b.count
                case .stream, .deferred: nil  // a frame stream: its line is written when it opens
                }
            // No metadata dictionary is built for the line: the line handler writes the fields
            // straight from the record.
            accessLog.log(
                AccessRecord(
                    method: head.method, route: route, status: response.status, nanoseconds: nanoseconds,
                    bytes: bytes, client: head.client),
                slot)
        }
        if response.status >= 500 && response.status != 503 {
            logger.error("\(head.method) \(LoggedTarget.of(head)) → \(response.status)")
        } else if response.status == 503 {
            // Draining or at the session cap: expected under those conditions, not a fault.
            logger.notice("\(head.method) \(LoggedTarget.of(head)) → 503")
        } else if logsEveryAnswer {
            logger.debug("\(head.method) \(LoggedTarget.of(head)) → \(response.status)")
        }
    }

    /// The route's handler for the request's method (OPTIONS: the preflight; a method the path
    /// does not take: 405 with Allow).
    private func dispatch(_ route: Route, id: String?, _ request: HTTPRequest) throws -> HTTPResponse {
        guard let path = route.path else {
            throw Problem(status: 404, code: "not-found", detail: "no route \(request.path)")
        }
        let method = request.method
        if method == "OPTIONS" { return preflight(path.methods, request) }
        guard let handler = path.handlers.first(where: { $0.method == method })?.handler else {
            throw Problem(
                status: 405, code: "method-not-allowed",
                detail: "\(route.template) takes \(path.methods.joined(separator: ", ")), not \(method)",
                headers: [("Allow", (path.methods + ["OPTIONS"]).joined(separator: ", "))])
        }
        return try handler(self, request, id ?? "")
    }
}
