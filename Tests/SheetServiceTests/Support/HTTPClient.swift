// A small blocking HTTP/1.1 client over real TCP sockets (Glibc), with a Server-Sent Events
// reader, so that the service tests see exactly what goes on the wire. No URLSession.

import Foundation
import Testing

@testable import SheetService

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Basics

/// Why the client gave up.
enum HTTPClientError: Error, CustomStringConvertible, Equatable {
    /// Nothing arrived before the deadline.
    case timeout
    /// The server closed the connection (EOF or reset) before the expected bytes arrived.
    case closed
    /// The server sent something that is not HTTP/1.1.
    case malformed(String)
    /// A system call failed.
    case system(String, Int32)

    var description: String {
        switch self {
        case .timeout: "timed out"
        case .closed: "connection closed by the server"
        case let .malformed(what): "malformed response: \(what)"
        case let .system(call, code): "\(call) failed: errno \(code) (\(String(cString: strerror(code))))"
        }
    }
}

/// Seconds on the monotonic clock (the same clock the server's ContinuousClock reads).
enum Monotonic {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Sleeps for `seconds` (short sleeps only: the tests poll instead of waiting long).
    static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        usleep(UInt32(seconds * 1_000_000))
    }
}

/// Header fields in the order received; lookups ignore case (RFC 9110 §5.1).
struct Headers: Sendable, CustomStringConvertible {
    var fields: [(name: String, value: String)] = []

    subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    func contains(_ name: String) -> Bool { self[name] != nil }

    var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

/// A response as read off the wire.
struct Response: Sendable, CustomStringConvertible {
    var status: Int
    var headers: Headers
    var body: [UInt8]
    /// When the last byte of the response arrived (Monotonic seconds).
    var arrival: Double = 0

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (nil if it is not one).
    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) as? [String: Any]
    }

    /// Whether the server said it closes the connection.
    var closesConnection: Bool {
        headers.values("Connection").contains { $0.lowercased().contains("close") }
    }

    var description: String { "HTTP \(status)\n\(headers)\n\n\(text.prefix(600))" }
}

// MARK: - Connection

/// One TCP connection to the server; requests may be sent one after another (keep-alive).
/// Not thread-safe: one connection per thread.
final class HTTPConnection {
    let port: UInt16
    private(set) var fd: Int32
    /// Seconds a read waits for bytes before throwing `.timeout`.
    var timeout: Double
    /// Received, not yet consumed bytes: `buffer[start...]`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// When the last recv returned bytes (Monotonic seconds).
    private(set) var lastArrival = 0.0

    /// Connects to 127.0.0.1:`port`. `receiveBuffer` shrinks SO_RCVBUF (set before connecting, so
    /// the TCP window is small too): for a reader that stalls.
    init(port: UInt16, timeout: Double = 10, receiveBuffer: Int? = nil) throws {
        self.port = port
        self.timeout = timeout
        self.fd = try Self.connectSocket(port: port, receiveBuffer: receiveBuffer)
    }

    deinit { close() }

