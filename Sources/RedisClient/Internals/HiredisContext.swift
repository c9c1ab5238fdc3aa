import CHiredis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One blocking hiredis connection: the only owner of its `redisContext *`, freed in deinit. Each C
/// call is behind one method here, and a failed call becomes one `RedisError` naming it. Not
/// thread-safe: `RedisConnection` keeps it behind its mutex; a `RedisSubscriber`'s thread keeps its
/// own to itself.
///
/// After any failed C call hiredis leaves the context unusable (`isBroken`); the owner drops it.
final class HiredisContext {
    private let context: UnsafeMutablePointer<redisContext>
    private let endpoint: RedisEndpoint
    private let timeout: Double
    /// The digests of the scripts this connection has loaded (SCRIPT LOAD or EVAL answered).
    private var loadedScripts: Set<String> = []
    /// The server's clock as last read here (TIME), for fenced scripts' deadlines; nil until read.
    private var serverClock: ServerClock?

    /// The server's TIME, in microseconds since 1970, and the local moment it stands for (the middle
    /// of the round trip that read it: off by at most half of it).
    private struct ServerClock {
        let micros: Int64
        let at: ContinuousClock.Instant

        /// The server's clock now, by the local monotonic clock since it was read.
        var now: Int64 {
            let (seconds, attoseconds) = at.duration(to: .now).components
            return micros + seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        }
    }

    /// Seconds after which a fenced call also reads the server's clock again (in the same
    /// pipeline), so that a long-lived connection follows the server's clock as it is adjusted.
    static let clockRefresh = 60.0

    private init(context: UnsafeMutablePointer<redisContext>, endpoint: RedisEndpoint, timeout: Double) {
        self.context = context
        self.endpoint = endpoint
        self.timeout = timeout
    }

    deinit { redisFree(context) }

    /// Connects within `timeout` seconds, gives every later socket read and write the same timeout,
    /// turns on TCP keep-alive and selects the endpoint's database.
    ///
    /// For a Sentinel endpoint: connects to the server the Sentinels name as the primary, and
    /// checks with ROLE that it says so itself (a Sentinel's answer is out of date during a
    /// failover). After a switch was `announced` (`+switch-master`), to the primary it named first:
    /// a Sentinel that has not heard of the switch yet still names the old primary, which answers
    /// ROLE as a primary until the Sentinels reconfigure it. Where the announced server is not
    /// the primary (a later failover this process did not hear of) or cannot be reached, the
    /// Sentinels are asked; where it does not answer in time, that is the failure (asking on would
    /// double the wait for a server that may be stalled).
    static func connect(
        to endpoint: RedisEndpoint, timeout: Double, announced: PrimaryAddress? = nil
    ) throws(RedisError) -> HiredisContext {
        if let sentinel = endpoint.sentinel {
            if let announced {
                do throws(RedisError) {
                    let context = try connect(
                        to: endpoint.server(host: announced.host, port: announced.port), timeout: timeout)
                    try context.requirePrimary()
                    return context
                } catch  where error.kind == .timedOut {
                    throw error
                } catch {
                    // Not the primary, or gone: ask the Sentinels.
                }
            }
            let primary = try primary(of: sentinel, for: endpoint, timeout: timeout)
            let context = try connect(to: primary, timeout: timeout)
            try context.requirePrimary()
            return context
        }
        let connection = try open(endpoint, timeout: timeout)
        try connection.setTimeout()
        try connection.enableKeepAlive()
        if let credentials = endpoint.credentials {
            let auth = RedisCommand.text(["AUTH"] + (credentials.user.map { [$0] } ?? []) + [credentials.password])
            if case .error(let message) = try connection.pipeline([auth])[0] {
                // The reply names no secret ("WRONGPASS invalid username-password pair …"). Not final:
                // writes stay queued (and retried) while an operator puts the password right.
                let refusal = RedisError.replied(message, to: "AUTH", by: endpoint)
                throw RedisError(.unavailable, function: "AUTH", reason: refusal.reason, code: refusal.code)
            }
        }
        if endpoint.database != 0 {
            let select = RedisCommand.text(["SELECT", String(endpoint.database)])
            if case .error(let message) = try connection.pipeline([select])[0] {
                let refusal = RedisError.replied(message, to: "SELECT", by: endpoint)
                throw RedisError(
                    refusal.kind, function: "SELECT", reason: "database \(endpoint.database): \(refusal.reason)",
                    code: refusal.code)
            }
        }
        return connection
    }

