import CMicroHTTPD

/// A request's header fields gathered from libmicrohttpd in one pass over its list, with HTTP's
/// framing rules applied on the way: the rules libmicrohttpd 0.9.75 does not apply itself
/// (docs/MICROHTTP.md), which decide whether this server and a front end read the same request.
///
/// One pass, comparing names without lowercasing, dispatching on a name's length first (most
/// headers match none of the framing fields); a String is made only for a value that is kept.
struct HeadReader {
    /// The first header name that breaks a rule, with the rule.
    private var badName: HTTPRefusal?
    private var contentLengths = 0
    /// The last Content-Length's value (nil: none, or not a number that fits an Int).
    private var contentLength: Int?
    private var hosts = 0
    private var transferEncoding: String?

    private init() {}

    /// Reads the fields `head` already has, as if they had arrived, setting its known fields (a
    /// head made without a socket: tests, fuzzing; the same rules as the server's pass).
    static func read(fieldsOf head: inout HTTPRequestHead) -> HeadReader {
        var reader = HeadReader()
        let headers = head.headers
        headers.forEachRaw { name, value in
            reader.note(name: name, value: value, in: &head)
            return true
        }
        head.contentLength = reader.declaredLength
        return reader
    }

    /// Reads the header fields of the request on `connection` into a head with the request line's
    /// parts and `fields` (empty: `RequestState.takeFieldBuffer`), and decides whether the framing
    /// rules refuse it (nil: go on).
    static func read(
        _ connection: OpaquePointer, method: String, target: String, version: String, fields: consuming HTTPHeaders,
        maxBodyBytes: Int, chunkedBodies: Bool
    ) -> (HTTPRequestHead, HTTPRefusal?) {
        // The fields go straight into the head, which is then returned, not copied (a reader that
        // held the head, or a pointer to `self` in an initializer, copied it out: ≈ 800
        // instructions a request).
        var head = HTTPRequestHead(method: method, target: target, version: version, emptyFields: fields)
        var reader = HeadReader()
        withUnsafeMutablePointer(to: &head) { head in
            withUnsafeMutablePointer(to: &reader) { reader in
                var pass = (head: head, reader: reader)
                withUnsafeMutablePointer(to: &pass) { pass in
                    _ = MHD_get_connection_values_n(
                        connection, MHD_ValueKind.HEADER_KIND,
                        { cls, _, key, keySize, value, valueSize in
                            guard let cls, let key else { return MHD_Result.YES }
                            let name = UnsafeRawBufferPointer(start: key, count: keySize)
                            let text =
                                value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) }
                                ?? UnsafeRawBufferPointer(start: nil, count: 0)
                            let pass = cls.assumingMemoryBound(to: Pass.self).pointee
                            pass.head.pointee.headers.append(name: name, value: text)
                            pass.reader.pointee.note(name: name, value: text, in: &pass.head.pointee)
                            return MHD_Result.YES
                        }, pass)
                }
            }
        }
        head.contentLength = reader.declaredLength
        let refusal = reader.refusal(version: version, maxBodyBytes: maxBodyBytes, chunkedBodies: chunkedBodies)
        // Moved out: returning `head` as it is copied it into the result and destroyed this one
        // (≈ 410 instructions a request).
        return (consume head, refusal)
    }

    /// What libmicrohttpd's iterator is handed: the head being filled and the reader's state.
    private typealias Pass = (head: UnsafeMutablePointer<HTTPRequestHead>, reader: UnsafeMutablePointer<HeadReader>)

    /// Applies the rules to one field of `head`, and keeps its value in `head` if it is one of the
    /// fields the head carries apart.
    private mutating func note(
        name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in head: inout HTTPRequestHead
    ) {
        // The fields kept apart are recognised first, by their exact names: such a name is a
        // token and extends no framing field's name, so the rules' checks below would pass it
        // (they cost ≈ 200 instructions a field; Host, Content-Type and Content-Length are in
        // nearly every request).
        switch name.count {
        case 4 where HTTPHeaders.name(name, is: "host"): hosts += 1
        case 6 where HTTPHeaders.name(name, is: "origin"):
            if head.origin == nil { head.origin = String(decoding: value, as: UTF8.self) }
        case 11 where HTTPHeaders.name(name, is: "traceparent"):
            if head.traceparent == nil { head.traceparent = String(decoding: value, as: UTF8.self) }
        case 12 where HTTPHeaders.name(name, is: "content-type"):
            head.contentType =
                HTTPHeaders.bytes(value, are: "application/json")
                ? "application/json" : String(decoding: value, as: UTF8.self)
        case 12 where HTTPHeaders.name(name, is: "x-request-id"):
            if head.requestID == nil { head.requestID = String(decoding: value, as: UTF8.self) }
        case 14 where HTTPHeaders.name(name, is: "content-length"):
            contentLengths += 1
            contentLength = HTTPHeaders.decimalValue(value)
        case 17 where HTTPHeaders.name(name, is: "transfer-encoding"):
            transferEncoding = String(decoding: value, as: UTF8.self)
        default:
            // Any other name is checked against the rules until the first bad one (past it the
            // rules are decided, but the fields a refusal's answer uses, the request id, are
            // still read above).
            head.otherFields += 1
            if badName == nil { _ = conformsToRules(name) }
        }
    }

    /// Whether the field name `name` is a token that does not continue a framing field's name;
    /// if not, records why as the request's refusal.
    private mutating func conformsToRules(_ name: UnsafeRawBufferPointer) -> Bool {
        if !HTTPHeaders.isToken(name) {
            // Whitespace is named apart from other bytes: space and tab before the colon is the
            // classic smuggling case (a front end may strip them and read the field).
            let text = String(decoding: name, as: UTF8.self)
            badName = HTTPRefusal(
                .malformedHeaderName,
                name.contains { $0 == 0x20 || $0 == 0x09 }
                    ? "request refused: whitespace in the header name \"\(text)\""
                    : "request refused: the header name \"\(text)\" is not a token (RFC 9110 §5.1)")
            return false
        }
        if name.count > 4, Self.extendsFramingName(name) {
            badName = HTTPRefusal(
                .foldedFramingHeader,
                "request refused: the header \"\(String(decoding: name, as: UTF8.self))\" looks like a folded framing header"
            )
            return false
        }
        return true
    }

    /// The Content-Length the request declares: nil when it has none or more than one.
    var declaredLength: Int? { contentLengths == 1 ? contentLength : nil }

    /// Why the request must be refused before its body is read, or nil to go on. In order: the
    /// first bad name, then the framing fields (RFC 9112 §3.2, §6.1, §6.3), then the body limit.
    func refusal(version: String, maxBodyBytes: Int, chunkedBodies: Bool) -> HTTPRefusal? {
        if let badName { return badName }
        if contentLengths > 1 {
            return HTTPRefusal(.repeatedContentLength, "request refused: more than one Content-Length")
        }
        if hosts > 1 { return HTTPRefusal(.repeatedHost, "request refused: more than one Host") }
        if hosts == 0, version == "HTTP/1.1" { return HTTPRefusal(.missingHost, "request refused: no Host header") }
        if let coding = transferEncoding {
            if contentLengths > 0 {
                return HTTPRefusal(
                    .lengthWithTransferEncoding, "request refused: both Content-Length and Transfer-Encoding")
            }
            let isChunked = Self.trimmingSpaces(coding).lowercased() == "chunked"
            if !isChunked {
                return HTTPRefusal(.unsupportedTransferCoding, "transfer coding \"\(coding)\" is not supported")
            }
            if !chunkedBodies {
                return HTTPRefusal(
                    .chunkedBody, "chunked request bodies are not accepted: send the body with a Content-Length")
            }
        }
        if contentLengths == 1 {
            // Refused before a byte of the body is read. A length too large for an Int is too large.
            guard let length = contentLength else { return Self.tooLarge(limit: maxBodyBytes) }
            if length > maxBodyBytes {
                return HTTPRefusal(.bodyTooLarge, "the body is \(length) bytes; the limit is \(maxBodyBytes) bytes")
            }
        }
        return nil
    }

    /// 413 for a body that grew past the limit while arriving (a chunked one), or whose length
    /// does not even fit an Int.
    static func tooLarge(limit: Int) -> HTTPRefusal {
        HTTPRefusal(.bodyTooLarge, "The request body exceeds the limit of \(limit) bytes.")
    }

    /// `text` without leading and trailing spaces and tabs (RFC 9110 §5.5's optional whitespace).
    private static func trimmingSpaces(_ text: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
        let end = text.lastIndex { !isSpace($0) }.map { text.index(after: $0) } ?? start
        return text[start..<max(start, end)]
    }

    /// Whether the header name `name` (bytes) is longer than a framing header's name and starts
    /// with it, ASCII case-insensitively (the obs-fold libmicrohttpd glues onto the name).
    static func extendsFramingName(_ name: UnsafeRawBufferPointer) -> Bool {
        // Byte by byte, without lowercasing: this runs for every header of every request.
        func extends(_ field: StaticString) -> Bool {
            let n = field.utf8CodeUnitCount
            guard name.count > n else { return false }
            for i in 0..<n {
                let b = name[i]
                if (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) != field.utf8Start[i] { return false }
            }
            return true
        }
        return extends("host") || extends("content-length") || extends("transfer-encoding")
            || extends("content-type")
    }
}

extension HTTPRefusal {
    /// The refusal the server would answer `head` with before its body, by the same rules and in
    /// the same order, for a head made without a socket (the fuzz target); nil to go on.
    package static func framing(of head: HTTPRequestHead, maxBodyBytes: Int, chunkedBodies: Bool) -> HTTPRefusal? {
        var scratch = head
        return HeadReader.read(fieldsOf: &scratch).refusal(
            version: head.version, maxBodyBytes: maxBodyBytes, chunkedBodies: chunkedBodies)
    }
}
