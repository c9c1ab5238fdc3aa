// A small blocking HTTP/1.1 client over real TCP sockets, so that tests see exactly what goes on
// the wire: raw bytes, pipelined requests, chunked bodies, slow writes, and (SSEClient.swift) event
// streams. No URLSession.

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Basics

/// Why the client gave up.
public enum HTTPClientError: Error, CustomStringConvertible, Equatable {
    /// Nothing arrived before the deadline.
    case timeout
    /// The server closed the connection (EOF or reset) before the expected bytes arrived.
    case closed
    /// The server sent something that is not HTTP/1.1.
    case malformed(String)
    /// A system call failed.
    case system(String, Int32)

    public var description: String {
        switch self {
        case .timeout: "timed out"
        case .closed: "connection closed by the server"
        case let .malformed(what): "malformed response: \(what)"
        case let .system(call, code): "\(call) failed: errno \(code) (\(String(cString: strerror(code))))"
        }
    }
}

/// Header fields in the order received; lookups ignore case (RFC 9110 §5.1).
public struct Headers: Sendable, CustomStringConvertible {
    public var fields: [(name: String, value: String)] = []

    public init() {}

    public subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

/// A response as read off the wire.
public struct Response: Sendable, CustomStringConvertible {
    public var status: Int
    public var headers: Headers
    public var body: [UInt8]
    /// When the last byte of the response arrived (Monotonic seconds).
    public var arrival: Double
    /// Whether the body ended as framed (the whole Content-Length or the chunked terminator), not
    /// by the server closing the connection.
    public var complete: Bool

    public init(status: Int, headers: Headers, body: [UInt8], arrival: Double = 0, complete: Bool = true) {
        (self.status, self.headers, self.body, self.arrival, self.complete) = (status, headers, body, arrival, complete)
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (nil if it is not one).
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) as? [String: Any]
    }

    /// Whether the server said it closes the connection.
    public var closesConnection: Bool {
        headers.values("Connection").contains { $0.lowercased().contains("close") }
    }

    public var description: String { "HTTP \(status)\n\(headers)\n\n\(text.prefix(600))" }
}

// MARK: - Connection

/// One TCP connection to the server; requests may be sent one after another (keep-alive).
/// Not thread-safe: one connection per thread.
public final class HTTPConnection: HTTPClient {
    public let port: UInt16
    public private(set) var fd: Int32
    /// Seconds a read waits for bytes before throwing `.timeout`.
    public var timeout: Double
    /// Received, not yet consumed bytes: `buffer[start...]`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// When the last recv returned bytes (Monotonic seconds).
    public private(set) var lastArrival = 0.0

    /// Connects to 127.0.0.1:`port`. `receiveBuffer` shrinks SO_RCVBUF (set before connecting, so
    /// the TCP window is small too): for a reader that stalls.
    public init(port: UInt16, timeout: Double = 10, receiveBuffer: Int? = nil) throws {
        self.port = port
        self.timeout = timeout
        self.fd = try connectedSocket(port: port, receiveBuffer: receiveBuffer)
    }

    deinit { close() }

    /// Closes the socket (idempotent).
    public func close() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    // MARK: Sending

