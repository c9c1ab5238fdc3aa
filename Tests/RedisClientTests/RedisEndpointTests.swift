import SheetdTesting
import Testing

@testable import RedisClient

extension RedisIntegration {
    @Suite struct RedisEndpointTests {
        @Test func parsesRedisURLs() throws {
            let cases: [(url: String, host: String, port: Int, database: Int)] = [
                // Host and port, the database defaults to 0.
                ("redis://127.0.0.1:6379", "127.0.0.1", 6379, 0),
                // The port defaults to 6379.
                ("redis://localhost", "localhost", 6379, 0),
                // A path selects the database.
                ("redis://cache.internal:7000/2", "cache.internal", 7000, 2),
                // A bare trailing slash is database 0.
                ("redis://cache-1:6380/", "cache-1", 6380, 0),
                // The scheme is case-insensitive; the host keeps its case.
                ("REDIS://Cache:1", "Cache", 1, 0),
                // The highest port.
                ("redis://h:65535/15", "h", 65_535, 15),
                // An IPv6 address in brackets, which the host drops.
                ("redis://[::1]:6380", "::1", 6380, 0),
                // An IPv6 address with the default port and a database.
                ("redis://[fe80::1]/3", "fe80::1", 6379, 3),
            ]
            for row in cases {
                let endpoint = try RedisEndpoint(url: row.url)
                #expect(endpoint.host == row.host, "\(row.url)")
                #expect(endpoint.port == row.port, "\(row.url)")
                #expect(endpoint.database == row.database, "\(row.url)")
                // The description is a URL that parses back to the same endpoint.
                #expect(try RedisEndpoint(url: endpoint.description) == endpoint, "\(row.url)")
            }
        }

        @Test func parsesSentinelURLs() throws {
            let cases: [(url: String, sentinels: [String], name: String, database: Int)] = [
                // Three Sentinels with ports, and the group's name.
                (
                    "redis+sentinel://10.0.0.1:26380,10.0.0.2:26381,10.0.0.3:26382/sessions",
                    ["10.0.0.1:26380", "10.0.0.2:26381", "10.0.0.3:26382"], "sessions", 0
                ),
                // The Sentinel port defaults to 26379, per Sentinel; a database follows the name.
                ("redis+sentinel://s1,s2:7000/cache-1/4", ["s1:26379", "s2:7000"], "cache-1", 4),
                // One Sentinel is enough; the scheme is case-insensitive.
                ("REDIS+SENTINEL://[::1]:26379/a.b_c", ["[::1]:26379"], "a.b_c", 0),
                // A bare trailing slash after the name is database 0.
                ("redis+sentinel://h/name/", ["h:26379"], "name", 0),
            ]
            for row in cases {
                let endpoint = try RedisEndpoint(url: row.url)
                let sentinel = try #require(endpoint.sentinel, "\(row.url)")
                #expect(sentinel.sentinels.map(\.address) == row.sentinels, "\(row.url)")
                #expect(sentinel.sentinels.allSatisfy { $0.sentinel == nil && $0.database == 0 }, "\(row.url)")
                #expect(sentinel.name == row.name, "\(row.url)")
                #expect(endpoint.database == row.database, "\(row.url)")
                // The description is a URL that parses back to the same endpoint.
                #expect(try RedisEndpoint(url: endpoint.description) == endpoint, "\(row.url)")
            }
            // A plain URL names no Sentinels.
            #expect(try RedisEndpoint(url: "redis://h").sentinel == nil)
        }

