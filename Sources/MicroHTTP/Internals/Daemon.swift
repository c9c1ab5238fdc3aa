import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A running libmicrohttpd daemon and what it was given; owned by one `HTTPServer`, which stops it.
struct RunningDaemon {
    /// The `struct MHD_Daemon *`.
    let handle: OpaquePointer
    /// The server core, retained for the callbacks' `void *` until `MHD_stop_daemon` has returned.
    let context: Unmanaged<ServerCore>
    /// The port the listen socket is bound to.
    let port: UInt16
    /// The server core (for its head watch, stopped with the daemon).
    let core: ServerCore

    /// Binds and starts the daemon's threads.
    static func start(configuration: HTTPServer.Configuration, core: ServerCore) throws(HTTPServerError)
        -> RunningDaemon
    {
        // One internal epoll thread, or a pool of them; suspend/resume for streams (it also makes
        // libmicrohttpd create the inter-thread channel through which a resume wakes the thread).
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        var address = try SocketAddress(host: configuration.host, port: configuration.port)
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }

        let context = Unmanaged.passRetained(core)
        let handle: OpaquePointer? = address.withSockaddr { sockaddr in
            var options = [
                cmhd_option_pointer(MHD_OPTION.SOCK_ADDR, sockaddr),
                cmhd_option_value(MHD_OPTION.CONNECTION_TIMEOUT, configuration.connectionTimeoutSeconds),
                cmhd_option_value(MHD_OPTION.CONNECTION_MEMORY_LIMIT, configuration.connectionMemoryLimit),
                cmhd_option_notify_completed(requestCompleted, context.toOpaque()),
                cmhd_option_uri_log(requestStarted, context.toOpaque()),
                cmhd_option_unescape(keepEscaped, nil),
            ]
            if configuration.threads > 1 {
                // A pool size of 1 is not "no pool" to libmicrohttpd (it warns), so only for N > 1.
                options.append(cmhd_option_value(MHD_OPTION.THREAD_POOL_SIZE, configuration.threads))
            }
            if let limit = configuration.connectionLimit {
                options.append(cmhd_option_value(MHD_OPTION.CONNECTION_LIMIT, limit))
            }
            if let limit = configuration.perIPConnectionLimit {
                options.append(cmhd_option_value(MHD_OPTION.PER_IP_CONNECTION_LIMIT, limit))
            }
            options.append(cmhd_option_end())
            return options.withUnsafeBufferPointer { items in
                cmhd_start_daemon(
                    flags, configuration.port, admitConnection, context.toOpaque(), handleAccess, context.toOpaque(),
                    items.baseAddress)
            }
        }
        guard let handle else {
            let failure = errno
            context.release()
            throw HTTPServerError(
                function: "MHD_start_daemon", errno: failure,
                reason: "could not listen on \(configuration.host) port \(configuration.port)")
        }
        let port = cmhd_daemon_bind_port(handle)
        guard port != 0 else {
            MHD_stop_daemon(handle)
            context.release()
            throw HTTPServerError(
                function: "MHD_get_daemon_info", errno: 0, reason: "the daemon did not report its bound port")
        }
        core.headWatch?.start { [core] target in
            core.responder.deadlinePassed(HTTPRequestHead(method: "", target: target))
        }
        return RunningDaemon(handle: handle, context: context, port: port, core: core)
    }

    /// Stops the daemon (every connection closes, every callback has returned when this returns),
    /// then releases what it was given. Suspended connections must have been resumed before.
    func stop() {
        core.headWatch?.stop()
        MHD_stop_daemon(handle)
        context.release()
    }
}

/// An IPv4 or IPv6 socket address parsed from a numeric host.
private struct SocketAddress {
    private var storage = sockaddr_storage()
    let isIPv6: Bool

    init(host: String, port: UInt16) throws(HTTPServerError) {
        var ipv4 = sockaddr_in()
        if inet_pton(AF_INET, host, &ipv4.sin_addr) == 1 {
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ipv4, as: sockaddr_in.self) }
            isIPv6 = false
            return
        }
        var ipv6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &ipv6.sin6_addr) == 1 {
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ipv6, as: sockaddr_in6.self) }
            isIPv6 = true
            return
        }
        throw HTTPServerError(
            function: "inet_pton", errno: 0, reason: "\"\(host)\" is not a numeric IPv4 or IPv6 address")
    }

    /// Calls `body` with a `struct sockaddr *` valid for the duration of the call.
    mutating func withSockaddr<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
        withUnsafeMutableBytes(of: &storage) { body($0.baseAddress!) }
    }
}

// MARK: - libmicrohttpd callbacks (plain global functions: nonisolated, capture nothing)

