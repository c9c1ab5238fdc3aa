import Foundation
import RedisClient
import SheetdTesting
import Testing

@testable import SheetService

// A store that comes back without its data (Redis restarted with no persistence): until the
// instances have written back what they hold, a session held by one of them must not be answered
// 404 by another, which would tell its client it is gone (and a client that believes it creates it
// afresh, losing its state). Real redis-server, real servers; verdicts on statuses, never on time.

extension ServiceIntegration.StoreIntegration {
    @Suite struct StoreOutageTests {}
}

extension ServiceIntegration.StoreIntegration.StoreOutageTests {
    private func startServer(on redis: RedisServer) throws -> SheetServer {
        try SheetServiceTests.startServer {
            $0.store = redis.url()
            $0.storeDeadline = 0.5
        }
    }

    /// Sessions held by one instance, read on another right after Redis restarted empty: each read
    /// is 503 store-unavailable with Retry-After (the store is being refilled) until the holder has
    /// written the session back, then 200; never 404. Once the store is refilled, a session nobody
    /// holds is 404 again.
    @Test func aHeldSessionIsNever404WhileTheStoreIsRefilled() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let holder = try startServer(on: redis)
            defer { holder.stop() }
            let other = try startServer(on: redis)
            defer { other.stop() }
            let h = try HTTPConnection(port: holder.port)
            let o = try HTTPConnection(port: other.port)
            let ids = (0..<12).map { "refill-\($0)" }
            for id in ids { #expect(try h.put(id, #"{"initialDetent": "normal"}"#).status == 201) }
            redis.stop()
            try redis.start()
            var statuses: [Int: Int] = [:]
            for id in ids {
                // At most 2,000 reads 5 ms apart: a failing test ends, a passing one at the first 200.
                for _ in 0..<2_000 {
                    let r = try o.get("/sessions/\(id)")
                    statuses[r.status, default: 0] += 1
                    if r.status == 200 { break }
                    if r.status == 503 {
                        expectProblem(r, status: 503, code: "store-unavailable")
                        #expect(r.headers.contains("Retry-After"))
                    } else {
                        Issue.record("\(id) read on the other instance: \(r.status) \(r.text)")
                        break
                    }
                    Monotonic.sleep(0.005)
                }
            }
            #expect(statuses[404] == nil, "statuses seen: \(statuses)")
            #expect(statuses[200] == ids.count, "statuses seen: \(statuses)")
            #expect(eventually(within: 20, every: 0.05) { (try? o.get("/sessions/nobody").status) == 404 })
        }
    }
}
