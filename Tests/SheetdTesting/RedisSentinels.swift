import Foundation

/// A replicated Redis watched by Sentinels, on loopback: a primary, one replica and three
/// Sentinels (`redis-server <file> --sentinel`), each on a free port, started for one test and
/// stopped by PID when released. The Sentinels monitor the group `name` with a quorum of 2, judge
/// a server down after 1 s without an answer and time a failover out after 10 s.
public final class RedisSentinels {
    /// The group's name in the Sentinels' configuration.
    public let name: String
    /// The first primary.
    public let primary: RedisServer
    /// The replica of `primary`, which a failover promotes.
    public let replica: RedisServer
    /// The Sentinels' ports.
    public let sentinelPorts: [UInt16]
    private let directory: URL
    private var sentinels: [Process] = []

    /// Starts the primary, its replica and three Sentinels (each waits until it accepts
    /// connections; whether they know each other yet is for the test to ask them).
    public init(name: String = "sheetd") throws {
        self.name = name
        // The primary syncs its replica at once, not after its default 5 s wait for more replicas.
        primary = try RedisServer(arguments: ["--repl-diskless-sync-delay", "0"])
        replica = try RedisServer(arguments: [
            "--replicaof", "127.0.0.1", String(primary.port), "--repl-diskless-sync-delay", "0",
        ])
        sentinelPorts = try (0..<3).map { _ in try freeLoopbackPort() }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sentinels-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let executable = try redisServerExecutable()
        for port in sentinelPorts {
            // A Sentinel rewrites its file as it learns the group: one each, writable.
            let file = directory.appendingPathComponent("sentinel-\(port).conf")
            let configuration = """
                port \(port)
                bind 127.0.0.1
                dir \(directory.path)
                loglevel warning
                sentinel monitor \(name) 127.0.0.1 \(primary.port) 2
                sentinel down-after-milliseconds \(name) 1000
                sentinel failover-timeout \(name) 10000

                """
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = executable
            process.arguments = [file.path, "--sentinel"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            favour(process)
            sentinels.append(process)
        }
        for port in sentinelPorts {
            guard eventually(every: 0.005, { acceptsConnections(port: port) }) else {
                throw RedisServerError("redis-server --sentinel did not listen on port \(port) within 30 s")
            }
        }
    }

    deinit {
        for process in sentinels {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The group as a Sentinel URL: `redis+sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/name`.
    public var url: String {
        "redis+sentinel://" + sentinelPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",") + "/\(name)"
    }
}
