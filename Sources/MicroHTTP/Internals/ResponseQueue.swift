import CMicroHTTPD

// Turning HTTPResponse values into libmicrohttpd responses, on libmicrohttpd's thread.

/// What came of handing a response to libmicrohttpd.
enum QueueOutcome {
    /// Queued; libmicrohttpd sends it.
    case queued
    /// Not sendable as given (why in the string); nothing was queued, the caller may answer 500.
    case refused(String)
    /// A libmicrohttpd call failed (out of memory, or the connection is closing); the caller
    /// returns MHD_Result.NO so libmicrohttpd closes the connection.
    case failed
}

/// Queues `response` to the request for `target` on the connection; falls back to the responder's
/// answer to an `unusableResponse` refusal (a 500, closing the connection) when the response cannot
/// be sent as given, and to closing the connection when even that fails.
func queue(
    _ response: HTTPResponse, closing: Bool, on connection: OpaquePointer, core: ServerCore, target: String
) -> MHD_Result {
    // Once draining, every answer closes its connection: a client's next request then goes to a
    // new connection (and, once quiesced, another instance) instead of one that stopping would cut.
    let closing = closing || response.closesConnection || core.closesAfterAnswer.load(ordering: .relaxed)
    switch queueOnce(response, closing: closing, on: connection, core: core) {
    case .queued:
        return MHD_Result.YES
    case .failed:
        return MHD_Result.NO
    case .refused(let reason):
        let fallback = core.responder.refused(
            HTTPRefusal(.unusableResponse, reason), HTTPRequestHead(method: "", target: target))
        if case .queued = queueOnce(fallback, closing: true, on: connection, core: core) { return MHD_Result.YES }
        return MHD_Result.NO
    }
}

private func queueOnce(_ response: HTTPResponse, closing: Bool, on connection: OpaquePointer, core: ServerCore)
    -> QueueOutcome
{
    // Final responses are 2xx-9xx; 1xx are interim and would leave the client waiting.
    guard (200...999).contains(response.status) else {
        return .refused("the response status \(response.status) is not a final status code")
    }
    let status = UInt32(response.status)
    switch response.body {
    case .bytes(let bytes):
        // MUST_COPY: libmicrohttpd copies the (typically ~200-byte) body into its own allocation,
        // so the Swift array need not outlive this call.
        let created = bytes.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress),
                MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
        guard let created else { return .failed }
        return queueCreatedResponse(
            created, status: status, headers: response.headers, closing: closing, on: connection)
    case .buffer(let buffer):
        // Sent from the buffer's memory: libmicrohttpd holds a reference, released when it frees
        // the response (after the last byte went out, or when queueing fails).
        let owner = Unmanaged.passRetained(buffer.owner)
        guard
            let created = MHD_create_response_from_buffer_with_free_callback_cls(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.start), releaseResponseBuffer, owner.toOpaque())
        else {
            owner.release()
            return .failed
        }
        return queueCreatedResponse(
            created, status: status, headers: response.headers, closing: closing, on: connection)
    case .stream(let stream):
        return queueStream(
            stream, status: status, headers: response.headers, closing: closing, on: connection, core: core)
    case .deferred:
        return .refused("a deferred response answers only respond(to:), once")
    }
}

/// libmicrohttpd's free callback for a `.buffer` body: drops the reference taken when queueing.
private func releaseResponseBuffer(_ owner: UnsafeMutableRawPointer?) {
    guard let owner else { return }
    Unmanaged<AnyObject>.fromOpaque(owner).release()
}

/// Adds the header fields to a freshly created response, queues it, and drops our reference to it
/// (libmicrohttpd keeps its own while sending).
func queueCreatedResponse(
    _ response: OpaquePointer, status: UInt32, headers: HTTPHeaders, closing: Bool, on connection: OpaquePointer
) -> QueueOutcome {
    defer { MHD_destroy_response(response) }
    var refusal: String?
    // Headers vetted when they were built (a service's constant reply headers) are not checked
    // again for every reply.
    let vetted = headers.isVetted
    // Names and values go to libmicrohttpd straight from the headers' buffer, where each is
    // followed by a NUL (libmicrohttpd copies them).
    headers.forEachRaw { name, value in
        // libmicrohttpd computes Content-Length itself and refuses one set by hand.
        if HTTPHeaders.name(name, is: "content-length") { return true }
        // A NUL inside a name or value would cut it short as a C string: not a field value
        // (control characters are refused), nor a token.
        guard vetted || (HTTPHeaders.isToken(name) && HTTPHeaders.isFieldValue(value)) else {
            refusal =
                "the response header \"\(String(decoding: name, as: UTF8.self))\" has a character HTTP does not allow there"
            return false
        }
        let added = MHD_add_response_header(
            response, name.baseAddress!.assumingMemoryBound(to: CChar.self),
            (value.baseAddress ?? name.baseAddress! + name.count).assumingMemoryBound(to: CChar.self))
        guard added == MHD_Result.YES else {
            refusal =
                "the response header \"\(String(decoding: name, as: UTF8.self))\" was refused by MHD_add_response_header"
            return false
        }
        return true
    }
    if let refusal { return .refused(refusal) }
    if closing {
        guard MHD_add_response_header(response, "Connection", "close") == MHD_Result.YES else { return .failed }
    }
    return MHD_queue_response(connection, status, response) == MHD_Result.YES ? .queued : .failed
}
