import Foundation
import SheetdTesting
import Testing

@testable import RedisClient

// Redis with a password (`requirepass`, or an ACL user): the URL's credentials are sent with AUTH
// on every connect; a wrong or missing one fails without the secret in the error, and a writer
// keeps its writes until the credentials are right (issue 29). A real redis-server.

extension RedisIntegration {
    @Suite struct RedisAuthTests {
        @Test func credentialsAreSentOnEveryConnect() throws {
            let redis = try RedisServer(arguments: ["--requirepass", "s3cret"])
            defer { redis.stop() }
            let base = "127.0.0.1:\(redis.port)"
            let rows: [(url: String, works: Bool, code: String?)] = [
                // The default user's password.
                ("redis://:s3cret@\(base)", true, nil),
                // The same, named.
                ("redis://default:s3cret@\(base)", true, nil),
                // A wrong password: refused, and said so without the password.
                ("redis://:nope@\(base)", false, "WRONGPASS"),
                // None at all: the first command is refused.
                ("redis://\(base)", false, "NOAUTH"),
            ]
            for row in rows {
                let endpoint = try RedisEndpoint(url: row.url)
                var connection: RedisConnection?
                let outcome = failure {
                    connection = try RedisConnection(endpoint: endpoint, timeout: 5)
                    try connection?.set("k", Array("v".utf8), ttlSeconds: nil)
                }
                if row.works {
                    #expect(outcome.error == nil, "\(row.url): \(String(describing: outcome.error))")
                    #expect(try connection?.get("k") == Array("v".utf8))
                } else {
                    let error = try #require(outcome.error, "\(row.url)")
                    #expect(error.code == row.code, "\(row.url): \(error)")
                    // The rule: no secret in what the error says (it is logged).
                    #expect(!"\(error)".contains("s3cret") && !"\(error)".contains("nope"), "\(error)")
                }
            }
        }
    }
}
