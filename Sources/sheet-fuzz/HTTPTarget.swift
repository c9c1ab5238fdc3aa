import Logging
import MicroHTTP
import SheetService

/// The default mode: a script of HTTP requests run through one SheetResponder, as libmicrohttpd's
/// threads call it: MicroHTTP's framing rules and `screen` on the head, then (unless either
/// refused) `respond` on the whole request.
///
/// The script is text, one line at a time (so seeds are readable and the fuzzer's dictionary
/// tokens land in useful places), in HTTP's order: a request line, then what belongs to it.
///
///     # comment                  ignored
///     @1234.5                    receive time of the next requests: server seconds (0 to 99,999;
///                                default 1000, then 10 ms more for each request)
///     METHOD TARGET [BODY]       a request; BODY is the rest of the line
///     Name: value                a header of the request above
///     ~HTTP/1.0                  the protocol version of the request above (default HTTP/1.1)
///     |more                      appends a newline and "more" to the body of the request above
///
/// A line that starts with capital letters and a space is a request; any other line with a colon is
/// a header (so a header name may hold a space, for the screen to refuse).
/// Without header lines a request gets `Host`, and with a body `Content-Type: application/json`
/// and its `Content-Length`; with header lines it gets exactly those (plus the Content-Length
/// libmicrohttpd would have framed the body by, when there is neither it nor Transfer-Encoding).
/// A "$" in a target stands for the id of the last session POST /sessions created.
///
/// Every session a script creates is deleted when it ends, so each input starts from an empty
/// store (the profile cache and the metrics carry over, as in a long-running server).
enum HTTPTarget {
    /// The responder every input talks to, made once like the server's. A cap of 8 sessions makes
    /// the limit's 503 reachable within one input.
    static let responder: SheetResponder = {
        var configuration = ServiceConfiguration()
        configuration.port = 0
        configuration.maxSessions = 8
        // A logger that drops everything: the responder logs every 5xx (the cap's 503s) and
        // libFuzzer's own output must stay readable.
        let logger = Logger(label: "sheet-fuzz") { _ in SwiftLogNoOpLogHandler() }
        do {
            return try SheetResponder(configuration: configuration, logger: logger, clock: Stopwatch(origin: origin))
        } catch {
            fatalError("sheet-fuzz: cannot create the responder: \(error)")
        }
    }()

    /// The server clock's origin, 100,000 s in the past, so that every receive time a script can
    /// set (0 to 99,999 s after it) is in the past, as a real receive time is.
    static let origin = ContinuousClock.now - .seconds(100_000)

