import Foundation
import SheetdTesting
import Testing

@testable import SheetService

#if canImport(Glibc)
    import Glibc
#endif

extension ServiceIntegration {
    /// Connections: keep-alive, the body limit, and drain (readiness off, in-flight requests finished,
    /// then the port closed). A real SheetServer on port 0.
    @Suite struct ConnectionTests {
        @Test func keepAliveServesAHundredRequestsOnOneConnection() throws {
            let (server, c) = try connectedServer()
            defer { server.stop() }
            let fd = c.fd
            #expect(try c.put("k", #"{"initialDetent": "normal"}"#).status == 201)
            var statuses: [Int] = []
            for i in 0..<100 {
                let r: Response
                switch i % 5 {
                case 0: r = try c.get("/sessions/k")
                case 1: r = try c.pan("k", #"{"phase": "began"}"#)
                case 2: r = try c.pan("k", #"{"phase": "changed", "translation": \#(i)}"#)
                case 3: r = try c.request("POST", "/sessions/k/pan", json: #"{"phase": "cancelled"}"#)
                default: r = try c.get(i % 2 == 0 ? "/healthz" : "/presets")
                }
                statuses.append(r.status)
                #expect(!r.closesConnection, "request \(i): \(r.headers)")
            }
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            #expect(c.fd == fd)
        }

        @Test func bodyLimitIsConfigurable() throws {
            let (server, c) = try connectedServer { $0.maxBodyBytes = 1024 }
            defer { server.stop() }
            // 1000 bytes of valid JSON: accepted.
            let valid = #"{"preset": "glide"}"#
            let padded = valid + String(repeating: " ", count: 1000 - valid.utf8.count)
            let ok = try c.request("PUT", "/sessions/a", body: bytes(padded))
            #expect(ok.status == 201, "\(ok)")
            // 1024 bytes exactly: still within the limit.
            let exact = valid + String(repeating: " ", count: 1024 - valid.utf8.count)
            #expect(try c.request("PUT", "/sessions/a", body: bytes(exact)).status == 200)
            // 1000 bytes of invalid JSON: read and refused as JSON (400), not as too large.
            let invalid = String(repeating: "x", count: 1000)
            expectProblem(try c.request("PUT", "/sessions/b", body: bytes(invalid)), status: 400, code: "invalid-json")
            // 1025 declared: 413 at once, before any body byte is sent; like every response, it
            // carries CORS headers for an allowed Origin.
            let big = try HTTPConnection(port: server.port)
            try big.send(
                "PUT /sessions/b HTTP/1.1\r\nHost: x\r\nOrigin: http://demo.example\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 1025\r\n\r\n")
            let refused = try big.readResponse(method: "PUT", timeout: 30)
            expectProblem(refused, status: 413, code: "body-too-large")
            #expect(refused.headers["Access-Control-Allow-Origin"] == "*", "\(refused.headers)")
            #expect(big.closedByPeer(within: 20), "the unread body is never read: the connection closes")
            #expect(try c.get("/sessions/b").status == 404)
        }
    }
}

extension ServiceIntegration.ConnectionTests {
    @Test func drainTurnsReadinessOffFinishesInFlightRequestsThenCloses() throws {
        // A 3 s grace: the requests below, up to the in-flight one's completion, all come within it
        // on any machine (they take milliseconds); the listener closes after it.
        let (server, c) = try connectedServer { $0.drainGrace = 3 }
        defer { server.stop() }
        let port = server.port
        #expect(try c.put("s", #"{"initialDetent": "normal"}"#).status == 201)
        #expect(try c.get("/readyz").status == 200)

        // An in-flight request: its head and half its body are in before the drain starts.
        let inflight = try HTTPConnection(port: port)
        let panBody = bytes(#"{"phase": "began", "translation": 0}"#)
        try inflight.send(
            bytes(
                "POST /sessions/s/pan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(panBody.count)\r\n\r\n"
            ) + panBody.prefix(10))

        let drainer = Background { server.drain() }
        // Once draining, every answer closes its connection (clients reconnect for the next
        // request, so none is left idle on a connection the final stop would cut): each request
        // below goes on a connection of its own, as a client honouring `Connection: close` does.
        func fresh() throws -> HTTPConnection { try HTTPConnection(port: port) }
        // Readiness turns false at once; liveness stays.
        #expect(try eventually(within: 3) { try fresh().get("/readyz").status == 503 })
        let ready = try fresh().get("/readyz")
        #expect(ready.headers.contains("Retry-After"))
        #expect(ready.headers["Connection"]?.lowercased() == "close")
        #expect(try fresh().get("/healthz").status == 200)
        #expect(server.isDraining)
        // New sessions: 503 draining with Retry-After, by POST or by PUT of a new id.
        let post = try fresh().request("POST", "/sessions")
        expectProblem(post, status: 503, code: "draining")
        #expect(post.headers["Retry-After"].flatMap { Int($0) } ?? 0 >= 1)
        expectProblem(try fresh().put("new-one"), status: 503, code: "draining")
        // The in-flight request completes.
        try inflight.send(Array(panBody.dropFirst(10)))
        let finished = try inflight.readResponse(method: "POST")
        #expect(finished.status == 200, "\(finished)")
        #expect(finished.json?["state"] as? String == "dragging")

        // Requests keep being answered until the listener closes; nothing but readiness and new
        // sessions is 5xx.
        var statuses: [String: [Int]] = [:]
        var i = 0
        loop: while i < 3_000 {
            let (method, path): (String, String) =
                [("GET", "/sessions/s"), ("GET", "/readyz"), ("POST", "/sessions"), ("GET", "/presets")][i % 4]
            i += 1
            do {
                let r = try fresh().request(method, path)
                statuses["\(method) \(path)", default: []].append(r.status)
            } catch {
                break loop  // the server closed the connection: drained
            }
        }
        #expect(drainer.wait(seconds: 60))
        for (request, codes) in statuses {
            let allowed: Set<Int> =
                switch request {
                case "GET /readyz", "POST /sessions": [503]
                default: [200]
                }
            #expect(codes.allSatisfy(allowed.contains), "\(request): \(codes)")
        }
        // Then the port refuses connections.
        #expect(throws: SocketError(call: "connect", code: ECONNREFUSED)) {
            _ = try connectedSocket(port: port)
        }
    }
}
