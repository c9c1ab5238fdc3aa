import Foundation
import XCTest

@testable import RedisClient

/// A real redis-server on a free loopback port, started for one test and stopped by its PID:
/// no persistence, no output. It can be stopped and started again on the same port, or paused
/// (SIGSTOP) to play a Redis that accepts connections but never answers.
/// A test case with its own redis-server, started before each test and stopped after it.
class RedisTestCase: XCTestCase {
    var server: RedisServer!

    override func setUpWithError() throws {
        server = try RedisServer()
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }
}

final class RedisServer {
    let port: Int
    private let executable: URL
    private var process: Process?
    private var paused = false

    /// Starts redis-server; fails the test with how to install it when it is missing.
    init() throws {
        let found = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/local/bin")
            .split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("redis-server") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        guard let found else {
            XCTFail("redis-server is not installed: run `scripts/setup --redis`")
            throw CocoaError(.fileNoSuchFile)
        }
        executable = found
        port = try Self.freePort()
        try start()
    }

    deinit { stop() }

    /// This server as an endpoint (database 0, or `database`).
    func endpoint(database: Int = 0) -> RedisEndpoint {
        try! RedisEndpoint(url: "redis://127.0.0.1:\(port)/\(database)")
    }

    /// Starts redis-server (again) and waits until it accepts connections.
    func start() throws {
        precondition(process == nil, "already running")
        let process = Process()
        process.executableURL = executable
        // --hz 100: Redis acts on SIGTERM in its timer, 100 ms apart by default; 10 ms stops it fast.
        process.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--loglevel", "warning", "--hz", "100",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date(timeIntervalSinceNow: 5)
        while !Self.accepts(port: port) {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "redis-server did not start"])
            }
            usleep(5000)
        }
    }

    /// Stops redis-server (SIGTERM to its PID) and waits for it to exit. Idempotent.
    func stop() {
        guard let process else { return }
        if paused { resume() }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGSTOP: the kernel still accepts connections, but nothing answers.
    func pause() {
        guard let process else { return }
        kill(process.processIdentifier, SIGSTOP)
        paused = true
    }

    /// SIGCONT after `pause()`.
    func resume() {
        guard let process, paused else { return }
        kill(process.processIdentifier, SIGCONT)
        paused = false
    }

    /// A loopback port nobody listens on right now (bound to port 0, then released).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(socket) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True when something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// Runs `body`, which should fail: the `RedisError` it threw (nil if none) and the seconds it took.
func failure(of body: () throws -> Void) -> (error: RedisError?, seconds: Double) {
    let start = Date()
    var caught: RedisError?
    do {
        try body()
    } catch {
        caught = error as? RedisError
    }
    return (caught, Date().timeIntervalSince(start))
}

/// `count` bytes in a pattern that makes misplaced bytes visible (and includes NUL). The pattern
/// repeats every 256 bytes, so it is built by doubling (fast in debug builds too).
func pattern(_ count: Int) -> [UInt8] {
    var bytes = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    while bytes.count < count { bytes += bytes }
    bytes.removeLast(bytes.count - count)
    return bytes
}

/// Polls `condition` every millisecond until it holds or `seconds` pass; whether it held.
func eventually(within seconds: Double = 3, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(1000)
    }
    return try condition()
}

/// Threads of this process named `name` right now (Linux: /proc/self/task/*/comm).
func threads(named name: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .newlines) == name
    }.count
}

/// File descriptors this process has open right now (Linux: /proc/self/fd).
func openDescriptors() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}
