import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import RedisClient

// Redis's error replies, temporary and final, each made real on a redis-server: the writer keeps
// and retries what a temporary one answered (and Redis has all of it afterwards), refuses and
// counts what a final one answered, and the connection's callers are told which it was. Verdicts
// rest on what Redis answered and what it holds, and on the writer's counters; the ~2 s each
// temporary state is held only sets how long writes queue meanwhile.

/// One temporary error class made real: how to make the server answer it, and how it ends.
private struct TemporaryFault {
    /// The code Redis answers while the fault is held.
    let code: String
    /// Whether a read (GET) meets it as well as a write.
    let readsToo: Bool
    /// Makes `server` answer `code` (with `admin`, a connection that takes any role), and returns
    /// what ends it: either it ends it, or it waits until the fault ended by itself.
    let hold: (_ server: RedisServer, _ admin: RedisConnection) throws -> () throws -> Void
}

extension RedisConnection {
    /// `command`, failing the test unless Redis answers +OK.
    fileprivate func expectOK(_ arguments: String...) throws {
        let reply = try command(arguments)
        #expect(reply == .status("OK"), "\(arguments): \(reply)")
    }

    /// The value of `field` in INFO `section`, or nil.
    fileprivate func info(_ section: String, _ field: String) throws -> String? {
        guard case .bulk(let text) = try command(["INFO", section]) else { return nil }
        let line = String(decoding: text, as: UTF8.self).split(whereSeparator: \.isNewline)
            .first { $0.hasPrefix(field + ":") }
        return line.map { String($0.dropFirst(field.count + 1)) }
    }

    /// Whether Redis answers PING with an error reply of `code` right now.
    fileprivate func answers(_ code: String) throws -> Bool {
        guard case .error(let message) = try command(["PING"]) else { return false }
        return RedisError.code(of: message) == code
    }
}

extension RedisIntegration {
    @Suite final class RedisErrorReplyTests: RedisServerSuite {
        /// The temporary classes a writer can meet on a plain redis-server (TRYAGAIN needs a
        /// cluster and a multi-key command: `tryAgainFromAMigratingSlotIsTemporary`).
        private static var faults: [TemporaryFault] {
            [
                // A primary with `min-replicas-to-write 1` and no replica refuses writes.
                TemporaryFault(code: "NOREPLICAS", readsToo: false) { _, admin in
                    try admin.expectOK("CONFIG", "SET", "min-replicas-to-write", "1")
                    return { try admin.expectOK("CONFIG", "SET", "min-replicas-to-write", "0") }
                },
                // The primary demoted (REPLICAOF a second server), then promoted back: a read-only
                // replica refuses writes (the full sync from the empty second server also empties it:
                // only what was queued while held is checked).
                TemporaryFault(code: "READONLY", readsToo: false) { _, admin in
                    let other = try RedisServer()
                    try admin.expectOK("REPLICAOF", "127.0.0.1", String(other.port))
                    return {
                        try admin.expectOK("REPLICAOF", "NO", "ONE")
                        other.stop()
                    }
                },
                // A replica of a primary that is down, with `replica-serve-stale-data no`: reads and
                // writes (it is writable, so READONLY does not come first) are refused.
                TemporaryFault(code: "MASTERDOWN", readsToo: true) { _, admin in
                    try admin.expectOK("CONFIG", "SET", "replica-serve-stale-data", "no")
                    try admin.expectOK("CONFIG", "SET", "replica-read-only", "no")
                    try admin.expectOK("REPLICAOF", "127.0.0.1", String(try freeLoopbackPort()))
                    return {
                        try admin.expectOK("REPLICAOF", "NO", "ONE")
                        try admin.expectOK("CONFIG", "SET", "replica-serve-stale-data", "yes")
                        try admin.expectOK("CONFIG", "SET", "replica-read-only", "yes")
                    }
                },
                // Restarted on an RDB of 3,000 keys loaded 1 ms a key (`key-load-delay`, and events
                // served every KB of the file): LOADING for ≥ 3 s, then it ends by itself.
                TemporaryFault(code: "LOADING", readsToo: true) { server, admin in
                    try admin.setMany((0..<3000).map { (key: "seed:\($0)", value: pattern(64)) }, ttlSeconds: nil)
                    try admin.expectOK("SAVE")
                    server.stop()
                    server.arguments = ["--key-load-delay", "1000", "--loading-process-events-interval-bytes", "1024"]
                    try server.start()
                    return {
                        #expect(
                            eventually(within: 120, every: 0.05) { (try? admin.info("persistence", "loading")) == "0" })
                        server.arguments = []
                        // The whole file was loaded: every seed and the key written before it (the
                        // writer's queued keys may have landed too by now: at least, not exactly).
                        let keys = try admin.command(["DBSIZE"])
                        if case .integer(let count) = keys {
                            #expect(count >= 3001, "\(count) keys")
                        } else {
                            Issue.record("DBSIZE answered \(keys)")
                        }
                        #expect(try admin.command(["EXISTS", "seed:0", "seed:2999"]) == .integer(2))
                    }
                },
                // A script running 3 s (by Redis's clock) past `busy-reply-threshold` (50 ms): every
                // other command is refused until it ends by itself.
                TemporaryFault(code: "BUSY", readsToo: true) { server, admin in
                    try admin.expectOK("CONFIG", "SET", "busy-reply-threshold", "50")
                    let finished = Mutex(false)
                    let endpoint = server.endpoint()
                    Thread {
                        let script = try? RedisConnection(endpoint: endpoint, timeout: 60, role: .any)
                        _ = try? script?.evaluate(busyScript, [(keys: [], arguments: [Array("3".utf8)])])
                        finished.withLock { $0 = true }
                    }.start()
                    #expect(try eventually(every: 0.01) { try admin.answers("BUSY") })
                    return {
                        #expect(eventually(within: 60, every: 0.01) { finished.withLock { $0 } })
                        try admin.expectOK("CONFIG", "SET", "busy-reply-threshold", "5000")
                    }
                },
            ]
        }

