import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import RedisClient

extension RedisIntegration {
    @Suite final class RedisConnectionTests: RedisServerSuite {
        @Test func roundTripsBinaryValues() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            try redis.ping()
            let cases: [(key: String, value: [UInt8])] = [
                // The empty value is a value, not a missing key.
                ("empty", []),
                // A lone NUL byte.
                ("nul", [0]),
                // NUL bytes inside, and bytes that are not UTF-8.
                ("binary", [0x73, 0, 0xFF, 0, 0xC3, 0x28, 0x0D, 0x0A]),
                // Every byte value.
                ("bytes", (0...255).map { UInt8($0) }),
                // 1 MiB, more than one socket write and read.
                ("large", pattern(1 << 20)),
                // A key with spaces, a newline and non-ASCII characters.
                ("session: 7\r\n€", Array("value".utf8)),
            ]
            for row in cases {
                #expect(try redis.get(row.key) == nil, "\(row.key) before set")
                try redis.set(row.key, row.value, ttlSeconds: nil)
                #expect(try redis.get(row.key) == row.value, "\(row.key)")
                try redis.delete(row.key)
                #expect(try redis.get(row.key) == nil, "\(row.key) after delete")
            }
            // Deleting a missing key is not an error.
            try redis.delete("never-set")
        }