    /// Sends every byte.
    public func send(_ bytes: [UInt8]) throws {
        guard fd >= 0 else { throw HTTPClientError.closed }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EPIPE || code == ECONNRESET { throw HTTPClientError.closed }
                throw HTTPClientError.system("send", code)
            }
            offset += sent
        }
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// The header fields of a request: `Host`, then `headers`; a body gets `Content-Length` (and
    /// `Content-Type: application/json` unless `headers` names one); so does a bodiless POST/PUT
    /// (Content-Length: 0).
    public static func fields(_ method: String, headers: [(String, String)] = [], body: [UInt8]? = nil)
        -> [(String, String)]
    {
        var fields = [("Host", "127.0.0.1")] + headers
        let named = Set(headers.map { $0.0.lowercased() })
        if let body {
            if !named.contains("content-type") && !body.isEmpty { fields.append(("Content-Type", "application/json")) }
            if !named.contains("content-length") && !named.contains("transfer-encoding") {
                fields.append(("Content-Length", "\(body.count)"))
            }
        } else if (method == "POST" || method == "PUT") && !named.contains("content-length")
            && !named.contains("transfer-encoding")
        {
            fields.append(("Content-Length", "0"))
        }
        return fields
    }

    /// The bytes of a request: its line, `fields`, and the body.
    public static func encode(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        for (name, value) in fields(method, headers: headers, body: body) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    public func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil)
        throws
    {
        try send(Self.encode(method, target, headers: headers, body: body))
    }

    /// Sends a request and reads its response (`HTTPClient`: `request`, `get`).
    public func execute(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]?) throws
        -> Response
    {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(method: method)
    }

    // MARK: Receiving

    private var available: Int { buffer.count - start }

    /// Reads more bytes; false at EOF (or reset). Throws `.timeout` at the deadline.
    @discardableResult
    public func fill(deadline: Double) throws -> Bool {
        guard fd >= 0 else { return false }
        while true {
            let remaining = deadline - Monotonic.now()
            if remaining <= 0 { throw HTTPClientError.timeout }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(max(remaining * 1000, 1), 60_000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw HTTPClientError.system("poll", errno)
            }
            if ready == 0 { continue }  // the loop re-checks the deadline
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return false }
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                if code == ECONNRESET { return false }
                throw HTTPClientError.system("recv", code)
            }
            lastArrival = Monotonic.now()
            if start > 0 && start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 256 * 1024 {
                buffer.removeFirst(start)
                start = 0
            }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    /// Takes up to `count` buffered bytes.
    private func take(_ count: Int) -> [UInt8] {
        let n = min(count, available)
        let out = Array(buffer[start..<(start + n)])
        start += n
        return out
    }

    /// One line without its CRLF (a bare LF is tolerated); throws `.closed` at EOF.
    public func readLine(deadline: Double) throws -> String {
        // Bytes already searched, counted from `start` (filling may move the buffer).
        var searched = 0
        while true {
            if let lf = buffer[(start + searched)...].firstIndex(of: 0x0A) {
                var end = lf
                if end > start && buffer[end - 1] == 0x0D { end -= 1 }
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = lf + 1
                return line
            }
            searched = available
            guard try fill(deadline: deadline) else { throw HTTPClientError.closed }
        }
    }

    /// Exactly `count` bytes; throws `.closed` at an early EOF.
    public func readBytes(_ count: Int, deadline: Double) throws -> [UInt8] {
        while available < count {
            guard try fill(deadline: deadline) else { throw HTTPClientError.closed }
        }
        return take(count)
    }

    /// Whatever is buffered or arrives before the deadline or the end of the stream (at least one
    /// byte unless the stream ended: then `nil`).
    public func readSome(max: Int, deadline: Double) throws -> [UInt8]? {
        if available == 0 {
            guard try fill(deadline: deadline) else { return nil }
        }
        return take(max)
    }

    /// The status line and header fields.
    public func readHead(deadline: Double? = nil) throws -> (status: Int, headers: Headers) {
        let deadline = deadline ?? Monotonic.now() + timeout
        var statusLine = try readLine(deadline: deadline)
        while statusLine.isEmpty { statusLine = try readLine(deadline: deadline) }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw HTTPClientError.malformed("status line \(statusLine)")
        }
        var headers = Headers()
        while true {
            let line = try readLine(deadline: deadline)
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw HTTPClientError.malformed("header \(line)") }
            headers.fields.append(
                (
                    name: String(line[..<colon]),
                    value: String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                ))
        }
        return (status, headers)
    }

    /// A whole response: by Content-Length, chunked, or until the server closes.
    public func readResponse(method: String = "GET", timeout: Double? = nil) throws -> Response {
        let deadline = Monotonic.now() + (timeout ?? self.timeout)
        var (status, headers) = try readHead(deadline: deadline)
        // 1xx interim responses are skipped.
        while (100..<200).contains(status) { (status, headers) = try readHead(deadline: deadline) }
        var reader = BodyReader(headers: headers, status: status, method: method)
        var body: [UInt8] = []
        while let piece = try reader.next(from: self, deadline: deadline) { body += piece }
        return Response(status: status, headers: headers, body: body, arrival: lastArrival, complete: reader.complete)
    }

    /// Whether the server has closed the connection: nothing is buffered and the next read, within
    /// `timeout`, finds the end of the stream (throws `.timeout` when it stays open).
    public func readsEOF() throws -> Bool {
        if available > 0 { return false }
        return try !fill(deadline: Monotonic.now() + timeout)
    }

    /// The next chunk of a chunked body read by hand after `readHead`: its bytes, `[]` for the
    /// terminator (trailers skipped), nil at the end of the stream.
    public func readChunk() throws -> [UInt8]? {
        let deadline = Monotonic.now() + timeout
        do {
            let sizeLine = try readLine(deadline: deadline)
            guard let size = Int(sizeLine.split(separator: ";", omittingEmptySubsequences: false)[0], radix: 16) else {
                throw HTTPClientError.malformed("chunk size \"\(sizeLine)\"")
            }
            if size == 0 {
                while try !readLine(deadline: deadline).isEmpty {}
                return []
            }
            let data = try readBytes(size, deadline: deadline)
            guard try readLine(deadline: deadline).isEmpty else {
                throw HTTPClientError.malformed("chunk not followed by CRLF")
            }
            return data
        } catch HTTPClientError.closed {
            return nil
        }
    }

    /// Whether the server closes the connection within `seconds` (bytes that arrive meanwhile
    /// are skipped).
    public func closedByPeer(within seconds: Double) -> Bool {
        let deadline = Monotonic.now() + seconds
        start = buffer.count
        do {
            while try fill(deadline: deadline) { start = buffer.count }
            return true
        } catch {
            return false
        }
    }
}

