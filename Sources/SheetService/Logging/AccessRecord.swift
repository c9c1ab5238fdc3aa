import Logging
import MicroHTTP

/// One answered request as the access log tells it: method, route template, status, duration,
/// body bytes and client address (the request id, trace id and session id come from the
/// request's trace, as on every line of the request).
///
/// It rides on the request's trace while its line is logged: the line handler writes its fields
/// straight into the line (no dictionary of them is built); other handlers get it from the
/// metadata provider as `access` and print its description.
struct AccessRecord: CustomStringConvertible, Sendable {
    var method: String
    var route: Route
    var status: Int
    /// From the request line to the answer, nanoseconds.
    var nanoseconds: Int64
    /// The body's bytes; nil for a frame stream (its line is written when it opens).
    var bytes: Int?
    var client: ClientAddress?

    /// `method=POST route=/sessions/{id}/pan status=200 duration_ms=0.052 bytes=146 client=127.0.0.1`
    var description: String {
        var line: [UInt8] = []
        appendFields(to: &line, json: false)
        return String(decoding: line, as: UTF8.self)
    }

    /// Appends the fields as JSON members (`"method":"POST",…`) or as `method=POST …`, with no
    /// separator before the first or after the last.
    func appendFields(to line: inout [UInt8], json: Bool) {
        line.append(atMost: fieldsBound) { writeFields(&$0, json: json) }
        appendClient(to: &line, json: json)
    }

    /// The most bytes `writeFields` writes, and a separator before them: the names with their
    /// separators (under 80 bytes), four numbers, the method (escaped, at most 6 bytes a byte,
    /// quoted) and the route template.
    var fieldsBound: Int {
        81 + 4 * LineCursor.decimalBound + 6 * method.utf8.count + 2 + route.label.utf8CodeUnitCount
    }

    /// The fields up to the client's address: `"method":"POST",…,"client":"` or
    /// `method=POST … client=`.
    func writeFields(_ cursor: inout LineCursor, json: Bool) {
        // Each name with its separators is one fixed text (one copy): json `,"route":"`, text
        // ` route=`. The route template and the numbers never need escaping.
        func name(_ jsonName: StaticString, _ textName: StaticString) {
            cursor.put(json ? jsonName : textName)
        }
        name(#""method":"#, "method=")
        if json { cursor.putJSONString(method) } else { cursor.put(method) }
        name(#","route":""#, " route=")
        cursor.put(route.label)
        name(#"","status":"#, " status=")
        cursor.putDecimal(status)
        name(#","duration_ms":"#, " duration_ms=")
        // Milliseconds with microsecond digits, written without a Double's formatting.
        let microseconds = Int(nanoseconds / 1000)
        cursor.putDecimal(microseconds / 1000)
        cursor.put(UInt8(ascii: "."))
        cursor.putDecimal(microseconds % 1000, digits: 3)
        if let bytes {
            name(#","bytes":"#, " bytes=")
            cursor.putDecimal(bytes)
        }
        name(#","client":""#, " client=")
    }

    /// The client's address, and in JSON the quote closing it: the last field.
    func appendClient(to line: inout [UInt8], json: Bool) {
        if let client { client.appendHost(to: &line) } else { line.append(UInt8(ascii: "-")) }
        if json { line.append(UInt8(ascii: "\"")) }
    }
}

/// Where a request's access-log line goes, chosen once from the logger.
enum AccessLog {
    /// No access log (`--access-log` off, or the logger's level above info).
    case off
    /// Straight to the logger's `LineLogHandler` (`logAccess`: the same bytes as through swift-log;
    /// with the line built in one reserved stretch, 2.8 k instructions a `changed` request where
    /// swift-log's call and separate appends took 6.9 k, callgrind).
    case direct(LineLogHandler)
    /// Through swift-log, `info("access")`, the record riding on the request's trace: the
    /// metadata provider hands it to other handlers as `access`.
    case logger(Logger)

    init(on: Bool, logger: Logger) {
        if !on || logger.logLevel > .info {
            self = .off
        } else if let handler = logger.handler as? LineLogHandler, handler.writesAccessDirectly {
            self = .direct(handler)
        } else {
            self = .logger(logger)
        }
    }

    /// Whether answers get a line.
    var isOn: Bool {
        if case .off = self { false } else { true }
    }

    /// Logs `record`, the access line of the request whose trace is in `slot`.
    func log(_ record: AccessRecord, _ slot: TraceSlot) {
        switch self {
        case .off: return
        case .direct(let handler):
            if let trace = slot.trace { handler.logAccess(record, trace: trace) }
        case .logger(let logger):
            slot.access = record
            logger.info("access")
            slot.access = nil
        }
    }
}
