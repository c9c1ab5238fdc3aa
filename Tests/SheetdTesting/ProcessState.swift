// What this test process holds right now (Linux /proc), for leak checks. Every suite shares the
// process and swift-testing runs suites in parallel, so a check counts only what the code under
// test can own: threads by their name, sockets by the port they are connected to.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The whole text of a /proc file, read to its end: procfs reports size 0 and hands out a page per
/// read, which `String(contentsOfFile:)` stops after.
func procText(_ path: String) -> String {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Threads of this process named `name` right now (/proc/self/task/*/comm).
public func threads(named name: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        procText("/proc/self/task/\(task)/comm").trimmingCharacters(in: .newlines) == name
    }.count
}

/// What each open file descriptor of this process refers to right now ("socket:[inode]",
/// "pipe:[inode]", a path …; /proc/self/fd).
public func openDescriptorTargets() -> [String] {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
}

/// Open descriptors of this process that are TCP sockets connected to 127.0.0.1:`port`
/// (/proc/self/fd matched with /proc/self/net/tcp by inode).
public func socketsConnected(toPort port: UInt16) -> Int {
    let table = procText("/proc/self/net/tcp")
    // Columns: sl local_address rem_address st … inode; addresses are hex "IP:PORT".
    let hex = String(port, radix: 16, uppercase: true)
    let remotePort = String(repeating: "0", count: 4 - hex.count) + hex
    var inodes = Set<String>()
    for line in table.split(separator: "\n").dropFirst() {
        let columns = line.split(separator: " ")
        guard columns.count > 9, columns[2].hasSuffix(":" + remotePort) else { continue }
        inodes.insert(String(columns[9]))
    }
    return openDescriptorTargets().filter { target in
        target.hasPrefix("socket:[") && inodes.contains(String(target.dropFirst(8).dropLast()))
    }.count
}

/// Something of the whole test process that a test counts and others create: while one test holds
/// it in `exclusively`, every other holder waits. Suites run in parallel in one process, so a leak
/// check ("no redis-subscribe thread is left") needs the tests that create such threads out of
/// the way. Held only inside a synchronous test body: the holder never needs another thread of
/// Swift concurrency's pool to let go, so a waiting test cannot starve it.
public final class ProcessResource: @unchecked Sendable {
    // @unchecked: NSLock is thread-safe; it is locked and unlocked on the same thread.
    private let lock = NSLock()

    private init() {}

    /// Runs `body` while no other test holds this resource.
    public func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Threads named "redis-subscribe": every RedisSubscriber, which a service with a store starts.
    public static let redisSubscriberThreads = ProcessResource()
}
