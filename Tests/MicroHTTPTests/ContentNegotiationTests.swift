import Testing

@testable import MicroHTTP

@Suite("Accept-Encoding and If-None-Match, read from a request's fields")
struct ContentNegotiationTests {
    @Test(arguments: [
        // No Accept-Encoding: only identity (RFC 9110 §12.5.3: any coding may be sent, but sheetd
        // sends the plain bytes to a client that did not ask).
        ([], "gzip", false),
        ([], "identity", true),
        // Named, with the default q of 1.
        (["gzip, deflate, br"], "gzip", true),
        // Case and whitespace do not matter.
        (["  GZip ;Q=0.5 "], "gzip", true),
        // q=0 refuses it.
        (["gzip;q=0, deflate"], "gzip", false),
        // The wildcard covers an unnamed coding…
        (["*"], "gzip", true),
        // …unless the coding is named with q=0.
        (["*, gzip;q=0"], "gzip", false),
        // A wildcard with q=0 refuses identity too.
        (["*;q=0"], "identity", false),
        // x-gzip is gzip (RFC 9110 §8.4.1.3).
        (["x-gzip"], "gzip", true),
        // Several fields are one list.
        (["deflate", "gzip"], "gzip", true),
        // Another coding only.
        (["br"], "gzip", false),
    ])
    func acceptsContentCoding(fields: [String], coding: String, accepted: Bool) {
        let headers = HTTPHeaders(fields.map { (name: "Accept-Encoding", value: $0) })
        #expect(headers.acceptsContentCoding(coding) == accepted)
    }

    @Test(arguments: [
        // No field: nothing held.
        ([], #""abc""#, false),
        // The same tag.
        ([#""abc""#], #""abc""#, true),
        // A weak tag matches weakly (If-None-Match compares weakly, RFC 9110 §13.1.2).
        ([#"W/"abc""#], #""abc""#, true),
        // One of a list.
        ([#""x", "abc" ,"y""#], #""abc""#, true),
        // The wildcard holds any tag.
        (["*"], #""abc""#, true),
        // Another tag.
        ([#""abd""#], #""abc""#, false),
        // The gzip's tag is not the identity's.
        ([#""abc-gz""#], #""abc""#, false),
        // Several fields are one list.
        ([#""x""#, #""abc""#], #""abc""#, true),
    ])
    func ifNoneMatchHolds(fields: [String], tag: String, held: Bool) {
        let headers = HTTPHeaders(fields.map { (name: "If-None-Match", value: $0) })
        #expect(headers.ifNoneMatchHolds(tag) == held)
    }
}
