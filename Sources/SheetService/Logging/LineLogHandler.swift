import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Log lines, one per event, in one of two formats:
/// - `json`, one object per line, for a log pipeline (Loki, Elasticsearch, …): `timestamp`
///   (RFC 3339, UTC, microseconds), `level`, `logger` (the label), `message`, then the fields;
///   integers, floating-point numbers and booleans given as metadata stay JSON numbers and
///   booleans;
/// - `text`, for a person: `2026-11-25T00:45:12.123456Z info sheetd: message name=value …`.
///
/// The fields: while a request is being answered on the thread, its `request_id`, `trace_id` and
/// `session_id`, read from the request's trace (and, on its access-log line, the access record's
/// fields: `logAccess`, or the record on the trace); then the metadata: the provider's, the
/// logger's and the line's own, in name order (a later source wins a name).
///
/// Lines go to a `LogSink`: by default standard error, buffered (see `LogSink`).
public struct LineLogHandler: LogHandler {
    /// How a line is written.
    public enum Format: String, Sendable {
        case text, json
    }

    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    /// The label as it stands in a line: a JSON string (quoted, escaped) or as it is.
    private let labelBytes: [UInt8]
    private let format: Format
    private let sink: LogSink

    /// A handler for `label` writing `format` lines to `sink`. The request's fields are written
    /// whether or not there is a provider; give one only for other metadata.
    public init(
        label: String, format: Format = .json, metadataProvider: Logger.MetadataProvider? = nil,
        sink: LogSink = .standardError
    ) {
        self.label = label
        var labelBytes: [UInt8] = []
        if format == .json { Self.appendString(label, to: &labelBytes) } else { labelBytes = Array(label.utf8) }
        self.labelBytes = labelBytes
        self.format = format
        self.metadataProvider = metadataProvider
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        sink.write(urgent: event.level >= .notice) { line, clock in append(event, to: &line, clock: &clock) }
    }

    /// Whether `logAccess` writes the same line `log` would: the handler has no metadata of its
    /// own and no provider (the executable's has neither).
    var writesAccessDirectly: Bool { metadata.isEmpty && metadataProvider == nil }

    /// The access line of a request, `record` with the request's `trace`: the bytes `log` writes
    /// for `info("access")` when `writesAccessDirectly`, without swift-log's call (the handler, an
    /// existential, copied twice; the module name parsed from the file's id; the event built) and
    /// with the line up to the client's address written in one reserved stretch of the sink's
    /// buffer (one capacity check, not one per piece).
    func logAccess(_ record: AccessRecord, trace: RequestTrace) {
        let json = format == .json
        sink.write(urgent: false) { line, clock in
            let message: StaticString = "access"  // needs no escaping
            let messageBytes = UnsafeBufferPointer(start: message.utf8Start, count: message.utf8CodeUnitCount)
            line.append(atMost: headBound(messageBytes.count + 2, trace) + record.fieldsBound) { cursor in
                writeHead(&cursor, level: .info, message: messageBytes, trace, clock: &clock)
                cursor.put(json ? UInt8(ascii: ",") : UInt8(ascii: " "))
                record.writeFields(&cursor, json: json)
            }
            record.appendClient(to: &line, json: json)
            Self.append(json ? "}\n" : "\n", to: &line)
        }
    }