        @Test func credentialsAreReadAndNeverDescribed() throws {
            let cases: [(url: String, user: String?, password: String, description: String)] = [
                // The default user: a password alone.
                (":s3cret@localhost", nil, "s3cret", "redis://:[redacted]@localhost:6379/0"),
                // An ACL user and its password, percent-decoded.
                (
                    "sheetd:p%40ss%3Aword@10.0.0.5:6380/2", "sheetd", "p@ss:word",
                    "redis://sheetd:[redacted]@10.0.0.5:6380/2"
                ),
                // Through Sentinel: the primary is authenticated with them.
                ("u:pw@s1,s2/main", "u", "pw", "redis+sentinel://u:[redacted]@s1:26379,s2:26379/main/0"),
            ]
            for row in cases {
                let scheme = row.url.contains(",") ? "redis+sentinel://" : "redis://"
                let endpoint = try RedisEndpoint(url: scheme + row.url)
                #expect(endpoint.credentials?.user == row.user, "\(row.url)")
                #expect(endpoint.credentials?.password == row.password, "\(row.url)")
                // The rule: no password in a description (they go to logs).
                #expect(endpoint.description == row.description, "\(row.url)")
                #expect(!endpoint.description.contains(row.password))
            }
        }

        @Test func rejectsBadURLsSayingWhy() {
            let cases: [(url: String, because: String)] = [
                // Nothing at all.
                ("", "empty"),
                // host:port without a scheme.
                ("localhost:6379", "scheme is missing"),
                // Another scheme.
                ("http://localhost", "scheme \"http\" is not supported"),
                // Sentinel over TLS neither.
                ("rediss+sentinel://localhost/name", "scheme \"rediss+sentinel\" is not supported"),
                // TLS is not supported by this client.
                ("rediss://localhost", "scheme \"rediss\" is not supported"),
                // No host.
                ("redis://", "host is missing"),
                // A port but no host.
                ("redis://:6379", "host is missing"),
                // A colon with no port.
                ("redis://localhost:", "port \"\" is not a number"),
                // Port 0 cannot be connected to.
                ("redis://localhost:0", "port \"0\""),
                // Above the TCP range.
                ("redis://localhost:65536", "port \"65536\""),
                // A signed port.
                ("redis://localhost:+80", "port \"+80\""),
                // A port that is a name.
                ("redis://localhost:redis", "port \"redis\""),
                // A database that is not a number.
                ("redis://localhost/sessions", "database \"sessions\""),
                // A negative database.
                ("redis://localhost/-1", "database \"-1\""),
                // More path after the database.
                ("redis://localhost/1/2", "database \"1/2\""),
                // A user name without a password.
                ("redis://someone@localhost", "without a password"),
                // An empty password.
                ("redis://someone:@localhost", "empty or badly percent-encoded"),
                // A broken percent-escape in the password.
                ("redis://:se%zzcret@localhost", "empty or badly percent-encoded"),
                // A query string.
                ("redis://localhost?db=1", "query"),
                // An IPv6 address must be bracketed.
                ("redis://::1:6379", "must be in brackets"),
                // An unclosed bracket.
                ("redis://[::1:6379", "not closed"),
                // Brackets around something else.
                ("redis://[localhost]", "not an IPv6 address"),
                // White space inside.
                ("redis://local host", "white space"),
                // A host with characters no host name has.
                ("redis://local_h*st", "not a host name"),
                // A Sentinel URL without the group's name.
                ("redis+sentinel://s1,s2", "name of the group"),
                // Or with an empty one.
                ("redis+sentinel://s1//0", "name of the group"),
                // A name with characters Sentinel names do not have.
                ("redis+sentinel://s1/na*me", "not a group name"),
                // An empty Sentinel in the list.
                ("redis+sentinel://s1,,s2/name", "host is missing"),
                // A Sentinel with a bad port.
                ("redis+sentinel://s1:0/name", "port \"0\""),
                // A database that is not a number after the name.
                ("redis+sentinel://s1/name/x", "database \"x\""),
            ]
            for row in cases {
                let error = #expect(throws: RedisError.self, "\(row.url)") { try RedisEndpoint(url: row.url) }
                #expect(error?.kind == .invalidArgument, "\(row.url)")
                #expect(error?.function == "RedisEndpoint(url:)", "\(row.url)")
                #expect(error?.description.contains(row.because) == true, "\(row.url): \(String(describing: error))")
            }
        }
    }
}
