import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Session tokens fail closed: a stranger never takes a session over, neither through a race for a
// new id nor while the store cannot say whether the session exists, and a refused request changes
// nothing (issue 29). Real servers and a real redis-server; verdicts on statuses and on what the
// victim can still do, never on time.

extension ServiceIntegration {
    @Suite struct AccessFailClosedTests {}
}

extension ServiceIntegration.AccessFailClosedTests {
    /// Two PUTs of one new id at once, on a server with four threads: exactly one creates it and
    /// gets a token; the other is authorised again against the winner and refused (401), and never
    /// sees the winner's token.
    @Test func concurrentPutsOfANewIDHaveOneWinner() throws {
        let server = try startServer {
            $0.sessionTokens = true
            $0.threads = 4
        }
        defer { server.stop() }
        let pairs = 150
        let answers = Locked<[Int: [(status: Int, token: String?)]]>([:])
        onThreads(2) { side in
            guard let c = try? HTTPConnection(port: server.port) else { return }
            for pair in 0..<pairs {
                let r = try? c.put("race-\(pair)", #"{"initialDetent": "normal"}"#)
                answers.withLock { $0[pair, default: []].append((r?.status ?? 0, r?.json?["token"] as? String)) }
            }
        }
        let all = answers.withLock { $0 }
        #expect(all.count == pairs)
        for (pair, two) in all.sorted(by: { $0.key < $1.key }) {
            let winners = two.filter { (200..<300).contains($0.status) }
            // The rule: one winner per id, the loser refused as a stranger.
            #expect(winners.count == 1, "race-\(pair): \(two.map(\.status))")
            #expect(two.filter { $0.status == 401 }.count == 1, "race-\(pair): \(two.map(\.status))")
            // The loser's answer carries no token, least of all the winner's.
            #expect(two.filter { $0.token != nil }.count == 1, "race-\(pair)")
        }
    }

    /// With a store, a session this instance does not hold is authorised against the store's copy,
    /// and a store that cannot answer is a 503 that changes nothing: a stranger's PUT, DELETE or
    /// event while Redis is stopped never goes through, and the victim's token still opens the
    /// session once Redis is back.
    @Test func aStoreThatCannotAnswerRefusesStrangers() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let holder = try startServer {
                $0.store = redis.url()
                $0.storeDeadline = 0.3
                $0.sessionTokens = true
            }
            defer { holder.stop() }
            let other = try startServer {
                $0.store = redis.url()
                $0.storeDeadline = 0.3
                $0.sessionTokens = true
            }
            defer { other.stop() }
            let h = try HTTPConnection(port: holder.port)
            let created = try h.put("victim", #"{"initialDetent": "normal"}"#)
            #expect(created.status == 201)
            let token = try #require(created.json?["token"] as? String)
            let mine = [("Authorization", "Bearer \(token)")]
            let o = try HTTPConnection(port: other.port)
            redis.pause()
            let rows: [(method: String, path: String, body: String?)] = [
                ("PUT", "/sessions/victim", #"{"initialDetent": "expanded"}"#),  // a stranger's replacement
                ("DELETE", "/sessions/victim", nil),  // a stranger's deletion
                ("POST", "/sessions/victim/show", #"{"detent": "expanded"}"#),  // a stranger's event
            ]
            for row in rows {
                // On the instance that does not hold it: whether it exists cannot be told.
                let r = try o.request(row.method, row.path, body: row.body.map { Array($0.utf8) })
                expectProblem(r, status: 503, code: "store-unavailable")
                // On the holder, PUT and DELETE are authorised against the store's copy too.
                if row.method != "POST" {
                    let held = try h.request(row.method, row.path, body: row.body.map { Array($0.utf8) })
                    expectProblem(held, status: 503, code: "store-unavailable")
                }
            }
            redis.resume()
            // Nothing changed: the session is where it was, and the victim's token still opens it.
            let after = try h.request("GET", "/sessions/victim", headers: mine)
            #expect(after.status == 200, "\(after)")
            #expect((after.json?["detent"] as? String) == "normal", "\(after.text)")
            // The stranger, once the store answers again (503 until then, never a success), is
            // refused as such.
            for row in [("PUT", #"{"initialDetent": "expanded"}"#), ("DELETE", "")] {
                var statuses: [Int] = []
                #expect(
                    eventually {
                        let r = try? o.request(row.0, "/sessions/victim", body: row.1.isEmpty ? nil : Array(row.1.utf8))
                        statuses.append(r?.status ?? 0)
                        return r?.status != 503
                    })
                #expect(statuses.last == 401, "\(row.0): \(statuses)")
                #expect(Set(statuses).isSubset(of: [503, 401]), "\(row.0): \(statuses)")
            }
        }
    }

    /// Two instances on one Redis, each taking one of two PUTs of a new id at once: the store
    /// decides (a create-if-absent), so exactly one answers 2xx with a token and the other refuses
    /// its request as a stranger's; what the store holds is the winner's.
    @Test func concurrentPutsOnTwoInstancesHaveOneWinner() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let servers = try (0..<2).map { _ in
                try startServer {
                    $0.store = redis.url()
                    $0.sessionTokens = true
                    $0.threads = 2
                }
            }
            defer { for s in servers { s.stop() } }
            let pairs = 60
            let answers = Locked<[Int: [(status: Int, token: String?)]]>([:])
            onThreads(2) { side in
                guard let c = try? HTTPConnection(port: servers[side].port) else { return }
                for pair in 0..<pairs {
                    let r = try? c.put("twin-\(pair)", #"{"initialDetent": "normal"}"#)
                    answers.withLock { $0[pair, default: []].append((r?.status ?? 0, r?.json?["token"] as? String)) }
                }
            }
            for (pair, two) in answers.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
                // The rule: one winner per id across the instances, the other refused.
                #expect(two.filter { (200..<300).contains($0.status) }.count == 1, "twin-\(pair): \(two.map(\.status))")
                #expect(two.filter { $0.token != nil }.count == 1, "twin-\(pair)")
            }
        }
    }

    /// A refused request loads nothing: a stranger's 401 on an instance that does not hold the
    /// session leaves the holder's copy (and its streams) alone, and takes no place at the session
    /// cap of the instance that refused it.
    @Test func aRefusedRequestTakesNothingOver() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let holder = try startServer {
                $0.store = redis.url()
                $0.sessionTokens = true
            }
            defer { holder.stop() }
            let other = try startServer {
                $0.store = redis.url()
                $0.sessionTokens = true
            }
            defer { other.stop() }
            let h = try HTTPConnection(port: holder.port)
            #expect(try h.put("held", #"{"initialDetent": "normal"}"#).status == 201)
            let o = try HTTPConnection(port: other.port)
            for row in [("GET", "/sessions/held"), ("POST", "/sessions/held/show"), ("DELETE", "/sessions/held")] {
                #expect(try o.request(row.0, row.1).status == 401, "\(row)")
            }
            // The refusing instance took no copy; the holder still holds its own.
            #expect(other.sessionCount == 0)
            #expect(holder.sessionCount == 1)
        }
    }
}
