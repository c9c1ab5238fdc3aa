import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import RedisClient

// Scripts run by their digest (EVALSHA), loaded once per connection and sent whole again where the
// server lost them; fenced scripts that do nothing once their deadline has passed; and the writer's
// versioned writes, which leave the newest version in Redis whatever order they arrive in. Against
// a real redis-server; verdicts on what Redis answered, counted (INFO commandstats, errorstats) and
// holds, never on how long anything took.

extension RedisView {
    /// A field of INFO `section` (e.g. "cmdstat_evalsha" in "commandstats"), as its `name=value`
    /// pairs; nil when the server has none.
    func stat(_ section: String, _ field: String) throws -> [String: Int]? {
        guard case .bulk(let text) = try redis.command(["INFO", section]) else {
            throw RedisViewError("INFO \(section) did not answer a bulk string")
        }
        guard
            let line = String(decoding: text, as: UTF8.self).split(whereSeparator: \.isNewline)
                .first(where: { $0.hasPrefix(field + ":") })
        else { return nil }
        var pairs: [String: Int] = [:]
        for pair in line.dropFirst(field.count + 1).split(separator: ",") {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { pairs[String(parts[0])] = value }
        }
        return pairs
    }

    /// How many times the server ran `command` (INFO commandstats; "script|load" for a subcommand).
    func calls(_ command: String) throws -> Int { try stat("commandstats", "cmdstat_" + command)?["calls"] ?? 0 }

    /// How many error replies of `code` the server sent (INFO errorstats).
    func errors(_ code: String) throws -> Int { try stat("errorstats", "errorstat_" + code)?["count"] ?? 0 }
}

/// A versioned write script of the writer's contract (`RedisWriter`) for values "VERSION:payload":
/// what sheetd's store does with its JSON records, in a format a test can write by hand.
let testVersionedWrite = RedisScript(
    """
    local function version_of(value)
      local digits = string.match(value, '^(%d+):')
      if not digits or #digits > 16 then return nil end
      return tonumber(digits)
    end
    local given = tonumber(ARGV[2])
    local stored = redis.call('GET', KEYS[1])
    local outcome = 1
    if stored then
      local version = version_of(stored)
      if not version then
        outcome = 2
      elseif version > given or (version == given and stored ~= ARGV[1]) then
        return redis.error_reply(string.format('STALE %d', version))
      end
    end
    local ttl = tonumber(ARGV[3])
    if ttl > 0 then redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl) else redis.call('SET', KEYS[1], ARGV[1]) end
    return outcome
    """, fenced: true)

extension RedisIntegration {
    @Suite final class RedisScriptTests: RedisServerSuite {
        /// The digest the client computes is the one Redis computes (SCRIPT LOAD's answer), for
        /// sources of every length around SHA-1's 64-byte blocks and padding.
        @Test(arguments: [0, 2, 55, 56, 63, 64, 65, 119, 120, 1000, 100_000])
        func theDigestIsRedisOwn(length: Int) throws {
            let view = try RedisView(server)
            // A Lua comment of `length` bytes (Redis compiles what it loads), varied so that every
            // byte of a block matters.
            let bytes: [UInt8] = (0..<length).map { i in i < 2 ? UInt8(ascii: "-") : UInt8(33 + (i * 7) % 94) }
            let source = String(decoding: bytes, as: UTF8.self)
            let script = RedisScript(source)
            #expect(try view.redis.command(["SCRIPT", "LOAD", source]) == .bulk(Array(script.digest.utf8)))
        }

