import Foundation
import SheetdTesting
import Testing

@testable import SheetService

// Another server at the store's address (a failover, or a restart from its files) holds the marker
// key of the server before it, copied with its data, but not the writes that never reached it: a
// session it lacks may still be held by an instance that has not written it back. Until the
// write-back has had its time, a miss must be 503, not 404 (issue 30). Real redis-server with its
// data on disk; verdicts on statuses, never on time.

extension ServiceIntegration.StoreIntegration {
    @Suite struct StoreMarkerTests {}
}

extension ServiceIntegration.StoreIntegration.StoreMarkerTests {
    /// Redis restarted from its RDB file (another run_id, the same data and marker): once the watch
    /// has seen the other server (`sheetd_store_returns_total` counts it), a read of an id nobody
    /// holds is 503 store-unavailable, not 404, until the marker is set again after the write-back
    /// had its time (2 × (0.5 s + the 5 s deadline) here, so the read lands inside it); then 404.
    @Test func anotherServerWithTheMarkerIsNotTrustedAtOnce() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let server = try startServer {
                $0.store = redis.url()
                $0.storeDeadline = 5
            }
            defer { server.stop() }
            let c = try HTTPConnection(port: server.port)
            #expect(try c.put("kept", #"{"initialDetent": "normal"}"#).status == 201)
            // The marker is set once the watch has looked; a miss is then 404.
            #expect(eventually { (try? c.get("/sessions/nobody").status) == 404 })
            let returns = { () -> Int in
                let text = (try? c.get("/metrics").text) ?? ""
                let line = text.split(separator: "\n").first { $0.hasPrefix("sheetd_store_returns_total ") }
                return line.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
            }
            let before = returns()
            // Its data on disk (SAVE: the marker with it), then killed and restarted from the file.
            let save = Process()
            save.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
            save.arguments = ["-p", String(redis.port), "save"]
            save.standardOutput = FileHandle.nullDevice
            try save.run()
            save.waitUntilExit()
            #expect(save.terminationStatus == 0)
            redis.stop()
            try redis.start()
            #expect(eventually { returns() > before })
            // The rule: the other server's copied marker is not trusted: a miss is 503.
            expectProblem(try c.get("/sessions/nobody"), status: 503, code: "store-unavailable")
            // Once the marker is set again, a miss is 404; the session held here is there.
            #expect(eventually(within: 60) { (try? c.get("/sessions/nobody").status) == 404 })
            #expect(try c.get("/sessions/kept").status == 200)
        }
    }
}
