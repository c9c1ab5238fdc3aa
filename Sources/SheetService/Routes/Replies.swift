import MicroHTTP

/// The shapes of a reply: bytes with a media type, JSON (sent from the writer's buffer), and
/// problems (RFC 9457).
extension SheetResponder {
    static func bytes(_ status: Int, _ type: String, _ body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.append(name: "Content-Type", value: type)
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// The headers of every JSON reply, built once: a reply shares them (appending, e.g. CORS,
    /// copies them first), so answering allocates no header storage.
    static let jsonHeaders = (["Content-Type": "application/json"] as HTTPHeaders).vetted()!

    /// `jsonHeaders` with the `Cache-Control: no-store` every such answer gets on its way out
    /// (`finish`), in one piece.
    static let jsonNoStoreHeaders =
        (["Content-Type": "application/json", "Cache-Control": "no-store"] as HTTPHeaders).vetted()!

    /// A JSON reply sent from `buffer` (a writer's, `JSONWriter.takeBuffer()`) without a copy.
    static func json(_ status: Int, _ buffer: JSONBuffer) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: jsonHeaders,
            body: .buffer(ResponseBuffer(owner: buffer.storage, start: buffer.start, count: buffer.count)))
    }

    /// A JSON reply written by `write` into the thread's reply buffer, kept from its last such
    /// reply (`TraceSlot.replyBuffer`): once libmicrohttpd has sent and freed that reply, nothing
    /// else holds the buffer, and the next is written into it (a buffer made and freed for every
    /// answer was ≈ 300 instructions). Else into a new buffer of `capacity` bytes, kept next.
    static func json(_ status: Int, capacity: Int, _ write: (inout JSONWriter) -> Void) -> HTTPResponse {
        let slot = TraceSlot.mine
        var w = JSONWriter(reusing: slot.takeReplyBuffer(), capacity: capacity)
        write(&w)
        let buffer = w.takeBuffer()
        // A large one (many inline frames) is not kept.
        if buffer.capacity <= 16 * 1024 { slot.replyBuffer = buffer }
        return json(status, buffer)
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: Array(text.utf8))
    }

    func problemResponse(_ p: Problem, origin: String?) -> HTTPResponse {
        var r = Self.bytes(p.status, "application/problem+json", ReplyJSON.problem(p))
        for (name, value) in p.headers { r.headers.append(name: name, value: value) }
        if let origin { addCORS(&r.headers, origin: origin) }
        return r
    }
}