        /// Known answers (FIPS 180-2's examples).
        @Test func theDigestHasItsKnownAnswers() {
            let rows: [(String, String)] = [
                ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
                ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
                (
                    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                    "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
                ),
            ]
            for (text, digest) in rows { #expect(SHA1.hex(Array(text.utf8)) == digest, "\(text)") }
        }

        /// A script is sent whole once per connection (SCRIPT LOAD, with its first call), then
        /// called by digest; a server that lost it (SCRIPT FLUSH) gets it whole again (EVAL) and the
        /// call still runs; another connection loads it once more.
        @Test func aScriptIsLoadedOncePerConnectionAndSentAgainWhereItWasLost() throws {
            let view = try RedisView(server)
            let script = RedisScript("return tonumber(ARGV[1]) + 1")
            let connection = try RedisConnection(endpoint: server.endpoint())
            let rows: [(flush: Bool, loads: Int, evals: Int)] = [
                // First call on the connection: loaded with it.
                (false, 1, 0),
                // Later calls: by digest only.
                (false, 1, 0),
                // The server's cache flushed: the call answered NOSCRIPT is sent whole (EVAL).
                (true, 1, 1),
                // EVAL put it back in the cache: by digest again.
                (false, 1, 1),
            ]
            for (n, row) in rows.enumerated() {
                if row.flush { #expect(try view.redis.command(["SCRIPT", "FLUSH"]) == .status("OK")) }
                #expect(
                    try connection.run(script, [(keys: [], arguments: [Array(String(n).utf8)])]) == [
                        .integer(Int64(n + 1))
                    ])
                #expect(try view.calls("script|load") == row.loads, "call \(n)")
                #expect(try view.calls("eval") == row.evals, "call \(n)")
            }
            let other = try RedisConnection(endpoint: server.endpoint())
            #expect(try other.run(script, [(keys: [], arguments: [Array("9".utf8)])]) == [.integer(10)])
            #expect(try view.calls("script|load") == 2)
        }

        /// A fenced call runs while its deadline (sent + the connection's timeout, on the server's
        /// clock) has not passed; a server stopped past it (SIGSTOP) that takes the call when it
        /// resumes refuses it (EXPIRED) and writes nothing: the caller gave up on it long before.
        @Test(arguments: [false, true]) func aFencedCallPastItsDeadlineDoesNothing(stopped: Bool) throws {
            let view = try RedisView(server)
            let script = RedisScript("redis.call('SET', KEYS[1], ARGV[1]) return 1", fenced: true)
            let connection = try RedisConnection(endpoint: server.endpoint(), timeout: 0.2)
            // Loaded beforehand, so that the stopped server holds only the call itself.
            _ = try connection.run(script, [(keys: ["warm"], arguments: [[1]])])
            let call = (keys: ["fenced"], arguments: [Array("written".utf8)])
            if stopped {
                server.pause()
                let (error, _) = failure { _ = try connection.run(script, [call]) }
                #expect(error?.kind == .timedOut)
                // Well past the deadline by any clock (5 × the timeout), then resumed: the server
                // reads the call the client sent, and runs it.
                Thread.sleep(forTimeInterval: 1.0)
                server.resume()
                #expect(try eventually { try view.errors("EXPIRED") == 1 })
                #expect(try view.redis.get("fenced") == nil)
            } else {
                #expect(try connection.run(script, [call]) == [.integer(1)])
                #expect(try view.redis.get("fenced") == Array("written".utf8))
                #expect(try view.errors("EXPIRED") == 0)
            }
        }

        /// Two writers write one key with versions that cross (each one's write arrives in the
        /// other order than its version says): Redis keeps the newest, the stale write is counted
        /// and told (to `onVersion`, or in the ticket's receipt), and nothing retries it.
        @Test func theNewestVersionWinsWhateverOrderWritesArriveIn() throws {
            let view = try RedisView(server)
            let told = Mutex<[RedisWriter.VersionNotice]>([])
            func writer() throws -> RedisWriter {
                RedisWriter(
                    connection: try RedisConnection(endpoint: server.endpoint()), versionedWrite: testVersionedWrite
                ) { notice in told.withLock { $0.append(notice) } }
            }
            let first = try writer()
            let second = try writer()
            defer {
                first.close()
                second.close()
            }
            struct Row {
                let first: String
                let second: String
                let stored: String
                let receipt: RedisWriter.Receipt
            }
            let rows = [
                // The second write is newer: it replaces the first.
                Row(first: "10:a", second: "11:b", stored: "11:b", receipt: .written),
                // The second is older (it left its writer before the first, and arrived after):
                // refused, the first stays.
                Row(first: "11:a", second: "10:b", stored: "11:a", receipt: .stale(storedVersion: 11)),
                // As new, other bytes (two copies of one version): the first stays.
                Row(first: "10:a", second: "10:b", stored: "10:a", receipt: .stale(storedVersion: 10)),
                // As new, the same bytes: a retry of the same write, written.
                Row(first: "10:a", second: "10:a", stored: "10:a", receipt: .written),
                // A stored value whose version cannot be read: replaced.
                Row(first: "", second: "3:b", stored: "3:b", receipt: .written),
            ]
            func version(_ value: String) -> Int { Int(value.prefix { $0 != ":" }) ?? 0 }
            for (n, row) in rows.enumerated() {
                let key = "row:\(n)"
                if row.first.isEmpty {
                    try view.redis.set(key, Array("not versioned".utf8), ttlSeconds: nil)
                } else {
                    let ticket = first.setTracked(
                        key, Array(row.first.utf8), ttlSeconds: 60, version: version(row.first))
                    #expect(first.wait(for: ticket, timeout: 30) == .written)
                }
                // Tracked: the receipt says it. Untracked, the same write: told to onVersion.
                let ticket = second.setTracked(
                    key, Array(row.second.utf8), ttlSeconds: 60, version: version(row.second))
                #expect(second.wait(for: ticket, timeout: 30) == row.receipt, "row \(n)")
                second.set(key, Array(row.second.utf8), ttlSeconds: 60, version: version(row.second))
                #expect(second.flush(timeout: 30))
                #expect(try view.redis.get(key) == Array(row.stored.utf8), "row \(n)")
                let notices = told.withLock { all in all.filter { $0.key == key } }
                switch row.receipt {
                case .stale(let stored):
                    #expect(
                        notices == [.init(key: key, version: version(row.second), kind: .stale(storedVersion: stored))])
                case _ where row.first.isEmpty:
                    // The tracked write replaced the unreadable value: told, although waited for
                    // (its receipt says only that it is written); the untracked one found its own
                    // version there, the same bytes.
                    #expect(notices == [.init(key: key, version: version(row.second), kind: .reset)], "\(notices)")
                default:
                    #expect(notices.isEmpty, "row \(n): \(notices)")
                }
            }
            let s = second.statistics
            #expect(s.stale == 4)
            #expect(s.reset == 1)
            #expect(s.refused == 0 && s.dropped == 0)
        }
    }
}
