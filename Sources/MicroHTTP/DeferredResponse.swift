import Synchronization

/// An answer a responder gives later, from any thread: `respond(to:)` returns
/// `HTTPResponse(deferred:)` with a new handle, and whoever finishes the work (another thread, a
/// completion) calls `send` once. Meanwhile the request's connection is suspended: it holds no
/// libmicrohttpd thread, which serves other connections (docs/MICROHTTP.md §2.6).
///
/// Only the first answer counts: `send` returns false when the request was answered already, or
/// is no longer waiting. The server answers a request itself, through the responder's
/// `refused(_:_:)`, when nobody has by its request deadline (`HTTPRefusal.Reason.answerTimeout`),
/// or when the server stops (`.serverStopping`). A client that leaves meanwhile is noticed when
/// the answer is written (a suspended connection is not watched): the answer is dropped then.
///
/// A handle serves one request; returning it again from `respond(to:)` is an unusable response.
public final class DeferredResponse: Sendable {
    /// What the answer is made of.
    enum Answer: Sendable {
        /// A response made already.
        case response(HTTPResponse)
        /// A response to make on the connection's thread, right before it is queued.
        case making(@Sendable () -> HTTPResponse)
        /// The server's own refusal (the deadline, stopping).
        case refusal(HTTPRefusal)
    }

    struct State: Sendable {
        /// The first answer given, until the connection's thread takes it.
        var answer: Answer?
        /// Whether an answer was given (it stays true once the thread took it).
        var answered = false
        /// Whether the handle was bound to a request (it serves one).
        var bound = false
        /// The connection, while it is suspended waiting for the answer: resumed (once) by the
        /// answer, under this lock, so a resume never races the suspend nor a second resume.
        var suspended: ConnectionHandle?
    }

    let state = Mutex(State())

    /// A handle for one request's answer.
    public init() {}

    /// Answers with `response`; false if the request was answered already (by an earlier `send`,
    /// its deadline or the server stopping), and then nothing is sent.
    @discardableResult
    public func send(_ response: HTTPResponse) -> Bool {
        give(.response(response))
    }

    /// Answers with what `make` returns, called once on the connection's own thread right before
    /// the answer is queued (so that what the answer records, its latency or a log line, is of
    /// the moment it leaves, and its work stays on the server's threads). Not called when the
    /// server closes the connection first (it is stopping). False as for `send(_:)`.
    @discardableResult
    public func send(making make: @escaping @Sendable () -> HTTPResponse) -> Bool {
        give(.making(make))
    }

    /// Whether an answer was given (by `send`, the deadline or the server stopping).
    public var isAnswered: Bool { state.withLock { $0.answered } }

    /// Gives the answer, and wakes the connection if it waits for it.
    func give(_ answer: Answer) -> Bool {
        state.withLock { state in
            guard !state.answered else { return false }
            state.answered = true
            state.answer = answer
            state.resumeSuspended()
            return true
        }
    }
}

/// A response its responder sends later (`DeferredResponse`); see `HTTPResponse.Body.deferred`.
extension HTTPResponse {
    /// A response that `deferred.send(_:)` gives later, from any thread.
    public init(deferred: DeferredResponse) {
        self.init(status: 200, body: .deferred(deferred))
    }
}
