import Foundation
import Logging
import SheetdTesting
import Synchronization
import Testing

@testable import SheetService

// What an operator reads: request ids, traceparent, JSON log lines, the access log, process
// metrics and the `--threads auto` rule. Answered in process, but for the access lines that name
// the client, which is the connection's address (a server on port 0).

extension ServiceIntegration {
    @Suite struct OperatingTests {}
}

/// The JSON lines a server logged.
final class LogCapture: Sendable {
    let raw = Mutex<[String]>([])

    /// A logger writing JSON lines here, with the request metadata every line of a request gets.
    /// With a `provider`, the access line goes through swift-log's call, as for any handler with
    /// metadata of its own; without, straight to the handler.
    func logger(
        level: Logger.Level = .info, format: LineLogHandler.Format = .json, provider: Logger.MetadataProvider? = nil
    ) -> Logger {
        var logger = Logger(label: "sheetd") { label, _ in
            LineLogHandler(
                label: label, format: format, metadataProvider: provider,
                sink: LogSink { [self] bytes in raw.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } })
        }
        logger.logLevel = level
        return logger
    }

    /// Every line, parsed (a line that is not one JSON object ending in a newline is kept as
    /// {"unparsed": line}).
    var lines: [[String: Any]] {
        raw.withLock { $0 }.map { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            guard let object, line.hasSuffix("}\n"), line.firstIndex(of: "\n") == line.index(before: line.endIndex)
            else { return ["unparsed": line] }
            return object
        }
    }

    /// The access-log lines logged for request `id`.
    func access(_ id: String) -> [[String: Any]] {
        lines.filter { $0["request_id"] as? String == id && $0["route"] != nil }
    }
}

/// The service in process with the access log on, logging JSON into `capture`.
private func loggingService(_ capture: LogCapture) throws -> InProcessService {
    try InProcessService(logger: capture.logger()) { $0.accessLog = true }
}

/// A server on port 0 with the access log on, logging JSON into `capture`.
private func startLoggingServer(_ capture: LogCapture) throws -> SheetServer {
    var configuration = ServiceConfiguration()
    configuration.port = 0
    configuration.accessLog = true
    let server = try SheetServer(configuration: configuration, logger: capture.logger())
    try server.start()
    return server
}

