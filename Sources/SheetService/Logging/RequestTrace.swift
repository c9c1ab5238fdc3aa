import Logging
import MicroHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What ties a request's log lines together: its id (the client's `X-Request-Id` when that is a
/// sane token, else one made here), the trace id of a valid W3C `traceparent`, and the session it
/// names. Kept for the thread answering the request (`TraceSlot`), so every line logged meanwhile
/// carries them (through `RequestTrace.metadataProvider`).
struct RequestTrace: Sendable {
    /// The request id echoed in `X-Request-Id`.
    var id: String
    /// The 32 lowercase hex digits of the request's `traceparent`, when it has a valid one.
    var traceID: String?
    /// The session the request's path names, once routed.
    var sessionID: String?
    /// The access-log record, set only while its line is logged through swift-log (`AccessLog`,
    /// when the logger's handler is not a plain `LineLogHandler`): a `LineLogHandler` writes its
    /// fields into the line, the metadata provider hands it to other handlers as `access`.
    var access: AccessRecord?

    /// The longest `X-Request-Id` taken from a client, in bytes (a UUID is 36, nginx's
    /// `$request_id` 32; longer is someone else's format, or an attack on the log).
    static let maxIDBytes = 128

    /// The request id of a request with this head when it is the client's: its X-Request-Id
    /// when that is sane, else nil (one is made here). MicroHTTP kept the first X-Request-Id in
    /// its one pass over the fields; the first decides: a later one does not replace a bad first.
    static func clientID(of head: borrowing HTTPRequestHead) -> String? {
        guard var requestID = head.requestID, requestID.withUTF8({ isSaneID(UnsafeRawBufferPointer($0)) }) else {
            return nil
        }
        return requestID
    }

    /// The trace id of the head's first `traceparent`, when it is valid.
    static func traceID(of head: borrowing HTTPRequestHead) -> String? {
        guard var traceparent = head.traceparent else { return nil }
        return traceparent.withUTF8 { traceID(traceparent: UnsafeRawBufferPointer($0)) }
    }

    /// Whether a client's request id is kept: 1–128 bytes of A–Z a–z 0–9 and - _ . : + / = @
    /// (UUIDs, hex, base64 and the usual proxies' ids pass; spaces, quotes, control bytes and
    /// anything a log line or a header could be forged with do not).
    static func isSaneID(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // One bit per ASCII byte: 0–63 (+ - . / 0–9 : =) and 64–127 (@ A–Z _ a–z).
        let low: UInt64 = 0x27FF_E800_0000_0000
        let high: UInt64 = 0x07FF_FFFE_87FF_FFFF
        guard !bytes.isEmpty, bytes.count <= maxIDBytes else { return false }
        for b in bytes where b >= 128 || ((b < 64 ? low : high) >> UInt64(b & 63)) & 1 == 0 { return false }
        return true
    }

    /// The trace id of a W3C Trace Context `traceparent` (version-traceid-parentid-flags), or nil
    /// when the header is not valid: version 2 lowercase hex digits but not "ff"; version 00 is
    /// exactly 55 characters, a later version at least 55 with "-" after them; trace id 32 and
    /// parent id 16 lowercase hex digits, neither all zeros; flags 2 lowercase hex digits.
    static func traceID(traceparent value: UnsafeRawBufferPointer) -> String? {
        func isHex(_ range: Range<Int>) -> Bool {
            range.allSatisfy { (0x30...0x39).contains(value[$0]) || (0x61...0x66).contains(value[$0]) }
        }
        func isZero(_ range: Range<Int>) -> Bool { range.allSatisfy { value[$0] == 0x30 } }
        guard value.count >= 55, isHex(0..<2), !(value[0] == 0x66 && value[1] == 0x66) else { return nil }
        let isVersion00 = value[0] == 0x30 && value[1] == 0x30
        guard isVersion00 ? value.count == 55 : (value.count == 55 || value[55] == 0x2D) else { return nil }
        guard value[2] == 0x2D, value[35] == 0x2D, value[52] == 0x2D, isHex(3..<35), isHex(36..<52), isHex(53..<55),
            !isZero(3..<35), !isZero(36..<52)
        else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: value[3..<35]), as: UTF8.self)
    }

    /// A request id unique in this process: 8 hex digits drawn once at start-up (so ids of two
    /// processes rarely collide), "-", and `number`, the next value of a counter
    /// (`nextNumber()`), in hex. Up to 15 bytes (a counter below 16^6) it is a small String,
    /// stored inline: no allocation.
    static func generatedID(_ number: UInt64) -> String {
        withGeneratedID(number) { String(decoding: $0, as: UTF8.self) }
    }

    /// The next number for a generated id.
    static func nextNumber() -> UInt64 { counter.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Calls `body` with the bytes of `generatedID(number)`, written on the stack: an answer's
    /// `X-Request-Id` is written from them, and no String is made unless a log line asks for the
    /// id (making one validates the bytes: ≈ 280 instructions a request).
    static func withGeneratedID<R>(_ number: UInt64, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var n = number
        var count = 1
        while n >> (4 * UInt64(count)) != 0 { count += 1 }
        // The statics read once, not per byte (each read of a global checks that it is made).
        let prefix = Self.prefix
        let digits = hexDigits.utf8Start
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 9 + 16) { buffer in
            UnsafeMutableRawPointer(buffer.baseAddress!).storeBytes(of: prefix, as: UInt64.self)
            buffer[8] = UInt8(ascii: "-")
            for i in stride(from: 8 + count, through: 9, by: -1) {
                buffer[i] = digits[Int(n & 15)]
                n >>= 4
            }
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<(9 + count)]))
        }
    }

    private static let hexDigits: StaticString = "0123456789abcdef"
    /// 8 hex digits drawn once, as the bytes of a word (in memory order: the id's first 8 bytes).
    private static let prefix: UInt64 = {
        let random = UInt32.random(in: .min ... .max)
        var bytes: UInt64 = 0
        for i in 0..<8 {
            let digit = UInt64(hexDigits.utf8Start[Int(random >> (28 - 4 * UInt32(i)) & 15)])
            bytes |= digit << (8 * UInt64(i))
        }
        return UInt64(littleEndian: bytes)
    }()
    private static let counter = Atomic<UInt64>(1)

    // MARK: The request a thread is answering

    /// The metadata every log line gets from the request being answered on its thread:
    /// request_id, and trace_id, session_id and the access record when there are any.
    static let metadataProvider = Logger.MetadataProvider {
        guard let trace = TraceSlot.mine.trace else { return [:] }
        var metadata: Logger.Metadata = ["request_id": .string(trace.id)]
        if let traceID = trace.traceID { metadata["trace_id"] = .string(traceID) }
        if let sessionID = trace.sessionID { metadata["session_id"] = .string(sessionID) }
        if let access = trace.access { metadata["access"] = .stringConvertible(access) }
        return metadata
    }
}