    /// The line of `event`, appended to `line`.
    private func append(_ event: LogEvent, to line: inout [UInt8], clock: inout (second: Int, text: [UInt8])) {
        let json = format == .json
        var message = event.message.description
        // The request's own fields, read from its trace (a provider would build a dictionary of
        // them for every line).
        let trace = TraceSlot.mine.trace
        let messageBound = Self.escapedCount(message)
        message.withUTF8 { message in
            line.append(atMost: headBound(messageBound, trace)) { cursor in
                writeHead(&cursor, level: event.level, message: message, trace, clock: &clock)
            }
        }
        var provided = metadataProvider?.get() ?? [:]
        if let trace {
            if let access = trace.access {
                line.append(UInt8(ascii: json ? "," : " "))
                access.appendFields(to: &line, json: json)
            }
            if !provided.isEmpty {
                for name in ["request_id", "trace_id", "session_id", "access"] { provided[name] = nil }
            }
        }
        // Merged only when more than one source has fields (the common line has one or none).
        let own = event.metadata ?? [:]
        var fields = provided
        if fields.isEmpty {
            fields = metadata
        } else if !metadata.isEmpty {
            fields.merge(metadata) { _, new in new }
        }
        if fields.isEmpty {
            fields = own
        } else if !own.isEmpty {
            fields.merge(own) { _, new in new }
        }
        for (key, value) in fields.count > 1 ? fields.sorted(by: { $0.key < $1.key }) : Array(fields) {
            // A field's name and its separators: ,"name": or  name=
            Self.append(json ? #",""# : " ", to: &line)
            line.append(contentsOf: key.utf8)
            Self.append(json ? #"":"# : "=", to: &line)
            if json { Self.appendValue(value, to: &line) } else { line.append(contentsOf: value.description.utf8) }
        }
        Self.append(json ? "}\n" : "\n", to: &line)
    }

    /// The most bytes `writeHead` writes: its fixed text (the names and separators, the level,
    /// the timestamp and the trace id: under 200 bytes), the label, the message (at most
    /// `messageBound` bytes, escaped) and the request's ids.
    private func headBound(_ messageBound: Int, _ trace: RequestTrace?) -> Int {
        var bound = 200 + labelBytes.count + messageBound
        if let trace { bound += trace.id.utf8.count + (trace.sessionID?.utf8.count ?? 0) }
        return bound
    }

    /// What every line starts with: the timestamp, level, label and message, then the request's
    /// ids (`request_id`, `trace_id`, `session_id`), in `format`. The ids never need escaping: a
    /// request id is a sane token or made here, a trace id is hex, a session id matches its
    /// route's pattern.
    private func writeHead(
        _ cursor: inout LineCursor, level: Logger.Level, message: UnsafeBufferPointer<UInt8>, _ trace: RequestTrace?,
        clock: inout (second: Int, text: [UInt8])
    ) {
        // Fixed text goes in as StaticString bytes: appending a String's utf8 view, or byte by
        // byte, cost several times more (callgrind, an access-log line).
        let json = format == .json
        if json { cursor.put(#"{"timestamp":""#) }
        Self.writeTimestamp(&cursor, cache: &clock)
        if json {
            cursor.put(#"","level":""#)
            cursor.put(Self.levelName(level))
            cursor.put(#"","logger":"#)
            labelBytes.withUnsafeBufferPointer { cursor.put($0) }
            cursor.put(#","message":"#)
            cursor.putJSONString(message)
        } else {
            cursor.put(UInt8(ascii: " "))
            cursor.put(Self.levelName(level))
            cursor.put(UInt8(ascii: " "))
            labelBytes.withUnsafeBufferPointer { cursor.put($0) }
            cursor.put(": ")
            cursor.put(message)
        }
        guard let trace else { return }
        func field(_ jsonName: StaticString, _ textName: StaticString, _ value: String?) {
            guard let value else { return }
            cursor.put(json ? jsonName : textName)
            cursor.put(value)
            if json { cursor.put(UInt8(ascii: "\"")) }
        }
        field(#","request_id":""#, " request_id=", trace.id)
        field(#","trace_id":""#, " trace_id=", trace.traceID)
        field(#","session_id":""#, " session_id=", trace.sessionID)
    }

    /// Appends fixed text in one copy.
    @inline(__always) static func append(_ text: StaticString, to line: inout [UInt8]) {
        line.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// swift-log's level names, as fixed text.
    static func levelName(_ level: Logger.Level) -> StaticString {
        switch level {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// A metadata value: numbers and booleans bare, strings quoted, lists and dictionaries as
    /// JSON arrays and objects.
    static func appendValue(_ value: Logger.Metadata.Value, to line: inout [UInt8]) {
        switch value {
        case .string(let text): appendString(text, to: &line)
        case .stringConvertible(let item):
            switch item {
            case let n as Int: line.append(atMost: LineCursor.decimalBound) { $0.putDecimal(n) }
            case let x as Double where x.isFinite: line.append(contentsOf: x.description.utf8)
            case let b as Bool: line.append(contentsOf: (b ? "true" : "false").utf8)
            default: appendString(item.description, to: &line)
            }
        case .array(let items):
            line.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { line.append(UInt8(ascii: ",")) }
                appendValue(item, to: &line)
            }
            line.append(UInt8(ascii: "]"))
        case .dictionary(let entries):
            line.append(UInt8(ascii: "{"))
            for (i, (key, item)) in entries.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { line.append(UInt8(ascii: ",")) }
                appendString(key, to: &line)
                line.append(UInt8(ascii: ":"))
                appendValue(item, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
    }

    /// `text` as a JSON string (`LineCursor.putJSONString`).
    static func appendString(_ text: String, to line: inout [UInt8]) {
        line.append(atMost: escapedCount(text)) { $0.putJSONString(text) }
    }

    /// How many bytes `text` takes as a JSON string, quotes included.
    static func escapedCount(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var count = bytes.count + 2
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    count += 1
                default: count += 5
                }
            }
            return count
        }
    }

    /// The wall-clock time now as RFC 3339 in UTC with microseconds: 2026-11-25T00:45:12.123456Z.
    /// The date and time up to the second are formatted once a second (`cache`: the second, and
    /// its 20 bytes). At most 20 + 7 bytes (years 0–9999).
    static func writeTimestamp(_ cursor: inout LineCursor, cache: inout (second: Int, text: [UInt8])) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        if now.tv_sec != cache.second {
            var seconds = now.tv_sec
            var parts = tm()
            gmtime_r(&seconds, &parts)
            var text: [UInt8] = []
            text.append(atMost: 24) { text in  // 20, a five-digit year 21
                func digits(_ value: Int32, _ count: Int, then separator: Character) {
                    text.putDecimal(Int(value), digits: count)
                    text.put(UInt8(ascii: separator.unicodeScalars.first!))
                }
                digits(parts.tm_year + 1900, 4, then: "-")
                digits(parts.tm_mon + 1, 2, then: "-")
                digits(parts.tm_mday, 2, then: "T")
                digits(parts.tm_hour, 2, then: ":")
                digits(parts.tm_min, 2, then: ":")
                digits(parts.tm_sec, 2, then: ".")
            }
            cache = (now.tv_sec, text)
        }
        cache.text.withUnsafeBufferPointer { cursor.put($0) }
        cursor.putDecimal(now.tv_nsec / 1000, digits: 6)
        cursor.put(UInt8(ascii: "Z"))
    }
}

/// Writes a line's bytes into memory reserved for them beforehand (`[UInt8].append(atMost:_:)`),
/// with no check per piece: whoever reserves counts the most that will be written. About 20
/// separate appends to the sink's array, each checking that the array is unique and has room,
/// cost ≈ 500 instructions of an access line (callgrind).
struct LineCursor {
    /// Where the next byte goes.
    private(set) var next: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) { next = start }

    @inline(__always) mutating func put(_ byte: UInt8) {
        next.initialize(to: byte)
        next += 1
    }

    @inline(__always) mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        next.initialize(from: base, count: bytes.count)
        next += bytes.count
    }

    /// Fixed text, in one copy.
    @inline(__always) mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string's UTF-8 as it is.
    @inline(__always) mutating func put(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    /// A JSON string (at most `LineLogHandler.escapedCount` bytes): quotes, backslashes and
    /// control characters escaped (RFC 8259 §7); other bytes, UTF-8 included, as they are (copied
    /// whole when nothing needs escaping, the usual case).
    mutating func putJSONString(_ text: String) {
        var text = text
        text.withUTF8 { putJSONString($0) }
    }

    /// UTF-8 `bytes` as a JSON string (`putJSONString(_: String)`).
    mutating func putJSONString(_ bytes: UnsafeBufferPointer<UInt8>) {
        put(UInt8(ascii: "\""))
        guard bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            put(bytes)
            return put(UInt8(ascii: "\""))
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): put(#"\""#)
            case UInt8(ascii: "\\"): put(#"\\"#)
            case UInt8(ascii: "\n"): put(#"\n"#)
            case UInt8(ascii: "\r"): put(#"\r"#)
            case UInt8(ascii: "\t"): put(#"\t"#)
            case 0..<0x20:
                put(#"\u00"#)
                put(Self.hexDigit(byte >> 4))
                put(Self.hexDigit(byte & 15))
            default: put(byte)
            }
        }
        put(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The most bytes `putDecimal` writes with up to 20 digits: a sign and 20 digits.
    static let decimalBound = 21

    /// `value` in decimal, at least `digits` (at most 20) digits, zero-padded, without making a
    /// String: the digits counted, then written from the last.
    mutating func putDecimal(_ value: Int, digits: Int = 1) {
        if value < 0 { put(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var count = 1
        var power: UInt = 10
        while count < 20, magnitude >= power {
            count += 1
            power &*= 10
        }
        count = max(count, digits)
        var at = next + count
        next = at
        repeat {
            at -= 1
            at.initialize(to: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while at > next - count
    }
}

extension [UInt8] {
    /// Appends what `write` writes through a cursor, at most `bound` bytes, reserved at once.
    @inline(__always) mutating func append(atMost bound: Int, _ write: (inout LineCursor) -> Void) {
        append(addingCapacity: bound) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in
                let start = buffer.baseAddress! + count
                var cursor = LineCursor(start)
                write(&cursor)
                count += cursor.next - start
                assert(count <= buffer.count, "a line overran the bytes reserved for it")
            }
        }
    }
}

/// Where log lines go. `standardError` buffers: a line is appended to a buffer that is written
/// out (one `write(2)`) when it passes 32 KiB, when a line at notice or above comes, at most
/// 100 ms after its first line (a thread of its own looks every 100 ms), and on `flush()`, which
/// the executable calls before it exits. One write per access-log line cost more than the
/// request itself; lines still buffered when the process is killed (SIGKILL, a crash) are lost.
public final class LogSink: Sendable {
    /// Standard error, buffered.
    public static let standardError = LogSink(fileDescriptor: 2)

    private let fileDescriptor: Int32
    /// The lines not written yet, and the timestamp cache of the lines built under the same lock.
    private let pending = Mutex<(bytes: [UInt8], clock: (second: Int, text: [UInt8]))>(([], (-1, [])))
    private let lineHandler: (@Sendable ([UInt8]) -> Void)?
    private let flusherStarted = Atomic(false)
    /// Bytes after which the buffer is written at once.
    private static let limit = 32 * 1024

    private init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        self.lineHandler = nil
    }

    /// A sink that hands each line (newline included) to `handler` at once, unbuffered (tests).
    public init(_ handler: @escaping @Sendable ([UInt8]) -> Void) {
        self.fileDescriptor = -1
        self.lineHandler = handler
    }

    /// Takes one line, which `build` appends (newline included) to the buffer itself, under the
    /// lock (no array per line), given the timestamp cache.
    func write(urgent: Bool, _ build: (inout [UInt8], inout (second: Int, text: [UInt8])) -> Void) {
        if let lineHandler {
            var line: [UInt8] = []
            var clock = (second: -1, text: [UInt8]())
            build(&line, &clock)
            return lineHandler(line)
        }
        if !flusherStarted.load(ordering: .relaxed), !flusherStarted.exchange(true, ordering: .relaxed) {
            Thread.detachNewThread { [self] in
                while true {
                    Thread.sleep(forTimeInterval: 0.1)
                    flush()
                }
            }
        }
        pending.withLock { pending in
            build(&pending.bytes, &pending.clock)
            if urgent || pending.bytes.count >= Self.limit { drain(&pending.bytes) }
        }
    }

    /// Writes out what is buffered.
    public func flush() {
        pending.withLock { drain(&$0.bytes) }
    }

    /// Writes `buffer` whole (retrying partial writes and interruptions; other errors drop it:
    /// logging must not stop the service) and empties it. Called under the lock, so lines keep
    /// their order.
    private func drain(_ buffer: inout [UInt8]) {
        guard !buffer.isEmpty else { return }
        let descriptor = fileDescriptor
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