extension ServiceIntegration.OperatingTests {
    /// X-Request-Id: a sane client id is echoed and logged; anything else is replaced by a
    /// generated one; every answer carries one, refusals before routing included.
    @Test func requestIDsAreKeptWhenSaneAndMadeOtherwise() throws {
        let capture = LogCapture()
        let c = try loggingService(capture)
        let long = String(repeating: "a", count: 128)
        let rows: [(headers: [(String, String)], kept: String?, method: String, path: String, body: String?)] = [
            ([], nil, "GET", "/healthz", nil),  // none sent: one is made
            ([("X-Request-Id", "abc-123")], "abc-123", "GET", "/healthz", nil),  // a plain token is kept
            (
                [("x-request-id", "f47ac10b-58cc-4372-a567-0e02b2c3d479")], "f47ac10b-58cc-4372-a567-0e02b2c3d479",
                "GET", "/presets", nil
            ),  // a UUID, the name in any case
            ([("X-Request-Id", "Root=1-5759e988:a/b+c@d_e.f")], "Root=1-5759e988:a/b+c@d_e.f", "GET", "/healthz", nil),  // every allowed punctuation byte
            ([("X-Request-Id", long)], long, "GET", "/healthz", nil),  // 128 bytes: the longest kept
            ([("X-Request-Id", long + "a")], nil, "GET", "/healthz", nil),  // 129 bytes: too long
            ([("X-Request-Id", "a b")], nil, "GET", "/healthz", nil),  // a space
            ([("X-Request-Id", #"a"b"#)], nil, "GET", "/healthz", nil),  // a quote could forge a log field
            ([("X-Request-Id", "é")], nil, "GET", "/healthz", nil),  // not ASCII
            ([("X-Request-Id", "a;b")], nil, "GET", "/healthz", nil),  // ; is not in the set
            ([("X-Request-Id", "bad id"), ("X-Request-Id", "good")], nil, "GET", "/healthz", nil),  // the first decides
            ([("X-Request-Id", "on-404")], "on-404", "GET", "/nowhere", nil),  // a problem answer carries it
            ([("X-Request-Id", "on-400")], "on-400", "POST", "/sessions", "{"),  // bad input too
            ([("X-Request-Id", "on-415"), ("Content-Type", "text/plain")], "on-415", "POST", "/sessions", "{}"),  // a refusal before the body
        ]
        var generated: Set<String> = []
        for row in rows {
            let r = try c.request(row.method, row.path, headers: row.headers, body: row.body.map { Array($0.utf8) })
            let echoed = try #require(r.headers["X-Request-Id"], "\(row.headers): \(r)")
            if let kept = row.kept {
                #expect(echoed == kept, "\(row.headers)")
            } else {
                #expect(echoed.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]+/) != nil, "\(row.headers): \(echoed)")
                #expect(generated.insert(echoed).inserted, "generated ids are unique: \(echoed)")
            }
            // The access line of this request carries the same id.
            let lines = capture.access(echoed)
            #expect(lines.count == 1, "\(row.headers): \(lines)")
            #expect(lines.first?["status"] as? Int == r.status)
        }
    }

    /// traceparent (W3C Trace Context): a valid header's trace id is logged; an invalid one is
    /// ignored (the request goes on, no trace_id).
    @Test func traceparentIsValidatedAndItsTraceIDLogged() throws {
        let capture = LogCapture()
        let c = try loggingService(capture)
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        let rows: [(traceparent: String, logged: String?)] = [
            ("00-\(trace)-00f067aa0ba902b7-01", trace),  // the spec's example
            ("00-\(trace)-00f067aa0ba902b7-00", trace),  // not sampled: still a trace id
            ("01-\(trace)-00f067aa0ba902b7-01-extra", trace),  // a later version may append fields
            ("00-\(trace)-00f067aa0ba902b7-01-extra", nil),  // version 00 is exactly 55 characters
            ("00-\(trace.uppercased())-00f067aa0ba902b7-01", nil),  // hex is lowercase
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", nil),  // all-zero trace id
            ("00-\(trace)-0000000000000000-01", nil),  // all-zero parent id
            ("ff-\(trace)-00f067aa0ba902b7-01", nil),  // version ff is invalid
            ("00-\(trace)-00f067aa0ba902b7", nil),  // no flags
            ("00_\(trace)_00f067aa0ba902b7_01", nil),  // wrong separators
            ("", nil),  // empty
        ]
        for (i, row) in rows.enumerated() {
            let id = "trace-row-\(i)"
            let r = try c.request(
                "GET", "/healthz", headers: [("X-Request-Id", id), ("traceparent", row.traceparent)])
            #expect(r.status == 200)
            let line = capture.access(id).first
            #expect(line?["trace_id"] as? String == row.logged, "\(row.traceparent): \(line ?? [:])")
        }
    }

    /// The access line: method, route template (never the raw path), status, duration, bytes,
    /// client, and the session id from the path; every line logged while answering carries the
    /// request id.
    @Test func accessLogLineHasTheRequestFields() throws {
        let capture = LogCapture()
        let server = try startLoggingServer(capture)
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        #expect(try c.request("PUT", "/sessions/logged", json: #"{"initialDetent": "normal"}"#).status == 201)
        let r = try c.request(
            "POST", "/sessions/logged/pan", headers: [("X-Request-Id", "pan-1")], json: #"{"phase": "began"}"#)
        #expect(r.status == 200)
        let line = try #require(capture.access("pan-1").first)
        let rows: [(field: String, expected: String)] = [
            ("method", "POST"),
            ("route", "/sessions/{id}/pan"),  // the template: one series per route, as in /metrics
            ("session_id", "logged"),
            ("client", "127.0.0.1"),
            ("level", "info"),
            ("logger", "sheetd"),
            ("message", "access"),
        ]
        for row in rows { #expect(line[row.field] as? String == row.expected, "\(row.field): \(line)") }
        #expect(line["status"] as? Int == 200)
        #expect(line["bytes"] as? Int == r.body.count)
        #expect((line["duration_ms"] as? Double ?? -1) >= 0)
        let timestamp = try #require(line["timestamp"] as? String)
        #expect(timestamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/) != nil, "\(timestamp)")
        // The text format: the same fields as name=value, after the message.
        let text = LogCapture()
        var textConfiguration = ServiceConfiguration()
        textConfiguration.port = 0
        textConfiguration.accessLog = true
        let textServer = try SheetServer(configuration: textConfiguration, logger: text.logger(format: .text))
        try textServer.start()
        defer { textServer.stop() }
        _ = try HTTPConnection(port: textServer.port).request("GET", "/presets", headers: [("X-Request-Id", "t-1")])
        let textLine = try #require(text.raw.withLock { $0 }.first { $0.contains("request_id=t-1") })
        #expect(
            textLine.wholeMatch(
                of:
                    /\d{4}-\d\d-\d\dT[\d:.]+Z info sheetd: access request_id=t-1 method=GET route=\/presets status=200 duration_ms=\d+\.\d{3} bytes=\d+ client=127\.0\.0\.1\n/
            )
                != nil, "\(textLine)")
        // Off by default: no access line.
        let quiet = LogCapture()
        #expect(try InProcessService(logger: quiet.logger()).get("/healthz").status == 200)
        #expect(quiet.lines.filter { $0["route"] != nil }.isEmpty)
    }

    /// The access line written straight to the handler is byte for byte the one swift-log's call
    /// writes (a handler with a provider takes that path), in both formats, timestamp and duration
    /// aside; the text form has every field the JSON form has, in the same order.
    @Test func directAccessLineIsTheLoggedOne() throws {
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        let rows: [(id: String, method: String, path: String, headers: [(String, String)], body: String?)] = [
            ("d-put", "PUT", "/sessions/d1", [], #"{"initialDetent": "normal"}"#),  // a session id from the path, a body
            (
                "d-trace", "POST", "/sessions/d1/pan", [("traceparent", "00-\(trace)-00f067aa0ba902b7-01")],
                #"{"phase":"began"}"#
            ),  // every id
            ("d-404", "GET", "/nowhere", [], nil),  // no route: the template of unmatched paths
            ("d-400", "POST", "/sessions", [], "{"),  // a problem answer
            ("d-options", "OPTIONS", "/sessions", [], nil),  // a preflight
        ]
        // Timestamp, duration and a session's bytes (its answer holds times) differ between two
        // requests; everything else must not.
        func masked(_ line: String) -> String {
            line.replacing(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/, with: "T").replacing(
                /(duration_ms|bytes)(":|=)[\d.]+/, with: { "\($0.1)\($0.2)N" })
        }
        for format in [LineLogHandler.Format.json, .text] {
            var lines: [[String: String]] = []
            for provider in [nil, Logger.MetadataProvider { [:] }] {
                let capture = LogCapture()
                var configuration = ServiceConfiguration()
                configuration.port = 0
                configuration.accessLog = true
                let server = try SheetServer(
                    configuration: configuration, logger: capture.logger(format: format, provider: provider))
                try server.start()
                defer { server.stop() }
                let c = try HTTPConnection(port: server.port)
                for row in rows {
                    let headers = [("X-Request-Id", row.id)] + row.headers
                    if let body = row.body {
                        _ = try c.request(row.method, row.path, headers: headers, json: body)
                    } else {
                        _ = try c.request(row.method, row.path, headers: headers)
                    }
                }
                var byID: [String: String] = [:]
                for line in capture.raw.withLock({ $0 }) where line.contains("access") {
                    for row in rows
                    where line.contains(format == .json ? #""request_id":"\#(row.id)""# : "request_id=\(row.id) ") {
                        byID[row.id] = masked(line)
                    }
                }
                lines.append(byID)
            }
            for row in rows {
                let direct = try #require(lines[0][row.id], "\(format) \(row.id): no direct line")
                #expect(direct == lines[1][row.id], "\(format) \(row.id)")
            }
            if format == .text {
                let line = try #require(lines[0]["d-trace"])
                #expect(
                    line.wholeMatch(
                        of:
                            /T info sheetd: access request_id=d-trace trace_id=[0-9a-f]{32} session_id=d1 method=POST route=\/sessions\/\{id\}\/pan status=200 duration_ms=N bytes=N client=127\.0\.0\.1\n/
                    ) != nil, "\(line)")
            }
        }
    }

    /// JSON lines stay one valid object per line whatever the message and metadata hold.
    @Test func jsonLinesEscapeEverything() throws {
        let capture = LogCapture()
        let logger = capture.logger()
        let rows: [(message: String, value: Logger.Metadata.Value, expected: Any)] = [
            ("plain", .string("x"), "x"),
            (#"quote " and backslash \"#, .string("\"\\"), "\"\\"),  // escaped, not ending the string
            ("new\nline\r\t", .string("a\nb"), "a\nb"),  // no raw newline splits the line
            ("\u{1}\u{1f}", .string("\u{0}"), "\u{0}"),  // control bytes as \u00XX
            ("ünïcødé ✓", .string("✓"), "✓"),  // UTF-8 kept as it is
            ("int", .stringConvertible(42), 42),  // numbers stay numbers
            ("double", .stringConvertible(0.25), 0.25),
            ("bool", .stringConvertible(true), "true"),  // a JSON boolean (checked in the raw line)
        ]
        for row in rows { logger.notice("\(row.message)", metadata: ["field": row.value]) }
        let lines = capture.lines
        let raw = capture.raw.withLock { $0 }
        #expect(lines.count == rows.count)
        for (i, (row, line)) in zip(rows, lines).enumerated() {
            #expect(line["message"] as? String == row.message, "\(line)")
            #expect(line["level"] as? String == "notice")
            if row.message == "bool" {
                #expect(raw[i].contains(#""field":true"#), "\(raw[i])")
            } else {
                #expect("\(line["field"] ?? "nil")" == "\(row.expected)", "\(row.message): \(line)")
            }
        }
    }

    /// /metrics has the standard process metrics, typed as Prometheus's client libraries type them.
    @Test func processMetricsInStandardNames() throws {
        let text = try InProcessService().get("/metrics").text
        let rows: [(name: String, type: String)] = [
            ("process_cpu_seconds_total", "counter"),
            ("process_resident_memory_bytes", "gauge"),
            ("process_virtual_memory_bytes", "gauge"),
            ("process_open_fds", "gauge"),
            ("process_max_fds", "gauge"),
            ("process_start_time_seconds", "gauge"),
        ]
        for row in rows {
            #expect(text.contains("# TYPE \(row.name) \(row.type)\n"), "\(row.name)")
            let value = text.split(separator: "\n").first { $0.hasPrefix(row.name + " ") }
                .flatMap { Double($0.split(separator: " ")[1]) }
            #expect((value ?? 0) > 0, "\(row.name) = \(value.map { "\($0)" } ?? "missing")")
        }
        // The start time is this process's: before now, after a day ago.
        let start =
            text.split(separator: "\n").first { $0.hasPrefix("process_start_time_seconds ") }
            .flatMap { Double($0.split(separator: " ")[1]) } ?? 0
        let now = Date().timeIntervalSince1970
        #expect(start <= now + 1 && start > now - 86_400)
    }

    /// `--threads auto`: the usable cores less one, at least one.
    @Test func automaticThreadsLeaveACore() {
        let rows: [(cores: Int, threads: Int)] = [
            (1, 1),  // never fewer than one
            (2, 1),  // one core left to the pacer, the store and the kernel
            (4, 3),
            (16, 15),
        ]
        for row in rows { #expect(ServiceConfiguration.threads(forCores: row.cores) == row.threads) }
        #expect(ServiceConfiguration.automaticThreads >= 1)
        #expect(ServiceConfiguration.automaticThreads <= ProcessInfo.processInfo.processorCount)
    }
}

/// A log handler that keeps what `SheetServer.logMetadataProvider` gives each line: what another
/// handler (swift-log's own, or an application's) would print.
private struct ProvidedMetadata: LogHandler {
    final class Lines: Sendable { let all = Mutex<[[String: String]]>([]) }
    let lines: Lines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider? = SheetServer.logMetadataProvider

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let provided = (metadataProvider?.get() ?? [:]).mapValues { $0.description }
        lines.all.withLock { $0.append(provided) }
    }
}

extension ServiceIntegration.OperatingTests {
    /// Other handlers get the request's fields, and the access record, from the metadata provider.
    @Test func metadataProviderGivesTheRequestFields() throws {
        let lines = ProvidedMetadata.Lines()
        let handler = ProvidedMetadata(lines: lines)
        let c = try InProcessService(logger: Logger(label: "sheetd") { _ in handler }) { $0.accessLog = true }
        #expect(try c.request("PUT", "/sessions/p", headers: [("X-Request-Id", "prov-1")], json: "{}").status == 201)
        let line = try #require(lines.all.withLock { $0 }.first { $0["request_id"] == "prov-1" })
        #expect(line["session_id"] == "p")
        #expect(line["access"]?.hasPrefix("method=PUT route=/sessions/{id} status=201 duration_ms=") == true, "\(line)")
        // Outside a request (this thread) there is nothing to give.
        #expect(SheetServer.logMetadataProvider.get().isEmpty)
    }
}
