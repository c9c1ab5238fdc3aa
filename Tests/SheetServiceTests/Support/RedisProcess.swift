import Foundation

/// A real redis-server on a free loopback port, without persistence, stopped by PID.
final class RedisProcess {
    let port: Int
    private let process = Process()

    init() throws {
        let paths = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        guard let binary = paths.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw RedisProcessError("redis-server is not installed: run scripts/setup --redis")
        }
        port = try Self.freePort()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning",
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if (try? HTTPConnection.connectSocket(port: UInt16(port))).map({ fd in
                Foundation.close(fd)
                return true
            }) == true {
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        stop()
        throw RedisProcessError("redis-server did not listen on port \(port) within 5 s")
    }

    deinit { stop() }

    var url: String { "redis://127.0.0.1:\(port)" }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Foundation.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw RedisProcessError("bind failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct RedisProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
