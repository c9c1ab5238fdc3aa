import CMicroHTTPD

// How an HTTPStream drives a libmicrohttpd connection: the suspend/resume recipe of
// docs/MICROHTTP.md §2.5. The content reader suspends the connection (on libmicrohttpd's
// thread, under the stream's lock) when it has nothing to send; a writer resumes it (under the same
// lock) on the empty -> non-empty transition. The reader never returns 0 without suspending: that
// would make libmicrohttpd's polling thread spin.

/// The context of one streamed response: passed retained as the content reader's `void *`, and
/// released by the free callback when libmicrohttpd destroys the response.
final class StreamBinding {
    let stream: HTTPStream
    let core: ServerCore

    init(stream: HTTPStream, core: ServerCore) {
        self.stream = stream
        self.core = core
    }
}

/// A `struct MHD_Connection *` that may cross threads: libmicrohttpd documents
/// `MHD_resume_connection` as callable from any thread (it only flags the connection and wakes its
/// polling thread), and every use here happens under the owning stream's lock.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// libmicrohttpd's read buffer size hint for callback responses, in bytes. It is allocated with
/// each response, so small; chunked replies (HTTP/1.1) are read straight into the connection's
/// write buffer instead and are not limited by it.
let streamBlockSize = 4 * 1024

extension StreamState {
    /// Copies up to `capacity` pending bytes to `destination`; returns how many.
    mutating func drain(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var copied = 0
        while copied < capacity && headIndex < segments.count {
            let segment = segments[headIndex]
            let count = min(segment.count - headOffset, capacity - copied)
            segment.withUnsafeBytes { source in
                (destination + copied).copyMemory(from: source.baseAddress! + headOffset, byteCount: count)
            }
            copied += count
            headOffset += count
            if headOffset == segment.count {
                headIndex += 1
                headOffset = 0
            }
        }
        bufferedByteCount -= copied
        // Compact in batches so that sending n small writes costs O(n), not O(n²).
        if headIndex == segments.count {
            segments.removeAll(keepingCapacity: true)
            headIndex = 0
        } else if headIndex >= 32 && headIndex * 2 >= segments.count {
            segments.removeFirst(headIndex)
            headIndex = 0
        }
        return copied
    }

    /// Resumes the connection if our reader parked it. Called under the stream's lock only, so the
    /// resume cannot race with the reader's suspend or with the server's stop.
    mutating func wakeParkedConnection() {
        guard parked, let connection else { return }
        parked = false
        MHD_resume_connection(connection.pointer)
    }
}

extension HTTPStream {
    /// Ties the stream to the connection it is the body of; false if it already served one.
    func bind(to connection: OpaquePointer) -> Bool {
        let handle = ConnectionHandle(pointer: connection)
        return state.withLock { state in
            guard !state.wasBound else { return false }
            state.wasBound = true
            if state.phase != .detached { state.connection = handle }
            return true
        }
    }

    /// The content reader's work: copy pending bytes, end the body, or park the connection. With
    /// an empty buffer it first asks the producer (`onDrained`) once, outside the lock (the
    /// producer writes, which takes it).
    func fill(_ destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        // libmicrohttpd's buffer, only written during this call on this thread.
        nonisolated(unsafe) let buffer = destination
        var asked = false
        while true {
            let outcome: (copied: Int?, producer: (@Sendable () -> Void)?) = state.withLock { state in
                if state.bufferedByteCount > 0 && capacity > 0 {
                    return (state.drain(into: buffer, capacity: capacity), nil)
                }
                guard state.phase == .open, let connection = state.connection else {
                    return (MHD_CONTENT_READER_END_OF_STREAM, nil)
                }
                if !asked, let producer = state.drainedHandler { return (nil, producer) }
                state.parked = true
                MHD_suspend_connection(connection.pointer)
                return (0, nil)
            }
            if let copied = outcome.copied { return copied }
            asked = true
            outcome.producer?()
        }
    }

    /// The response is gone (body ended, client gone, or daemon stopped): forget the connection,
    /// drop what was not sent, and close if still open.
    func detach() {
        let handlers = state.withLock { state in
            state.connection = nil
            state.parked = false
            state.dropAll()
            return state.close(to: .detached)
        }
        for handler in handlers { handler() }
    }

    /// The server is stopping: no more writes, send what is buffered, then end; wake the
    /// connection if it is parked so that it does so.
    func endForServerStop() {
        let handlers = state.withLock { state in
            let handlers = state.close(to: .finishing)
            state.wakeParkedConnection()
            return handlers
        }
        for handler in handlers { handler() }
    }
}

/// Queues `stream` as the body of the current request.
func queueStream(
    _ stream: HTTPStream,
    status: UInt32,
    headers: HTTPHeaders,
    closing: Bool,
    on connection: OpaquePointer,
    core: ServerCore
) -> QueueOutcome {
    guard stream.bind(to: connection) else { return .refused("the response stream already serves another request") }
    if let bytes = core.streamSendBuffer { limitSendBuffer(of: connection, to: bytes) }
    core.register(stream)
    let binding = Unmanaged.passRetained(StreamBinding(stream: stream, core: core))
    let reader: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
        guard let cls, let buffer else { return MHD_CONTENT_READER_END_WITH_ERROR }
        let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeUnretainedValue()
        return binding.stream.fill(UnsafeMutableRawPointer(buffer), capacity: capacity)
    }
    let free: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeRetainedValue()
        binding.stream.detach()
        binding.core.unregister(binding.stream)
    }
    // MHD_SIZE_UNKNOWN (UINT64_MAX) is a macro Swift does not import.
    guard
        let response = MHD_create_response_from_callback(UInt64.max, streamBlockSize, reader, binding.toOpaque(), free)
    else {
        // The free callback is only called for responses that were created.
        binding.release()
        stream.detach()
        core.unregister(stream)
        return .failed
    }
    return queueCreatedResponse(response, status: status, headers: headers, closing: closing, on: connection)
}

/// Sets the kernel's send buffer of `connection`'s socket to `bytes` (`SO_SNDBUF`, which also ends
/// the kernel's growing of it): what a stream can have written ahead of its reader. A socket
/// libmicrohttpd cannot name, or a refusal, leaves the kernel's own (nothing to undo).
private func limitSendBuffer(of connection: OpaquePointer, to bytes: Int) {
    let socket = cmhd_connection_fd(connection)
    guard socket >= 0 else { return }
    var value = Int32(clamping: bytes)
    _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
}