/// Reads a response body piece by piece: Content-Length, chunked, or close-delimited.
public struct BodyReader {
    public enum Framing {
        case none
        case length(Int)
        case chunked(remainingInChunk: Int)
        case untilClose
    }

    public private(set) var framing: Framing
    /// Whether the body ended properly (the whole Content-Length, or the chunked terminator).
    public private(set) var complete = false

    public init(headers: Headers, status: Int, method: String) {
        if method == "HEAD" || status == 204 || status == 304 {
            framing = .none
        } else if headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true {
            framing = .chunked(remainingInChunk: 0)
        } else if let length = headers["Content-Length"].flatMap({ Int($0) }) {
            framing = .length(length)
        } else {
            framing = .untilClose
        }
    }

    /// The next piece of the body, nil when it has ended.
    public mutating func next(from c: HTTPConnection, deadline: Double) throws -> [UInt8]? {
        switch framing {
        case .none:
            complete = true
            return nil
        case let .length(remaining):
            if remaining == 0 {
                complete = true
                framing = .none
                return nil
            }
            guard let piece = try c.readSome(max: remaining, deadline: deadline) else { throw HTTPClientError.closed }
            framing = .length(remaining - piece.count)
            return piece
        case .untilClose:
            guard let piece = try c.readSome(max: Int.max, deadline: deadline) else {
                framing = .none
                return nil
            }
            return piece
        case let .chunked(remaining):
            var left = remaining
            if left == 0 {
                let sizeLine = try c.readLine(deadline: deadline)
                let sizeText = sizeLine.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                    throw HTTPClientError.malformed("chunk size \"\(sizeLine)\"")
                }
                if size == 0 {
                    // Trailers, then the empty line.
                    while try !c.readLine(deadline: deadline).isEmpty {}
                    complete = true
                    framing = .none
                    return nil
                }
                left = size
            }
            guard let piece = try c.readSome(max: left, deadline: deadline) else { throw HTTPClientError.closed }
            left -= piece.count
            if left == 0 {
                guard try c.readLine(deadline: deadline).isEmpty else {
                    throw HTTPClientError.malformed("chunk not followed by CRLF")
                }
            }
            framing = .chunked(remainingInChunk: left)
            return piece
        }
    }
}
