/// Where a Redis server listens: a host, a TCP port and a database number, as in
/// `redis://host:port/db`.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The port Redis listens on unless told otherwise.
    public static let defaultPort = 6379

    /// A host name or an IP address (an IPv6 address without its URL brackets).
    public let host: String
    /// The TCP port, 1...65535.
    public let port: Int
    /// The database selected after connecting (SELECT), 0 by default.
    public let database: Int

    /// Parses `redis://host[:port][/db]`: the port defaults to 6379 and the database to 0; an IPv6
    /// address goes in brackets (`redis://[::1]:6379`). Anything else (another scheme, a password,
    /// a query, a port out of range) is a `.invalidArgument` error saying what is wrong.
    public init(url: String) throws(RedisError) {
        func invalid(_ problem: String) -> RedisError {
            RedisError(
                .invalidArgument, function: "RedisEndpoint(url:)",
                reason: "\"\(url)\" is not a Redis URL: \(problem) (expected redis://host[:port][/db])")
        }
        if url.isEmpty { throw invalid("it is empty") }
        if url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            throw invalid("it contains white space or control characters")
        }
        guard let separator = url.firstRange(of: "://") else { throw invalid("the scheme is missing") }
        let scheme = url[..<separator.lowerBound].lowercased()
        guard scheme == "redis" else {
            throw invalid("the scheme \"\(scheme)\" is not supported, only redis:// (no TLS, no Unix sockets)")
        }
        let rest = url[separator.upperBound...]
        if rest.contains("?") || rest.contains("#") { throw invalid("a query or fragment is not supported") }
        let authority = rest.prefix { $0 != "/" }
        let path = rest[authority.endIndex...]
        if authority.contains("@") { throw invalid("a user name or password is not supported") }

        let hostPart: Substring
        let portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw invalid("the \"[\" of an IPv6 address is not closed")
            }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                portPart = nil
            } else if after.hasPrefix(":") {
                portPart = after.dropFirst()
            } else {
                throw invalid("\"\(after)\" follows the IPv6 address")
            }
            guard hostPart.contains(":"), hostPart.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("\"\(hostPart)\" in brackets is not an IPv6 address")
            }
        } else {
            let pieces = authority.split(separator: ":", omittingEmptySubsequences: false)
            if pieces.count > 2 { throw invalid("an IPv6 address must be in brackets, as in redis://[::1]:6379") }
            hostPart = pieces[0]
            portPart = pieces.count == 2 ? pieces[1] : nil
            let allowed = hostPart.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }
            if !hostPart.isEmpty && !allowed { throw invalid("\"\(hostPart)\" is not a host name or address") }
        }
        if hostPart.isEmpty { throw invalid("the host is missing") }

        var port = Self.defaultPort
        if let portPart {
            guard let number = Self.decimal(portPart), (1...65_535).contains(number) else {
                throw invalid("the port \"\(portPart)\" is not a number from 1 to 65535")
            }
            port = number
        }

        var database = 0
        if path.count > 1 {
            guard let number = Self.decimal(path.dropFirst()) else {
                throw invalid("the database \"\(path.dropFirst())\" is not a number (0, 1, ...)")
            }
            database = number
        }
        self.init(host: String(hostPart), port: port, database: database)
    }

    private init(host: String, port: Int, database: Int) {
        self.host = host
        self.port = port
        self.database = database
    }

    /// The URL form, e.g. "redis://127.0.0.1:6379/0" (parses back to an equal endpoint).
    public var description: String { "redis://\(address)/\(database)" }

    /// "host:port", with an IPv6 address in brackets; for messages.
    var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The value of 1 to 9 ASCII digits (no sign, no spaces), or nil.
    private static func decimal(_ text: Substring) -> Int? {
        guard (1...9).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}