    /// ROLE: throws unless the server says it is a primary ("master"): `.unavailable` for a replica
    /// or a sentinel, which must not be written to, and for a server busy with a script. Reads the
    /// server's clock (TIME) in the same round trip, for fenced scripts.
    func requirePrimary() throws(RedisError) {
        let command = RedisCommand.text(["ROLE"])
        let sent = ContinuousClock.now
        let replies = try exchange([command, Self.time], deadline: nil)
        let reply = replies[0]
        switch reply {
        case .array(let parts) where parts.first == .bulk(Array("master".utf8)):
            // A server that refuses TIME (an ACL) leaves the clock unread: a fenced call reads it
            // then, and fails as TIME does.
            if let clock = Self.clock(replies[1], sent: sent) { serverClock = clock }
            return
        case .array(let parts):
            let role = parts.first.flatMap { part -> String? in
                guard case .bulk(let bytes) = part else { return nil }
                return String(decoding: bytes, as: UTF8.self)
            }
            throw RedisError(
                .unavailable, function: "ROLE",
                reason: "\(endpoint.address) is not the primary (ROLE: \(role ?? reply.summary)): nothing sent to it",
                code: "ROLE")
        case .error(let message):
            // BUSY: `.unavailable`; a refused ROLE (renamed or forbidden): `.errorReply`, the role
            // unknown. Either way nothing is sent.
            throw .replied(message, to: "ROLE", by: endpoint)
        default:
            throw RedisError(
                .unexpectedReply, function: "ROLE", reason: "\(endpoint.address) replied with \(reply.summary)")
        }
    }

    /// True once a C call failed: hiredis's `err` is set for good and the connection must be dropped.
    var isBroken: Bool { context.pointee.err != 0 }

    /// The connection's socket, only for poll(2) (`Wakeup.wait`): the context owns it and closes it
    /// in deinit, and only hiredis reads from it or writes to it.
    var socket: Int32 { context.pointee.fd }

