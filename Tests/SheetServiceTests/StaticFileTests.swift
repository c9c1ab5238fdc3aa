// The files sheetd serves are answered as a web server answers them (issue 31): a strong ETag per
// representation, 304 to a revalidation, gzip when accepted (made once, at start-up), a lifetime
// each, and every other answer `Cache-Control: no-store`. Answered in process.

import Foundation
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    @Suite struct StaticFileTests {}
}

extension ServiceIntegration.StaticFileTests {
    @Test(arguments: [
        // The demo page: revalidated on every use.
        ("/", "no-cache", "text/html"),
        // The modules and the contract change only with a new sheetd.
        ("/sheet-client.js", "max-age=300", "text/javascript"),
        ("/sheet-view.js", "max-age=300", "text/javascript"),
        ("/openapi.yaml", "max-age=300", "application/yaml"),
        // The catalog, written at start-up: revalidated.
        ("/presets", "no-cache", "application/json"),
        // An example page, as the demo page.
        ("/examples/map.html", "no-cache", "text/html"),
    ])
    func aStaticFileHasItsValidatorLifetimeAndGzip(path: String, cacheControl: String, type: String) throws {
        let c = try InProcessService()
        let plain = try c.get(path)
        #expect(plain.status == 200)
        #expect(plain.headers["Cache-Control"] == cacheControl)
        #expect(plain.headers["Vary"] == "Accept-Encoding")
        #expect(plain.headers["Content-Type"]?.hasPrefix(type) == true)
        #expect(plain.headers["Content-Encoding"] == nil)
        let tag = try #require(plain.headers["ETag"])
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && !tag.hasPrefix("W/"))

        let zipped = try c.request("GET", path, headers: [("Accept-Encoding", "gzip, deflate, br")])
        #expect(zipped.status == 200)
        #expect(zipped.headers["Content-Encoding"] == "gzip")
        #expect(zipped.body.count < plain.body.count)
        #expect(Array(zipped.body.prefix(2)) == [0x1f, 0x8b])  // a gzip member (RFC 1952)
        let zippedTag = try #require(zipped.headers["ETag"])
        #expect(zippedTag != tag)

        // A revalidation with the tag of the representation it would get: 304, no body.
        let again = try c.request("GET", path, headers: [("If-None-Match", tag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers["ETag"] == tag)
        #expect(again.headers["Cache-Control"] == cacheControl)
        let zippedAgain = try c.request(
            "GET", path, headers: [("Accept-Encoding", "gzip"), ("If-None-Match", "\"other\", \(zippedTag)")])
        #expect(zippedAgain.status == 304)
        // The identity's tag does not revalidate the gzip.
        let crossed = try c.request("GET", path, headers: [("Accept-Encoding", "gzip"), ("If-None-Match", tag)])
        #expect(crossed.status == 200)
    }

    @Test(arguments: [
        // A session's state.
        ("PUT", "/sessions/cache-1", 201),
        ("GET", "/sessions/cache-1", 200),
        // A problem.
        ("GET", "/sessions/nobody-here", 404),
        ("GET", "/examples/nope.html", 404),
        // A probe and the metrics.
        ("GET", "/healthz", 200),
        ("GET", "/metrics", 200),
        // A preflight.
        ("OPTIONS", "/sessions", 204),
    ])
    func everyOtherAnswerIsNoStore(method: String, path: String, status: Int) throws {
        let c = try InProcessService()
        if path == "/sessions/cache-1" && method == "GET" { _ = try c.request("PUT", path, json: "{}") }
        let r = method == "PUT" ? try c.request(method, path, json: "{}") : try c.request(method, path)
        #expect(r.status == status, "\(method) \(path): \(r)")
        #expect(r.headers["Cache-Control"] == "no-store", "\(method) \(path)")
    }

    @Test func theSameBytesGiveTheSameTag() {
        // The tag is the content's, so instances behind one balancer agree on it.
        let a = StaticFile.fingerprint(Array("sheet".utf8))
        #expect(a == StaticFile.fingerprint(Array("sheet".utf8)))
        #expect(a != StaticFile.fingerprint(Array("sheeT".utf8)))
        #expect(Gzip.compress([]) != nil)
    }
}
