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
            if json {
                Self.appendValue(value, to: &line)
            } else {
                var text = value.description
                let bound = Self.escapedCount(text)
                text.withUTF8 { bytes in line.append(atMost: bound) { $0.putEscapingControls(bytes) } }
            }
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
            cursor.putEscapingControls(message)
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