    /// Sends `commands` in one write and reads one reply each. Error replies are returned, not
    /// thrown; a failed C call throws (and leaves the context broken).
    ///
    /// Script calls (EVALSHA) are prepared first: a fenced one gets its deadline (the server's
    /// clock is read first if it never was here: one more round trip, once), a script not loaded
    /// on this connection yet is loaded in the same write (SCRIPT LOAD before its first call), and
    /// calls the server answers NOSCRIPT are sent again whole (EVAL), in one more round trip.
    func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply] {
        // The scripts called, each once (a writer's batch calls one), and whether one is fenced.
        var scripts: [RedisScript] = []
        for command in commands {
            if let script = command.script, !scripts.contains(where: { $0 === script || $0 == script }) {
                scripts.append(script)
            }
        }
        if scripts.isEmpty { return try exchange(commands, deadline: nil) }
        var prefix: [RedisCommand] = []
        var deadline: [UInt8]?
        if scripts.contains(where: \.isFenced) {
            if serverClock == nil { try readClock() }
            guard let clock = serverClock else {
                throw RedisError(
                    .unexpectedReply, function: "TIME", reason: "\(endpoint.address) did not tell its clock")
            }
            // The call may take effect until the caller stops waiting for it: the timeout after
            // it is sent (all of the pipeline is sent now).
            deadline = Array(String(clock.now + Int64(timeout * 1_000_000)).utf8)
            if clock.at.duration(to: .now) > .seconds(Self.clockRefresh) { prefix.append(Self.time) }
        }
        let loading = scripts.filter { !loadedScripts.contains($0.digest) }
        prefix += loading.map { .text(["SCRIPT", "LOAD", $0.source]) }
        let sent = ContinuousClock.now
        var replies = try exchange(prefix.isEmpty ? commands : prefix + commands, deadline: deadline)
        if !prefix.isEmpty {
            var answers = replies.prefix(prefix.count).makeIterator()
            if prefix[0].name == "TIME", let reply = answers.next(), let clock = Self.clock(reply, sent: sent) {
                serverClock = clock
            }
            for script in loading where answers.next() == .bulk(script.digestBytes) {
                loadedScripts.insert(script.digest)
            }
            replies.removeFirst(prefix.count)
        }
        // NOSCRIPT: the server's script cache was flushed since this connection loaded it.
        var lost: [Int] = []
        for (i, reply) in replies.enumerated() where commands[i].script != nil {
            if case .error(let message) = reply, RedisError.code(of: message) == "NOSCRIPT" { lost.append(i) }
        }
        if !lost.isEmpty {
            for (i, reply) in zip(lost, try exchange(lost.map { commands[$0].withSource }, deadline: deadline)) {
                replies[i] = reply
                if let digest = commands[i].script?.digest { loadedScripts.insert(digest) }
            }
        }
        return replies
    }

    /// TIME, on its own: the server's clock, for fenced calls (one round trip).
    private func readClock() throws(RedisError) {
        let sent = ContinuousClock.now
        let reply = try exchange([Self.time], deadline: nil)[0]
        guard let clock = Self.clock(reply, sent: sent) else {
            throw RedisError(
                .unexpectedReply, function: "TIME", reason: "\(endpoint.address) replied with \(reply.summary)")
        }
        serverClock = clock
    }

    private static let time = RedisCommand.text(["TIME"])

    /// The server's clock from TIME's reply (seconds and microseconds, as decimal strings), read
    /// in a round trip that began at `sent`; nil for anything else (an error, or numbers out of
    /// range: a reply is input like any other).
    private static func clock(_ reply: RedisReply, sent: ContinuousClock.Instant) -> ServerClock? {
        guard case .array(let parts) = reply, parts.count == 2, case .bulk(let seconds) = parts[0],
            case .bulk(let micros) = parts[1], (1...12).contains(seconds.count), (1...6).contains(micros.count),
            (seconds + micros).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let s = Int64(String(decoding: seconds, as: UTF8.self)),
            let us = Int64(String(decoding: micros, as: UTF8.self))
        else { return nil }
        let received = ContinuousClock.now
        return ServerClock(micros: s * 1_000_000 + us, at: sent + sent.duration(to: received) / 2)
    }

    /// Sends `commands` in one write, `deadline` last in each fenced script's call, and reads one
    /// reply each.
    private func exchange(_ commands: [RedisCommand], deadline: [UInt8]?) throws(RedisError) -> [RedisReply] {
        for command in commands { try append(command, last: command.script?.isFenced == true ? deadline : nil) }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for command in commands { replies.append(try reply(to: command)) }
        return replies
    }

    // MARK: One function per C call

    /// redisConnectWithTimeout: a blocking context, connected within `timeout`.
    private static func open(_ endpoint: RedisEndpoint, timeout: Double) throws(RedisError) -> HiredisContext {
        guard let context = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), timeval(seconds: timeout))
        else {
            throw RedisError(
                .unreachable, function: "redisConnectWithTimeout",
                reason: "\(endpoint.address): could not allocate the context")
        }
        // The owner from here on: a throw below frees the context in deinit.
        let connection = HiredisContext(context: context, endpoint: endpoint, timeout: timeout)
        if connection.isBroken {
            throw RedisError(
                .unreachable, function: "redisConnectWithTimeout",
                reason: "\(endpoint.address): \(connection.errorText)")
        }
        return connection
    }

    /// redisSetTimeout: SO_RCVTIMEO and SO_SNDTIMEO, so a stalled Redis fails a command instead of
    /// blocking it (the connect timeout alone does not cover commands in hiredis 0.14).
    private func setTimeout() throws(RedisError) {
        guard redisSetTimeout(context, timeval(seconds: timeout)) == REDIS_OK else {
            throw RedisError(.unreachable, function: "redisSetTimeout", reason: "\(endpoint.address): \(errorText)")
        }
    }

    /// redisEnableKeepAlive: TCP keep-alive probes, so an idle connection to a vanished host is
    /// noticed by the kernel.
    private func enableKeepAlive() throws(RedisError) {
        guard redisEnableKeepAlive(context) == REDIS_OK else {
            throw RedisError(
                .unreachable, function: "redisEnableKeepAlive", reason: "\(endpoint.address): \(errorText)")
        }
    }

    /// redisAppendCommandArgv: formats `command`, and `last` after its arguments if given (a fenced
    /// call's deadline), into the output buffer (nothing is sent yet; the next `reply(to:)` writes
    /// it).
    func append(_ command: RedisCommand, last: [UInt8]? = nil) throws(RedisError) {
        let status = Self.withArgv(command.arguments, last) { argv, lengths in
            redisAppendCommandArgv(context, Int32(argv.count), &argv, lengths)
        }
        guard status == REDIS_OK else {
            throw RedisError(
                .disconnected, function: "redisAppendCommandArgv",
                reason: "\(command.name) to \(endpoint.address): \(errorText)")
        }
    }

    /// redisGetReply (through `chiredis_get_reply`, which keeps SIGPIPE from ending the process):
    /// writes what was appended, then reads the next reply and frees hiredis's copy of it. A reply
    /// already buffered is returned without reading; otherwise this blocks for up to `timeout`.
    func reply(to command: RedisCommand) throws(RedisError) -> RedisReply {
        var raw: UnsafeMutableRawPointer?
        var failure: Int32 = 0
        let status = chiredis_get_reply(context, &raw, &failure)
        guard status == REDIS_OK, let raw else {
            let timedOut =
                context.pointee.err == REDIS_ERR_IO
                && (failure == EAGAIN || failure == EWOULDBLOCK || failure == ETIMEDOUT)
            if timedOut {
                throw RedisError(
                    .timedOut, function: "redisGetReply",
                    reason: "\(command.name) to \(endpoint.address): no answer within \(timeout) s")
            }
            throw RedisError(
                .disconnected, function: "redisGetReply",
                reason: "\(command.name) to \(endpoint.address): \(isBroken ? errorText : "no reply")")
        }
        defer { freeReplyObject(raw) }
        return Self.convert(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// redisReaderGetReply: the next reply when the bytes already read from the socket hold a
    /// complete one, else nil. Never reads or writes, so it never blocks (and never breaks the
    /// context); a protocol error in the buffered bytes throws.
    func bufferedReply(to command: RedisCommand) throws(RedisError) -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(context.pointee.reader, &raw) == REDIS_OK else {
            let reason = withUnsafeBytes(of: context.pointee.reader.pointee.errstr) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw RedisError(
                .disconnected, function: "redisReaderGetReply",
                reason: "\(command.name) to \(endpoint.address): \(reason)")
        }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return Self.convert(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// hiredis's message for the failed call (`errstr`).
    private var errorText: String {
        withUnsafeBytes(of: context.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// A copy of `reply` and its elements (the caller frees the original).
    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        func bytes() -> [UInt8] {
            guard let text = value.str, value.len > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: text, count: value.len))
        }
        switch value.type {
        case REDIS_REPLY_STRING: return .bulk(bytes())
        case REDIS_REPLY_STATUS: return .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(value.integer)
        case REDIS_REPLY_ARRAY:
            guard let elements = value.element else { return .array([]) }
            return .array((0..<value.elements).map { elements[$0].map(convert) ?? .null })
        default: return .null
        }
    }

    /// Calls `body` with C pointers to every argument (and `last`, if given, after them) and their
    /// lengths, valid only during the call.
    private static func withArgv<Result>(
        _ arguments: [[UInt8]], _ last: [UInt8]?,
        _ body: (inout [UnsafePointer<CChar>?], [Int]) -> Result
    ) -> Result {
        var pointers: [UnsafePointer<CChar>?] = []
        pointers.reserveCapacity(arguments.count + 1)
        var lengths: [Int] = []
        lengths.reserveCapacity(arguments.count + 1)
        // A closure, not a key path: `map(\.count)` went through the key path machinery (≈ 2,000
        // instructions a command).
        for argument in arguments { lengths.append(argument.count) }
        if let last { lengths.append(last.count) }
        return collect(arguments[...], last, into: &pointers) { pointers in body(&pointers, lengths) }
    }

    /// Pins one argument after another (nested closures), `last` after them, then calls `body`
    /// with all of them.
    private static func collect<Result>(
        _ arguments: ArraySlice<[UInt8]>, _ last: [UInt8]?,
        into pointers: inout [UnsafePointer<CChar>?],
        _ body: (inout [UnsafePointer<CChar>?]) -> Result
    ) -> Result {
        guard let first = arguments.first else {
            guard let last else { return body(&pointers) }
            return last.withUnsafeBufferPointer { buffer in
                let start = UnsafeRawPointer(buffer.baseAddress ?? emptyArgument.utf8Start)
                pointers.append(start.assumingMemoryBound(to: CChar.self))
                return body(&pointers)
            }
        }
        return first.withUnsafeBufferPointer { buffer in
            // An empty argument has no storage; hiredis copies 0 bytes, from any valid address.
            let start = UnsafeRawPointer(buffer.baseAddress ?? emptyArgument.utf8Start)
            pointers.append(start.assumingMemoryBound(to: CChar.self))
            return collect(arguments.dropFirst(), last, into: &pointers, body)
        }
    }

    private static let emptyArgument: StaticString = ""
}

extension timeval {
    /// `seconds` as a timeval (whole seconds and microseconds).
    fileprivate init(seconds: Double) {
        let whole = seconds.rounded(.down)
        let micro = min(((seconds - whole) * 1_000_000).rounded(.down), 999_999)
        self.init(tv_sec: time_t(whole), tv_usec: suseconds_t(micro))
    }
}
