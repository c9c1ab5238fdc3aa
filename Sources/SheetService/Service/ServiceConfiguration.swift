/// Everything an operator can set, with the defaults the README documents.
public struct ServiceConfiguration: Sendable {
    /// Address to listen on (127.0.0.1: loopback only).
    public var host = "127.0.0.1"
    /// TCP port; 0 picks a free one.
    public var port: UInt16 = 8080
    /// libmicrohttpd threads: 1 = one epoll polling thread; N > 1 = a pool of N. The default is
    /// `automaticThreads`.
    public var threads = ServiceConfiguration.automaticThreads

    /// `--threads auto`: one libmicrohttpd thread per core the process may use (its CPU affinity,
    /// capped by its cgroup's CPU quota) but one, which is left to the frame pacer, the store's
    /// writer and subscriber, and the kernel's network work; at least 1 (so 1 on 2 cores, where
    /// one polling thread measured fastest with the load generator beside it; 15 on 16).
    public static var automaticThreads: Int { threads(forCores: ProcessStatus.usableCores()) }

    /// The `auto` rule for a host with `cores` usable cores.
    public static func threads(forCores cores: Int) -> Int { max(1, cores - 1) }
    /// Live sessions at most; creating one more answers 503 with Retry-After.
    public var maxSessions = 100_000
    /// Sessions idle for longer than this are evicted. Seconds.
    public var sessionTTL: Double = 600
    /// Largest request body accepted, bytes (larger: 413 before the body is read).
    public var maxBodyBytes = 16 * 1024
    /// Seconds of inactivity after which libmicrohttpd closes a connection (0: never).
    public var connectionTimeout = 30
    /// Seconds a request may take from its request line to its last body byte (0: no limit): a
    /// head or body still arriving then is cut off (a head completing in the instant after is
    /// answered 408). libmicrohttpd has no such limit.
    public var requestDeadline: Double = 10
    /// Connections at most (nil: libmicrohttpd's default, FD_SETSIZE − 4).
    public var connectionLimit: Int?
    /// Connections per client IP at most (nil: no limit; behind a proxy every client shares its IP).
    public var perIPConnectionLimit: Int?
    /// Origins allowed by CORS; ["*"] allows any.
    public var corsOrigins = ["*"]
    /// Seconds to keep answering (with readiness false) after SIGTERM before closing the listener.
    public var drainGrace: Double = 0
    /// Seconds between `: keep-alive` comments on an idle frame stream. A parked stream's
    /// connection is not watched by libmicrohttpd: a client that left is noticed when a write to it
    /// fails, so this bounds how long a departed client's stream holds its connection (about two
    /// intervals: the first write after the client left is taken by the kernel, the next fails).
    public var keepAliveInterval: Double = 2
    /// Frame streams one session may have open at once (more: 429).
    public var maxStreamsPerSession = 8
    /// Frame streams one client (its address; see `trustedProxies`) may have open at once (more: 429).
    public var maxStreamsPerClient = 32
    /// Addresses of the proxies in front (deploy/'s nginx or HAProxy) whose X-Forwarded-For names
    /// the client, for the per-client stream limit; empty: the peer is the client.
    public var trustedProxies: [String] = []
    /// Instant-pace frames all streams together are made at most, per second (bursts of 10 ms of
    /// it): what the fastest readers can take of the server's CPU. 60,000 frames a second, about
    /// 14 MB/s, sends a 60 s animation at 240 fps whole in a quarter of a second.
    public var instantFrameRate = 60_000
    /// Bytes a frame stream buffers for a slow reader before it drops to the latest frame.
    public var streamBufferBytes = 256 * 1024
    /// When set, every request but the probes (/healthz, /livez, /readyz), the demo page's files and
    /// CORS preflights must carry `Authorization: Bearer <apiKey>` (401 otherwise). Off by default.
    public var apiKey: String?
    /// When true, creating a session returns a `token`, and the session's own routes then need
    /// `Authorization: Bearer <token>` (or the API key): clients cannot reach each other's sessions
    /// even when they learn an id. Off by default.
    public var sessionTokens = false
    /// Where sessions are kept beyond this process: nil keeps them in memory only (lost with the
    /// process); "redis://host:port[/db]" (or "redis+sentinel://host:port,…/name[/db]", the
    /// primary Redis Sentinel names, followed through failovers) also writes them to Redis and
    /// loads from there a session
    /// this process does not hold, so another instance, or this one after a restart or a crash,
    /// carries on with it. A creation,
    /// replacement or deletion is acknowledged once Redis has it; events are written behind.
    public var store: String?
    /// What every key and channel sheetd uses in the store starts with: deployments that share a
    /// Redis give each its own.
    public var storePrefix = "sheetd:"
    /// Seconds a request waits for the store at most (a load, or the write a creation,
    /// replacement or deletion waits for); past it the answer is 503 `store-unavailable`.
    public var storeDeadline: Double = 1
    /// Bytes of writes kept for the store while it is away; writes past it are dropped and counted
    /// (sessions held here are written again when it answers).
    public var storeBacklogBytes = 64 << 20
    /// Whether every answer is logged at info: method, route template, status, duration, bytes,
    /// client address, and the request's id and session. Off by default.
    public var accessLog = false
    /// Seconds a Retry-After header asks a client to wait.
    public var retryAfter = 1

    public init() {}
}
