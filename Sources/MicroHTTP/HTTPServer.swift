import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTP/1.1 server on libmicrohttpd that hands every request to an `HTTPResponder`.
///
/// The server owns its daemon: `start()` binds and starts libmicrohttpd's threads, `stop()` (or
/// deinit) ends them. Requests are answered on those threads, never on Swift concurrency's.
public final class HTTPServer: Sendable {
    /// How the server listens and what it accepts.
    public struct Configuration: Sendable {
        /// The numeric IPv4 or IPv6 address to listen on ("0.0.0.0" or "::" for every interface).
        public var host: String
        /// The TCP port; 0 picks any free port (read the result from `HTTPServer.port`).
        public var port: UInt16
        /// libmicrohttpd threads: 1 is one internal epoll thread; N > 1 a pool of N epoll threads,
        /// each accepting from the shared listen socket and keeping the connections it accepted.
        public var threads: Int
        /// The most open connections (nil: libmicrohttpd's default of 1020). With a pool it is split
        /// evenly among the threads. At the limit new clients wait in the kernel's backlog.
        public var connectionLimit: Int?
        /// The most open connections from one IP address (nil: no limit); excess ones are refused.
        /// Behind a local reverse proxy every client shares the proxy's address.
        public var perIPConnectionLimit: Int?
        /// How long an idle connection may stay open, rounded up to whole seconds; `.zero` for no
        /// limit. Connections parked by an idle stream are exempt (libmicrohttpd does not time out
        /// suspended connections).
        public var connectionTimeout: Duration
        /// libmicrohttpd's memory pool per connection (request head, body buffer, reply head), in
        /// bytes. Request heads larger than about half of it are refused by libmicrohttpd (431).
        public var connectionMemoryLimit: Int
        /// The largest request body accepted, in bytes; larger ones are answered 413 with
        /// `Connection: close`. A Content-Length over the limit is refused before the body is read.
        /// A chunked body that passes it is read on and dropped, and refused when it ends
        /// (libmicrohttpd 0.9.75 cannot answer mid-body); past 1 MiB more, the connection is closed
        /// without an answer.
        public var maxBodyBytes: Int
        /// Whether a request body may come chunked (de-chunked before `respond(to:)`); false answers
        /// such requests 411 before the body is read, so that every body has a declared length.
        public var chunkedBodies: Bool
        /// How long a request may take from its request line to the last byte of its body;
        /// `.zero` for no limit. A head or body still arriving at the deadline is cut off by a
        /// watch thread within 250 ms (slowloris, stalled uploads: libmicrohttpd's own timeout
        /// counts inactivity only, and 0.9.75 cannot answer mid-body); a head completing in the
        /// instant after is answered 408. Measured from the request line.
        public var requestDeadline: Duration
        /// How long `stop()` lets ended streams flush their last bytes and terminator before the
        /// connections are closed.
        public var streamDrainTimeout: Duration
        /// The kernel's send buffer of a connection that carries a stream (`SO_SNDBUF`, in bytes;
        /// Linux keeps twice this), set when the stream is queued; nil leaves the kernel's own,
        /// which grows to `tcp_wmem`'s maximum (4 MiB by default). A client that opens streams and
        /// never reads them holds what the buffer takes in kernel memory: 400 such streams held
        /// 1.5 GiB at the default, past the kernel's TCP memory pressure mark, and every other
        /// connection of the machine slowed with it (docs/RELIABILITY.md).
        public var streamSendBuffer: Int?

        /// A configuration; every parameter has a production default.
        public init(
            host: String = "127.0.0.1",
            port: UInt16 = 8080,
            threads: Int = 1,
            connectionLimit: Int? = nil,
            perIPConnectionLimit: Int? = nil,
            connectionTimeout: Duration = .seconds(30),
            connectionMemoryLimit: Int = 32 * 1024,
            maxBodyBytes: Int = 16 * 1024,
            chunkedBodies: Bool = true,
            requestDeadline: Duration = .seconds(10),
            streamDrainTimeout: Duration = .milliseconds(500),
            streamSendBuffer: Int? = 64 * 1024
        ) {
            self.host = host
            self.port = port
            self.threads = threads
            self.connectionLimit = connectionLimit
            self.perIPConnectionLimit = perIPConnectionLimit
            self.connectionTimeout = connectionTimeout
            self.connectionMemoryLimit = connectionMemoryLimit
            self.maxBodyBytes = maxBodyBytes
            self.chunkedBodies = chunkedBodies
            self.requestDeadline = requestDeadline
            self.streamDrainTimeout = streamDrainTimeout
            self.streamSendBuffer = streamSendBuffer
        }

        /// `connectionTimeout` in whole seconds, rounded up (a fraction of a second still limits).
        var connectionTimeoutSeconds: Int {
            let (seconds, attoseconds) = connectionTimeout.components
            return Int(seconds) + (attoseconds > 0 ? 1 : 0)
        }