/// The trace of the request the calling thread is answering, reached through a pthread key
/// (Swift has no thread-local storage of its own): allocated on a thread's first request,
/// released when the thread ends. Each libmicrohttpd thread answers one request at a time, start
/// to end, so a thread-local is exact; other threads (the frame pacer, the store's writer) see
/// none.
///
/// The trace's parts are fields of their own, set in place as the request goes (`begin`, the
/// session id once routed, `end`): a `RequestTrace?` here was built, copied in and destroyed
/// whole on every request (≈ 690 instructions a request, more than the id it carries). Only one
/// thread touches a slot, hence no run-time exclusivity checks.
final class TraceSlot {
    /// Whether the thread is answering a request: the fields below are its trace.
    @exclusivity(unchecked) private(set) var isAnswering = false
    /// The request id the client gave (nil: one is generated from `number`).
    @exclusivity(unchecked) private var clientID: String?
    /// The number of the generated request id, when the client gave none.
    @exclusivity(unchecked) private var number: UInt64 = 0
    @exclusivity(unchecked) private(set) var traceID: String?
    @exclusivity(unchecked) var sessionID: String?
    /// The access-log record, while its line is logged through swift-log (see `RequestTrace.access`).
    @exclusivity(unchecked) var access: AccessRecord?
    /// The header fields of the thread's answers, a buffer kept from answer to answer
    /// (`SheetResponder.finish`): the answer shares it until it is sent, then it is this slot's
    /// alone again and is filled in place for the next one.
    @exclusivity(unchecked) var replyFields = HTTPHeaders()
    /// The body buffer of the thread's last result, kept to write the next one into once it has
    /// been sent (`SheetResponder.json(_:capacity:_:)`).
    @exclusivity(unchecked) var replyBuffer: JSONBuffer?

    /// The store write the request's answer waits for, left by its handler for `respond`
    /// (`SheetResponder.answer(after:…)`).
    @exclusivity(unchecked) var storeWait: StoreWait?

    /// The request's trace as values, to answer it on another thread later (`restore`).
    struct Saved: Sendable {
        let clientID: String?
        let number: UInt64
        let traceID: String?
        let sessionID: String?
    }

    /// The trace of the request being answered, to `restore` where its answer is made.
    var saved: Saved { Saved(clientID: clientID, number: number, traceID: traceID, sessionID: sessionID) }

    /// The request of `saved` is being answered on this thread from now on (until `end`).
    func restore(_ saved: Saved) {
        clientID = saved.clientID
        number = saved.number
        traceID = saved.traceID
        sessionID = saved.sessionID
        isAnswering = true
    }

    /// `replyBuffer`, taken out (so that a writer finds it uniquely held once its reply is sent).
    func takeReplyBuffer() -> JSONBuffer? { replyBuffer.take() }

    /// The request id echoed in `X-Request-Id` (a generated one is made a String only here).
    var id: String { clientID ?? RequestTrace.generatedID(number) }

    /// Calls `body` with the request id's bytes (a generated id's without making a String).
    func withIDBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard var clientID else { return RequestTrace.withGeneratedID(number, body) }
        return clientID.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    /// The request being answered, as a value (for the log lines written meanwhile); nil between
    /// requests.
    var trace: RequestTrace? {
        guard isAnswering else { return nil }
        return RequestTrace(id: id, traceID: traceID, sessionID: sessionID, access: access)
    }

    /// A request with this head is being answered from now on.
    func begin(_ head: borrowing HTTPRequestHead) {
        clientID = RequestTrace.clientID(of: head)
        if clientID == nil { number = RequestTrace.nextNumber() }
        traceID = RequestTrace.traceID(of: head)
        sessionID = nil
        isAnswering = true
    }

    /// The request is answered.
    func end() {
        isAnswering = false
        clientID = nil
        traceID = nil
        sessionID = nil
    }

    /// The calling thread's slot.
    static var mine: TraceSlot {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<TraceSlot>.fromOpaque(pointer).takeUnretainedValue()
        }
        let slot = TraceSlot()
        pthread_setspecific(key, Unmanaged.passRetained(slot).toOpaque())
        return slot
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<TraceSlot>.fromOpaque(pointer).release() }
        }
        return key
    }()
}