        /// Each temporary class held for about 2 s while 50 keys are written 20 times over and a
        /// creation waits: the writer is answered that class, refuses nothing, and once Redis takes
        /// writes again it holds every key's last value (0 lost).
        @Test(arguments: 0..<faults.count) func temporaryRefusalsAreRetriedUntilRedisTakesThem(row: Int) throws {
            let fault = Self.faults[row]
            let admin = try RedisConnection(endpoint: server.endpoint(), timeout: 30, role: .any)
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()))
            defer { writer.close() }
            writer.set("before", [1], ttlSeconds: nil)
            #expect(writer.flush(timeout: 60))

            let release = try fault.hold(server, admin)
            // Redis answers the class, to a write and (where it applies) to a read, and the
            // connection's callers are told it is temporary.
            let probe = try RedisConnection(endpoint: server.endpoint(), role: .any)
            var calls: [(call: String, run: () throws -> Void)] = [
                ("SET", { try probe.set("probe", [1], ttlSeconds: nil) })
            ]
            if fault.readsToo { calls.append(("GET", { _ = try probe.get("before") })) }
            for call in calls {
                let error = failure(of: call.run).error
                #expect(error?.kind == .unavailable, "\(fault.code) \(call.call): \(String(describing: error))")
                #expect(error?.code == fault.code, "\(fault.code) \(call.call): \(String(describing: error))")
            }

            // A creation waiting for its write is told at once that Redis cannot take it now.
            let ticket = writer.setTracked("created", [7], ttlSeconds: nil)
            #expect(writer.wait(for: ticket, timeout: 60) == .unreachable, "\(fault.code)")
            let rounds = 20
            for round in 0..<rounds {
                for key in 0..<50 { writer.set("held:\(key)", [UInt8(round)], ttlSeconds: nil) }
                Thread.sleep(forTimeInterval: 0.1)
            }
            #expect(eventually { (writer.statistics.deferredByCode[fault.code] ?? 0) >= 1 }, "\(fault.code)")
            let held = writer.statistics
            #expect(held.refused == 0, "\(fault.code): \(held)")
            #expect(held.pending == 51, "\(fault.code): \(held)")
            #expect(writer.lastError?.kind == .unavailable, "\(fault.code)")

            try release()
            #expect(writer.flush(timeout: 60), "\(fault.code)")
            let after = writer.statistics
            #expect(after.refused == 0 && after.dropped == 0 && after.pending == 0, "\(fault.code): \(after)")
            let view = try RedisConnection(endpoint: server.endpoint())
            let stored = try view.get((0..<50).map { "held:\($0)" } + ["created"])
            let lost = zip(stored, Array(repeating: [UInt8(rounds - 1)], count: 50) + [[7]]).count { $0 != $1 }
            #expect(lost == 0, "\(fault.code): \(lost) of 51 keys without their last value")
            print(
                "temporary \(fault.code): deferred \(after.deferred) \(after.deferredByCode), written \(after.written), lost \(lost) of 51"
            )
        }

        /// Final refusals, one per row on a writer whose batches hold one write each: refused,
        /// counted by code, the waiting creation told it failed, never retried, and Redis does not
        /// have it.
        @Test func finalRefusalsAreCountedByCodeAndNotRetried() throws {
            let admin = try RedisConnection(endpoint: server.endpoint(), timeout: 30, role: .any)
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()))
            defer { writer.close() }
            let cases: [(key: String, ttl: Int?, code: String, before: [String], after: [String])] = [
                // `maxmemory` below what Redis uses, with `noeviction` (the default): OOM.
                ("oom", nil, "OOM", ["CONFIG", "SET", "maxmemory", "1"], ["CONFIG", "SET", "maxmemory", "0"]),
                // A TTL Redis rejects: ERR.
                ("bad-ttl", 0, "ERR", [], []),
            ]
            for (index, row) in cases.enumerated() {
                if !row.before.isEmpty { #expect(try admin.command(row.before) == .status("OK"), "\(row.key)") }
                let ticket = writer.setTracked(row.key, [1], ttlSeconds: row.ttl)
                #expect(writer.wait(for: ticket, timeout: 60) == .failed, "\(row.key)")
                #expect(writer.flush(timeout: 60), "\(row.key)")
                if !row.after.isEmpty { #expect(try admin.command(row.after) == .status("OK"), "\(row.key)") }
                let s = writer.statistics
                #expect(s.refused == index + 1, "\(row.key): \(s)")
                #expect(s.refusedByCode[row.code] == 1, "\(row.key): \(s)")
                #expect(s.deferred == 0 && s.pending == 0, "\(row.key): \(s)")
                #expect(writer.lastError?.kind == .errorReply, "\(row.key)")
                #expect(writer.lastError?.code == row.code, "\(row.key)")
                #expect(try admin.get(row.key) == nil, "\(row.key)")
            }
        }

        /// Final refusals of the calls the service waits on stay `.errorReply`, with Redis's code.
        @Test func finalRefusalsOfCallsAreErrorReplies() throws {
            let redis = try RedisConnection(endpoint: server.endpoint())
            _ = try redis.command(["RPUSH", "list", "x"])
            let cases: [(call: String, run: () throws -> Void, code: String, setting: String?)] = [
                // A read of a key holding another type.
                ("GET", { _ = try redis.get("list") }, "WRONGTYPE", nil),
                // A script that fails.
                ("EVAL", { _ = try redis.evaluate("error('broken')", [(keys: [], arguments: [])]) }, "ERR", nil),
                // A write over `maxmemory` with `noeviction`.
                ("SET", { try redis.set("k", [1], ttlSeconds: nil) }, "OOM", "maxmemory"),
            ]
            for row in cases {
                if let setting = row.setting { _ = try redis.command(["CONFIG", "SET", setting, "1"]) }
                let error = failure(of: row.run).error
                if let setting = row.setting { _ = try redis.command(["CONFIG", "SET", setting, "0"]) }
                #expect(error?.kind == .errorReply, "\(row.call): \(String(describing: error))")
                #expect(error?.code == row.code, "\(row.call): \(String(describing: error))")
                try redis.ping()
            }
        }

        /// The server's ROLE is asked after every connect: a replica is never written to, even one
        /// that would take writes (`replica-read-only no`), and the writer's queue waits for a
        /// primary.
        @Test func aReplicaIsNeverWrittenTo() throws {
            // Syncing its replica at once, not after the default 5 s wait for more replicas.
            let other = try RedisServer(arguments: ["--repl-diskless-sync-delay", "0"])
            let admin = try RedisConnection(endpoint: server.endpoint(), timeout: 30, role: .any)
            let writer = RedisWriter(connection: try RedisConnection(endpoint: server.endpoint()))
            defer { writer.close() }
            writer.set("before", [1], ttlSeconds: nil)
            #expect(writer.flush(timeout: 60))
            try admin.expectOK("CONFIG", "SET", "replica-read-only", "no")
            try admin.expectOK("REPLICAOF", "127.0.0.1", String(other.port))
            #expect(eventually { (try? admin.info("replication", "master_link_status")) == "up" })
            // As Sentinel does after a failover: the clients of the demoted server are closed.
            _ = try admin.command(["CLIENT", "KILL", "TYPE", "normal"])

            // A new connection that asks for a primary is refused before anything is sent.
            let refused = failure { _ = try RedisConnection(endpoint: self.server.endpoint()) }.error
            #expect(refused?.kind == .unavailable && refused?.code == "ROLE", "\(String(describing: refused))")
            // One that takes any role can write to this replica: the check is what keeps the
            // writer off it.
            let anyRole = try RedisConnection(endpoint: server.endpoint(), role: .any)
            #expect(failure { try anyRole.set("x", [1], ttlSeconds: nil) }.error == nil)

            writer.set("during", [2], ttlSeconds: nil)
            #expect(eventually { (writer.statistics.deferredByCode["ROLE"] ?? 0) >= 2 })
            #expect(try admin.get("during") == nil)
            #expect(writer.statistics.written == 1)

            try admin.expectOK("REPLICAOF", "NO", "ONE")
            try admin.expectOK("CONFIG", "SET", "replica-read-only", "yes")
            #expect(writer.flush(timeout: 60))
            #expect(try admin.get("during") == [2])
            #expect(writer.statistics.refused == 0)
        }

        /// TRYAGAIN needs a cluster: two nodes, every slot on the first, the slot of "{t}" migrating
        /// to the second; a multi-key read there that finds one key and not the other is answered
        /// TRYAGAIN, which the caller is told is temporary.
        @Test func tryAgainFromAMigratingSlotIsTemporary() throws {
            // The cluster bus listens on the port + 10,000 unless told: past 65,535 for most free ports.
            let buses = [String(try freeLoopbackPort()), String(try freeLoopbackPort())]
            let first = try RedisServer(arguments: ["--cluster-enabled", "yes", "--cluster-port", buses[0]])
            let second = try RedisServer(arguments: ["--cluster-enabled", "yes", "--cluster-port", buses[1]])
            let admin = try RedisConnection(endpoint: first.endpoint(), timeout: 30, role: .any)
            func text(_ arguments: String...) throws -> String {
                guard case .bulk(let bytes) = try admin.command(arguments) else { return "" }
                return String(decoding: bytes, as: UTF8.self)
            }
            try admin.expectOK("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
            #expect(try eventually(every: 0.05) { try text("CLUSTER", "INFO").contains("cluster_state:ok") })
            try admin.expectOK("SET", "{t}present", "1")
            guard
                case .bulk(let id) = try RedisConnection(endpoint: second.endpoint(), role: .any).command([
                    "CLUSTER", "MYID",
                ])
            else { throw RedisViewError("CLUSTER MYID did not answer a bulk string") }
            let secondID = String(decoding: id, as: UTF8.self)
            try admin.expectOK("CLUSTER", "MEET", "127.0.0.1", String(second.port), buses[1])
            #expect(try eventually(every: 0.05) { try text("CLUSTER", "NODES").contains(secondID) })
            guard case .integer(let slot) = try admin.command(["CLUSTER", "KEYSLOT", "{t}"]) else {
                throw RedisViewError("CLUSTER KEYSLOT did not answer an integer")
            }
            try admin.expectOK("CLUSTER", "SETSLOT", String(slot), "MIGRATING", secondID)
            let redis = try RedisConnection(endpoint: first.endpoint())
            let error = failure { _ = try redis.get(["{t}present", "{t}absent"]) }.error
            #expect(error?.kind == .unavailable, "\(String(describing: error))")
            #expect(error?.code == "TRYAGAIN", "\(String(describing: error))")
        }

        /// Error codes are Redis's first word, and only the temporary ones are `.unavailable`.
        @Test func errorCodesAreClassified() {
            let endpoint = server.endpoint()
            let cases: [(message: String, kind: RedisError.Kind, code: String)] = [
                // Loading its RDB or append-only file.
                ("LOADING Redis is loading the dataset in memory", .unavailable, "LOADING"),
                // A replica refusing a write.
                ("READONLY You can't write against a read only replica.", .unavailable, "READONLY"),
                // `min-replicas-to-write` not met.
                ("NOREPLICAS Not enough good replicas to write.", .unavailable, "NOREPLICAS"),
                // A replica without its primary and `replica-serve-stale-data no`.
                ("MASTERDOWN Link with MASTER is down", .unavailable, "MASTERDOWN"),
                // A script past `busy-reply-threshold`.
                ("BUSY Redis is busy running a script.", .unavailable, "BUSY"),
                // A cluster slot migrating under a multi-key command.
                ("TRYAGAIN Multiple keys request during rehashing of slot", .unavailable, "TRYAGAIN"),
                // A code that begins like BUSY is another code: final.
                ("BUSYKEY Target key name already exists.", .errorReply, "BUSYKEY"),
                // Memory full under `noeviction`: final.
                ("OOM command not allowed when used memory > 'maxmemory'.", .errorReply, "OOM"),
                // Persistence failing with `stop-writes-on-bgsave-error`: final (an operator fixes it).
                ("MISCONF Redis is configured to save RDB snapshots", .errorReply, "MISCONF"),
                // A wrong type: final.
                ("WRONGTYPE Operation against a key holding the wrong kind of value", .errorReply, "WRONGTYPE"),
                // A plain error: final.
                ("ERR invalid expire time in 'set' command", .errorReply, "ERR"),
                // A message of one word is its own code.
                ("LOADING", .unavailable, "LOADING"),
            ]
            for row in cases {
                let error = RedisError.replied(row.message, to: "SET", by: endpoint)
                #expect(error.kind == row.kind, "\(row.message)")
                #expect(error.code == row.code, "\(row.message)")
                #expect(RedisReply.error(row.message).isTemporaryError == (row.kind == .unavailable), "\(row.message)")
            }
        }
    }
}