        /// Refuses values libmicrohttpd would misread (its options are `unsigned int`).
        func validate() throws(HTTPServerError) {
            func check(_ condition: Bool, _ reason: String) throws(HTTPServerError) {
                if !condition { throw HTTPServerError(function: "HTTPServer.start", errno: 0, reason: reason) }
            }
            let unsignedRange = 1...Int(UInt32.max)
            try check((1...1024).contains(threads), "threads must be 1...1024, not \(threads)")
            try check(connectionLimit.map(unsignedRange.contains) ?? true, "connectionLimit must be positive")
            try check(perIPConnectionLimit.map(unsignedRange.contains) ?? true, "perIPConnectionLimit must be positive")
            try check(
                connectionTimeout >= .zero && connectionTimeoutSeconds <= Int(UInt32.max),
                "connectionTimeout must be between zero and \(UInt32.max) s")
            try check(connectionMemoryLimit >= 4096, "connectionMemoryLimit must be at least 4096 bytes")
            try check(maxBodyBytes >= 0, "maxBodyBytes must not be negative")
            try check(requestDeadline >= .zero, "requestDeadline must not be negative")
            try check(streamDrainTimeout >= .zero, "streamDrainTimeout must not be negative")
            try check(
                streamSendBuffer.map { (4096...(1 << 30)).contains($0) } ?? true,
                "streamSendBuffer must be 4096 bytes to 1 GiB")
        }
    }

    /// The configuration the server was made with.
    public let configuration: Configuration
    private let core: ServerCore
    private let lifecycle = Mutex(Lifecycle.idle)

    /// Where the server is in its one-way life: idle → running → stopped.
    private enum Lifecycle {
        case idle
        case running(RunningDaemon)
        case stopped(port: UInt16)
    }

    /// A server that will answer with `responder`; nothing is bound until `start()`.
    public init(configuration: Configuration = Configuration(), responder: some HTTPResponder) {
        self.configuration = configuration
        core = ServerCore(configuration: configuration, responder: responder)
    }

    deinit {
        stop()
    }

    /// Binds the listen socket and starts libmicrohttpd's threads; requests are served from now on.
    ///
    /// Throws `HTTPServerError` naming the C function that failed (e.g. `MHD_start_daemon` when the
    /// port is taken), or `HTTPServer.start` for an invalid configuration or a second start.
    public func start() throws(HTTPServerError) {
        try configuration.validate()
        try lifecycle.withLock { (lifecycle: inout Lifecycle) throws(HTTPServerError) in
            guard case .idle = lifecycle else {
                throw HTTPServerError(function: "HTTPServer.start", errno: 0, reason: "a server starts only once")
            }
            lifecycle = .running(try RunningDaemon.start(configuration: configuration, core: core))
        }
    }

    /// The port the server is bound to (the real one when configured with 0); 0 before `start()`.
    public var port: UInt16 {
        lifecycle.withLock { lifecycle in
            switch lifecycle {
            case .idle: 0
            case .running(let daemon): daemon.port
            case .stopped(let port): port
            }
        }
    }

    /// Starts a graceful exit: from now on every answer carries `Connection: close`, so keep-alive
    /// clients open a new connection for their next request (and, once quiesced, go elsewhere)
    /// instead of sending it on a connection that `stop()` would close under it. Idempotent.
    public func closeConnectionsAfterAnswers() {
        core.closesAfterAnswer.store(true, ordering: .relaxed)
    }

    /// Stops taking new connections: from now on a new connection is closed as soon as it is
    /// accepted, without an answer (a proxy treats that as a connection error and tries another
    /// upstream). In-flight requests, keep-alive connections and streams go on. For draining before
    /// `stop()`. Idempotent; does nothing before `start()` or after `stop()`.
    ///
    /// The listen socket stays open until `stop()`: libmicrohttpd's own MHD_quiesce_daemon can
    /// abort the process in 0.9.75 when used with epoll (measured; see Internals/Daemon.swift).
    public func quiesce() {
        lifecycle.withLock { lifecycle in
            if case .running = lifecycle { core.quiesce() }
        }
    }

    /// Ends every open stream (its buffered bytes, then the end of the body, for up to
    /// `streamDrainTimeout`), waits for requests in flight (deferred answers included) for up to
    /// four times that, answers the deferred answers still awaited with the responder's
    /// `.serverStopping` refusal, then stops libmicrohttpd, closing every connection; requests
    /// still in progress are cut off. Idempotent; also called by deinit. Must not be called from a
    /// responder or a stream's close handler (it waits for libmicrohttpd's threads to end).
    public func stop() {
        let running: RunningDaemon? = lifecycle.withLock { lifecycle in
            guard case .running(let daemon) = lifecycle else { return nil }
            lifecycle = .stopped(port: daemon.port)
            return daemon
        }
        guard let running else { return }
        core.endStreams()
        core.waitForStreams(timeout: configuration.streamDrainTimeout)
        // Answers already made go out before the connections close (bounded: a client that
        // never reads its answer is cut off after this).
        core.quiesce()
        core.waitForRequests(timeout: configuration.streamDrainTimeout * 4)
        // Deferred answers still awaited are answered (503) so that no connection stays suspended,
        // and given a moment to go out.
        if core.endDeferred() > 0 { core.waitForRequests(timeout: configuration.streamDrainTimeout) }
        running.stop()
    }
}
