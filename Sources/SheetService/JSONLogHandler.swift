import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Log lines as JSON, one object per line, for a log pipeline (Loki, Elasticsearch, …):
/// `timestamp` (RFC 3339, UTC, microseconds), `level`, `logger` (the label), `message`, then the
/// metadata: the provider's (a request's `request_id`, `trace_id`, `session_id`), the logger's and
/// the line's own, as top-level fields in name order (a later source wins a name). Integers,
/// floating-point numbers and booleans given as metadata stay JSON numbers and booleans.
///
/// Each line is built in one byte array and written with one `write(2)` (lines up to 4 KiB are
/// not interleaved with another thread's: a pipe writes them whole).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: @Sendable ([UInt8]) -> Void

    /// A handler for `label` writing to standard error, or to `output` (each call gets one line,
    /// newline included).
    public init(
        label: String, metadataProvider: Logger.MetadataProvider? = nil,
        output: @escaping @Sendable ([UInt8]) -> Void = JSONLogHandler.standardError
    ) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line: [UInt8] = []
        line.reserveCapacity(384)
        line.append(contentsOf: #"{"timestamp":""#.utf8)
        Self.appendTimestamp(&line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: event.level.rawValue.utf8)
        line.append(contentsOf: #"","logger":"#.utf8)
        Self.appendString(label, to: &line)
        line.append(contentsOf: #","message":"#.utf8)
        Self.appendString(event.message.description, to: &line)
        // Merged only when more than one source has fields (the common line has one or none).
        let provided = metadataProvider?.get() ?? [:]
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
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            line.append(UInt8(ascii: ","))
            Self.appendString(key, to: &line)
            line.append(UInt8(ascii: ":"))
            Self.appendValue(value, to: &line)
        }
        line.append(contentsOf: "}\n".utf8)
        output(line)
    }

    /// Writes `line` to standard error, whole (retrying partial writes and interruptions).
    @Sendable public static func standardError(_ line: [UInt8]) {
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// A metadata value: numbers and booleans bare, strings quoted, lists and dictionaries as
    /// JSON arrays and objects.
    static func appendValue(_ value: Logger.Metadata.Value, to line: inout [UInt8]) {
        switch value {
        case .string(let text): appendString(text, to: &line)
        case .stringConvertible(let item):
            switch item {
            case let n as Int: line.append(contentsOf: String(n).utf8)
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
    /// bytes, UTF-8 included, as they are.
    static func appendString(_ text: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
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
        line.append(UInt8(ascii: "\""))
    }

    /// The wall-clock time now as RFC 3339 in UTC with microseconds: 2026-11-25T00:45:12.123456Z.
    static func appendTimestamp(_ line: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                line.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        line.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        line.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        line.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        line.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        line.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        line.append(UInt8(ascii: "."))
        digits(Int(now.tv_nsec) / 1000, 6)
        line.append(UInt8(ascii: "Z"))
    }
}
