import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// `sheetd healthcheck`: asks a running sheetd's GET /readyz and exits 0 only on 200, for a
/// container's HEALTHCHECK (slim images have no curl). Plain sockets: no HTTP client library.
struct Healthcheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exit 0 if the sheetd at HOST:PORT answers GET /readyz with 200, else 1.")

    @Option(help: "The server's address; 0.0.0.0 and :: mean this machine (SHEETD_HOST).")
    var host = env("SHEETD_HOST") ?? "127.0.0.1"

    @Option(help: "The server's port (SHEETD_PORT).")
    var port: UInt16 = env("SHEETD_PORT").flatMap(UInt16.init) ?? 8080

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Double = 2

    @Option(help: "The path to ask.")
    var path = "/readyz"

    func validate() throws {
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be in (0, 600] seconds") }
        guard path.hasPrefix("/"), !path.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw ValidationError("--path must start with / and contain no spaces or control characters")
        }
    }

    func run() throws {
        let target = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        switch Probe.status(host: target, port: port, path: path, timeout: timeout) {
        case .success(200):
            print("healthcheck: \(path) 200")
        case .success(let status):
            print("healthcheck: \(path) answered \(status)")
            throw ExitCode(1)
        case .failure(let reason):
            print("healthcheck: \(reason)")
            throw ExitCode(1)
        }
    }
}

/// One HTTP/1.1 GET over a blocking socket with send/receive timeouts.
enum Probe {
    enum Outcome {
        case success(Int)
        case failure(String)
    }

    static func status(host: String, port: UInt16, path: String, timeout: Double) -> Outcome {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list else {
            return .failure("\(host) is not a numeric address")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard fd >= 0 else { return .failure("socket: errno \(errno)") }
        defer { close(fd) }
        // On Linux SO_SNDTIMEO also bounds connect(); SO_RCVTIMEO bounds each read.
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            return .failure("cannot connect to \(host) port \(port): \(String(cString: strerror(errno)))")
        }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
        else { return .failure("send failed: \(String(cString: strerror(errno)))") }
        // The status line is in the first bytes: "HTTP/1.1 200 OK".
        var buffer = [UInt8](repeating: 0, count: 64)
        var filled = 0
        while filled < 12 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, $0.count - filled, 0) }
            guard n > 0 else {
                return .failure(n == 0 ? "the connection closed early" : "no answer within \(timeout) s")
            }
            filled += n
        }
        let line = buffer[0..<filled]
        guard line.starts(with: Array("HTTP/1.".utf8)), let status = Int(String(decoding: line[9..<12], as: UTF8.self))
        else { return .failure("not an HTTP answer") }
        return .success(status)
    }
}
