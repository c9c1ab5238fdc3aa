import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import RedisClient

/// The messages one subscriber received, in order, shared with its thread.
private final class Inbox: Sendable {
    private let received = Mutex<[(channel: String, message: [UInt8])]>([])

    /// The callback to give the subscriber.
    var onMessage: @Sendable (String, [UInt8]) -> Void {
        { channel, message in self.received.withLock { $0.append((channel, message)) } }
    }

    var messages: [(channel: String, message: [UInt8])] { received.withLock { $0 } }
    var count: Int { received.withLock { $0.count } }

    /// True once `count` messages arrived; false if they did not within `seconds` (a deadline that
    /// only bounds a failing test: they arrive in milliseconds).
    func wait(for count: Int, within seconds: Double = 30) -> Bool {
        eventually(within: seconds) { self.count >= count }
    }
}

extension RedisIntegration {
    @Suite final class RedisSubscriberTests: RedisServerSuite {
        /// A subscriber to `channels` on the test server, subscribed before it is returned.
        private func subscribed(
            to channels: [String], timeout: Double = 1, _ inbox: Inbox
        ) throws -> RedisSubscriber {
            let subscriber = RedisSubscriber(
                endpoint: server.endpoint(), channels: channels, timeout: timeout, onMessage: inbox.onMessage)
            #expect(
                eventually { subscriber.isSubscribed }, "not subscribed: \(String(describing: subscriber.lastError))")
            return subscriber
        }

        @Test func messagesArriveInOrderWithBinaryPayloads() throws {
            let publisher = try RedisConnection(endpoint: server.endpoint())
            let inbox = Inbox()
            let subscriber = try subscribed(to: ["invalidate"], inbox)
            defer { subscriber.close() }
            let payloads: [(name: String, message: [UInt8])] = [
                // The empty message is a message.
                ("empty", []),
                // A lone NUL byte.
                ("nul", [0]),
                // NUL bytes inside, and bytes that are not UTF-8.
                ("binary", [0x73, 0, 0xFF, 0, 0xC3, 0x28, 0x0D, 0x0A]),
                // Every byte value.
                ("bytes", (0...255).map { UInt8($0) }),
                // Text that looks like the protocol.
                ("resp", Array("*3\r\n$7\r\nmessage\r\n".utf8)),
                // 1 MiB: many socket reads for one message.
                ("large", pattern(1 << 20)),
            ]
            for row in payloads {
                #expect(try publisher.publish("invalidate", row.message) == 1, "\(row.name)")
            }
            // Then 2,000 small ones in one pipeline: Redis sends them together, so one socket read
            // holds many, and all but the first wait in hiredis's buffer, where poll(2) cannot see them.
            let commands = (0..<2000).map { RedisCommand.text(["PUBLISH", "invalidate", "session-\($0)"]) }
            #expect(try publisher.execute(commands) == Array(repeating: .integer(1), count: 2000))
            #expect(inbox.wait(for: payloads.count + 2000))
            let messages = inbox.messages
            #expect(messages.count == payloads.count + 2000)
            for (row, received) in zip(payloads, messages) {
                #expect(received.channel == "invalidate", "\(row.name)")
                #expect(received.message == row.message, "\(row.name)")
            }
            let numbered = messages.dropFirst(payloads.count).map { String(decoding: $0.message, as: UTF8.self) }
            let misplaced = numbered.enumerated().first { $0.element != "session-\($0.offset)" }
            #expect(misplaced == nil, "the first message out of place")
            #expect(subscriber.reconnections == 0)
            #expect(subscriber.lastError == nil)
        }

        @Test func severalChannelsAndReceiverCounts() throws {
            let publisher = try RedisConnection(endpoint: server.endpoint())
            let first = Inbox()
            let second = Inbox()
            let one = try subscribed(to: ["a", "b"], first)
            let two = try subscribed(to: ["b", "c", "sessions: 7\r\n€"], second)
            defer {
                one.close()
                two.close()
            }
            let cases: [(channel: String, receivers: Int, first: Bool, second: Bool)] = [
                // A channel only the first subscriber listens to.
                ("a", 1, true, false),
                // A channel both listen to: both receive it, and PUBLISH counts both.
                ("b", 2, true, true),
                // A channel only the second listens to.
                ("c", 1, false, true),
                // A channel nobody listens to: no receiver, and the message is gone.
                ("d", 0, false, false),
                // A channel name with spaces, CR LF and non-ASCII characters.
                ("sessions: 7\r\n€", 1, false, true),
                // Channel names are exact: no prefix matching.
                ("sessions", 0, false, false),
            ]
            for (index, row) in cases.enumerated() {
                #expect(try publisher.publish(row.channel, [UInt8(index)]) == row.receivers, "\(row.channel)")
            }
            let expected = (
                first: cases.enumerated().filter { $0.element.first }.map { ($0.element.channel, [UInt8($0.offset)]) },
                second: cases.enumerated().filter { $0.element.second }.map { ($0.element.channel, [UInt8($0.offset)]) }
            )
            #expect(first.wait(for: expected.first.count))
            #expect(second.wait(for: expected.second.count))
            // Nothing more arrives (a late "d" or "sessions" would show up by now).
            _ = try publisher.publish("b", [99])
            #expect(first.wait(for: expected.first.count + 1))
            #expect(second.wait(for: expected.second.count + 1))
            for (inbox, wanted) in [(first, expected.first), (second, expected.second)] {
                let received = inbox.messages.dropLast()
                #expect(received.map(\.channel) == wanted.map(\.0))
                #expect(received.map(\.message) == wanted.map(\.1))
            }
        }

