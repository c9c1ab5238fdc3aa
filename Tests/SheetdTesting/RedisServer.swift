import Foundation

/// A real redis-server on a free loopback port, started for one test and stopped by its PID (also
/// when released): no persistence unless asked (SAVE writes `dump.rdb` in a folder of its own,
/// removed with it), no output. It can be stopped and started again on the same port, or paused
/// (SIGSTOP) to play a Redis that accepts connections but never answers.
public final class RedisServer {
    public let port: UInt16
    /// Where SAVE writes `dump.rdb`, and where a start reads it from: a new folder, removed in deinit.
    public let directory: URL
    /// Configuration given on the command line after the defaults (e.g. `["--key-load-delay",
    /// "1000"]`), for the next `start()`.
    public var arguments: [String]
    private let executable: URL
    private var process: Process?
    private var paused = false

    /// Starts redis-server with `arguments` after the defaults; throws how to install it when it is
    /// missing.
    public init(arguments: [String] = []) throws {
        executable = try redisServerExecutable()
        port = try freeLoopbackPort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-\(port)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.arguments = arguments
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The URL of database `database` of this server, as the service's configuration takes it.
    public func url(database: Int? = nil) -> String {
        "redis://127.0.0.1:\(port)" + (database.map { "/\($0)" } ?? "")
    }

    /// Starts redis-server (again) and waits until it accepts connections.
    public func start() throws {
        precondition(process == nil, "already running")
        let process = Process()
        process.executableURL = executable
        process.arguments =
            [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel",
                "warning",
                "--dir", directory.path,
            ] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        favour(process)
        self.process = process
        let deadline = Monotonic.now() + 30
        while !acceptsConnections(port: port) {
            guard process.isRunning, Monotonic.now() < deadline else {
                stop()
                throw RedisServerError("redis-server did not listen on port \(port) within 30 s")
            }
            Monotonic.sleep(0.005)
        }
    }

    /// Stops redis-server (SIGKILL to its PID) and waits for it to exit. Idempotent. Not SIGTERM:
    /// a child inherits the signal mask of the thread that started it, and Swift concurrency's
    /// threads block SIGTERM, so a redis-server started from a test would never see it.
    public func stop() {
        guard let process else { return }
        if paused { resume() }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGSTOP: the kernel still accepts connections, but nothing answers.
    public func pause() {
        guard let process else { return }
        kill(process.processIdentifier, SIGSTOP)
        paused = true
    }

    /// SIGCONT after `pause()`.
    public func resume() {
        guard let process, paused else { return }
        kill(process.processIdentifier, SIGCONT)
        paused = false
    }
}

/// redis-server on the PATH (or in /usr/bin, /usr/local/bin); throws how to install it when it is
/// missing.
func redisServerExecutable() throws -> URL {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
    guard
        let found =
            directories
            .map({ URL(fileURLWithPath: $0).appendingPathComponent("redis-server") })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
    else {
        throw RedisServerError("redis-server is not installed: run `scripts/setup --redis`")
    }
    return found
}

/// Why redis-server could not be started.
public struct RedisServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Gives a redis-server (or Sentinel) the tests started a larger share of the cores than the test
/// processes beside it: it plays a Redis on a host of its own, and the tests give it deadlines of
/// 0.2–1 s, which a Redis starved by the suites' and the other checks' CPU work once missed (ROLE
/// not answered within 0.2 s while the engine's property tests and two Chromiums ran). Best effort:
/// nice -10 needs root (scripts/test runs as root here); elsewhere the server keeps the default.
func favour(_ process: Process) {
    #if canImport(Glibc)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(process.processIdentifier), -10)
    #endif
}