    /// A connected socket, or `.system("connect", errno)`.
    static func connectSocket(port: UInt16, receiveBuffer: Int? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPClientError.system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw HTTPClientError.system("connect", code)
        }
        return fd
    }

    /// Closes the socket (idempotent).
    func close() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    // MARK: Sending

    /// Sends every byte.
    func send(_ bytes: [UInt8]) throws {
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

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// The bytes of a request. A body gets `Content-Length` (and `Content-Type: application/json`
    /// unless `headers` names one); so does a bodiless POST/PUT (Content-Length: 0).
    static func encode(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        let named = Set(headers.map { $0.0.lowercased() })
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body {
            if !named.contains("content-type") && !body.isEmpty { head += "Content-Type: application/json\r\n" }
            if !named.contains("content-length") && !named.contains("transfer-encoding") {
                head += "Content-Length: \(body.count)\r\n"
            }
        } else if (method == "POST" || method == "PUT") && !named.contains("content-length")
            && !named.contains("transfer-encoding")
        {
            head += "Content-Length: 0\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil)
        throws
    {
        try send(Self.encode(method, target, headers: headers, body: body))
    }

    /// Sends a request and reads its response.
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil)
        throws -> Response
    {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(method: method)
    }

    /// A request whose body is JSON text.
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], json: String) throws
        -> Response
    {
        try request(method, target, headers: headers, body: Array(json.utf8))
    }

    // MARK: Receiving

    private var available: Int { buffer.count - start }

    /// Reads more bytes; false at EOF (or reset). Throws `.timeout` at the deadline.
    @discardableResult
    func fill(deadline: Double) throws -> Bool {
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
    func readLine(deadline: Double) throws -> String {
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
    func readBytes(_ count: Int, deadline: Double) throws -> [UInt8] {
        while available < count {
            guard try fill(deadline: deadline) else { throw HTTPClientError.closed }
        }
        return take(count)
    }

    /// Whatever is buffered or arrives before the deadline or the end of the stream (at least one
    /// byte unless the stream ended: then `nil`).
    func readSome(max: Int, deadline: Double) throws -> [UInt8]? {
        if available == 0 {
            guard try fill(deadline: deadline) else { return nil }
        }
        return take(max)
    }

    /// The status line and header fields.
    func readHead(deadline: Double) throws -> (status: Int, headers: Headers) {
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
    func readResponse(method: String = "GET", timeout: Double? = nil) throws -> Response {
        let deadline = Monotonic.now() + (timeout ?? self.timeout)
        var (status, headers) = try readHead(deadline: deadline)
        // 1xx interim responses are skipped.
        while (100..<200).contains(status) { (status, headers) = try readHead(deadline: deadline) }
        var reader = BodyReader(headers: headers, status: status, method: method)
        var body: [UInt8] = []
        while let piece = try reader.next(from: self, deadline: deadline) { body += piece }
        return Response(status: status, headers: headers, body: body, arrival: lastArrival)
    }

    /// Whether the server closes the connection within `seconds` (bytes that arrive meanwhile
    /// are skipped).
    func closedByPeer(within seconds: Double) -> Bool {
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
struct BodyReader {
    enum Framing {
        case none
        case length(Int)
        case chunked(remainingInChunk: Int)
        case untilClose
    }

    private(set) var framing: Framing
    /// Whether the body ended properly (the whole Content-Length, or the chunked terminator).
    private(set) var complete = false

    init(headers: Headers, status: Int, method: String) {
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
    mutating func next(from c: HTTPConnection, deadline: Double) throws -> [UInt8]? {
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

// MARK: - Server-Sent Events

/// One block of an event stream (the lines up to a blank line), as the SSE spec parses it:
/// `id:`, `event:`, `data:` (several join with "\n"), `retry:` and `:` comments.
struct SSEEvent: CustomStringConvertible {
    var id: String?
    var event: String?
    var dataLines: [String] = []
    var retry: Int?
    var comments: [String] = []
    /// When the block's last byte arrived (Monotonic seconds).
    var arrival = 0.0

    /// The event type an EventSource would dispatch ("message" when absent).
    var type: String { event ?? "message" }
    var data: String { dataLines.joined(separator: "\n") }
    /// Whether an EventSource would dispatch it (it has data).
    var isDispatched: Bool { !dataLines.isEmpty }
    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any]
    }
    var isEmpty: Bool { id == nil && event == nil && dataLines.isEmpty && retry == nil && comments.isEmpty }

    var description: String {
        var lines: [String] = comments.map { ": \($0)" }
        if let retry { lines.append("retry: \(retry)") }
        if let id { lines.append("id: \(id)") }
        if let event { lines.append("event: \(event)") }
        lines += dataLines.map { "data: \($0)" }
        return lines.joined(separator: "\n")
    }
}

/// An open `GET …/frames` stream, read incrementally.
final class SSEClient {
    let connection: HTTPConnection
    let status: Int
    let headers: Headers
    /// When the response head arrived (Monotonic seconds).
    let opened: Double
    /// The whole response when the server did not answer 200 (a problem).
    private(set) var errorResponse: Response?
    /// Whether the body has ended (chunked terminator or EOF).
    private(set) var ended = false
    /// Whether it ended with the chunked terminator (a clean end of the body).
    private(set) var endedCleanly = false

    private var body: BodyReader
    private var line: [UInt8] = []
    private var skipLF = false
    private var atStart = true
    private var current = SSEEvent()
    private var queue: [SSEEvent] = []

    /// Opens `path` (e.g. "/sessions/a/frames?fps=30") with extra request headers.
    init(port: UInt16, path: String, headers: [(String, String)] = [], timeout: Double = 10) throws {
        connection = try HTTPConnection(port: port, timeout: timeout)
        try connection.sendRequest("GET", path, headers: [("Accept", "text/event-stream")] + headers)
        let (status, headers) = try connection.readHead(deadline: Monotonic.now() + timeout)
        self.status = status
        self.headers = headers
        self.opened = connection.lastArrival
        body = BodyReader(headers: headers, status: status, method: "GET")
        if status != 200 {
            var bytes: [UInt8] = []
            while let piece = try body.next(from: connection, deadline: Monotonic.now() + timeout) { bytes += piece }
            errorResponse = Response(status: status, headers: headers, body: bytes, arrival: connection.lastArrival)
            ended = true
        }
    }

    func close() { connection.close() }

    /// The next block, waiting at most `timeout` seconds; nil once the stream has ended.
    /// Throws `HTTPClientError.timeout` when nothing complete arrived in time.
    func next(timeout: Double = 5) throws -> SSEEvent? {
        let deadline = Monotonic.now() + timeout
        while queue.isEmpty {
            if ended { return nil }
            let piece: [UInt8]?
            do {
                piece = try body.next(from: connection, deadline: deadline)
            } catch HTTPClientError.closed {
                piece = nil
            }
            guard let piece else {
                ended = true
                endedCleanly = body.complete
                // An unterminated block at the end of the stream is discarded (SSE spec).
                break
            }
            parse(piece, arrival: connection.lastArrival)
        }
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    /// Every block until one satisfies `stop` (included), the stream ends, or `timeout` passes
    /// in total (then `.timeout` is thrown).
    func collect(timeout: Double = 5, until stop: (SSEEvent) -> Bool) throws -> [SSEEvent] {
        let deadline = Monotonic.now() + timeout
        var out: [SSEEvent] = []
        while let event = try next(timeout: max(deadline - Monotonic.now(), 0.001)) {
            out.append(event)
            if stop(event) { break }
        }
        return out
    }

    /// Every block until the stream ends.
    func collectToEnd(timeout: Double = 5) throws -> [SSEEvent] {
        try collect(timeout: timeout) { _ in false }
    }

    /// Whether nothing (no block at all) arrives within `seconds`.
    func staysQuiet(for seconds: Double) throws -> SSEEvent? {
        do {
            return try next(timeout: seconds)
        } catch HTTPClientError.timeout {
            return nil
        }
    }

    // Lines end with CRLF, LF or CR; a CR at the end of one piece and an LF at the start of
    // the next are one line end.
    private func parse(_ bytes: [UInt8], arrival: Double) {
        for byte in bytes {
            if skipLF {
                skipLF = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D:
                endLine(arrival: arrival)
                skipLF = true
            case 0x0A:
                endLine(arrival: arrival)
            default:
                line.append(byte)
            }
        }
    }

    private func endLine(arrival: Double) {
        var bytes = line[...]
        line.removeAll(keepingCapacity: true)
        if atStart {
            atStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }  // a UTF-8 BOM
        }
        if bytes.isEmpty {
            if !current.isEmpty {
                current.arrival = arrival
                queue.append(current)
            }
            current = SSEEvent()
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix(":") {
            current.comments.append(Self.value(text.dropFirst()))
            return
        }
        let name: Substring
        let value: String
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = Self.value(text[text.index(after: colon)...])
        } else {
            name = text[...]
            value = ""
        }
        switch name {
        case "event": current.event = value
        case "data": current.dataLines.append(value)
        case "id": if !value.contains("\0") { current.id = value }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let r = Int(value) {
                current.retry = r
            }
        default: break  // other fields are ignored
        }
    }

    /// A field value: one leading space is dropped.
    private static func value(_ s: Substring) -> String {
        String(s.first == " " ? s.dropFirst() : s)
    }
}

// MARK: - Test support

/// A started server on an ephemeral port of 127.0.0.1.
func startServer(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> SheetServer {
    var configuration = ServiceConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configure(&configuration)
    let server = try SheetServer(configuration: configuration)
    try server.start()
    return server
}

/// A number from JSONSerialization's output.
func num(_ value: Any?) -> Double? {
    switch value {
    case let d as Double: d
    case let i as Int: Double(i)
    case let n as NSNumber: n.doubleValue
    default: nil
    }
}

/// An integer from JSONSerialization's output.
func int(_ value: Any?) -> Int? {
    guard let d = num(value), d == d.rounded(), abs(d) < 1e15 else { return nil }
    return Int(d)
}

/// A nested object.
func obj(_ value: Any?) -> [String: Any]? { value as? [String: Any] }

/// `text` as bytes.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Polls `condition` every 10 ms until it holds or `seconds` pass.
func eventually(within seconds: Double = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Monotonic.now() + seconds
    while Monotonic.now() < deadline {
        if try condition() { return true }
        Monotonic.sleep(0.01)
    }
    return try condition()
}

/// A value shared between threads behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
    var current: Value { withLock { $0 } }
}

/// Runs `body(i)` for i in 0..<count, each on its own thread (blocking socket I/O does not belong
/// on Swift concurrency's pool), and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    for i in 0..<count {
        let thread = Thread {
            body(i)
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { done.wait() }
}

/// Runs `body` on a new thread; `wait()` on the result joins it.
final class Background: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        Thread.detachNewThread {
            body()
            done.signal()
        }
    }
    /// Waits for the thread to finish; false if it did not within `seconds`.
    @discardableResult
    func wait(seconds: Double = 30) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }
}

/// Every service test runs in this suite, one at a time: they start servers with realtime
/// streams and timing checks, and the machine has two cores.
@Suite(.serialized) enum ServiceIntegration {}

// MARK: - Session helpers

extension HTTPConnection {
    /// PUT /sessions/{id} with a configuration (empty: no body).
    func put(_ id: String, _ config: String = "") throws -> Response {
        try request("PUT", "/sessions/\(id)", body: config.isEmpty ? nil : bytes(config))
    }

    func get(_ path: String) throws -> Response { try request("GET", path) }

    func pan(_ id: String, _ json: String) throws -> Response {
        try request("POST", "/sessions/\(id)/pan", json: json)
    }

    func show(_ id: String, _ json: String = "") throws -> Response {
        try request("POST", "/sessions/\(id)/show", body: json.isEmpty ? nil : bytes(json))
    }

    func dismiss(_ id: String, _ json: String = "") throws -> Response {
        try request("POST", "/sessions/\(id)/dismiss", body: json.isEmpty ? nil : bytes(json))
    }
}
