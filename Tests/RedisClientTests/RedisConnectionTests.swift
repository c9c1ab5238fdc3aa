import XCTest

@testable import RedisClient

// Placeholder while the client is written: replaced by the real tests.
final class RedisConnectionTests: XCTestCase {}
