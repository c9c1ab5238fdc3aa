#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The address a request's connection came from (for an access log; behind a proxy it is the
/// proxy's). Kept as bytes, 24 of them, and written out only when asked.
public struct ClientAddress: Sendable, Hashable, CustomStringConvertible {
    /// IPv4 in the first 4 bytes, or the 16 bytes of IPv6, in network order.
    private var address: (UInt64, UInt64)
    private let isIPv6: Bool
    /// The peer's TCP port.
    public let port: UInt16

    /// The address of an IPv4 or IPv6 socket address; nil for any other family.
    init?(_ socket: UnsafePointer<sockaddr>) {
        switch Int32(socket.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(socket).loadUnaligned(as: sockaddr_in.self)
            address = (UInt64(v4.sin_addr.s_addr), 0)
            isIPv6 = false
            port = UInt16(bigEndian: v4.sin_port)
        case AF_INET6:
            let v6 = UnsafeRawPointer(socket).loadUnaligned(as: sockaddr_in6.self)
            address = withUnsafeBytes(of: v6.sin6_addr) {
                ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            isIPv6 = true
            port = UInt16(bigEndian: v6.sin6_port)
        default: return nil
        }
    }

    /// The address in its usual text form ("127.0.0.1", "::1"), without the port.
    public var host: String {
        var copy = address
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = withUnsafeBytes(of: &copy) { raw in
            inet_ntop(isIPv6 ? AF_INET6 : AF_INET, raw.baseAddress, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Appends `host`'s UTF-8 to `bytes` (an IPv4 address without making a String: the access
    /// log writes one per request).
    public func appendHost(to bytes: inout [UInt8]) {
        guard !isIPv6 else { return bytes.append(contentsOf: host.utf8) }
        // s_addr holds the address in network order: its first byte in memory is the first part.
        withUnsafeBytes(of: address.0) { parts in
            for i in 0..<4 {
                if i > 0 { bytes.append(UInt8(ascii: ".")) }
                let part = parts[i]
                if part >= 100 { bytes.append(UInt8(ascii: "0") + part / 100) }
                if part >= 10 { bytes.append(UInt8(ascii: "0") + (part / 10) % 10) }
                bytes.append(UInt8(ascii: "0") + part % 10)
            }
        }
    }

    /// "host:port", with the IPv6 host in brackets.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public static func == (a: Self, b: Self) -> Bool {
        a.address == b.address && a.isIPv6 == b.isIPv6 && a.port == b.port
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(address.0)
        hasher.combine(address.1)
        hasher.combine(isIPv6)
        hasher.combine(port)
    }
}
