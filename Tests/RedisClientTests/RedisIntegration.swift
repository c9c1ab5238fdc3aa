import Foundation
import SheetdTesting
import Testing

@testable import RedisClient

/// Every RedisClient test runs in this suite, one at a time: each starts a redis-server of its
/// own (SheetdTesting's RedisServer) and several stop, restart or pause it while measuring how
/// long the client takes to notice.
@Suite(.serialized) enum RedisIntegration {}

extension RedisServer {
    /// This server as an endpoint (database 0, or `database`).
    func endpoint(database: Int = 0) -> RedisEndpoint {
        try! RedisEndpoint(url: url(database: database))
    }
}

/// Runs `body`, which should fail: the `RedisError` it threw (nil if none) and the seconds it took.
func failure(of body: () throws -> Void) -> (error: RedisError?, seconds: Double) {
    let start = Monotonic.now()
    var caught: RedisError?
    do {
        try body()
    } catch {
        caught = error as? RedisError
    }
    return (caught, Monotonic.now() - start)
}

/// A suite whose every test gets a redis-server of its own (swift-testing makes an instance per
/// test), stopped when the test ends.
class RedisServerSuite {
    let server: RedisServer

    init() throws { server = try RedisServer() }
}
