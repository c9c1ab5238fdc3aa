import Foundation
import RedisClient
import SheetdTesting
import Testing

@testable import SheetService

// Two deployments on one Redis, each with its own --store-prefix: neither reads, overwrites nor
// hears the other's sessions (issue 29; a database number does not separate pub/sub). Real
// redis-server, real servers; verdicts on statuses and on Redis's keys.

extension ServiceIntegration.StoreIntegration {
    @Suite struct StorePrefixTests {}
}

extension ServiceIntegration.StoreIntegration.StorePrefixTests {
    @Test func deploymentsWithTheirOwnPrefixesShareARedis() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let a = try startServer {
                $0.store = redis.url()
                $0.storePrefix = "blue:"
            }
            defer { a.stop() }
            let b = try startServer {
                $0.store = redis.url()
                $0.storePrefix = "green:"
            }
            defer { b.stop() }
            let ca = try HTTPConnection(port: a.port)
            let cb = try HTTPConnection(port: b.port)
            #expect(try ca.put("x", #"{"initialDetent": "normal"}"#).status == 201)
            // The other deployment does not find it in the shared Redis.
            #expect(try cb.get("/sessions/x").status == 404)
            // Its own session of the same id takes nothing from the first (no notice crosses).
            #expect(try cb.put("x", #"{"initialDetent": "expanded"}"#).status == 201)
            #expect(try cb.request("POST", "/sessions/x/dismiss").status == 200)
            let first = try ca.get("/sessions/x")
            #expect(first.status == 200)
            #expect(first.json?["detent"] as? String == "normal", "\(first.text)")
            #expect(a.sessionCount == 1 && b.sessionCount == 1)
            let connection = try RedisConnection(endpoint: try RedisEndpoint(url: redis.url()))
            #expect(try connection.get("blue:session:x") != nil)
            #expect(try connection.get("green:session:x") != nil)
            #expect(try connection.get("sheetd:session:x") == nil)
        }
    }
}
