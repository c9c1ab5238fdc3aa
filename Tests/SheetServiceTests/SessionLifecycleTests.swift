import Foundation
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    /// Sessions come and go: generated ids and the session limit, answered in process; idle expiry,
    /// which the server's sweeper does, on a real SheetServer on port 0.
    @Suite struct SessionLifecycleTests {
        /// POST /sessions ids: at least 22 URL-safe characters, never the same twice in 1,000.
        @Test func generatedIDsAreURLSafeAndUnique() throws {
            let c = try InProcessService()
            let urlSafe = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            var ids = Set<String>()
            for _ in 0..<1000 {
                let r = try c.request("POST", "/sessions")
                #expect(r.status == 201)
                let id = try #require(r.json?["id"] as? String)
                #expect(id.count >= 22, "\(id)")
                #expect(id.allSatisfy(urlSafe.contains), "\(id)")
                #expect(r.headers["Location"] == "/sessions/\(id)")
                ids.insert(id)
            }
            #expect(ids.count == 1000)
            #expect(c.sessionCount == 1000)
        }

        @Test func sessionLimitIs503AndFreesOnDelete() throws {
            let c = try InProcessService { $0.maxSessions = 5 }
            var ids: [String] = []
            for _ in 0..<5 {
                let r = try c.request("POST", "/sessions")
                #expect(r.status == 201)
                ids.append(r.json?["id"] as? String ?? "")
            }
            // The sixth, by POST or by PUT of a new id: 503 session-limit with Retry-After.
            let sixth = try c.request("POST", "/sessions")
            expectProblem(sixth, status: 503, code: "session-limit")
            #expect(sixth.headers["Retry-After"].flatMap { Int($0) } ?? 0 >= 1, "\(sixth.headers)")
            let put = try c.put("sixth")
            expectProblem(put, status: 503, code: "session-limit")
            #expect(put.headers.contains("Retry-After"))
            // Replacing an existing id is not a new session.
            #expect(try c.put(ids[0]).status == 200)
            // After a DELETE, a new one fits.
            #expect(try c.request("DELETE", "/sessions/\(ids[1])").status == 204)
            #expect(try c.request("POST", "/sessions").status == 201)
            expectProblem(try c.request("POST", "/sessions"), status: 503, code: "session-limit")
            #expect(c.sessionCount == 5)
        }

        @Test func idleSessionsExpireAndBusyOnesStay() throws {
            let ttl = 1.0
            let (server, c) = try connectedServer { $0.sessionTTL = ttl }
            defer { server.stop() }
            #expect(try c.put("idle").status == 201)
            // Busy is read every 50 ms until the sweeper has evicted idle (the deadline only bounds a
            // failing test). The server cannot have left busy unread longer than from sending one
            // read to receiving the next one's answer: while that stays under the TTL (on a stalled
            // machine it may not), busy must never be evicted.
            var sent = Monotonic.now()
            #expect(try c.put("busy").status == 201)
            var longestUnread = 0.0
            var evicted = false
            let idleGone = try eventually(within: 60, every: 0.05) {
                let sending = Monotonic.now()
                let r = try c.get("/sessions/busy")
                longestUnread = max(longestUnread, Monotonic.now() - sent)
                sent = sending
                if r.status != 200 { evicted = true }
                return evicted || server.sessionCount == 1
            }
            #expect(idleGone)
            #expect(!evicted || longestUnread >= ttl, "busy evicted, read at most \(longestUnread) s apart")
            expectProblem(try c.get("/sessions/idle"), status: 404, code: "session-not-found")
            if !evicted { #expect(try c.get("/sessions/busy").status == 200) }
        }
    }
}