/// Accept policy callback: admits a new connection unless the server is quiesced (MHD_NO makes
/// libmicrohttpd close it at once, so the client gets a connection that closes without an answer).
///
/// Why not MHD_quiesce_daemon: with epoll and internal threads, libmicrohttpd 0.9.75 removes the
/// listen socket from the epoll set both in the caller and in the polling thread without a lock,
/// and the loser of that race calls MHD_PANIC ("Failed to remove listen FD from epoll set",
/// daemon.c:5531 and 4976), aborting the process. Measured with a C stress loop (quiesce under
/// load, then stop): an abort within a few thousand quiesces, with one thread and with a pool.
private func admitConnection(
    _ cls: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
) -> MHD_Result {
    guard let cls else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    return core.isAccepting.load(ordering: .relaxed) ? MHD_Result.YES : MHD_Result.NO
}

/// URI log callback: the first thing libmicrohttpd calls for a request, with the raw target before
/// it splits off the query or unescapes anything. The request's state starts here; what it returns
/// becomes `*con_cls`, and libmicrohttpd then also calls the completed callback, which releases it.
private func requestStarted(
    _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    let rawLength = uri.map { strlen($0) } ?? -1
    var target = uri.map { String(cString: $0) } ?? ""
    // RFC 9112 §3.2.2: a server must accept the absolute form ("http://host/path"); route by its
    // path, as if the origin form had been sent.
    if let first = target.utf8.first, first | 0x20 == UInt8(ascii: "h") { target = originForm(target) }
    guard let cls else {
        return Unmanaged.passRetained(RequestState(target: target, targetLength: rawLength, deadline: nil)).toOpaque()
    }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let request = RequestStatePool.mine.take(
        target: target, targetLength: rawLength, deadline: core.requestDeadlineNanoseconds)
    core.inFlight.add(1, ordering: .relaxed)
    if let connection { core.headWatch?.enter(request, socket: cmhd_connection_fd(connection)) }
    return Unmanaged.passRetained(request).toOpaque()
}

/// The origin form of an absolute-form target: the path and query after the authority ("/" when
/// there is none); any other target is returned as it is.
func originForm(_ target: String) -> String {
    let lower = target.prefix(8).lowercased()
    let schemeLength = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
    guard schemeLength > 0 else { return target }
    let rest = target.utf8.dropFirst(schemeLength)
    guard let slash = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else { return "/" }
    let tail = String(target[slash...])
    return tail.hasPrefix("?") ? "/" + tail : tail
}

/// Completed callback: the request is over (answered, aborted, timed out or shut down).
private func requestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ termination: MHD_RequestTerminationCode
) {
    guard let context, let pointer = context.pointee else { return }
    context.pointee = nil
    let state = Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
    if let cls {
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        core.inFlight.subtract(1, ordering: .relaxed)
        // Before libmicrohttpd closes the socket (it does so after this callback), and before the
        // state is given back (the watch holds it unretained). An answered request left the watch
        // when it was answered; only one aborted while arriving is still in it.
        if case .answered = state.phase {} else { core.headWatch?.leave(state) }
        // Closed before its deferred answer was taken (the server stopping): nothing touches the
        // connection again.
        if case .deferred = state.phase, let deferred = state.deferredAnswer.take() {
            core.unregister(deferred)
            deferred.abandon()
        }
    }
    RequestStatePool.mine.give(state)
}

/// Unescape callback that leaves the string as it is, so the URL libmicrohttpd reports stays raw
/// (the Swift side decodes path segments one by one, where "%2F" must not become a separator).
private func keepEscaped(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ string: UnsafeMutablePointer<CChar>?
) -> Int {
    guard let string else { return 0 }
    return strlen(string)
}

