import Foundation
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    /// Request media types: JSON bodies under every JSON media type, and Content-Types without one
    /// (a fuzz finding) refused as 415 by the service's screen. Answered in process (the screen
    /// first, as the server calls it).
    @Suite struct MediaTypeTests {
        static let jsonMediaTypes = [
            "application/json",  // the type itself
            "application/json; charset=utf-8",  // with a parameter
            "application/merge-patch+json",  // any application/*+json
            "application/vnd.sheet+json",  // a vendor +json
            "application/x-www-form-urlencoded",  // curl -d's default
        ]

        @Test(arguments: jsonMediaTypes)
        func jsonBodiesAreAcceptedUnderTheirMediaTypes(_ type: String) throws {
            let c = try InProcessService()
            let r = try c.request(
                "PUT", "/sessions/m", headers: [("Content-Type", type)], body: bytes(#"{"preset": "twitter"}"#))
            #expect(r.status == 201, "\(r)")
            #expect(r.json?["preset"] as? String == "twitter")
            let pan = try c.request(
                "POST", "/sessions/m/show", headers: [("Content-Type", type)], body: bytes(#"{"detent": "open"}"#))
            #expect(pan.status == 200, "\(pan)")
        }
    }
}

extension ServiceIntegration.MediaTypeTests {
    /// Content-Types the fuzzer found trapping the screen (the whole server went down): refused
    /// as 415 like any other unsupported type, and the server goes on.
    @Test(arguments: ["", ";", ";;", " ; "])
    func contentTypeWithoutAMediaTypeIs415(type: String) throws {
        let c = try InProcessService()
        let r = try c.request("POST", "/sessions", headers: [("Content-Type", type)], body: bytes("{}"))
        expectProblem(r, status: 415, code: "unsupported-media-type")
        #expect(try c.get("/healthz").status == 200)
    }
}
