import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where log lines go. `standardError` buffers: a line is appended to a buffer that is written
/// out (one `write(2)`) when it passes 32 KiB, when a line at notice or above comes, at most
/// 100 ms after its first line (a thread of its own looks every 100 ms), and on `flush()`, which
/// the executable calls before it exits. One write per access-log line cost more than the
/// request itself; lines still buffered when the process is killed (SIGKILL, a crash) are lost.
public final class LogSink: Sendable {
    /// Standard error, buffered.
    public static let standardError = LogSink(fileDescriptor: 2)

    private let fileDescriptor: Int32
    /// The lines not written yet, and the timestamp cache of the lines built under the same lock.
    private let pending = Mutex<(bytes: [UInt8], clock: (second: Int, text: [UInt8]))>(([], (-1, [])))
    private let lineHandler: (@Sendable ([UInt8]) -> Void)?
    private let flusherStarted = Atomic(false)
    /// Bytes after which the buffer is written at once.
    private static let limit = 32 * 1024

    private init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        self.lineHandler = nil
    }

    /// A sink that hands each line (newline included) to `handler` at once, unbuffered (tests).
    public init(_ handler: @escaping @Sendable ([UInt8]) -> Void) {
        self.fileDescriptor = -1
        self.lineHandler = handler
    }

    /// Takes one line, which `build` appends (newline included) to the buffer itself, under the
    /// lock (no array per line), given the timestamp cache.
    func write(urgent: Bool, _ build: (inout [UInt8], inout (second: Int, text: [UInt8])) -> Void) {
        if let lineHandler {
            var line: [UInt8] = []
            var clock = (second: -1, text: [UInt8]())
            build(&line, &clock)
            return lineHandler(line)
        }
        if !flusherStarted.load(ordering: .relaxed), !flusherStarted.exchange(true, ordering: .relaxed) {
            Thread.detachNewThread { [self] in
                while true {
                    Thread.sleep(forTimeInterval: 0.1)
                    flush()
                }
            }
        }
        pending.withLock { pending in
            build(&pending.bytes, &pending.clock)
            if urgent || pending.bytes.count >= Self.limit { drain(&pending.bytes) }
        }
    }

    /// Writes out what is buffered.
    public func flush() {
        pending.withLock { drain(&$0.bytes) }
    }

    /// Writes `buffer` whole (retrying partial writes and interruptions; other errors drop it:
    /// logging must not stop the service) and empties it. Called under the lock, so lines keep
    /// their order.
    private func drain(_ buffer: inout [UInt8]) {
        guard !buffer.isEmpty else { return }
        let descriptor = fileDescriptor
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
