import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import RedisClient

// Callers sharing one connection behind a slow Redis (each call answered within the timeout, but
// slowly): a caller does not wait for every call before it in turn. Redis is made slow by a Lua
// script that keeps it busy for 0.3 s a call (Redis runs one script at a time); the verdicts rest
// on that lower bound alone, never on how long a call took.

extension RedisIntegration {
    @Suite final class RedisConnectionTurnTests: RedisServerSuite {
        /// Eight callers at once on a connection with a 1.5 s timeout, each call taking at least
        /// 0.3 s in Redis: served one at a time, the sixth in line could not start before 1.5 s,
        /// so at least one caller is refused its turn (`.timedOut`, not sent) instead of waiting
        /// for all the calls before it. The first in line is answered: 1.2 s of slack for the
        /// machine (under ThreadSanitizer on a loaded machine, 0.15 s of slack was not enough). A
        /// caller that got its turn may still time out waiting for its answer (one whose turn came
        /// late): that is `.timedOut` too, but not a refusal of its turn.
        @Test func aCallerDoesNotWaitForEveryCallBeforeIt() throws {
            let redis = try RedisConnection(endpoint: server.endpoint(), timeout: 1.5)
            try redis.ping()
            let outcomes = Mutex<[Result<[Int64?], RedisError>]>([])
            let threads = (0..<8).map { _ in
                Thread {
                    let outcome = Result { () throws(RedisError) in
                        try redis.evaluate(busyScript, [(keys: [], arguments: [Array("0.3".utf8)])])
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            for thread in threads { thread.start() }
            #expect(eventually(within: 60, every: 0.01) { outcomes.withLock { $0.count } == 8 })
            let results = outcomes.withLock { $0 }
            var answered = 0
            var refused = 0
            for result in results {
                switch result {
                case .success(let replies):
                    #expect(replies == [1])
                    answered += 1
                case .failure(let error):
                    #expect(error.kind == .timedOut, "\(error)")
                    if error.reason.contains("not sent") { refused += 1 }
                }
            }
            #expect(answered >= 1)
            #expect(refused >= 1, "\(answered) answered, \(refused) refused their turn")
            // The connection is still good for the next caller.
            try redis.ping()
        }
    }
}
