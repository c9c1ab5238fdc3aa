import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Frame streams cannot lock other clients out: a session, a client and the server each hold at
// most so many, the connections they leave are kept for requests, and a departed client's streams
// go (issue 29). Real servers on port 0; verdicts on statuses and on the server's own count.

extension ServiceIntegration {
    @Suite struct StreamLimitsTests {}
}

extension ServiceIntegration.StreamLimitsTests {
    /// Opens a stream of `session`, as `client` (sent as X-Forwarded-For; believed only from a
    /// trusted proxy).
    private func open(_ server: SheetServer, _ session: String, client: String? = nil) throws -> SSEClient {
        try SSEClient(
            port: server.port, path: "/sessions/\(session)/frames",
            headers: client.map { [("X-Forwarded-For", $0)] } ?? [])
    }

    struct Row: Sendable, CustomStringConvertible {
        let description: String
        let perSession: Int
        let perClient: Int
        let connections: Int?
        let trusted: Bool
        /// The streams opened before the refusal: (session, forwarded client).
        let streams: [(String, String?)]
        /// The one after them, and what it gets.
        let last: (String, String?)
        let status: Int
        let code: String
    }

    static let rows: [Row] = [
        // A session's share: its ninth stream is 429.
        Row(
            description: "per session", perSession: 8, perClient: 32, connections: nil, trusted: false,
            streams: Array(repeating: ("s0", nil), count: 8), last: ("s0", nil), status: 429, code: "too-many-streams"),
        // A client's share across its sessions: the fourth is 429.
        Row(
            description: "per client", perSession: 8, perClient: 3, connections: nil, trusted: false,
            streams: [("s0", nil), ("s1", nil), ("s2", nil)], last: ("s3", nil), status: 429, code: "too-many-streams"),
        // Behind a trusted proxy, each forwarded client has its own share; another's is untouched.
        Row(
            description: "forwarded clients", perSession: 8, perClient: 2, connections: nil, trusted: true,
            streams: [("s0", "10.0.0.1"), ("s1", "10.0.0.1"), ("s2", "10.0.0.2"), ("s3", "10.0.0.2")],
            last: ("s4", "10.0.0.1"), status: 429, code: "too-many-streams"),
        // An untrusted peer's X-Forwarded-For is ignored: the peer is the client.
        Row(
            description: "untrusted forwarding", perSession: 8, perClient: 2, connections: nil, trusted: false,
            streams: [("s0", "10.0.0.1"), ("s1", "10.0.0.2")], last: ("s2", "10.0.0.3"), status: 429,
            code: "too-many-streams"),
        // The server's total leaves connections for requests: 40 connections, 24 streams at most.
        Row(
            description: "total", perSession: 8, perClient: 1, connections: 40, trusted: true,
            streams: (0..<24).map { ("s\($0 % 6)", "10.0.1.\($0)") }, last: ("s0", "10.0.2.1"), status: 503,
            code: "stream-limit"),
    ]

    @Test(arguments: rows)
    func streamsAreLimited(row: Row) throws {
        let server = try startServer {
            $0.maxStreamsPerSession = row.perSession
            $0.maxStreamsPerClient = row.perClient
            $0.connectionLimit = row.connections
            $0.trustedProxies = row.trusted ? ["127.0.0.1"] : []
        }
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        for i in 0..<6 { #expect(try c.put("s\(i)").status == 201) }
        var open: [SSEClient] = []
        defer { for s in open { s.close() } }
        for (session, client) in row.streams {
            let s = try self.open(server, session, client: client)
            #expect(s.status == 200, "\(row): \(s.errorResponse.map { "\($0)" } ?? "")")
            open.append(s)
        }
        let refused = try self.open(server, row.last.0, client: row.last.1)
        let problem = try #require(refused.errorResponse, "\(row): the stream was opened")
        expectProblem(problem, status: row.status, code: row.code)
        #expect(problem.headers.contains("Retry-After"))
        // Requests are still answered on the connections streams may not take.
        #expect(try c.get("/healthz").status == 200)
        #expect(try c.get("/sessions/s0").status == 200)
        // A stream that ends gives its place back.
        open.removeLast().close()
        var statuses: [Int] = []
        #expect(
            eventually {
                let again = try? self.open(server, row.streams.last!.0, client: row.streams.last!.1)
                statuses.append(again?.status ?? 0)
                again?.close()
                return again?.status == 200
            }, "\(row): \(statuses)")
    }

    /// A client that leaves without a word: its parked streams are noticed closed at the next
    /// keep-alive writes (two intervals), not held until the server stops.
    @Test func aDepartedClientsStreamsGo() throws {
        let server = try startServer { $0.keepAliveInterval = 0.2 }
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        #expect(try c.put("gone").status == 201)
        let streams = try (0..<5).map { _ in try open(server, "gone") }
        #expect(streams.allSatisfy { $0.status == 200 })
        #expect(eventually { server.responder.table.get("gone")?.openStreams.load(ordering: .relaxed) == 5 })
        for s in streams { s.close() }
        #expect(eventually { server.responder.table.get("gone")?.openStreams.load(ordering: .relaxed) == 0 })
    }
}
