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
        // Each name with its separators is one fixed text (one copy): json `,"route":"`, text
        // ` route=`. The route template and the numbers never need escaping.
        func name(_ jsonName: StaticString, _ textName: StaticString) {
            LineLogHandler.append(json ? jsonName : textName, to: &line)
        }
        name(#""method":"#, "method=")
        if json { LineLogHandler.appendString(method, to: &line) } else { line.append(contentsOf: method.utf8) }
        name(#","route":""#, " route=")
        LineLogHandler.append(route.path, to: &line)
        name(#"","status":"#, " status=")
        LineLogHandler.appendDecimal(status, to: &line)
        name(#","duration_ms":"#, " duration_ms=")
        // Milliseconds with microsecond digits, written without a Double's formatting.
        let microseconds = Int(nanoseconds / 1000)
        LineLogHandler.appendDecimal(microseconds / 1000, to: &line)
        line.append(UInt8(ascii: "."))
        LineLogHandler.appendDecimal(microseconds % 1000, digits: 3, to: &line)
        if let bytes {
            name(#","bytes":"#, " bytes=")
            LineLogHandler.appendDecimal(bytes, to: &line)
        }
        name(#","client":""#, " client=")
        if let client { client.appendHost(to: &line) } else { line.append(UInt8(ascii: "-")) }
        if json { line.append(UInt8(ascii: "\"")) }
    }
}
