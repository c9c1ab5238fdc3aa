import Foundation
import Logging
import MicroHTTP
import Synchronization

/// sheetd as a library: the HTTP server, the session store and the expiry of idle sessions.
/// The executable only parses flags and calls this; tests start it on port 0 in-process.
public final class SheetServer: Sendable {
    public let configuration: ServiceConfiguration
    let responder: SheetResponder
    private let http: HTTPServer
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    /// A server for `configuration`; nothing listens until `start()`.
    public init(configuration: ServiceConfiguration, logger: Logger = Logger(label: "sheetd")) throws {
        self.configuration = configuration
        let responder = try SheetResponder(configuration: configuration, logger: logger, clock: Stopwatch())
        self.responder = responder
        var http = HTTPServer.Configuration()
        http.host = configuration.host
        http.port = configuration.port
        http.threads = configuration.threads
        http.maxBodyBytes = configuration.maxBodyBytes
        http.chunkedBodies = false  // every body with a declared length: 411 before a byte is read
        http.connectionTimeout = .seconds(configuration.connectionTimeout)
        http.connectionLimit = configuration.connectionLimit
        http.perIPConnectionLimit = configuration.perIPConnectionLimit
        http.requestDeadline = .milliseconds(Int((configuration.requestDeadline * 1000).rounded(.up)))
        self.http = HTTPServer(configuration: http, responder: responder)
    }

    /// Binds and starts serving; starts the sweeper that evicts idle sessions.
    public func start() throws {
        let responder = self.responder
        responder.store?.listen { notice in responder.heard(notice) }
        responder.store?.watch { change in responder.storeChanged(change) }
        try http.start()
        // Sweep at a quarter of the TTL (at most every 5 s), so a session lives at most 1.25 TTL.
        let interval = min(max(configuration.sessionTTL / 4, 0.05), 5)
        let ttl = configuration.sessionTTL
        let task = Task.detached(priority: .utility) {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
                let evicted = responder.table.evict(idleBefore: responder.clock.now - ttl)
                if !evicted.isEmpty {
                    responder.metrics.evictions.increment(by: evicted.count)
                    responder.logger.debug("evicted \(evicted.count) idle sessions")
                }
            }
        }
        sweeper.withLock { $0 = task }
    }

    /// Every route the server answers, as openapi.yaml names it, with its methods (OPTIONS,
    /// the CORS preflight, is answered on all of them; HEAD goes with GET, as RFC 9110 has it,
    /// and is left out).
    public static var routes: [(path: String, methods: [String])] {
        RoutePath.all.map { path in
            (path.template.description, path.methods.filter { $0 != "HEAD" } + ["OPTIONS"])
        }
    }

    /// The metadata a log line gets from the request being answered on its thread (request_id,
    /// and trace_id and session_id when there are any): give it to the logging system's bootstrap,
    /// or to a Logger's handler, so every line of a request carries them.
    public static var logMetadataProvider: Logger.MetadataProvider { RequestTrace.metadataProvider }

    /// The bound port (the real one when configured with 0).
    public var port: UInt16 { http.port }

    /// Whether the server is draining (readiness false, no new sessions).
    public var isDraining: Bool { responder.draining.load(ordering: .relaxed) }

    /// Live sessions now.
    public var sessionCount: Int { responder.table.count }

    /// Graceful shutdown: readiness false and new sessions refused at once; after the grace
    /// period the listener closes, in-flight requests finish, then the daemon stops.
    public func drain() {
        responder.draining.store(true, ordering: .relaxed)
        // Keep-alive clients reconnect for each request from now on, so none is left idle on a
        // connection that the final stop would close under a request it is sending.
        http.closeConnectionsAfterAnswers()
        if configuration.drainGrace > 0 {
            let clock = ContinuousClock()
            let deadline = clock.now + .milliseconds(Int(configuration.drainGrace * 1000))
            while clock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        }
        http.quiesce()
        // Every open stream gets `closed`; give the connections a moment to take the bytes.
        let now = responder.clock.now
        let boxes = responder.table.all()
        // With a store the session lives on in another instance, or in this one restarted: the
        // streams are asked to come back after 2 s, by when a restarted instance is usually
        // serving again, so a rolling restart moves each stream once (to where its session is).
        let retry = configuration.store != nil ? 2000 : nil
        for box in boxes { box.record.withLock { $0.closeStreams(reason: "draining", now: now, retry: retry) } }
        let deadline = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < deadline, boxes.contains(where: { $0.openStreams.load(ordering: .relaxed) > 0 }) {
            Thread.sleep(forTimeInterval: 0.005)
        }
        stop()
        // No request runs any more: what the store has once this returns is final.
        responder.flushArchive(timeout: 5)
    }

    /// Stops at once (in-flight handler calls complete first). Idempotent.
    public func stop() {
        sweeper.withLock { task in
            task?.cancel()
            task = nil
        }
        responder.pacer.stop()
        http.stop()
        responder.store?.stopListening()
    }

    deinit { stop() }
}