/// The access handler, in libmicrohttpd's multi-call protocol (docs/MICROHTTP.md §2.3):
/// 1. headers parsed: screen, check Content-Length, and queue nothing unless refusing (a response
///    queued on the first call makes libmicrohttpd close the connection: keep-alive would be lost);
/// 2. zero or more calls with body bytes: accumulate them (past the limit, drop them and refuse
///    once the body ends: libmicrohttpd 0.9.75 accepts no response while a body is arriving);
/// 3. a call with no bytes: the body is complete, respond.
private func handleAccess(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let context, let statePointer = context.pointee else {
        return MHD_Result.NO
    }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let request = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()

    switch request.phase {
    case .awaitingHead:
        if core.deadlinePassed(request) {
            // The head itself took longer than the whole request may (a slow-header client).
            let seconds = core.requestDeadline.map { "\($0.components.seconds)" } ?? "?"
            let refusal = HTTPRefusal(
                .requestTimeout,
                "The request took longer than \(seconds) s to arrive; send it again, all at once.")
            return refuse(refusal, HTTPRequestHead(method: "", target: request.target), request, connection, core)
        }
        // libmicrohttpd hands the target over NUL-terminated in the line's buffer, right before
        // the version: a NUL inside the target would cut it short unseen ("/sessions/a\0junk" →
        // "/sessions/a"). The version then starts later than the target's end (RFC 9112 §3.2:
        // a target has no NUL).
        if let url, let version, request.targetLength >= 0,
            UnsafeRawPointer(version) - UnsafeRawPointer(url) != request.targetLength + 1
        {
            let refusal = HTTPRefusal(
                .malformedRequestLine,
                "The request line is malformed (a control character or extra space in the target).")
            return refuse(refusal, HTTPRequestHead(method: "", target: request.target), request, connection, core)
        }
        // One pass over the fields: gathered, and the framing rules applied on the way.
        // A typical head's fields fit in 448 bytes: the buffer the state kept, or one allocation.
        var (head, refusal) = HeadReader.read(
            connection, method: method.map(knownString) ?? "", target: request.target,
            version: version.map(knownString) ?? "", fields: request.takeFieldBuffer(reservingBytes: 448, fields: 8),
            maxBodyBytes: core.maxBodyBytes, chunkedBodies: core.chunkedBodies)
        // Kept for the next request on this state (shared with the head until this one is over).
        request.fieldBuffer = head.headers
        head.client = cmhd_connection_client_address(connection).flatMap(ClientAddress.init)
        if let refusal { return refuse(refusal, head, request, connection, core) }
        if let refusal = core.responder.screen(head) {
            return answer(refusal, closing: true, request, on: connection, core: core)
        }
        request.declaredBodyBytes = head.contentLength ?? 0
        request.head = consume head
        request.phase = .readingBody
        return MHD_Result.YES

    case .readingBody:
        let count = uploadDataSize.pointee
        if count > 0 {
            // Every call must consume what it is given, or libmicrohttpd calls again with the same bytes.
            uploadDataSize.pointee = 0
            guard request.body.count + count <= core.maxBodyBytes else {
                // Only a chunked body gets here (a declared Content-Length was checked up front).
                request.body = []
                request.phase = .discardingBody(allowance: discardAllowance - count)
                return MHD_Result.YES
            }
            guard let uploadData else { return MHD_Result.NO }
            // Into the buffer the state kept from its last request, when it has the room.
            if request.body.isEmpty { request.body.reserveCapacity(max(request.declaredBodyBytes, count)) }
            request.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: count))
            return MHD_Result.YES
        }
        // Moved out, not copied: the state keeps neither (a copy costs a retain per field).
        guard let head = request.head.take() else { return MHD_Result.NO }
        // A body that ends after the deadline but before the watch cut it (it looks four times a
        // second) is cut here: MHD_NO closes the connection, no answer can be queued mid-request.
        if !request.body.isEmpty, core.deadlinePassed(request) {
            core.headWatch?.leave(request)
            request.phase = .answered
            core.responder.deadlinePassed(head)
            return MHD_Result.NO
        }
        // Shared with the request, and kept: once the request is over, the buffer is the state's
        // alone again, for the next body.
        let body = request.body
        let response = core.responder.respond(
            to: HTTPRequest(
                head: consume head, body: body, receivedAt: request.receivedAt,
                receivedNanoseconds: request.receivedNanoseconds))
        if case .deferred(let deferred) = response.body {
            return awaitAnswer(deferred, request, on: connection, core: core)
        }
        return answer(response, closing: false, request, on: connection, core: core)

    case .deferred:
        // Resumed: the answer is there.
        uploadDataSize.pointee = 0
        guard let deferred = request.deferredAnswer else { return MHD_Result.NO }
        return deliver(deferred, request, on: connection, core: core)

    case .discardingBody(let allowance):
        let count = uploadDataSize.pointee
        if count > 0 {
            uploadDataSize.pointee = 0
            // Returning MHD_NO makes libmicrohttpd close the connection without a response.
            guard allowance >= count else { return MHD_Result.NO }
            request.phase = .discardingBody(allowance: allowance - count)
            return MHD_Result.YES
        }
        let head = request.head.take() ?? HTTPRequestHead(method: "", target: request.target)
        return refuse(HeadReader.tooLarge(limit: core.maxBodyBytes), head, request, connection, core)

    case .answered:
        // Body bytes after a refusal: drop them (libmicrohttpd closes the connection afterwards).
        uploadDataSize.pointee = 0
        return MHD_Result.YES
    }
}

