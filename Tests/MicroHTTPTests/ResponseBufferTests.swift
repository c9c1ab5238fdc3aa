import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import MicroHTTP

/// Answers `/buffer/N` with N pattern bytes in a `ResponseBuffer` (and `/bad-buffer/N` with the
/// same behind a header libmicrohttpd cannot send), keeping a weak reference to each buffer's
/// owner so that a test can see when libmicrohttpd let go of it.
private final class BufferResponder: HTTPResponder {
    /// Bytes in memory of their own, freed when the last reference goes.
    final class Bytes {
        let start: UnsafeMutablePointer<UInt8>
        init(count: Int) { start = .allocate(capacity: max(count, 1)) }
        deinit { start.deallocate() }
    }
    private struct Made: @unchecked Sendable {
        weak var storage: Bytes?
    }
    private let made = Mutex<[Made]>([])

    /// How many buffers made so far are still alive.
    var alive: Int { made.withLock { $0.filter { $0.storage != nil }.count } }
    var count: Int { made.withLock { $0.count } }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/")
        guard parts.count == 2, let size = Int(parts[1]) else { return HTTPResponse(status: 404) }
        let bytes = Bytes(count: size)
        for i in 0..<size { bytes.start[i] = UInt8(truncatingIfNeeded: i &* 7 &+ 3) }
        let buffer = ResponseBuffer(owner: bytes, start: bytes.start, count: size)
        made.withLock { $0.append(Made(storage: bytes)) }
        let headers: HTTPHeaders = parts[0] == "bad-buffer" ? ["X-Echo": "a\r\nInjected: 1"] : ["X-Kind": "buffer"]
        return HTTPResponse(status: 200, headers: headers, body: .buffer(buffer))
    }
}

@Suite("ResponseBuffer bodies over real sockets")
struct ResponseBufferTests {
    /// (target, status, body bytes expected)
    @Test(arguments: [
        // An empty body: Content-Length 0.
        ("/buffer/0", 200, 0),
        // A reply's size, sent from the buffer's own memory.
        ("/buffer/250", 200, 250),
        // Far more than one socket write: libmicrohttpd holds the buffer until the last byte.
        ("/buffer/1048576", 200, 1_048_576),
        // A header that cannot be sent: the 500 fallback goes out, and the buffer is still released.
        ("/bad-buffer/250", 500, -1),
    ])
    func sendsTheBytesAndReleasesTheBuffer(target: String, status: Int, size: Int) throws {
        let responder = BufferResponder()
        let server = HTTPServer(configuration: .init(port: 0), responder: responder)
        try server.start()
        defer { server.stop() }
        let client = try HTTPConnection(port: server.port)
        let response = try client.request("GET", target)
        #expect(response.status == status)
        if size >= 0 {
            #expect(response.headers["Content-Length"] == String(size))
            #expect(response.headers["X-Kind"] == "buffer")
            #expect(response.body == (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        }
        #expect(responder.count == 1)
        // libmicrohttpd frees the response after the last byte; its free callback drops the reference.
        #expect(eventually { responder.alive == 0 })
        // The connection goes on (or, after the 500, a new one does).
        let next = status == 200 ? client : try HTTPConnection(port: server.port)
        #expect(try next.request("GET", "/buffer/3").body == [3, 10, 17])
    }
}
