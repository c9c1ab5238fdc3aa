/// Where a Redis server listens: a host, a TCP port and a database number, as in
/// `redis://host:port/db`; or the Sentinels that know which server is the primary of a group, as in
/// `redis+sentinel://host1:port,host2:port,host3:port/name/db`.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The port Redis listens on unless told otherwise.
    public static let defaultPort = 6379
    /// The port a Sentinel listens on unless told otherwise.
    public static let defaultSentinelPort = 26379

    /// A host name or an IP address (an IPv6 address without its URL brackets); for a Sentinel
    /// endpoint, the first Sentinel's.
    public let host: String
    /// The TCP port, 1...65535; for a Sentinel endpoint, the first Sentinel's.
    public let port: Int
    /// The database selected after connecting (SELECT), 0 by default.
    public let database: Int
    /// For `redis+sentinel://`: the group's name and its Sentinels, asked for the primary on every
    /// connect; nil for a server named directly.
    public let sentinel: Sentinel?
    /// The ACL user and password sent with AUTH after connecting (`redis://user:password@host`,
    /// or `redis://:password@host` for the default user); nil: no AUTH. Never in `description`.
    public let credentials: Credentials?

    /// A user name (nil: Redis's `default` user) and its password, percent-decoded from the URL.
    public struct Credentials: Sendable, Hashable {
        public let user: String?
        public let password: String
    }

    /// The Sentinels of a group and its name (`sentinel monitor <name> …` in their configuration).
    public struct Sentinel: Sendable, Hashable {
        /// The name the Sentinels monitor the primary under.
        public let name: String
        /// Every Sentinel, asked in this order (each as a direct endpoint, database 0).
        public let sentinels: [RedisEndpoint]
    }

    /// Parses `redis://host[:port][/db]`: the port defaults to 6379 and the database to 0; an IPv6
    /// address goes in brackets (`redis://[::1]:6379`). Or `redis+sentinel://host[:port][,host[:port]…]/name[/db]`:
    /// one or more Sentinels (port 26379 by default) and the name of the group they monitor.
    /// A `user:password@` (or `:password@`) before the host is sent with AUTH. Anything else
    /// (another scheme, a query, a port out of range, a Sentinel URL without a name) is a
    /// `.invalidArgument` error saying what is wrong.
    public init(url: String) throws(RedisError) {
        func invalid(_ problem: String) -> RedisError {
            RedisError(
                .invalidArgument, function: "RedisEndpoint(url:)",
                reason:
                    "\"\(url)\" is not a Redis URL: \(problem) (expected redis://host[:port][/db] or redis+sentinel://host[:port],…/name[/db])"
            )
        }
        if url.isEmpty { throw invalid("it is empty") }
        if url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            throw invalid("it contains white space or control characters")
        }
        guard let separator = url.firstRange(of: "://") else { throw invalid("the scheme is missing") }
        let scheme = url[..<separator.lowerBound].lowercased()
        guard scheme == "redis" || scheme == "redis+sentinel" else {
            throw invalid(
                "the scheme \"\(scheme)\" is not supported, only redis:// and redis+sentinel:// (no TLS, no Unix sockets)"
            )
        }
        let rest = url[separator.upperBound...]
        if rest.contains("?") || rest.contains("#") { throw invalid("a query or fragment is not supported") }
        var authority = rest.prefix { $0 != "/" }
        var path = rest[authority.endIndex...]
        var credentials: Credentials?
        if let at = authority.lastIndex(of: "@") {
            // userinfo (RFC 3986 §3.2.1): "user:password" or ":password", each percent-encoded.
            let userinfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            guard let colon = userinfo.firstIndex(of: ":") else {
                throw invalid("a user name without a password (redis://user:password@host)")
            }
            guard let user = Self.percentDecoded(userinfo[..<colon]),
                let password = Self.percentDecoded(userinfo[userinfo.index(after: colon)...]), !password.isEmpty
            else { throw invalid("the user name or password is empty or badly percent-encoded") }
            credentials = Credentials(user: user.isEmpty ? nil : user, password: password)
        }

        if scheme == "redis+sentinel" {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard let name = segments.first, !name.isEmpty else {
                throw invalid("the name of the group the Sentinels monitor is missing (redis+sentinel://…/name)")
            }
            if !name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) {
                throw invalid("\"\(name)\" is not a group name (letters, digits, \"-\", \".\", \"_\")")
            }
            path = path.dropFirst(1 + name.count)
            let database = try Self.database(path, invalid)
            var sentinels: [RedisEndpoint] = []
            for part in authority.split(separator: ",", omittingEmptySubsequences: false) {
                let (host, port) = try Self.hostAndPort(part, defaultPort: Self.defaultSentinelPort, invalid)
                sentinels.append(RedisEndpoint(host: host, port: port, database: 0, sentinel: nil))
            }
            self.init(
                host: sentinels[0].host, port: sentinels[0].port, database: database,
                sentinel: Sentinel(name: String(name), sentinels: sentinels), credentials: credentials)
            return
        }
        let (host, port) = try Self.hostAndPort(authority, defaultPort: Self.defaultPort, invalid)
        self.init(
            host: host, port: port, database: try Self.database(path, invalid), sentinel: nil, credentials: credentials)
    }

    /// `text` percent-decoded (UTF-8), nil when an escape is malformed.
    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var i = text.utf8.startIndex
        let utf8 = text.utf8
        while i != utf8.endIndex {
            let byte = utf8[i]
            if byte == UInt8(ascii: "%") {
                let h = utf8.index(after: i)
                guard h != utf8.endIndex, utf8.index(after: h) != utf8.endIndex,
                    let value = UInt8(
                        String(decoding: [utf8[h], utf8[utf8.index(after: h)]], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                i = utf8.index(i, offsetBy: 3)
            } else {
                bytes.append(byte)
                i = utf8.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The host and port of `authority` ("host[:port]", "[v6][:port]"), `defaultPort` when none is given.
    private static func hostAndPort(
        _ authority: Substring, defaultPort: Int, _ invalid: (String) -> RedisError
    ) throws(RedisError) -> (String, Int) {
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

        var port = defaultPort
        if let portPart {
            guard let number = decimal(portPart), (1...65_535).contains(number) else {
                throw invalid("the port \"\(portPart)\" is not a number from 1 to 65535")
            }
            port = number
        }
        return (String(hostPart), port)
    }

    /// The database of `path` ("", "/", "/db"), 0 when none is given.
    private static func database(_ path: Substring, _ invalid: (String) -> RedisError) throws(RedisError) -> Int {
        guard path.count > 1 else { return 0 }
        guard let number = decimal(path.dropFirst()) else {
            throw invalid("the database \"\(path.dropFirst())\" is not a number (0, 1, ...)")
        }
        return number
    }

    private init(host: String, port: Int, database: Int, sentinel: Sentinel?, credentials: Credentials? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.sentinel = sentinel
        self.credentials = credentials
    }

    /// The server at `host`:`port` with this endpoint's database: where a Sentinel says the
    /// primary is.
    func server(host: String, port: Int) -> RedisEndpoint {
        RedisEndpoint(host: host, port: port, database: database, sentinel: nil, credentials: credentials)
    }

    /// The URL form, e.g. "redis://127.0.0.1:6379/0" or
    /// "redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/sessions/0" (parses back to an equal endpoint).
    public var description: String {
        // The password never: descriptions go to logs.
        let userinfo = credentials.map { "\($0.user ?? ""):[redacted]@" } ?? ""
        guard let sentinel else { return "redis://\(userinfo)\(address)/\(database)" }
        return
            "redis+sentinel://\(userinfo)\(sentinel.sentinels.map(\.address).joined(separator: ","))/\(sentinel.name)/\(database)"
    }

    /// "host:port", with an IPv6 address in brackets, or "the primary of <name>" for a Sentinel
    /// endpoint; for messages.
    var address: String {
        if let sentinel {
            return
                "the primary \"\(sentinel.name)\" of Sentinels \(sentinel.sentinels.map(\.address).joined(separator: ","))"
        }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The value of 1 to 9 ASCII digits (no sign, no spaces), or nil.
    private static func decimal(_ text: Substring) -> Int? {
        guard (1...9).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}
