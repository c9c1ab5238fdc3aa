// Loopback TCP sockets: a free port, a connected socket, whether something listens.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a socket call failed.
public struct SocketError: Error, CustomStringConvertible, Equatable {
    public let call: String
    public let code: Int32

    public init(call: String, code: Int32) { (self.call, self.code) = (call, code) }

    public var description: String { "\(call) failed: errno \(code) (\(String(cString: strerror(code))))" }
}

/// 127.0.0.1:`port` as a socket address.
func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}

/// A loopback port nobody listens on right now (bound to port 0, then released), for programs that
/// cannot be told port 0, such as redis-server.
public func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
    defer { close(fd) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw SocketError(call: "bind", code: errno) }
    return UInt16(bigEndian: address.sin_port)
}

/// A TCP socket connected to 127.0.0.1:`port` with Nagle off. `receiveBuffer` shrinks SO_RCVBUF
/// (set before connecting, so the TCP window is small too): for a reader that stalls.
public func connectedSocket(port: UInt16, receiveBuffer: Int? = nil) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    if var size = receiveBuffer.map(Int32.init) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = loopback(port: port)
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard result == 0 else {
        let code = errno
        close(fd)
        throw SocketError(call: "connect", code: code)
    }
    return fd
}

/// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
public func acceptsConnections(port: UInt16) -> Bool {
    guard let fd = try? connectedSocket(port: port) else { return false }
    close(fd)
    return true
}