        @Test func setReplacesValueAndExpiry() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            let view = try RedisView(server)
            let cases: [Int?] = [
                // A TTL is set in whole seconds.
                100,
                // A later SET without a TTL removes the expiry.
                nil,
                // And a later SET with a TTL sets one again.
                5,
            ]
            for ttl in cases {
                // The expiry on Redis's clock: the SET's time plus the TTL (the SET came between the
                // two readings of that clock, however long it took).
                let before = try view.now()
                try redis.set("k", [1], ttlSeconds: ttl)
                let after = try view.now()
                let expiry: ClosedRange<Int64> =
                    ttl.map { before + 1000 * Int64($0)...after + 1000 * Int64($0) } ?? -1 ... -1
                #expect(expiry.contains(try view.expiresAt("k")), "ttl \(String(describing: ttl))")
            }
        }

        @Test func valuesExpireAfterTheirTTL() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            try redis.set("short", [1], ttlSeconds: 1)
            try redis.setMany([("a", [2]), ("b", [3])], ttlSeconds: 1)
            try redis.set("kept", [4], ttlSeconds: nil)
            // EX 1 expires 1000 ms after the SET, and Redis checks on every read.
            Thread.sleep(forTimeInterval: 1.1)
            #expect(try redis.get("short") == nil)
            #expect(try redis.get("a") == nil)
            #expect(try redis.get("b") == nil)
            #expect(try redis.get("kept") == [4])
        }

        @Test func setManyPipelinesEveryItem() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            let view = try RedisView(server)
            let items = (0..<500).map { (key: "item:\($0)", value: pattern($0)) }
            let before = try view.now()
            try redis.setMany(items, ttlSeconds: 60)
            let after = try view.now()
            for item in items { #expect(try redis.get(item.key) == item.value, "\(item.key)") }
            // Every item with the TTL, on Redis's clock from when the pipeline reached it.
            for key in ["item:0", "item:499"] {
                #expect((before + 60_000...after + 60_000).contains(try view.expiresAt(key)), "\(key)")
            }
            // Nothing to set is not an error.
            try redis.setMany([], ttlSeconds: nil)
        }

        @Test func errorRepliesAreThrownAndTheConnectionStaysUsable() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            _ = try redis.command(["RPUSH", "list", "x"])
            let cases: [(call: String, run: () throws -> Void, function: String, says: String)] = [
                // GET of a key holding another type.
                ("get", { _ = try redis.get("list") }, "GET", "WRONGTYPE"),
                // A TTL Redis rejects.
                ("set", { try redis.set("k", [1], ttlSeconds: 0) }, "SET", "invalid expire time"),
                // In a pipeline the other items are still written, then the refusal is thrown.
                ("setMany", { try redis.setMany([("p1", [1])], ttlSeconds: -5) }, "SET", "invalid expire time"),
            ]
            for row in cases {
                let error = #expect(throws: RedisError.self, "\(row.call)") { try row.run() }
                #expect(error?.kind == .errorReply, "\(row.call)")
                #expect(error?.function == row.function, "\(row.call)")
                #expect(error?.description.contains(row.says) == true, "\(row.call): \(String(describing: error))")
                try redis.ping()
            }
        }

        @Test func databaseFromTheURLIsSelected() throws {
            let three = try RedisConnection(endpoint: server.endpoint(database: 3))
            let zero = try RedisConnection(endpoint: server.endpoint())
            try three.set("where", [3], ttlSeconds: nil)
            #expect(try three.get("where") == [3])
            #expect(try zero.get("where") == nil)
            // A database Redis does not have fails the connect with Redis's reason.
            let error = #expect(throws: RedisError.self) {
                try RedisConnection(endpoint: server.endpoint(database: 99))
            }
            #expect(error?.kind == .errorReply)
            #expect(error?.description.contains("DB index is out of range") == true, "\(String(describing: error))")
        }

        @Test func concurrentCallersShareOneConnection() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            let threads = 8
            let rounds = 50
            let mismatches = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for round in 0..<rounds {
                    let value = pattern(thread * 1000 + round)
                    do {
                        try redis.set("t\(thread)", value, ttlSeconds: nil)
                        try redis.set("shared", value, ttlSeconds: nil)
                        if try redis.get("t\(thread)") != value { mismatches.withLock { $0 += 1 } }
                        _ = try redis.get("shared")
                    } catch {
                        mismatches.withLock { $0 += 1 }
                    }
                }
            }
            #expect(mismatches.withLock { $0 } == 0)
            for thread in 0..<threads {
                #expect(try redis.get("t\(thread)") == pattern(thread * 1000 + rounds - 1))
            }
        }

        @Test func connectingToNothingFailsAtOnce() throws {
            let port = try freeLoopbackPort()
            let attempt = failure {
                _ = try RedisConnection(endpoint: RedisEndpoint(url: "redis://127.0.0.1:\(port)"), timeout: 60)
            }
            let error = try #require(attempt.error)
            // The refusal is the answer: reported as such, and not waited on until the 60 s timeout
            // (half of it is thousands of times what a refused connect takes on any machine).
            #expect(error.kind == .unreachable)
            #expect(error.function == "redisConnectWithTimeout")
            #expect(error.description.contains("Connection refused"), "\(error)")
            #expect(attempt.seconds < 30)
            // A timeout hiredis could not honour is refused before connecting.
            let refused = #expect(throws: RedisError.self) {
                try RedisConnection(endpoint: server.endpoint(), timeout: 0)
            }
            #expect(refused?.kind == .invalidArgument)
        }

        @Test func restartedRedisIsReconnectedTransparently() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            try redis.set("before", [1], ttlSeconds: nil)
            server.stop()
            try server.start()
            // The connection Redis closed is replaced once and the call repeated.
            try redis.set("after", [2], ttlSeconds: nil)
            #expect(try redis.get("after") == [2])
        }

        @Test func stoppedRedisThrowsWithinTheTimeoutThenRecovers() throws {
            // A 30 s timeout: every call below comes within it of the first failure on any machine.
            let redis = try RedisConnection(endpoint: server.endpoint(), timeout: 30)
            // A 0.3 s one, to see a call after its timeout try again.
            let short = try RedisConnection(endpoint: server.endpoint(), timeout: 0.3)
            try redis.set("k", [1], ttlSeconds: nil)
            try short.ping()
            let megabyte = pattern(1 << 20)
            server.stop()
            let calls: [(call: String, run: () throws -> Void, tried: Bool)] = [
                // A read on the connection Redis closed, then a refused reconnect.
                ("get", { _ = try redis.get("k") }, true),
                // Within the timeout of that failure, calls fail at once without trying.
                ("set", { try redis.set("k", [2], ttlSeconds: nil) }, false),
                // A pipeline fails the same way.
                ("setMany", { try redis.setMany((0..<8).map { ("big\($0)", megabyte) }, ttlSeconds: nil) }, false),
                // PING as a health check too.
                ("ping", { try redis.ping() }, false),
            ]
            for row in calls {
                let attempt = failure(of: row.run)
                let error = try #require(attempt.error, "\(row.call)")
                #expect(error.kind == .unreachable, "\(row.call): \(error)")
                #expect(error.function == "redisConnectWithTimeout", "\(row.call)")
                #expect(error.description.contains("Connection refused"), "\(row.call): \(error)")
                #expect(!error.description.contains("not tried again") == row.tried, "\(row.call): \(error)")
            }
            // After the timeout, a call tries again (and is refused again): the short one's first
            // failure, then a call at least its 0.3 s later (a busy machine only makes it later).
            #expect(failure { try short.ping() }.error?.kind == .unreachable)
            Thread.sleep(forTimeInterval: 0.35)
            let again = failure { try short.ping() }.error
            #expect(again?.kind == .unreachable && again?.description.contains("not tried again") == false)
            // Redis is back: the next call after the timeout connects; within it, none tries.
            try server.start()
            Thread.sleep(forTimeInterval: 0.35)
            try short.set("k", [3], ttlSeconds: nil)
            #expect(try short.get("k") == [3])
            #expect(failure { try redis.ping() }.error?.description.contains("not tried again") == true)
        }

        @Test func brokenPipelineIsNotAProcessSignal() throws {
            // A large pipeline on a connection whose server is gone: the write fails with EPIPE, which
            // would raise SIGPIPE (default action: end the process) without the shim's guard.
            let redis = try RedisConnection(endpoint: server.endpoint(), timeout: 0.5)
            try redis.ping()
            let items = (0..<16).map { (key: "big\($0)", value: pattern(1 << 20)) }
            server.stop()
            // The process is still here, and each pipeline failed as the connection could not be
            // made again (at once, or "not tried again" within the timeout of the last failure).
            for _ in 0..<3 {
                let attempt = failure { try redis.setMany(items, ttlSeconds: nil) }
                #expect(attempt.error?.kind == .unreachable, "\(String(describing: attempt.error))")
            }
        }

        @Test func unresponsiveRedisTimesOut() throws {
            let redis = try RedisConnection(endpoint: server.endpoint(), timeout: 0.3)
            try redis.ping()
            let view = try RedisView(server)
            let connections = try view.connectionsReceived()
            server.pause()
            let attempt = failure { _ = try redis.get("k") }
            let error = try #require(attempt.error)
            #expect(error.kind == .timedOut, "\(error)")
            #expect(error.function == "redisGetReply")
            // It waited for its timeout (a lower bound: a busy machine only adds to it).
            #expect(attempt.seconds > 0.25)
            Thread.sleep(forTimeInterval: 0.35)
            server.resume()
            try redis.ping()
            // One timeout: the timed-out call was not repeated on a new connection. The paused Redis
            // still queued every connection made to it and, resumed, accepted each: one since the
            // pause, the one ping made (the timed-out one was dropped).
            #expect(try view.connectionsReceived() - connections == 1)
        }

        @Test func callersQueuedBehindAStalledRedisDoNotWaitInTurn() throws {
            // A 2 s timeout: the seven callers after the first failure all come within it of that
            // failure on any machine (each needs microseconds).
            let redis = try RedisConnection(endpoint: server.endpoint(), timeout: 2)
            try redis.ping()
            let view = try RedisView(server)
            let connections = try view.connectionsReceived()
            server.pause()
            // Eight callers at once: one waits for the timeout, the others, queued behind it, fail
            // without trying Redis again: at once after it, with its error ("not tried again"), or,
            // having waited a whole timeout for their turn, with nothing sent ("not sent").
            let errors = Mutex<[RedisError?]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let attempt = failure { _ = try redis.get("k") }
                errors.withLock { $0.append(attempt.error) }
            }
            let seen = errors.withLock { $0 }
            #expect(seen.map { $0?.kind } == Array(repeating: .timedOut, count: 8))
            let notTried = seen.filter {
                guard let d = $0?.description else { return false }
                return d.contains("not tried again") || d.contains("not sent")
            }
            #expect(notTried.count == 7, "\(seen)")
            server.resume()
            // None connected again: the paused Redis queued every connection made to it and, resumed,
            // accepts them in order, before a new one (which the view's count waits for): that one
            // is the only one since the pause.
            try RedisConnection(endpoint: server.endpoint()).ping()
            #expect(try view.connectionsReceived() - connections == 1)
        }
    }
}
