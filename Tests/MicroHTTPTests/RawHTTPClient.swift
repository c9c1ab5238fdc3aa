import MicroHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the raw client gave up.
struct ClientError: Error, CustomStringConvertible {
    let description: String
}

/// How a response body ended.
enum BodyEnd: Equatable {
    /// Content-Length bytes, or the chunked terminator, arrived.
    case complete
    /// The server closed the connection first.
    case eof
}

/// A response as read off the wire.
struct RawResponse {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
    var end: BodyEnd
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A tiny blocking HTTP/1.1 client over a real TCP socket, so tests see exactly what goes on the wire.
final class RawHTTPClient {
    private var fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`; every receive gives up after `timeoutSeconds`.
    init(port: UInt16, timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let failure = errno
            // deinit runs for a throwing init once every property is set, and closes the socket;
            // closing it here as well would close whatever reused the descriptor meanwhile.
            close()
            throw ClientError(description: "connect: errno \(failure)")
        }
    }

    deinit { close() }

    /// Closes the socket (idempotent).
    func close() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    /// Sends every byte (one `send` call per loop turn: a "TCP write").
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw ClientError(description: "send: errno \(errno)") }
            offset += sent
        }
    }

    /// Sends text as UTF-8.
    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends a request with the given head and body (Content-Length added when there is a body or
    /// the method is POST) in one write.
    func sendRequest(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: test\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
    }

    /// Sends a request and reads its response.
    func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> RawResponse {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse()
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { return false }
        if count < 0 {
            let failure = errno
            if failure == ECONNRESET { return false }
            throw ClientError(description: "recv: errno \(failure)")
        }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    /// Whether the server has closed the connection (waits up to the receive timeout for an EOF).
    func readsEOF() throws -> Bool {
        if !buffer.isEmpty { return false }
        return try !fill()
    }

    /// One line without its CRLF; nil at end of stream.
    private func readLine() throws -> String? {
        while true {
            if let end = buffer.indices.dropLast().first(where: { buffer[$0] == 13 && buffer[$0 + 1] == 10 }) {
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                return line
            }
            guard try fill() else { return nil }
        }
    }

    /// Exactly `count` bytes, or fewer at end of stream.
    private func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { break }
        }
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(taken.count)
        return taken
    }

    /// The status line and header fields.
    func readHead() throws -> (status: Int, headers: HTTPHeaders) {
        guard let statusLine = try readLine() else { throw ClientError(description: "EOF before the status line") }
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ClientError(description: "bad status line \(statusLine)")
        }
        var headers = HTTPHeaders()
        while let line = try readLine(), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw ClientError(description: "bad header \(line)") }
            headers.append(
                name: String(line[..<colon]),
                value: String(line[line.index(after: colon)...].drop(while: { $0 == " " })))
        }
        return (status, headers)
    }

    /// The next chunk of a chunked body: its bytes, `[]` for the terminator, nil at end of stream.
    func readChunk() throws -> [UInt8]? {
        guard let sizeLine = try readLine() else { return nil }
        guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else {
            throw ClientError(description: "bad chunk size \(sizeLine)")
        }
        if size == 0 {
            while let trailer = try readLine(), !trailer.isEmpty {}
            return []
        }
        let data = try readBytes(size)
        guard data.count == size else { return nil }
        guard try readLine() == "" else { throw ClientError(description: "chunk not followed by CRLF") }
        return data
    }

    /// A whole response: by Content-Length, chunked, or until the server closes.
    func readResponse() throws -> RawResponse {
        let (status, headers) = try readHead()
        if let length = headers["Content-Length"].flatMap({ Int($0) }) {
            let body = try readBytes(length)
            return RawResponse(
                status: status, headers: headers, body: body, end: body.count == length ? .complete : .eof)
        }
        if headers["Transfer-Encoding"]?.lowercased() == "chunked" {
            var body: [UInt8] = []
            while true {
                guard let chunk = try readChunk() else {
                    return RawResponse(status: status, headers: headers, body: body, end: .eof)
                }
                if chunk.isEmpty { return RawResponse(status: status, headers: headers, body: body, end: .complete) }
                body += chunk
            }
        }
        var body = buffer
        buffer = []
        while try fill() {
            body += buffer
            buffer = []
        }
        return RawResponse(status: status, headers: headers, body: body, end: .eof)
    }
}
