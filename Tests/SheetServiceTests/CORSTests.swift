import Foundation
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    /// CORS: preflights, allowed origins, and their configuration, answered in process.
    @Suite struct CORSTests {
        /// A preflight names the allowed origin, methods and headers, on every route.
        @Test func corsPreflightAndOrigins() throws {
            let c = try InProcessService()
            let preflight = try c.request(
                "OPTIONS", "/sessions/abc/pan",
                headers: [
                    ("Origin", "http://demo.example"), ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "content-type"),
                ])
            #expect(preflight.status == 204, "\(preflight)")
            #expect(preflight.headers["Access-Control-Allow-Origin"] == "*")
            #expect(preflight.headers["Access-Control-Allow-Methods"]?.contains("POST") == true, "\(preflight.headers)")
            #expect(
                preflight.headers["Access-Control-Allow-Headers"]?.lowercased().contains("content-type") == true,
                "\(preflight.headers)")
            // Every route answers the preflight, the frames stream and the root included.
            for path in ["/sessions", "/sessions/x", "/sessions/x/frames", "/simulate", "/presets", "/metrics", "/"] {
                let r = try c.request(
                    "OPTIONS", path,
                    headers: [("Origin", "http://demo.example"), ("Access-Control-Request-Method", "GET")])
                #expect(r.status == 204, "\(path): \(r)")
                #expect(r.headers.contains("Access-Control-Allow-Methods"), "\(path)")
            }
            // A normal request with an Origin, and an error, get Access-Control-Allow-Origin.
            let normal = try c.request("GET", "/presets", headers: [("Origin", "http://demo.example")])
            #expect(normal.headers["Access-Control-Allow-Origin"] == "*", "\(normal.headers)")
            let error = try c.request("GET", "/sessions/none", headers: [("Origin", "http://demo.example")])
            #expect(error.status == 404)
            #expect(error.headers["Access-Control-Allow-Origin"] == "*", "\(error.headers)")
            // Without an Origin: no CORS headers.
            #expect(try c.get("/presets").headers["Access-Control-Allow-Origin"] == nil)
        }

        @Test func corsOriginsAreConfigurable() throws {
            let c = try InProcessService { $0.corsOrigins = ["http://a.example"] }
            let allowed = try c.request("GET", "/presets", headers: [("Origin", "http://a.example")])
            #expect(allowed.headers["Access-Control-Allow-Origin"] == "http://a.example", "\(allowed.headers)")
            #expect(allowed.headers.values("Vary").contains { $0.contains("Origin") }, "\(allowed.headers)")
            let other = try c.request("GET", "/presets", headers: [("Origin", "http://b.example")])
            #expect(other.status == 200)
            #expect(other.headers["Access-Control-Allow-Origin"] == nil, "\(other.headers)")
            let preflight = try c.request(
                "OPTIONS", "/sessions",
                headers: [("Origin", "http://b.example"), ("Access-Control-Request-Method", "POST")])
            #expect(preflight.headers["Access-Control-Allow-Origin"] == nil, "\(preflight.headers)")
            #expect(preflight.headers["Access-Control-Allow-Methods"] == nil, "\(preflight.headers)")
            let good = try c.request(
                "OPTIONS", "/sessions",
                headers: [("Origin", "http://a.example"), ("Access-Control-Request-Method", "POST")])
            #expect(good.headers["Access-Control-Allow-Origin"] == "http://a.example", "\(good.headers)")
        }
    }
}

extension ServiceIntegration.CORSTests {
    /// A preflight with an empty or blank Access-Control-Request-Headers gets the default list
    /// (it was echoed, an empty header libmicrohttpd refuses: a 500 found by schemathesis).
    @Test(arguments: ["", " ", "\t"])
    func preflightWithEmptyRequestHeaders(value: String) throws {
        let c = try InProcessService()
        let r = try c.request(
            "OPTIONS", "/healthz",
            headers: [("Origin", "https://example.com"), ("Access-Control-Request-Headers", value)])
        #expect(r.status == 204, "\(r)")
        #expect(r.headers["Access-Control-Allow-Headers"]?.contains("Content-Type") == true)
    }
}
