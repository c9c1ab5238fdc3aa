import Foundation
import SheetdTesting
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A Sentinel that says what the test tells it to, on a loopback port: SENTINEL MASTER answers
/// with `primary` and `epoch` (what a real Sentinel that has not heard of a failover yet still
/// says), SUBSCRIBE is confirmed, and `announce` publishes a `+switch-master` to its subscribers.
/// A real group's Sentinels cannot be made to lag on purpose; this one can. One thread accepts, one
/// thread per connection reads; stopped (its socket closed) in deinit.
final class FakeSentinel: @unchecked Sendable {
    // @unchecked: `state` is a Mutex; the socket is only closed in deinit.
    let port: UInt16
    private let listener: Int32
    private let state: Mutex<(primary: (host: String, port: Int), epoch: Int, subscribers: [Int32], open: [Int32])>

    init(primary: (host: String, port: Int), epoch: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw RedisViewError("the fake Sentinel cannot listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        state = Mutex((primary, epoch, [], []))
        Thread { [weak self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0, let self else { return }
                self.state.withLock { $0.open.append(client) }
                Thread { self.serve(client) }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for client in state.withLock({ $0.open }) { shutdown(client, Int32(SHUT_RDWR)) }
    }

    /// "127.0.0.1:PORT", for a Sentinel URL's list.
    var address: String { "127.0.0.1:\(port)" }

    /// How many connections subscribed so far.
    var subscribers: Int { state.withLock { $0.subscribers.count } }

    /// Publishes `+switch-master <group> <old> <new>` to every subscriber, as a Sentinel does at
    /// the end of a failover.
    func announce(group: String, from old: (host: String, port: Int), to new: (host: String, port: Int)) {
        let message = "\(group) \(old.host) \(old.port) \(new.host) \(new.port)"
        let bytes = Self.array(["message", "+switch-master", message])
        for client in state.withLock({ $0.subscribers }) {
            _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Reads commands (arrays of bulk strings) and answers them until the client goes.
    private func serve(_ client: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            while let (command, used) = Self.parse(buffer) {
                buffer.removeFirst(used)
                let reply = answer(command, client)
                _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
            }
            let n = recv(client, &chunk, chunk.count, 0)
            if n <= 0 {
                close(client)
                return
            }
            buffer += chunk[0..<n]
        }
    }

    private func answer(_ command: [String], _ client: Int32) -> [UInt8] {
        switch command.first?.uppercased() {
        case "SENTINEL" where command.count == 3 && command[1].uppercased() == "MASTER":
            let (primary, epoch) = state.withLock { ($0.primary, $0.epoch) }
            return Self.array([
                "name", command[2], "ip", primary.host, "port", String(primary.port), "config-epoch", String(epoch),
            ])
        case "SUBSCRIBE":
            state.withLock { $0.subscribers.append(client) }
            var out: [UInt8] = []
            for (n, channel) in command.dropFirst().enumerated() {
                out += Array("*3\r\n$9\r\nsubscribe\r\n$\(channel.utf8.count)\r\n\(channel)\r\n:\(n + 1)\r\n".utf8)
            }
            return out
        case "PING": return Array("+PONG\r\n".utf8)
        default: return Array("-ERR the fake Sentinel does not know \(command.first ?? "")\r\n".utf8)
        }
    }

    private static func array(_ items: [String]) -> [UInt8] {
        Array(("*\(items.count)\r\n" + items.map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined()).utf8)
    }

    /// The first complete command in `bytes` and the bytes it took, or nil.
    private static func parse(_ bytes: [UInt8]) -> ([String], Int)? {
        func line(from start: Int) -> (String, Int)? {
            guard
                let end = (start..<max(start, bytes.count - 1)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 })
            else { return nil }
            return (String(decoding: bytes[start..<end], as: UTF8.self), end + 2)
        }
        guard bytes.first == UInt8(ascii: "*"), let (head, afterHead) = line(from: 0), let count = Int(head.dropFirst())
        else { return nil }
        var items: [String] = []
        var at = afterHead
        for _ in 0..<count {
            guard let (size, afterSize) = line(from: at), let length = Int(size.dropFirst()),
                afterSize + length + 2 <= bytes.count
            else { return nil }
            items.append(String(decoding: bytes[afterSize..<afterSize + length], as: UTF8.self))
            at = afterSize + length + 2
        }
        return (items, at)
    }
}
