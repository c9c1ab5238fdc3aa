import Foundation

// MARK: - Server-Sent Events

/// One block of an event stream (the lines up to a blank line), as the SSE spec parses it:
/// `id:`, `event:`, `data:` (several join with "\n"), `retry:` and `:` comments.
public struct SSEEvent: CustomStringConvertible {
    public var id: String?
    public var event: String?
    public var dataLines: [String] = []
    public var retry: Int?
    public var comments: [String] = []
    /// When the block's last byte arrived (Monotonic seconds).
    public var arrival = 0.0

    /// The event type an EventSource would dispatch ("message" when absent).
    public var type: String { event ?? "message" }
    public var data: String { dataLines.joined(separator: "\n") }
    /// Whether an EventSource would dispatch it (it has data).
    public var isDispatched: Bool { !dataLines.isEmpty }
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any]
    }
    public var isEmpty: Bool { id == nil && event == nil && dataLines.isEmpty && retry == nil && comments.isEmpty }

    public var description: String {
        var lines: [String] = comments.map { ": \($0)" }
        if let retry { lines.append("retry: \(retry)") }
        if let id { lines.append("id: \(id)") }
        if let event { lines.append("event: \(event)") }
        lines += dataLines.map { "data: \($0)" }
        return lines.joined(separator: "\n")
    }
}

/// An open `GET …/frames` stream, read incrementally.
public final class SSEClient {
    public let connection: HTTPConnection
    public let status: Int
    public let headers: Headers
    /// When the response head arrived (Monotonic seconds).
    public let opened: Double
    /// The whole response when the server did not answer 200 (a problem).
    public private(set) var errorResponse: Response?
    /// Whether the body has ended (chunked terminator or EOF).
    public private(set) var ended = false
    /// Whether it ended with the chunked terminator (a clean end of the body).
    public private(set) var endedCleanly = false

    private var body: BodyReader
    private var line: [UInt8] = []
    private var skipLF = false
    private var atStart = true
    private var current = SSEEvent()
    private var queue: [SSEEvent] = []

    /// Opens `path` (e.g. "/sessions/a/frames?fps=30") with extra request headers.
    public init(port: UInt16, path: String, headers: [(String, String)] = [], timeout: Double = 10) throws {
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

    public func close() { connection.close() }

    /// The next block, waiting at most `timeout` seconds; nil once the stream has ended.
    /// Throws `HTTPClientError.timeout` when nothing complete arrived in time.
    public func next(timeout: Double = 5) throws -> SSEEvent? {
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
    public func collect(timeout: Double = 5, until stop: (SSEEvent) -> Bool) throws -> [SSEEvent] {
        let deadline = Monotonic.now() + timeout
        var out: [SSEEvent] = []
        while let event = try next(timeout: max(deadline - Monotonic.now(), 0.001)) {
            out.append(event)
            if stop(event) { break }
        }
        return out
    }

    /// Every block until the stream ends.
    public func collectToEnd(timeout: Double = 5) throws -> [SSEEvent] {
        try collect(timeout: timeout) { _ in false }
    }

    /// Whether nothing (no block at all) arrives within `seconds`.
    public func staysQuiet(for seconds: Double) throws -> SSEEvent? {
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