/// Queues the answer to `request`, which is then no longer watched for its deadline (it has
/// arrived: whatever the answer's sending takes is the idle timeout's and the client's affair).
private func answer(
    _ response: HTTPResponse, closing: Bool, _ request: RequestState, on connection: OpaquePointer, core: ServerCore
) -> MHD_Result {
    request.phase = .answered
    core.headWatch?.leave(request)
    return queue(response, closing: closing, on: connection, core: core, target: request.target)
}

/// `request` waits for `deferred`: its connection is suspended until the answer is given (or
/// answered now if it is there already). It stays on the deadline watch, which answers it at the
/// deadline; stopping answers it too.
private func awaitAnswer(
    _ deferred: DeferredResponse, _ request: RequestState, on connection: OpaquePointer, core: ServerCore
) -> MHD_Result {
    request.phase = .deferred
    request.deferredAnswer = deferred
    guard core.register(deferred) else {
        _ = deferred.give(
            .refusal(HTTPRefusal(.serverStopping, "The server is stopping and cannot answer; send it again.")))
        return deliver(deferred, request, on: connection, core: core)
    }
    core.headWatch?.awaitAnswer(request, deferred)
    switch deferred.suspend(connection) {
    case .suspended:
        return MHD_Result.YES
    case .answered:
        return deliver(deferred, request, on: connection, core: core)
    case .reused:
        core.unregister(deferred)
        return refuse(
            HTTPRefusal(.unusableResponse, "the deferred response already served another request"),
            HTTPRequestHead(method: "", target: request.target), request, connection, core)
    }
}

/// Queues the answer given to `deferred`, on the connection's thread once it is resumed.
private func deliver(
    _ deferred: DeferredResponse, _ request: RequestState, on connection: OpaquePointer, core: ServerCore
) -> MHD_Result {
    core.unregister(deferred)
    request.deferredAnswer = nil
    let head = HTTPRequestHead(method: "", target: request.target)
    switch deferred.takeAnswer() {
    case .response(let response)?:
        return answerOnce(response, request, connection, core)
    case .making(let make)?:
        return answerOnce(make(), request, connection, core)
    case .refusal(let refusal)?:
        return refuse(refusal, head, request, connection, core)
    case nil:
        // Resumed without an answer: cannot happen (only an answer resumes); close.
        request.phase = .answered
        core.headWatch?.leave(request)
        return MHD_Result.NO
    }
}

/// A deferred answer is final: one that is itself deferred cannot be sent.
private func answerOnce(
    _ response: HTTPResponse, _ request: RequestState, _ connection: OpaquePointer, _ core: ServerCore
) -> MHD_Result {
    if case .deferred = response.body {
        return refuse(
            HTTPRefusal(.unusableResponse, "a deferred answer was itself deferred"),
            HTTPRequestHead(method: "", target: request.target), request, connection, core)
    }
    return answer(response, closing: false, request, on: connection, core: core)
}

/// Answers `request` with the responder's rendering of `refusal`, closing the connection.
private func refuse(
    _ refusal: HTTPRefusal, _ head: HTTPRequestHead, _ request: RequestState, _ connection: OpaquePointer,
    _ core: ServerCore
) -> MHD_Result {
    answer(core.responder.refused(refusal, head), closing: true, request, on: connection, core: core)
}

/// The method or version libmicrohttpd parsed, as a String: the common ones are constants (no
/// length scan, no UTF-8 validation, no allocation), anything else is copied.
private func knownString(_ text: UnsafePointer<CChar>) -> String {
    // Up to 8 bytes gathered little-endian into one word, stopping at the NUL (never reading past
    // it); a longer text is none of the known ones.
    let bytes = UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self)
    var word: UInt64 = 0
    var count = 0
    while count < 9, bytes[count] != 0 {
        guard count < 8 else { return String(cString: text) }
        word |= UInt64(bytes[count]) << (8 * UInt64(count))
        count += 1
    }
    switch word {
    case 0x5453_4F50: return "POST"
    case 0x54_4547: return "GET"
    case 0x312E_312F_5054_5448: return "HTTP/1.1"
    case 0x54_5550: return "PUT"
    case 0x4554_454C_4544: return "DELETE"
    case 0x4441_4548: return "HEAD"
    case 0x53_4E4F_4954_504F: return "OPTIONS"
    case 0x302E_312F_5054_5448: return "HTTP/1.0"
    default: return String(cString: text)
    }
}

/// How many bytes of an over-limit chunked body are read and dropped so that the client can be
/// told 413, in bytes; a client sending more than this is cut off without an answer.
private let discardAllowance = 1024 * 1024