        @Test func subscriptionSurvivesARedisRestart() throws {
            let publisher = try RedisConnection(endpoint: server.endpoint())
            let inbox = Inbox()
            let subscriber = try subscribed(to: ["invalidate"], inbox)
            defer { subscriber.close() }
            #expect(try publisher.publish("invalidate", [1]) == 1)
            #expect(inbox.wait(for: 1))

            server.stop()
            // The subscriber notices at once (Redis closed the connection) and retries with backoff.
            #expect(eventually { !subscriber.isSubscribed })
            #expect(
                eventually { subscriber.lastError?.kind == .unreachable }, "\(String(describing: subscriber.lastError))"
            )

            // Redis is back on the same port, empty: the subscriber connects and subscribes again.
            try server.start()
            #expect(eventually { subscriber.isSubscribed }, "\(String(describing: subscriber.lastError))")
            #expect(subscriber.reconnections == 1)
            #expect(subscriber.lastError == nil)
            #expect(try publisher.publish("invalidate", [2]) == 1)
            #expect(try publisher.publish("invalidate", [3]) == 1)
            #expect(inbox.wait(for: 3))
            #expect(inbox.messages.map(\.message) == [[1], [2], [3]])
        }

        @Test func subscriberStartedBeforeRedisSubscribesOnceItIsUp() throws {
            server.stop()
            let inbox = Inbox()
            let subscriber = RedisSubscriber(
                endpoint: server.endpoint(), channels: ["invalidate"], onMessage: inbox.onMessage)
            defer { subscriber.close() }
            #expect(eventually { subscriber.lastError?.function == "redisConnectWithTimeout" })
            #expect(!subscriber.isSubscribed)
            try server.start()
            #expect(eventually { subscriber.isSubscribed }, "\(String(describing: subscriber.lastError))")
            // The first subscription is not a reconnection.
            #expect(subscriber.reconnections == 0)
            #expect(try RedisConnection(endpoint: server.endpoint()).publish("invalidate", [7]) == 1)
            #expect(inbox.wait(for: 1))
        }

        @Test func closeEndsTheThreadInEveryState() throws {
            // The verdict is that close() returns, on a thread of its own joined with a deadline
            // (30 s) that only bounds a failing test: each wait below would otherwise never end.
            let cases: [(state: String, before: () -> Void, after: () -> Void, timeout: Double)] = [
                // Subscribed and idle: the thread waits for messages without a time limit, and only the
                // wake-up pipe interrupts that wait.
                ("subscribed", {}, {}, 1),
                // Redis went down and the thread waits between retries: the pipe interrupts that too.
                ("reconnecting", {}, { self.server.stop() }, 1),
                // Redis accepts connections but never answers: the thread is blocked reading the
                // confirmation of SUBSCRIBE, a read that ends at the timeout (Redis stays paused).
                ("unanswered", { self.server.pause() }, {}, 0.3),
            ]
            for (index, row) in cases.enumerated() {
                if index > 0 { try server.start() }
                row.before()
                let subscriber = RedisSubscriber(
                    endpoint: server.endpoint(), channels: ["invalidate"], timeout: row.timeout, onMessage: { _, _ in })
                if row.state != "unanswered" { #expect(eventually { subscriber.isSubscribed }, "\(row.state)") }
                row.after()
                if row.state == "reconnecting" {
                    #expect(eventually { subscriber.lastError?.kind == .unreachable }, "\(row.state)")
                }
                if row.state == "unanswered" {
                    // Give the thread a moment to get into its read (not a verdict: close() must return
                    // wherever it is).
                    Thread.sleep(forTimeInterval: 0.1)
                }
                #expect(subscriber.isSubscribed == (row.state == "subscribed"), "\(row.state)")
                let closing = onThread { subscriber.close() }
                #expect(closing.wait(seconds: 30), "\(row.state): close() did not return")
                #expect(!subscriber.isSubscribed, "\(row.state)")
                // Closing again does nothing.
                subscriber.close()
                server.stop()
            }
        }

        @Test func noCallbackStartsAfterClose() throws {
            let publisher = try RedisConnection(endpoint: server.endpoint())
            let closed = Locked(false)
            let late = Locked(0)
            let delivered = Locked(0)
            let subscriber = RedisSubscriber(endpoint: server.endpoint(), channels: ["invalidate"]) { _, _ in
                if closed.value { late.withLock { $0 += 1 } }
                delivered.withLock { $0 += 1 }
                // A slow callback, so that messages queue up behind it.
                usleep(100)
            }
            #expect(eventually { subscriber.isSubscribed })
            // Another thread publishes without pause while the subscriber closes.
            let publishing = Locked(true)
            let receivers = Locked(-1)
            let done = DispatchSemaphore(value: 0)
            let endpoint = server.endpoint()
            Thread.detachNewThread {
                if let connection = try? RedisConnection(endpoint: endpoint) {
                    while publishing.value {
                        if let count = try? connection.publish("invalidate", pattern(100)) { receivers.value = count }
                    }
                }
                done.signal()
            }
            #expect(eventually(within: 30) { delivered.value >= 200 })
            subscriber.close()
            closed.value = true
            // Publishing goes on until Redis counts no receiver: every message that could still reach
            // the subscriber was published after close() returned.
            #expect(eventually(within: 30) { receivers.value == 0 })
            publishing.value = false
            done.wait()
            #expect(late.value == 0)
            // The connection is gone: Redis counts no receiver any more.
            #expect(eventually { (try? publisher.publish("invalidate", [1])) == 0 })
        }

        @Test func closeFromTheCallbackEndsTheThread() throws {
            let publisher = try RedisConnection(endpoint: server.endpoint())
            let holder = Locked<RedisSubscriber?>(nil)
            let delivered = Locked(0)
            let subscriber = RedisSubscriber(endpoint: server.endpoint(), channels: ["invalidate"]) { _, _ in
                delivered.withLock { $0 += 1 }
                // Returns at once on the subscriber's own thread (waiting for itself would never end).
                holder.value?.close()
            }
            holder.value = subscriber
            #expect(eventually { subscriber.isSubscribed })
            #expect(try publisher.publish("invalidate", [1]) == 1)
            #expect(eventually { delivered.value == 1 })
            #expect(eventually { (try? publisher.publish("invalidate", [2])) == 0 })
            subscriber.close()
            #expect(delivered.value == 1)
            holder.value = nil
        }

        /// Threads are counted by name and descriptors by kind, not all of the process's: the other
        /// suites run at the same time in this process. The service tests that start subscribers hold
        /// `redisSubscriberThreads` too.
        @Test func noThreadOrDescriptorLeaks() throws {
            try ProcessResource.redisSubscriberThreads.exclusively {
                let publisher = try RedisConnection(endpoint: server.endpoint())
                #expect(eventually { threads(named: "redis-subscribe") == 0 }, "left by another test")
                let pipes = { openDescriptorTargets().filter { $0.hasPrefix("pipe:") }.count }
                let pipesBefore = pipes()
                for cycle in 0..<20 {
                    let inbox = Inbox()
                    let subscriber = try subscribed(to: ["invalidate", "other"], inbox)
                    // Its thread runs: the publish below reaches exactly one receiver. (Not counted by
                    // name here: under ThreadSanitizer the thread's name sometimes never reaches /proc.
                    // Leaks are counted after the loop, by name and by open descriptors.)
                    #expect(try publisher.publish("invalidate", [UInt8(cycle)]) == 1, "cycle \(cycle)")
                    #expect(inbox.wait(for: 1), "cycle \(cycle)")
                    // Every other subscriber is closed by deinit rather than close().
                    if cycle.isMultiple(of: 2) { subscriber.close() }
                }
                // A thread that ended may take a moment to leave /proc; Redis too to drop a connection.
                #expect(eventually { threads(named: "redis-subscribe") == 0 }, "\(threads(named: "redis-subscribe"))")
                // The publisher's is the one connection to this redis-server left; no wake-up pipe is
                // left (other suites may open pipes meanwhile, not keep more than they had).
                #expect(
                    eventually { socketsConnected(toPort: server.port) == 1 },
                    "\(socketsConnected(toPort: server.port))")
                #expect(eventually { pipes() <= pipesBefore }, "\(pipes()) pipes vs \(pipesBefore)")
                #expect(eventually { (try? publisher.publish("invalidate", [0])) == 0 })
            }
        }
    }
}
