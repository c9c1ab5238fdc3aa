/// What an `HTTPServer` asks for the answer to each request.
///
/// Both methods run synchronously on one of libmicrohttpd's threads, possibly on several threads
/// at once (a thread pool, or several connections served by one thread in turn), so they must be
/// quick and must never wait on Swift concurrency; long work belongs in a stream or elsewhere.
/// They must not call `HTTPServer.stop()` (that waits for these very threads).
public protocol HTTPResponder: Sendable {
    /// Called on libmicrohttpd's own thread once the headers are parsed and have passed the
    /// server's own framing rules, before any body byte is read: the application's policy (media
    /// types, access). Return a response to refuse the request now (it is sent with
    /// `Connection: close` and the body is never read), or nil to go on.
    func screen(_ head: HTTPRequestHead) -> HTTPResponse?

    /// The answer to a request the server refuses on its own (`HTTPRefusal`: framing, limits,
    /// deadlines, an unusable response): the server decides that it refuses, the application how
    /// the refusal reads. Sent with `Connection: close`. For a refused request line, a late head or
    /// a deferred answer the server gives itself (its deadline, stopping), `head` has the target
    /// only and an empty method.
    func refused(_ refusal: HTTPRefusal, _ head: HTTPRequestHead) -> HTTPResponse

    /// Called once the whole body is in; synchronous, on a libmicrohttpd thread, possibly
    /// concurrently from several threads of the pool. Work that must wait answers later instead:
    /// return `HTTPResponse(deferred:)` and send the answer through the handle from any thread
    /// (`DeferredResponse`); the connection holds no thread meanwhile.
    func respond(to request: HTTPRequest) -> HTTPResponse

    /// Called when a request was still arriving at the server's `requestDeadline` (its head, or its
    /// body): the connection is closed without an answer. For counting; must be quick. For a head
    /// cut off, `head` has only the target (from the request line) and an empty method.
    func deadlinePassed(_ head: HTTPRequestHead)
}

extension HTTPResponder {
    /// Lets every request through to `respond(to:)`.
    public func screen(_ head: HTTPRequestHead) -> HTTPResponse? {
        nil
    }

    /// Does nothing.
    public func deadlinePassed(_ head: HTTPRequestHead) {}

    /// The refusal's detail as plain text, with its status.
    public func refused(_ refusal: HTTPRefusal, _ head: HTTPRequestHead) -> HTTPResponse {
        refusal.plainTextResponse
    }
}
