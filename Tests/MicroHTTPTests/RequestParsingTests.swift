import Foundation
import SheetdTesting
import Testing

@testable import MicroHTTP

@Suite("Request heads, headers and streams as values")
struct RequestParsingTests {
    @Test(arguments: [
        // Each segment is decoded on its own: "%2F" stays inside its segment.
        ("/sessions/a%2Fb", ["sessions", "a/b"] as [String]?),
        // Plain segments pass through.
        ("/sessions/a1/pan", ["sessions", "a1", "pan"]),
        // The root has no segments.
        ("/", []),
        // A trailing slash is an empty last segment.
        ("/sessions/", ["sessions", ""]),
        // Empty segments in the middle are kept.
        ("/a//b", ["a", "", "b"]),
        // "%20" decodes to a space; "+" stays "+" in a path.
        ("/x%20y/a+b", ["x y", "a+b"]),
        // Multi-byte UTF-8 escapes decode.
        ("/caf%C3%A9", ["café"]),
        // The query is not part of the path.
        ("/a/b?c=/d", ["a", "b"]),
        // A malformed escape makes the whole path unusable.
        ("/bad%zz", nil),
        // A truncated escape too.
        ("/bad%4", nil),
        // An escape decoding to invalid UTF-8 too.
        ("/bad%C3", nil),
    ])
    func pathSegments(target: String, expected: [String]?) {
        #expect(HTTPRequestHead(method: "GET", target: target).pathSegments == expected)
    }

    @Test(
        arguments: [
            // Pairs in order.
            ("/q?a=1&b=2", [("a", "1"), ("b", "2")]),
            // "+" is a space and escapes decode, in query items only.
            ("/q?q=a+b%20c%26d", [("q", "a b c&d")]),
            // A name without "=" has an empty value.
            ("/q?flag", [("flag", "")]),
            // Empty pieces are skipped; an empty value stays.
            ("/q?a=1&&b=", [("a", "1"), ("b", "")]),
            // A malformed escape is kept literally.
            ("/q?x=%zz", [("x", "%zz")]),
            // Only the first "=" separates.
            ("/q?x=a=b", [("x", "a=b")]),
            // No query, no items.
            ("/q", []),
            // An empty query, no items.
            ("/q?", []),
        ] as [(String, [(String, String)])])
    func queryItems(target: String, expected: [(String, String)]) {
        let items = HTTPRequestHead(method: "GET", target: target).queryItems
        #expect(items.map(\.name) == expected.map(\.0))
        #expect(items.map(\.value) == expected.map(\.1))
    }

    @Test func rawPathAndQueryAreUndecoded() {
        let head = HTTPRequestHead(method: "GET", target: "/a%2Fb?x=a+b%26c")
        #expect(head.path == "/a%2Fb")
        #expect(head.query == "x=a+b%26c")
        #expect(HTTPRequestHead(method: "GET", target: "/plain").query == nil)
    }