    /// One request of a script.
    struct Request {
        var method: String
        var target: String
        var version: String
        /// nil: the automatic headers.
        var headers: [(name: String, value: String)]?
        var body: [UInt8]
        var time: Double
    }

    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        var created: [String] = []
        var lastCreated: String?
        for var request in parse(bytes) {
            if request.target.utf8.contains(UInt8(ascii: "$")), let id = lastCreated {
                request.target = request.target.replacing("$", with: id)
            }
            let response = send(request)
            // Location is sent with 201 only, by POST /sessions and a PUT that creates.
            if response.status == 201, let location = response.headers["location"],
                location.hasPrefix("/sessions/")
            {
                let id = String(location.dropFirst("/sessions/".count))
                created.append(id)
                if request.method == "POST" { lastCreated = id }
            }
        }
        for id in created {
            let gone = send(
                Request(method: "DELETE", target: "/sessions/\(id)", version: "HTTP/1.1", body: [], time: 0))
            check(gone.status == 204 || gone.status == 404, "cleanup DELETE /sessions/\(id) answered \(gone.status)")
        }
    }

    /// Runs one request the way the server does, checks the response, and returns it.
    @discardableResult
    static func send(_ r: Request) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let explicit = r.headers {
            for (name, value) in explicit { headers.append(name: name, value: value) }
            if !r.body.isEmpty, !headers.contains("content-length"), !headers.contains("transfer-encoding") {
                headers.append(name: "Content-Length", value: String(r.body.count))
            }
        } else {
            headers.append(name: "Host", value: "fuzz.invalid")
            if !r.body.isEmpty {
                headers.append(name: "Content-Type", value: "application/json")
                headers.append(name: "Content-Length", value: String(r.body.count))
            }
        }
        let head = HTTPRequestHead(method: r.method, target: r.target, headers: headers, version: r.version)
        let what = "\(r.method) \(r.target)"
        // As the server does: its framing rules first (MicroHTTP's), then the service's screen.
        let framing = HTTPRefusal.framing(
            of: head, maxBodyBytes: ServiceConfiguration().maxBodyBytes, chunkedBodies: false)
        if let refusal = framing.map({ responder.refused($0, head) }) ?? responder.screen(head) {
            if tracing { trace("\(what) → screen \(refusal.status)") }
            check(
                [400, 411, 413, 415, 501].contains(refusal.status),
                "\(what): the screen refused with \(refusal.status)")
            checkBody(refusal, what)
            return refusal
        }
        let received = origin + .milliseconds(Int64((r.time * 1000).rounded()))
        let response = responder.respond(to: HTTPRequest(head: head, body: r.body, receivedAt: received))
        if tracing {
            var body = "(stream)"
            if let b = response.body.completeBytes { body = String(decoding: b.prefix(300), as: UTF8.self) }
            trace("\(what) → \(response.status) \(body)")
        }
        checkBody(response, what)
        return response
    }

    /// The response invariants: no 5xx for input (the session cap's 503 aside), every JSON body
    /// parses again with the service's own reader, and the numbers in it are sane.
    static func checkBody(_ response: HTTPResponse, _ what: String) {
        let status = response.status
        check(status >= 200 && status <= 599, "\(what): status \(status)")
        if case let .stream(stream) = response.body {
            check(status == 200, "\(what): a stream with status \(status)")
            // Nobody reads it: closing it now is a client that went away, and the session forgets it.
            stream.finish()
            return
        }
        guard let body = response.body.completeBytes else { return }
        let type = response.headers["content-type"] ?? ""
        guard type.hasPrefix("application/json") || type.hasPrefix("application/problem+json") else {
            check(status < 500, "\(what): \(status) with \(type)")
            return
        }
        let json: JSONValue
        do {
            json = try JSONReader.parse(body)
        } catch {
            fail("\(what): the \(status) body does not parse: \(error): \(String(decoding: body, as: UTF8.self))")
        }
        if type.hasPrefix("application/problem+json") {
            check(json["status"]?.double == Double(status), "\(what): problem status is not \(status)")
            let code = json["code"]?.string ?? ""
            check(
                status < 500 || (status == 503 && code == "session-limit")
                    || (status == 501 && code == "not-implemented"),
                "\(what): \(status) \(code) for input: \(String(decoding: body, as: UTF8.self))")
        } else {
            check(status < 500, "\(what): \(status) for input")
        }
        checkNumbers(json, what)
    }

    /// Walks a rendered document by its schema: the snapshot or result of a session route, or
    /// /simulate's results, animation, frames and final snapshot. Their numbers must be numbers
    /// (the writer renders a NaN or infinity as null, so a null there is a non-finite number that
    /// slipped through) and their alphas must lie in [0, 1]. By schema, not by shape: a fluid
    /// detent may be named "state" or "curve".
    static func checkNumbers(_ json: JSONValue, _ what: String) {
        guard case let .object(document) = json else { return }
        if case .string? = document["state"] { checkWireCard(document, what) }
        guard case let .array(results)? = document["results"] else { return }
        for (i, result) in results.enumerated() {
            guard case let .object(r) = result else { fail("\(what): results[\(i)] is \(result)") }
            checkWireCard(r, "\(what): results[\(i)]")
        }
        if case let .object(a)? = document["animation"] { checkWireAnimation(a, "\(what): animation") }
        if case let .array(frames)? = document["frames"] {
            for (i, frame) in frames.enumerated() {
                guard case let .object(f) = frame else { fail("\(what): frames[\(i)] is \(frame)") }
                let place = "\(what): frames[\(i)]"
                checkCard(
                    constant: number(f, "constant", place), alpha: number(f, "dimmerAlpha", place),
                    progress: number(f, "progress", place), place)
                _ = number(f, "t", place)
                _ = number(f, "velocity", place)
            }
        }
        guard case let .object(final)? = document["final"] else { fail("\(what): /simulate without final") }
        checkWireCard(final, "\(what): final")
    }

    /// A snapshot or a result: its card, time, detents and animation.
    private static func checkWireCard(_ o: JSONObject, _ what: String) {
        checkCard(
            constant: number(o, "constant", what), alpha: number(o, "dimmerAlpha", what),
            progress: number(o, "progress", what), what)
        _ = number(o, "time", what)
        if case let .object(detents)? = o["detents"] {
            for (name, constant) in detents {
                check(constant.double != nil, "\(what): detent \(name) is \(constant)")
            }
        }
        if case let .object(a)? = o["animation"] { checkWireAnimation(a, "\(what): animation") }
    }

    /// An animation as the wire describes it.
    private static func checkWireAnimation(_ a: JSONObject, _ what: String) {
        for key in ["from", "to", "duration", "startTime"] { _ = number(a, key, what) }
        for key in ["fromAlpha", "toAlpha"] {
            let alpha = number(a, key, what)
            check(alpha >= 0 && alpha <= 1, "\(what): \(key) \(alpha) is outside [0, 1]")
        }
    }

    /// The number at `key`, or a failure naming what is there instead.
    private static func number(_ o: JSONObject, _ key: String, _ what: String) -> Double {
        guard case let .number(x)? = o[key] else {
            fail("\(what): \(key) is \(o[key].map { "\($0)" } ?? "missing")")
        }
        return x
    }

    /// Splits a script into requests (see the type's comment).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> [Request] {
        var requests: [Request] = []
        // Whether the lines that follow belong to the last request (false before the first one
        // and after a request line that cannot arrive).
        var open = false
        var time = 1000.0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            var line = line
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard let first = line.first else { continue }
            let rest = line.dropFirst()
            switch first {
            case UInt8(ascii: "#"): continue
            case UInt8(ascii: "@"):
                if let t = Double(text(rest)), t >= 0, t < 99_999 { time = t }
                continue
            case UInt8(ascii: "~"):
                if open { requests[requests.count - 1].version = text(rest) }
                continue
            case UInt8(ascii: "|"):
                if open {
                    requests[requests.count - 1].body.append(UInt8(ascii: "\n"))
                    requests[requests.count - 1].body.append(contentsOf: rest)
                }
                continue
            default: break
            }
            let space = line.firstIndex(of: UInt8(ascii: " "))
            let token = line[..<(space ?? line.endIndex)]
            guard let space, !token.isEmpty, token.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") })
            else {
                if open, let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                    var value = line[(colon + 1)...]
                    while value.first == UInt8(ascii: " ") { value = value.dropFirst() }
                    requests[requests.count - 1].headers =
                        (requests[requests.count - 1].headers ?? []) + [(text(line[..<colon]), text(value))]
                }
                continue
            }
            let method = line[..<space]
            let afterMethod = line[(space + 1)...]
            let targetEnd = afterMethod.firstIndex(of: UInt8(ascii: " ")) ?? afterMethod.endIndex
            let target = afterMethod[..<targetEnd]
            // libmicrohttpd hands method and target over as C strings and the daemon refuses a
            // target with a NUL before the responder sees it: such a request never arrives.
            open = !target.isEmpty && !target.contains(0)
            guard open else { continue }
            let body = targetEnd < afterMethod.endIndex ? Array(afterMethod[(targetEnd + 1)...]) : []
            requests.append(
                Request(
                    method: text(method), target: text(target), version: "HTTP/1.1", headers: nil, body: body,
                    time: time))
            time += 0.01
        }
        return requests
    }

    /// Bytes as a String the way the daemon makes them (invalid UTF-8 repaired).
    private static func text(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

extension HTTPTarget.Request {
    init(method: String, target: String, version: String, body: [UInt8], time: Double) {
        self.init(method: method, target: target, version: version, headers: nil, body: body, time: time)
    }
}
