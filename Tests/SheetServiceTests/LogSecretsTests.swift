import Foundation
import Logging
import SheetdTesting
import Testing

@testable import SheetService

// No credential in any log line, at any level and in either format, and no forged lines: a
// session token or the API key sent as `access_token` on /frames (EventSource cannot send
// headers), logged by the lines a failure, a 503 and every answer at debug write (issue 29).

extension ServiceIntegration {
    @Suite struct LogSecretsTests {}
}

extension ServiceIntegration.LogSecretsTests {
    @Test(arguments: [LineLogHandler.Format.json, .text])
    func noCredentialReachesALogLine(format: LineLogHandler.Format) throws {
        let capture = LogCapture()
        var configuration = ServiceConfiguration()
        configuration.port = 0
        configuration.accessLog = true
        configuration.apiKey = "KEY-SECRET-1"
        configuration.maxSessions = 1
        let server = try SheetServer(
            configuration: configuration, logger: capture.logger(level: .trace, format: format))
        try server.start()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let key = [("Authorization", "Bearer KEY-SECRET-1")]
        #expect(try c.request("PUT", "/sessions/a", headers: key).status == 201)
        let rows: [(method: String, target: String, key: Bool, status: Int)] = [
            // The key in the query of a stream that is refused (bad fps): a 400, logged at debug.
            ("GET", "/sessions/a/frames?fps=0&access_token=KEY-SECRET-1", true, 400),
            // A wrong credential: 401 at debug, the presented value in the query.
            ("GET", "/sessions/a/frames?once=true&access_token=TOKEN-SECRET-2", false, 401),
            // The session cap: a 503, logged at notice.
            ("PUT", "/sessions/b?access_token=KEY-SECRET-1", true, 503),
            // A line break, percent-encoded in an unknown parameter's name: it must not start a
            // line of its own.
            ("GET", "/sessions/a/frames?x%0Aforged=1&access_token=KEY-SECRET-1", true, 400),
        ]
        for row in rows {
            let r = try c.request(row.method, row.target, headers: row.key ? key : [])
            #expect(r.status == row.status, "\(row.target): \(r.status)")
        }
        server.stop()
        let lines = capture.raw.withLock { $0 }
        #expect(!lines.isEmpty)
        for line in lines {
            // The rule: no credential, whatever the line.
            #expect(!line.contains("SECRET"), "\(line)")
            // The rule: one line per event, never forged ones.
            #expect(!line.dropLast().contains("\n") && !line.contains("\nforged"), "\(line)")
        }
        // The targets are still there for the reader, with the credential's place marked.
        #expect(lines.contains { $0.contains("access_token=[redacted]") })
    }
}