    /// `otherFields`: the fields a search of `headers` could find besides the ones the head keeps
    /// apart (and Host and Transfer-Encoding, which the framing rules count); 0 lets a responder
    /// skip the search.
    @Test(
        arguments: [
            // Only fields kept apart or counted: nothing else to search for.
            ([("Host", "a"), ("Content-Length", "2"), ("Content-Type", "application/json")], 0),
            (
                [
                    ("Origin", "http://a"), ("X-Request-Id", "r"), ("traceparent", "t"),
                    ("Transfer-Encoding", "chunked"),
                ], 0
            ),
            // Any other name counts, whatever its case, once per field.
            ([("Host", "a"), ("Sheetd-Seq", "4")], 1),
            ([("accept", "*/*"), ("User-Agent", "x"), ("Accept", "text/html")], 3),
        ] as [([(String, String)], Int)])
    func otherFieldsAreCounted(fields: [(String, String)], expected: Int) {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.append(name: name, value: value) }
        #expect(HTTPRequestHead(method: "POST", target: "/", headers: headers).otherFields == expected)
    }

    @Test func headersAreOrderedAndCaseInsensitive() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-A": "1"]
        headers.append(name: "x-a", value: "2")
        // Lookup ignores ASCII case and returns the first.
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers["x-a"] == "1")
        // Repeated fields stay separate, in order.
        #expect(headers.values(for: "X-A") == ["1", "2"])
        #expect(headers.count == 3)
        // Names differing in more than case do not match (bit 5 is not a wildcard for "-" vs "\r").
        #expect(headers["X\rA"] == nil)
        #expect(headers["missing"] == nil)
        headers.removeAll(named: "X-a")
        #expect(headers.count == 1)
        #expect(Array(headers.map(\.name)) == ["Content-Type"])
    }

    /// Field names are matched 8 bytes at a time, ignoring ASCII case only where a letter is.
    @Test(
        arguments: [
            ("Content-Length", "content-length", true),  // the usual spelling
            ("CONTENT-LENGTH", "content-length", true),  // all capitals
            ("content-lengtH", "content-length", true),  // case differs in the tail after the 8-byte word
            ("content\rlength", "content-length", false),  // a CR differs from "-" only in bit 5: no match
            ("content_length", "content-length", false),  // "_" is not "-"
            ("content-lengthx", "content-length", false),  // longer
            ("content-lengt", "content-length", false),  // shorter
            ("Host", "host", true),  // shorter than a word: byte by byte
            ("Hosu", "host", false),  // last byte differs
            ("\rost", "host", false),  // a control byte where a letter is
            ("Transfer-Encoding", "transfer-encoding", true),  // two words and a tail
            ("Transfer-Encodinf", "transfer-encoding", false),  // differs in the tail
        ] as [(String, StaticString, Bool)])
    func fieldNamesMatchIgnoringCase(_ row: (String, StaticString, Bool)) {
        var name = row.0
        let matched = name.withUTF8 { HTTPHeaders.name(UnsafeRawBufferPointer($0), is: row.1) }
        #expect(matched == row.2, "\(row.0)")
    }

    /// The token check agrees with RFC 9110's tchar list for every byte.
    @Test func tokenBytesAreRFC9110s() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for b in 0...255 {
            let byte = UInt8(b)
            let isToken = withUnsafeBytes(of: byte) { HTTPHeaders.isToken($0) }
            #expect(isToken == tchar.contains(byte), "byte \(b)")
        }
        #expect(!HTTPHeaders.isToken(UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    /// Vetting checks the fields once, for headers sent with many responses; a change undoes it.
    @Test(arguments: [
        // Token names, plain values: vetted.
        (["Content-Type": "application/json", "Cache-Control": "no-cache"] as HTTPHeaders, true),
        // A tab is allowed in a value.
        (["X-A": "a\tb"] as HTTPHeaders, true),
        // A CR/LF in a value would split the response.
        (["X-A": "a\r\nInjected: 1"] as HTTPHeaders, false),
        // A NUL would cut the value short as a C string.
        (["X-A": "a\u{0}b"] as HTTPHeaders, false),
        // A name that is not a token.
        (["X A": "1"] as HTTPHeaders, false),
        (["": "1"] as HTTPHeaders, false),
    ])
    func vettingChecksEveryField(_ row: (HTTPHeaders, Bool)) {
        #expect((row.0.vetted() != nil) == row.1, "\(row.0)")
        #expect(!row.0.isVetted)
    }

    /// appendKeepingVetted keeps the mark only for a fit field on fields that had it.
    @Test func appendingKeepsVettingOnlyForAFitField() {
        let vetted = (["Content-Type": "application/json"] as HTTPHeaders).vetted()!
        let rows: [(base: HTTPHeaders, name: String, value: String, vetted: Bool)] = [
            (vetted, "X-Request-Id", "3f19-1a", true),  // a token name, a plain value
            (vetted, "X-Request-Id", "a\r\nInjected: 1", false),  // CR/LF would split the response
            (vetted, "X Request", "1", false),  // not a token
            (["Content-Type": "application/json"], "X-Request-Id", "1", false),  // never vetted
        ]
        for row in rows {
            var headers = row.base
            headers.appendKeepingVetted(name: row.name, value: row.value)
            #expect(headers.isVetted == row.vetted, "\(row.name): \(row.value)")
            #expect(headers[row.name] == row.value && headers.count == row.base.count + 1)
        }
        #expect(vetted.isVetted && vetted.count == 1)  // the shared original is untouched
    }

    @Test func vettingIsUndoneByAChange() {
        let vetted = (["Content-Type": "application/json"] as HTTPHeaders).vetted()!
        #expect(vetted.isVetted)
        var changed = vetted
        changed.append(name: "X-A", value: "1")
        // The copy that changed is no longer vetted; the value it was copied from still is.
        #expect(!changed.isVetted)
        #expect(vetted.isVetted)
        #expect(vetted.count == 1 && changed.count == 2)
        #expect(changed["x-a"] == "1" && vetted["x-a"] == nil)
    }

    @Test func streamBufferLimitAndReplacement() {
        let stream = HTTPStream(bufferLimit: 10)
        // Within the limit the bytes are taken.
        #expect(stream.write([1, 2, 3, 4, 5, 6]) == .written)
        // Past the limit nothing is taken.
        #expect(stream.write([7, 8, 9, 10, 11]) == .overflow)
        #expect(stream.bufferedByteCount == 6)
        // Replacing drops what is pending (nothing started sending yet).
        #expect(stream.replaceBuffered(with: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == .written)
        #expect(stream.bufferedByteCount == 10)
        // A replacement larger than the limit is refused and changes nothing.
        #expect(stream.replaceBuffered(with: [UInt8](repeating: 0, count: 11)) == .overflow)
        #expect(stream.bufferedByteCount == 10)
        let closes = Flag()
        stream.onClose { closes.set() }
        stream.finish()
        // Finishing closes the stream once and refuses later writes.
        #expect(closes.isSet)
        #expect(stream.isClosed)
        #expect(stream.write([1]) == .closed)
        // A handler registered after closing runs at once.
        let late = Flag()
        stream.onClose { late.set() }
        #expect(late.isSet)
    }

    @Test func replacingKeepsTheWriteAlreadyBeingSent() {
        let stream = HTTPStream(bufferLimit: 100)
        #expect(stream.write(Array("frame-1;".utf8)) == .written)
        #expect(stream.write(Array("frame-2;".utf8)) == .written)
        // The connection takes the first 3 bytes of frame 1 (as libmicrohttpd's reader would).
        var sent = [UInt8](repeating: 0, count: 3)
        let taken = sent.withUnsafeMutableBytes { buffer in
            stream.state.withLock { $0.drain(into: buffer.baseAddress!, capacity: 3) }
        }
        #expect(taken == 3)
        // Replacing drops frame 2 but keeps the rest of frame 1, so the client never sees a cut frame.
        #expect(stream.replaceBuffered(with: Array("frame-3;".utf8)) == .written)
        #expect(stream.bufferedByteCount == 5 + 8)
        var rest = [UInt8](repeating: 0, count: 64)
        let count = rest.withUnsafeMutableBytes { buffer in
            stream.state.withLock { $0.drain(into: buffer.baseAddress!, capacity: 64) }
        }
        #expect(String(decoding: sent + rest[..<count], as: UTF8.self) == "frame-1;frame-3;")
        #expect(stream.bufferedByteCount == 0)
    }

    @Test func manySmallWritesDrainInOrder() {
        let stream = HTTPStream(bufferLimit: 10_000)
        for index in 0..<1000 {
            #expect(stream.write([UInt8(truncatingIfNeeded: index)]) == .written)
        }
        // Drained in small pieces, crossing the batched compaction of spent writes.
        var drained: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 7)
        while stream.bufferedByteCount > 0 {
            let count = piece.withUnsafeMutableBytes { buffer in
                stream.state.withLock { $0.drain(into: buffer.baseAddress!, capacity: 7) }
            }
            drained += piece[..<count]
        }
        #expect(drained == (0..<1000).map { UInt8(truncatingIfNeeded: $0) })
    }

    @Test func serverErrorsNameTheCFunction() throws {
        let badHost = HTTPServer(configuration: .init(host: "not-an-address", port: 0), responder: TestResponder())
        #expect(throws: HTTPServerError.self) { try badHost.start() }
        do {
            try badHost.start()
        } catch {
            #expect(error.function == "inet_pton")
        }
        let first = HTTPServer(configuration: .init(port: 0), responder: TestResponder())
        try first.start()
        defer { first.stop() }
        let second = HTTPServer(configuration: .init(port: first.port), responder: TestResponder())
        do {
            try second.start()
            Issue.record("a second server bound the same port")
        } catch {
            #expect(error.function == "MHD_start_daemon")
            #expect(error.errno == EADDRINUSE)
        }
        // A server starts once.
        do {
            try first.start()
            Issue.record("started twice")
        } catch {
            #expect(error.function == "HTTPServer.start")
        }
    }
}
