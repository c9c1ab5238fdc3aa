import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import RedisClient

extension RedisIntegration {
    @Suite final class RedisWriterTests: RedisServerSuite {
        @Test func onlyTheLatestValueOfAKeyIsWritten() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            // A long linger: the writer takes no batch until the flush cuts it short, so every set
            // is enqueued before it does, however fast or slow either thread runs.
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()), linger: 30)
            defer { writer.close() }
            for value in 0..<20_000 {
                writer.set("hot", Array(String(value).utf8), ttlSeconds: nil)
            }
            #expect(writer.flush(timeout: 60))
            #expect(try reader.get("hot") == Array("19999".utf8))
            let statistics = writer.statistics
            // One write, of the latest value: every earlier set was replaced by a later one.
            #expect(statistics.written == 1)
            #expect(statistics.coalesced == 19_999)
            #expect(statistics.failed == 0)
            #expect(statistics.pending == 0)
        }

        /// `whenWritten` tells each tracked write's receipt once, without holding its caller: every
        /// write is in Redis when its receipt says so, concurrent ones share batches, and a Redis
        /// that does not answer gives `.timedOut` at the deadline (the writes stay queued).
        @Test func whenWrittenTellsEachReceiptOnce() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint(), timeout: 0.5))
            defer { writer.close() }
            let told = Mutex<[String: [RedisWriter.Receipt]]>([:])
            let inRedis = Mutex<[String: Bool]>([:])
            for i in 0..<200 {
                let key = "later-\(i)"
                writer.whenWritten(writer.setTracked(key, Array("v\(i)".utf8), ttlSeconds: nil), timeout: 60) {
                    receipt in
                    // Read at the moment the receipt is told: the write must be there.
                    let present = (try? reader.get(key)) == Array("v\(i)".utf8)
                    told.withLock { $0[key, default: []].append(receipt) }
                    inRedis.withLock { $0[key] = present }
                }
            }
            #expect(eventually { told.withLock { $0.count } == 200 })
            #expect(told.withLock { $0.values.allSatisfy { $0 == [.written] } })
            #expect(inRedis.withLock { $0.values.allSatisfy { $0 } })
            #expect(writer.statistics.written == 200)
            // Redis stopped: the deadline tells `.timedOut`, once.
            server.pause()
            let late = Mutex<[RedisWriter.Receipt]>([])
            writer.whenWritten(writer.setTracked("paused", [1], ttlSeconds: nil), timeout: 0.2) { receipt in
                late.withLock { $0.append(receipt) }
            }
            #expect(eventually { !late.withLock { $0.isEmpty } })
            server.resume()
            #expect(writer.flush(timeout: 60))
            #expect(late.withLock { $0 } == [.timedOut] || late.withLock { $0 } == [.unreachable])
        }

        @Test func theLastOperationOnEachKeyWins() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            try reader.set("existing", [9], ttlSeconds: nil)
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()))
            defer { writer.close() }
            let cases: [(key: String, operations: [[UInt8]?], expected: [UInt8]?)] = [
                // A set then a delete: the key is gone.
                ("set-delete", [[1], nil], nil),
                // A delete then a set: the value is there.
                ("delete-set", [nil, [2]], [2]),
                // Two sets: the second.
                ("set-set", [[1], [3]], [3]),
                // Binary values pass through the queue untouched.
                ("binary", [[0, 0xFF, 0]], [0, 0xFF, 0]),
                // The empty value is written, not dropped.
                ("empty", [[]], []),
                // A delete of a key Redis has.
                ("existing", [nil], nil),
            ]
            for row in cases {
                for operation in row.operations {
                    if let value = operation {
                        writer.set(row.key, value, ttlSeconds: nil)
                    } else {
                        writer.delete(row.key)
                    }
                }
            }
            #expect(writer.flush(timeout: 60))
            for row in cases { #expect(try reader.get(row.key) == row.expected, "\(row.key)") }
        }

        @Test func flushWaitsForEverythingEnqueuedBefore() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()))
            defer { writer.close() }
            // More keys and bytes than one pipeline takes, with a TTL.
            let view = try RedisView(server)
            let value = pattern(3000)
            let before = try view.now()
            for index in 0..<3000 { writer.set("key:\(index)", value, ttlSeconds: 60) }
            #expect(writer.flush(timeout: 60))
            let after = try view.now()
            #expect(
                writer.statistics
                    == .init(written: 3000, refused: 0, dropped: 0, pending: 0, pendingBytes: 0, coalesced: 0))
            for index in stride(from: 0, to: 3000, by: 97) {
                #expect(try reader.get("key:\(index)") == value)
            }
            // With the TTL, on Redis's clock from when the write reached it.
            for key in ["key:0", "key:2999"] {
                #expect((before + 60_000...after + 60_000).contains(try view.expiresAt(key)), "\(key)")
            }
            // With nothing enqueued, flush returns at once.
            #expect(writer.flush(timeout: 0))
        }

        @Test func refusedOperationsAreCountedAndNotRetried() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            // A long linger puts both writes in one batch (the flush cuts it short): `lastError` is
            // about the last batch, and without it the thread may take "bad" alone, then "good"
            // alone, whose success clears the error (seen once under ThreadSanitizer, which slows the
            // enqueueing thread; a linger of 0.5 s still left that to the machine's speed).
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()), linger: 30)
            defer { writer.close() }
            // Redis refuses a TTL of 0; the other write in the batch goes through.
            writer.set("bad", [1], ttlSeconds: 0)
            writer.set("good", [2], ttlSeconds: nil)
            #expect(writer.flush(timeout: 60))
            #expect(writer.statistics.failed == 1)
            #expect(writer.statistics.written == 1)
            #expect(writer.lastError?.kind == .errorReply)
            #expect(try reader.get("good") == [2])
            #expect(try reader.get("bad") == nil)
        }

        @Test func pendingWritesSurviveAnOutage() throws {
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint(), timeout: 0.2))
            defer { writer.close() }
            writer.set("before", [1], ttlSeconds: nil)
            #expect(writer.flush(timeout: 60))
            server.stop()

            // While Redis is down, sets wait (coalesced by key) and flush gives up at its timeout.
            for round in 0..<50 {
                for key in 0..<10 { writer.set("k\(key)", [UInt8(round)], ttlSeconds: nil) }
                writer.delete("gone")
            }
            #expect(!(writer.flush(timeout: 0.2)))
            #expect(writer.statistics.pending == 11)
            #expect(writer.statistics.failed == 0)
            // The flush made the thread try (when it gets to run: not necessarily within the 0.2 s).
            #expect(eventually(within: 30) { writer.lastError != nil })
            #expect(writer.lastError?.kind == .unreachable)

            // Redis comes back: flush retries (once the connection tries again) and everything pending
            // is written.
            try server.start()
            #expect(writer.flush(timeout: 60))
            #expect(writer.lastError == nil)
            #expect(writer.statistics.pending == 0)
            let reader = try RedisConnection(endpoint: server.endpoint())
            for key in 0..<10 { #expect(try reader.get("k\(key)") == [49], "k\(key)") }
        }

        @Test func onlyMaxPendingKeysWaitWhileRedisIsDown() throws {
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()), maxPending: 5)
            server.stop()
            // "a" goes out in a batch that fails and waits to be retried.
            writer.set("a", [1], ttlSeconds: nil)
            #expect(eventually(within: 30) { writer.lastError != nil })
            #expect(writer.lastError?.kind == .unreachable)
            let cases: [(key: String, failedAfter: Int, pendingAfter: Int)] = [
                // The next keys wait, up to 5 with "a".
                ("b", 0, 2),
                ("c", 0, 3),
                ("d", 0, 4),
                ("e", 0, 5),
                // A sixth key is dropped and counted.
                ("f", 1, 5),
                // A newer value of a key in the batch being retried is kept: it is not a new key.
                ("a", 1, 5),
                // So is a newer value of a waiting key.
                ("b", 1, 5),
                // Another new key is dropped too.
                ("g", 2, 5),
            ]
            for row in cases {
                writer.set(row.key, [2], ttlSeconds: nil)
                #expect(writer.statistics.failed == row.failedAfter, "\(row.key)")
                #expect(writer.statistics.pending == row.pendingAfter, "\(row.key)")
            }
            // Closing while Redis is down makes one attempt, then drops the 5 keys left.
            writer.close()
            #expect(writer.statistics.failed == 7)
            #expect(writer.statistics.dropped == 7)
            #expect(writer.statistics.pending == 0)
        }

        @Test func closeWritesWhatIsPendingThenRefusesMore() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()))
            for index in 0..<100 { writer.set("c\(index)", [UInt8(index)], ttlSeconds: nil) }
            writer.close()
            #expect(try reader.get("c99") == [99])
            #expect(writer.statistics.written == 100)
            // After close, operations are dropped and counted; close again does nothing.
            writer.set("late", [1], ttlSeconds: nil)
            writer.close()
            #expect(writer.statistics.failed == 1)
            #expect(try reader.get("late") == nil)
        }

        @Test func manyThreadsEnqueueAtOnce() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()))
            defer { writer.close() }
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for round in 0..<500 {
                    writer.set("own\(thread)", Array(String(round).utf8), ttlSeconds: nil)
                    writer.set("shared\(round % 10)", [UInt8(thread)], ttlSeconds: nil)
                }
            }
            #expect(writer.flush(timeout: 60))
            for thread in 0..<8 { #expect(try reader.get("own\(thread)") == Array("499".utf8)) }
            let statistics = writer.statistics
            #expect(statistics.written + statistics.coalesced == 8000)
            #expect(statistics.failed == 0)
        }

        @Test func aTrackedWriteIsConfirmedOnceRedisHasIt() throws {
            let reader = try RedisConnection(endpoint: server.endpoint())
            // A long linger: the wait cuts it short, or the receipt would be a time-out.
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()), linger: 30)
            defer { writer.close() }
            let cases: [(key: String, value: [UInt8], ttl: Int?, then: [UInt8]?, receipt: RedisWriter.Receipt)] = [
                // Written: Redis has the value when the receipt comes.
                ("alone", [1], nil, nil, .written),
                // Replaced by a later write on its key before it was sent: that one is written, and
                // stands for both.
                ("replaced", [1], nil, [2], .written),
                // Refused by Redis (a TTL of 0): failed, not retried.
                ("refused", [1], 0, nil, .failed),
            ]
            for row in cases {
                let ticket = writer.setTracked(row.key, row.value, ttlSeconds: row.ttl)
                if let then = row.then { writer.set(row.key, then, ttlSeconds: nil) }
                #expect(writer.wait(for: ticket, timeout: 60) == row.receipt, "\(row.key)")
                if row.receipt == .written {
                    #expect(try reader.get(row.key) == (row.then ?? row.value), "\(row.key)")
                }
            }
        }

        @Test func aTrackedWriteIsNotWaitedForWhileRedisIsDownAndIsWrittenWhenItReturns() throws {
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint(), timeout: 0.2))
            defer { writer.close() }
            server.stop()
            let cases: [(key: String, value: UInt8)] = [
                // The writer's attempt fails (connection refused) while the caller waits: it
                // returns then, not at its deadline.
                ("first", 7),
                // The last attempt failed: not waited for at all.
                ("second", 8),
            ]
            for row in cases {
                let ticket = writer.setTracked(row.key, [row.value], ttlSeconds: nil)
                #expect(writer.wait(for: ticket, timeout: 60) == .unreachable, "\(row.key)")
            }
            // Both stay queued, and Redis gets them once it is back.
            #expect(writer.statistics.pending == 2)
            try server.start()
            #expect(writer.flush(timeout: 60))
            let reader = try RedisConnection(endpoint: server.endpoint())
            for row in cases { #expect(try reader.get(row.key) == [row.value], "\(row.key)") }
        }

        @Test func aTrackedWriteTimesOutWhileRedisHangs() throws {
            // A 30 s socket timeout: the writer's attempt on the stopped Redis cannot fail before the
            // caller's 0.2 s deadline (unless the caller were held up for 30 s).
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint(), timeout: 30))
            defer { writer.close() }
            #expect(writer.wait(for: writer.setTracked("warm", [1], ttlSeconds: nil), timeout: 60) == .written)
            server.pause()
            #expect(writer.wait(for: writer.setTracked("hung", [2], ttlSeconds: nil), timeout: 0.2) == .timedOut)
            server.resume()
            #expect(writer.flush(timeout: 60))
            #expect(try RedisConnection(endpoint: server.endpoint()).get("hung") == [2])
        }

        @Test func theBacklogIsBoundedInBytesWhileRedisIsDown() throws {
            // 100 bytes: keys of 2 bytes with values of 30 fit three at a time.
            let writer = RedisWriter(
                connection: try RedisConnection(endpoint: server.endpoint(), timeout: 0.2), maxPendingBytes: 100)
            defer { writer.close() }
            server.stop()
            let value = [UInt8](repeating: 1, count: 30)
            let cases: [(key: String, dropped: Int, pending: Int, pendingBytes: Int?)] = [
                // Under the bound: kept.
                ("k1", 0, 1, 32),
                ("k2", 0, 2, 64),
                ("k3", 0, 3, 96),
                // A fourth key would pass 100 bytes: dropped and counted.
                ("k4", 1, 3, 96),
                // A newer value of a waiting key is always kept (its bytes: 96, or 128 if the old
                // value is in the batch being retried, whose bytes count until it is written).
                ("k1", 1, 3, nil),
            ]
            for row in cases {
                writer.set(row.key, value, ttlSeconds: nil)
                let s = writer.statistics
                #expect(s.dropped == row.dropped, "\(row.key)")
                #expect(s.pending == row.pending, "\(row.key)")
                if let bytes = row.pendingBytes { #expect(s.pendingBytes == bytes, "\(row.key)") }
            }
            // A tracked write past the bound fails at once: it was never queued.
            #expect(writer.wait(for: writer.setTracked("k5", value, ttlSeconds: nil), timeout: 60) == .failed)
            #expect(writer.statistics.dropped == 2)
        }
    }
}
