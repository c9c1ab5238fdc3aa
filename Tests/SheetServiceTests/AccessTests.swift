import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Optional bearer protection (--api-key, --session-tokens), answered in process, and the request
// deadline, on sockets (a head or body still arriving).

extension ServiceIntegration {
    @Suite struct AccessTests {}
}

extension ServiceIntegration.AccessTests {
    /// With --api-key, every route but the probes, the page's files and the contract needs the
    /// key; a wrong one is 401 with error="invalid_token", and nothing changes.
    @Test func apiKeyGuardsEveryRouteButProbesAndPage() throws {
        let c = try InProcessService { $0.apiKey = "k3y" }
        let key = [("Authorization", "Bearer k3y")]
        let rows: [(method: String, path: String, open: Bool)] = [
            ("GET", "/healthz", true),  // probes stay open for load balancers
            ("GET", "/readyz", true),
            ("GET", "/livez", true),
            ("GET", "/", true),  // the demo page's files and the contract
            ("GET", "/sheet-client.js", true),
            ("GET", "/layout.html", true),  // the layout demo page
            ("GET", "/edges.html", true),  // the every-edge demo page
            ("GET", "/stacks.html", true),  // the stacks demo page
            ("GET", "/openapi.yaml", true),
            ("GET", "/presets", false),  // everything else needs the key
            ("GET", "/metrics", false),
            ("POST", "/sessions", false),
            ("POST", "/simulate", false),
            ("GET", "/sessions/x", false),
        ]
        for row in rows {
            let bare = try c.request(row.method, row.path)
            #expect((bare.status == 401) == !row.open, "\(row.method) \(row.path): \(bare.status)")
            if !row.open {
                expectProblem(bare, status: 401, code: "unauthorized")
                #expect(bare.headers["WWW-Authenticate"] == #"Bearer realm="sheetd""#)
                let wrong = try c.request(row.method, row.path, headers: [("Authorization", "Bearer nope")])
                #expect(wrong.status == 401)
                #expect(wrong.headers["WWW-Authenticate"]?.contains(#"error="invalid_token""#) == true)
            }
        }
        #expect(c.sessionCount == 0)
        #expect(try c.request("PUT", "/sessions/s", headers: key).status == 201)
        #expect(try c.request("GET", "/sessions/s", headers: key).status == 200)
        // CORS preflights carry no credentials and are answered.
        #expect(try c.request("OPTIONS", "/sessions/s", headers: [("Origin", "http://a")]).status == 204)
    }

    /// With --session-tokens, a session's routes need its own token (or the key): another
    /// client that learns the id cannot drive it; EventSource sends it as access_token.
    @Test func sessionTokenOpensOnlyItsSession() throws {
        let c = try InProcessService { $0.sessionTokens = true }
        let mine = try c.request("POST", "/sessions", json: #"{"initialDetent": "normal"}"#)
        let other = try c.request("POST", "/sessions", json: "{}")
        let id = try #require(mine.json?["id"] as? String)
        let token = try #require(mine.json?["token"] as? String)
        let otherToken = try #require(other.json?["token"] as? String)
        #expect(token.utf8.count == 22 && token != otherToken)
        // The snapshot never shows the token again.
        #expect(
            try c.request("GET", "/sessions/\(id)", headers: [("Authorization", "Bearer \(token)")]).json?["token"]
                == nil)
        let rows: [(auth: String?, status: Int)] = [
            (nil, 401),  // no credential
            ("Bearer \(otherToken)", 401),  // another session's token
            ("Basic \(token)", 401),  // not a bearer credential
            ("Bearer \(token)", 200),  // its own token
            ("bearer \(token)", 200),  // the scheme is case-insensitive (RFC 9110 §11.1)
        ]
        for row in rows {
            let r = try c.request(
                "POST", "/sessions/\(id)/pan", headers: row.auth.map { [("Authorization", $0)] } ?? [],
                json: #"{"phase": "began"}"#)
            #expect(r.status == row.status, "\(row.auth ?? "none"): \(r)")
        }
        // The frames stream opens (its frames are the stream tests' concern) or is refused.
        let stream = try c.get("/sessions/\(id)/frames?once=true&access_token=\(token)")
        #expect(stream.status == 200)
        let refused = try c.get("/sessions/\(id)/frames?access_token=\(otherToken)")
        #expect(refused.status == 401)
        // PUT over an existing id needs its token and keeps it.
        #expect(try c.request("PUT", "/sessions/\(id)", json: "{}").status == 401)
        let replaced = try c.request(
            "PUT", "/sessions/\(id)", headers: [("Authorization", "Bearer \(token)")], json: "{}")
        #expect(replaced.status == 200 && replaced.json?["token"] as? String == token)
    }

    /// The request deadline: a head still arriving at the deadline is cut off (or, completing in
    /// the instant before the watch's next look, answered 408 problem+json); a body still arriving
    /// is cut off (both counted), and the server goes on serving others. The verdicts are the cuts
    /// and the server's count of them (the idle timeout, 30 s, would cut none of these in the
    /// test's time); the deadlines below only bound a failing test.
    @Test func requestDeadlineRefusesLateHeadsAndCutsStalledBodies() throws {
        let server = try startServer { $0.requestDeadline = 0.5 }
        defer { server.stop() }
        let slowHead = try HTTPConnection(port: server.port)
        try slowHead.send("GET /healthz HTTP/1.1\r\n")
        Thread.sleep(forTimeInterval: 0.7)
        if (try? slowHead.send("Host: x\r\n\r\n")) != nil, let late = try? slowHead.readResponse() {
            expectProblem(late, status: 408, code: "request-timeout")
            #expect(late.headers["Connection"]?.lowercased() == "close")
        }
        #expect(slowHead.closedByPeer(within: 20))

        let stalled = try HTTPConnection(port: server.port)
        try stalled.send(
            "POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"pre")
        #expect(stalled.closedByPeer(within: 20))
        #expect(server.sessionCount == 0)
        // slowloris: header bytes trickled, each well within the idle timeout, never finishing
        // the head: cut off at the deadline (libmicrohttpd alone would keep it for ever).
        let trickle = try HTTPConnection(port: server.port)
        try trickle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
        let began = Monotonic.now()
        var cut = false
        while Monotonic.now() - began < 20 {
            do {
                try trickle.send("X-a: b\r\n")
            } catch {
                cut = true
                break
            }
            if trickle.closedByPeer(within: 0.1) {
                cut = true
                break
            }
        }
        #expect(cut, "the trickling head was never cut off (the deadline is 0.5 s, checked every 0.25 s)")
        let c = try HTTPConnection(port: server.port)
        #expect(try c.get("/healthz").status == 200)
        let metrics = try c.get("/metrics").text
        // The late head (when cut rather than answered 408), the stalled body and the trickle.
        let cutOff = metrics.split(separator: "\n").first { $0.hasPrefix("sheetd_requests_cut_off_total ") }
        #expect(
            cutOff == "sheetd_requests_cut_off_total 2" || cutOff == "sheetd_requests_cut_off_total 3",
            "\(cutOff ?? "none")")
    }
}
