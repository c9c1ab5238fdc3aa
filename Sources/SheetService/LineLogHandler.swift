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
/// `session_id` (and, on its access-log line, the access record's fields), read from the request's
/// trace; then the metadata: the provider's, the logger's and the line's own, in name order (a
/// later source wins a name).
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
    private let format: Format
    private let sink: LogSink

    /// A handler for `label` writing `format` lines to `sink`. The request's fields are written
    /// whether or not there is a provider; give one only for other metadata.
    public init(
        label: String, format: Format = .json, metadataProvider: Logger.MetadataProvider? = nil,
        sink: LogSink = .standardError
    ) {
        self.label = label
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

    /// The line of `event`, appended to `line`.
    private func append(_ event: LogEvent, to line: inout [UInt8], clock: inout (second: Int, text: [UInt8])) {
        // Fixed text goes in as StaticString bytes, one append each: appending a String's utf8
        // view, or byte by byte, cost several times more (callgrind, an access-log line).
        let json = format == .json
        if json { Self.append(#"{"timestamp":""#, to: &line) }
        Self.appendTimestamp(&line, cache: &clock)
        if json {
            Self.append(#"","level":""#, to: &line)
            Self.append(Self.levelName(event.level), to: &line)
            Self.append(#"","logger":"#, to: &line)
            Self.appendString(label, to: &line)
            Self.append(#","message":"#, to: &line)
            Self.appendString(event.message.description, to: &line)
        } else {
            line.append(UInt8(ascii: " "))
            Self.append(Self.levelName(event.level), to: &line)
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: label.utf8)
            Self.append(": ", to: &line)
            line.append(contentsOf: event.message.description.utf8)
        }
        // A field's name and its separators: ,"name": or  name=
        func name(_ bytes: UnsafeRawBufferPointer) {
            Self.append(json ? #",""# : " ", to: &line)
            line.append(contentsOf: bytes)
            Self.append(json ? #"":"# : "=", to: &line)
        }
        // The request's own fields, read from its trace (a provider would build a dictionary of
        // them for every line). Their characters never need escaping: an id is a sane token or
        // made here, a trace id is hex, a session id matches its route's pattern.
        var provided = metadataProvider?.get() ?? [:]
        if let trace = TraceSlot.mine.trace {
            func field(_ jsonName: StaticString, _ textName: StaticString, _ value: String?) {
                guard var value else { return }
                Self.append(json ? jsonName : textName, to: &line)
                value.withUTF8 { line.append(contentsOf: $0) }
                if json { line.append(UInt8(ascii: "\"")) }
            }
            field(#","request_id":""#, " request_id=", trace.id)
            field(#","trace_id":""#, " trace_id=", trace.traceID)
            field(#","session_id":""#, " session_id=", trace.sessionID)
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
            var key = key
            key.withUTF8 { name(UnsafeRawBufferPointer($0)) }
            if json { Self.appendValue(value, to: &line) } else { line.append(contentsOf: value.description.utf8) }
        }
        Self.append(json ? "}\n" : "\n", to: &line)
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
            case let n as Int: appendDecimal(n, to: &line)
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

    /// A JSON string: quotes, backslashes and control characters escaped (RFC 8259 §7); other
    /// bytes, UTF-8 included, as they are (copied whole when nothing needs escaping, the usual case).
    static func appendString(_ text: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            guard bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return line.append(contentsOf: bytes)
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): line.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): line.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): line.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): line.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): line.append(contentsOf: #"\t"#.utf8)
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    line.append(contentsOf: #"\u00"#.utf8)
                    line.append(hex[Int(byte >> 4)])
                    line.append(hex[Int(byte & 15)])
                default: line.append(byte)
                }
            }
        }
        line.append(UInt8(ascii: "\""))
    }

    /// `value` in decimal, at least `digits` digits (zero-padded), without making a String.
    static func appendDecimal(_ value: Int, digits: Int = 1, to line: inout [UInt8]) {
        if value < 0 { line.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        var count = 1
        while count < digits || (count < 20 && magnitude / divisor >= 10) {
            divisor &*= 10
            count += 1
        }
        while divisor > 0 {
            line.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: (magnitude / divisor) % 10))
            divisor /= 10
        }
    }

    /// The wall-clock time now as RFC 3339 in UTC with microseconds: 2026-11-25T00:45:12.123456Z.
    /// The date and time up to the second are formatted once a second (`cache`: the second, and
    /// its 20 bytes).
    static func appendTimestamp(_ line: inout [UInt8], cache: inout (second: Int, text: [UInt8])) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        if now.tv_sec != cache.second {
            var seconds = now.tv_sec
            var parts = tm()
            gmtime_r(&seconds, &parts)
            var text: [UInt8] = []
            func digits(_ value: Int32, _ count: Int, then separator: Character) {
                appendDecimal(Int(value), digits: count, to: &text)
                text.append(UInt8(ascii: separator.unicodeScalars.first!))
            }
            digits(parts.tm_year + 1900, 4, then: "-")
            digits(parts.tm_mon + 1, 2, then: "-")
            digits(parts.tm_mday, 2, then: "T")
            digits(parts.tm_hour, 2, then: ":")
            digits(parts.tm_min, 2, then: ":")
            digits(parts.tm_sec, 2, then: ".")
            cache = (now.tv_sec, text)
        }
        line.append(contentsOf: cache.text)
        appendDecimal(now.tv_nsec / 1000, digits: 6, to: &line)
        line.append(UInt8(ascii: "Z"))
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
