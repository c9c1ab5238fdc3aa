import ArgumentParser
import Foundation
import Logging
import SheetService

/// The sheetd executable: `serve` (the default) and `healthcheck`.
@main
struct Sheetd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sheetd",
        abstract: "Bottom-sheet physics as an HTTP API.",
        discussion: "Every option can also be set through the environment variable named in its help.",
        subcommands: [Serve.self, Healthcheck.self],
        defaultSubcommand: Serve.self)
}

/// Parses flags (each also from an environment variable), starts the service, and drains on
/// SIGTERM or SIGINT.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the API (the default command).",
        discussion: "Every option can also be set through the environment variable named in its help.")

    @Option(help: "Address to listen on; 0.0.0.0 for every interface (SHEETD_HOST).")
    var host = env("SHEETD_HOST") ?? defaults.host

    @Option(help: "TCP port; 0 picks a free one (SHEETD_PORT).")
    var port: UInt16 = env("SHEETD_PORT").flatMap(UInt16.init) ?? defaults.port

    @Option(
        help:
            "libmicrohttpd threads: 1 = one epoll thread, N > 1 = a pool, auto = the usable cores (affinity, cgroup quota) less one, at least 1 (SHEETD_THREADS)."
    )
    var threads = env("SHEETD_THREADS") ?? "auto"

    @Option(help: "Live sessions at most; more answer 503 (SHEETD_MAX_SESSIONS).")
    var maxSessions: Int = env("SHEETD_MAX_SESSIONS").flatMap(Int.init) ?? defaults.maxSessions

    @Option(help: "Seconds after which an idle session is evicted (SHEETD_SESSION_TTL).")
    var sessionTtl: Double = env("SHEETD_SESSION_TTL").flatMap(Double.init) ?? defaults.sessionTTL

    @Option(help: "Largest request body in bytes; larger is 413 (SHEETD_MAX_BODY).")
    var maxBody: Int = env("SHEETD_MAX_BODY").flatMap(Int.init) ?? defaults.maxBodyBytes

    @Option(help: "Seconds of inactivity before a connection is closed, 0 = never (SHEETD_CONNECTION_TIMEOUT).")
    var connectionTimeout: Int = env("SHEETD_CONNECTION_TIMEOUT").flatMap(Int.init) ?? defaults.connectionTimeout

    @Option(
        help:
            "Seconds from a request's first line to its last body byte; a head or body still arriving then is cut off (slowloris too), 0 = no limit (SHEETD_BODY_DEADLINE)."
    )
    var bodyDeadline: Double = env("SHEETD_BODY_DEADLINE").flatMap(Double.init) ?? defaults.requestDeadline

    @Option(help: "Connections at most, 0 = libmicrohttpd's default of 1020 (SHEETD_CONNECTION_LIMIT).")
    var connectionLimit: Int = env("SHEETD_CONNECTION_LIMIT").flatMap(Int.init) ?? defaults.connectionLimit ?? 0

    @Option(
        help:
            "Connections per client IP at most, 0 = no limit (behind a proxy every client has its IP) (SHEETD_PER_IP_LIMIT)."
    )
    var perIpLimit: Int = env("SHEETD_PER_IP_LIMIT").flatMap(Int.init) ?? defaults.perIPConnectionLimit ?? 0

    @Option(help: "Frame streams one session may hold at once; more are 429 (SHEETD_MAX_STREAMS_PER_SESSION).")
    var maxStreamsPerSession: Int =
        env("SHEETD_MAX_STREAMS_PER_SESSION").flatMap(Int.init) ?? defaults.maxStreamsPerSession

    @Option(
        help:
            "Frame streams one client may hold at once (its address, or behind --trusted-proxy the address the proxy forwards); more are 429 (SHEETD_MAX_STREAMS_PER_CLIENT)."
    )
    var maxStreamsPerClient: Int =
        env("SHEETD_MAX_STREAMS_PER_CLIENT").flatMap(Int.init) ?? defaults.maxStreamsPerClient

    @Option(
        help:
            "Instant-pace frames all frame streams together are made at most, per second; beyond it a stream waits its turn (SHEETD_INSTANT_FRAME_RATE)."
    )
    var instantFrameRate: Int = env("SHEETD_INSTANT_FRAME_RATE").flatMap(Int.init) ?? defaults.instantFrameRate

    @Option(
        help:
            "Addresses of the proxies in front, comma-separated, whose X-Forwarded-For names the client for the stream limits (SHEETD_TRUSTED_PROXY)."
    )
    var trustedProxy = env("SHEETD_TRUSTED_PROXY") ?? defaults.trustedProxies.joined(separator: ",")

    @Option(help: "Allowed CORS origins, comma-separated; * allows any (SHEETD_CORS_ORIGIN).")
    var corsOrigin = env("SHEETD_CORS_ORIGIN") ?? defaults.corsOrigins.joined(separator: ",")

    @Option(
        help:
            "Require Authorization: Bearer <key> on every route but the probes and the demo page's files; off when empty (SHEETD_API_KEY)."
    )
    var apiKey = env("SHEETD_API_KEY") ?? defaults.apiKey ?? ""

    @Flag(
        help:
            "Return a token when a session is created and require it (Authorization: Bearer, or access_token= on /frames) on that session's routes (SHEETD_SESSION_TOKENS=1)."
    )
    var sessionTokens = env("SHEETD_SESSION_TOKENS").map { $0 == "1" || $0 == "true" } ?? defaults.sessionTokens

    @Option(
        help:
            "Where sessions are kept: memory (lost with the process), redis://host:port[/db], or redis+sentinel://host1:port,host2:port,…/name[/db] (the primary of group name, followed through failovers), from where any instance carries on with them (SHEETD_STORE)."
    )
    var store = env("SHEETD_STORE") ?? defaults.store ?? "memory"

    @Option(
        help:
            "What every key and channel in the store starts with; deployments sharing a Redis give each its own (SHEETD_STORE_PREFIX)."
    )
    var storePrefix = env("SHEETD_STORE_PREFIX") ?? defaults.storePrefix

    @Option(
        help:
            "Seconds a request waits for the store at most; creations, replacements and deletions wait for their write, and past this answer 503 (SHEETD_STORE_DEADLINE)."
    )
    var storeDeadline: Double = env("SHEETD_STORE_DEADLINE").flatMap(Double.init) ?? defaults.storeDeadline

    @Option(
        help:
            "MiB of writes kept for the store while it is away; more are dropped, counted and logged (SHEETD_STORE_BACKLOG)."
    )
    var storeBacklog: Int = env("SHEETD_STORE_BACKLOG").flatMap(Int.init) ?? defaults.storeBacklogBytes >> 20

    @Option(help: "Seconds to keep serving with readiness false after SIGTERM (SHEETD_DRAIN_GRACE).")
    var drainGrace: Double = env("SHEETD_DRAIN_GRACE").flatMap(Double.init) ?? defaults.drainGrace

    @Option(help: "trace, debug, info, notice, warning, error or critical (SHEETD_LOG_LEVEL).")
    var logLevel = env("SHEETD_LOG_LEVEL") ?? "info"

    @Option(
        help:
            "text (timestamp level logger: message name=value…) or json (one object per line: timestamp, level, logger, message, the request's fields) (SHEETD_LOG_FORMAT)."
    )
    var logFormat = env("SHEETD_LOG_FORMAT") ?? "text"

    @Flag(
        help:
            "Log every answer at info: method, route, status, duration, bytes, client, request and session id (SHEETD_ACCESS_LOG=1)."
    )
    var accessLog = env("SHEETD_ACCESS_LOG").map { $0 == "1" || $0 == "true" } ?? defaults.accessLog

    /// `--threads` as a number (auto resolved), nil when it is neither.
    var threadCount: Int? { threads == "auto" ? ServiceConfiguration.automaticThreads : Int(threads) }

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical")
        }
        guard logFormat == "text" || logFormat == "json" else {
            throw ValidationError("--log-format must be text or json, not \(logFormat)")
        }
        guard let threadCount, (1...1024).contains(threadCount) else {
            throw ValidationError("--threads must be auto or 1 to 1024, not \(threads)")
        }
        guard maxSessions >= 1 else { throw ValidationError("--max-sessions must be at least 1") }
        guard sessionTtl > 0 else { throw ValidationError("--session-ttl must be positive") }
        guard maxBody >= 0 else { throw ValidationError("--max-body must not be negative") }
        guard connectionTimeout >= 0 else { throw ValidationError("--connection-timeout must not be negative") }
        guard bodyDeadline >= 0, bodyDeadline < 86_400 else {
            throw ValidationError("--body-deadline must be 0 to 86400 seconds")
        }
        guard connectionLimit >= 0 else { throw ValidationError("--connection-limit must not be negative") }
        guard perIpLimit >= 0 else { throw ValidationError("--per-ip-limit must not be negative") }
        guard drainGrace >= 0 else { throw ValidationError("--drain-grace must not be negative") }
        guard maxStreamsPerSession >= 1, maxStreamsPerClient >= 1 else {
            throw ValidationError("--max-streams-per-session and --max-streams-per-client must be at least 1")
        }
        guard (1...100_000_000).contains(instantFrameRate) else {
            throw ValidationError(
                "--instant-frame-rate must be 1 to 100000000 frames a second, not \(instantFrameRate)")
        }
        guard store == "memory" || store.hasPrefix("redis://") || store.hasPrefix("redis+sentinel://") else {
            throw ValidationError(
                "--store must be memory, redis://host:port[/db] or redis+sentinel://host:port,…/name[/db], not \(store)"
            )
        }
        guard (1...64).contains(storePrefix.utf8.count), !storePrefix.contains(where: { $0.isWhitespace }) else {
            throw ValidationError("--store-prefix must be 1 to 64 bytes without white space, not \"\(storePrefix)\"")
        }
        guard storeDeadline >= 0.01, storeDeadline <= 60 else {
            throw ValidationError("--store-deadline must be 0.01 to 60 seconds, not \(storeDeadline)")
        }
        guard (1...65_536).contains(storeBacklog) else {
            throw ValidationError("--store-backlog must be 1 to 65536 MiB, not \(storeBacklog)")
        }
    }

    func run() throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let format = LineLogHandler.Format(rawValue: logFormat) ?? .text
        // The handler writes the request's fields itself (no metadata provider needed).
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "sheetd")
        var config = ServiceConfiguration()
        config.host = host
        config.port = port
        config.threads = threadCount ?? 1
        config.accessLog = accessLog
        config.maxSessions = maxSessions
        config.sessionTTL = sessionTtl
        config.maxBodyBytes = maxBody
        config.connectionTimeout = connectionTimeout
        config.requestDeadline = bodyDeadline
        config.connectionLimit = connectionLimit > 0 ? connectionLimit : nil
        config.perIPConnectionLimit = perIpLimit > 0 ? perIpLimit : nil
        config.corsOrigins = corsOrigin.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        config.apiKey = apiKey.isEmpty ? nil : apiKey
        config.sessionTokens = sessionTokens
        config.drainGrace = drainGrace
        config.maxStreamsPerSession = maxStreamsPerSession
        config.maxStreamsPerClient = maxStreamsPerClient
        config.instantFrameRate = instantFrameRate
        config.trustedProxies = trustedProxy.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        config.store = store == "memory" ? nil : store
        config.storeDeadline = storeDeadline
        config.storePrefix = storePrefix
        config.storeBacklogBytes = storeBacklog << 20

        let server = try SheetServer(configuration: config, logger: logger)
        try server.start()
        logger.info("sheetd listening on http://\(host):\(server.port) (libmicrohttpd threads: \(config.threads))")

        // SIGTERM and SIGINT drain: the handlers run on a queue, not in signal context.
        let done = DispatchSemaphore(value: 0)
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                logger.info("signal \(sig): draining")
                server.drain()
                done.signal()
            }
            source.resume()
            sources.append(source)
        }
        done.wait()
        logger.info("sheetd stopped")
        LogSink.standardError.flush()
        _ = sources
    }
}

/// The service's defaults, written once in `ServiceConfiguration`: each flag falls back to its
/// variable, then to these.
private let defaults = ServiceConfiguration()

/// An environment variable, if set and not empty.
func env(_ name: String) -> String? {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
    return value
}
