import Foundation
import MicroHTTP
import SheetdTesting
import Synchronization
import Testing

/// A responder whose `/later` requests are answered later, through a `DeferredResponse` kept in
/// `pending` (`/now` answers through the handle before `respond` returns); anything else is
/// `TestResponder`'s.
final class LaterResponder: HTTPResponder {
    let plain = TestResponder()
    /// The handles of `/later` requests not yet taken by a test, in arrival order.
    let pending = Mutex<[DeferredResponse]>([])

    func refused(_ refusal: HTTPRefusal, _ head: HTTPRequestHead) -> HTTPResponse {
        plain.refused(refusal, head)
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case "/later":
            let later = DeferredResponse()
            pending.withLock { $0.append(later) }
            return HTTPResponse(deferred: later)
        case "/now":
            let later = DeferredResponse()
            later.send(HTTPResponse(status: 200, body: Array("at once".utf8)))
            return HTTPResponse(deferred: later)
        default:
            return plain.respond(to: request)
        }
    }

    /// The next deferred handle, once its request has reached `respond`.
    func next() throws -> DeferredResponse {
        var taken: DeferredResponse?
        _ = eventually {
            taken = pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            return taken != nil
        }
        return try #require(taken)
    }
}

/// Runs `body` on a new thread and returns at once.
private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    Thread.detachNewThread(body)
}

@Suite("Deferred answers: given later, from another thread")
struct DeferredResponseTests {
    private func withLaterServer<T>(
        requestDeadline: Duration = .seconds(10), threads: Int = 1,
        _ body: (HTTPServer, LaterResponder) throws -> T
    ) throws -> T {
        let responder = LaterResponder()
        let server = HTTPServer(
            configuration: .init(port: 0, threads: threads, requestDeadline: requestDeadline), responder: responder)
        try server.start()
        defer { server.stop() }
        return try body(server, responder)
    }

    /// The answer comes from another thread; meanwhile the server's one thread serves other
    /// connections; the connection stays usable; only the first answer counts.
    @Test func answeredLaterFromAnotherThread() throws {
        try withLaterServer { server, responder in
            let waiting = try HTTPConnection(port: server.port)
            try waiting.sendRequest("POST", "/later", body: Array("hello".utf8))
            let later = try responder.next()
            #expect(!later.isAnswered)
            // The only libmicrohttpd thread is free while the answer is awaited.
            let other = try HTTPConnection(port: server.port)
            #expect(try other.request("POST", "/echo", body: Array("meanwhile".utf8)).text == "meanwhile")
            let sent = Mutex(false)
            onAnotherThread {
                let made = later.send(making: { HTTPResponse(status: 201, body: Array("made later".utf8)) })
                sent.withLock { $0 = made }
            }
            let answer = try waiting.readResponse()
            #expect(answer.status == 201)
            #expect(answer.text == "made later")
            // send returns on its thread once the answer is queued: the client may read the answer
            // before that thread runs again, so its result is awaited, not read at once.
            #expect(eventually { sent.withLock { $0 } })
            #expect(!later.send(HTTPResponse(status: 500)))
            // Keep-alive: the next request on the connection is served.
            #expect(try waiting.request("POST", "/echo", body: Array("next".utf8)).text == "next")
        }
    }

    /// An answer given before `respond` returned (before the connection could be suspended)
    /// goes out at once; a pool of threads as well.
    @Test(arguments: [1, 4])
    func answeredBeforeTheConnectionIsSuspended(threads: Int) throws {
        try withLaterServer(threads: threads) { server, _ in
            let client = try HTTPConnection(port: server.port)
            for _ in 0..<20 {
                let answer = try client.request("GET", "/now")
                #expect(answer.status == 200)
                #expect(answer.text == "at once")
            }
        }
    }

    /// Many requests waiting at once, answered in another order than they came, from several
    /// threads: each gets its own answer.
    @Test func manyWaitingAnswersGoToTheirOwnRequests() throws {
        try withLaterServer { server, responder in
            let clients = try (0..<16).map { _ in try HTTPConnection(port: server.port) }
            var handles: [DeferredResponse] = []
            for (i, client) in clients.enumerated() {
                try client.sendRequest("POST", "/later", body: Array("\(i)".utf8))
                handles.append(try responder.next())
            }
            for (i, later) in handles.enumerated().reversed() {
                onAnotherThread { later.send(HTTPResponse(status: 200, body: Array("answer \(i)".utf8))) }
            }
            for (i, client) in clients.enumerated() {
                #expect(try client.readResponse().text == "answer \(i)")
            }
        }
    }

    /// A client that leaves while its answer is awaited: the answer is taken (the server cannot
    /// know yet), written to nobody, and the server goes on.
    @Test func clientLeavingWhileItsAnswerIsAwaited() throws {
        try withLaterServer { server, responder in
            let leaving = try HTTPConnection(port: server.port)
            try leaving.sendRequest("POST", "/later", body: Array("bye".utf8))
            let later = try responder.next()
            leaving.close()
            #expect(later.send(HTTPResponse(status: 200, body: Array("to nobody".utf8))))
            let next = try HTTPConnection(port: server.port)
            #expect(try next.request("POST", "/echo", body: Array("still here".utf8)).text == "still here")
        }
    }

    /// Stopping with an answer still awaited: it is answered with the responder's rendering of
    /// `.serverStopping` (503), not left suspended (which would abort in MHD_stop_daemon), and a
    /// late answer is refused.
    @Test func stopAnswersWhatIsStillAwaited() throws {
        let responder = LaterResponder()
        let server = HTTPServer(
            configuration: .init(port: 0, streamDrainTimeout: .milliseconds(100)), responder: responder)
        try server.start()
        let client = try HTTPConnection(port: server.port)
        try client.sendRequest("POST", "/later", body: Array("x".utf8))
        let later = try responder.next()
        onAnotherThread { server.stop() }
        let answer = try client.readResponse()
        #expect(answer.status == 503)
        #expect(responder.plain.refusals.withLock { $0.map(\.reason) } == [.serverStopping])
        #expect(answer.headers["Connection"]?.lowercased() == "close")
        #expect(!later.send(HTTPResponse(status: 200)))
        server.stop()
    }

    /// Nobody answers by the request deadline: the server answers with the responder's rendering
    /// of `.answerTimeout` (503) and closes the connection; a late answer is refused.
    @Test func theDeadlineAnswersWhatNobodyDid() throws {
        try withLaterServer(requestDeadline: .milliseconds(200)) { server, responder in
            let client = try HTTPConnection(port: server.port)
            try client.sendRequest("POST", "/later", body: Array("x".utf8))
            let later = try responder.next()
            let answer = try client.readResponse()
            #expect(answer.status == 503)
            #expect(answer.headers["Connection"]?.lowercased() == "close")
            #expect(responder.plain.refusals.withLock { $0.map(\.reason) } == [.answerTimeout])
            #expect(later.isAnswered)
            #expect(!later.send(HTTPResponse(status: 200)))
        }
    }
}
