// openapi.yaml is the machine-checked contract: its paths and methods are exactly the routes the
// server answers, and the server serves the file byte for byte.

import Foundation
import SheetdTesting
import Testing
import Yams

@testable import SheetService

extension ServiceIntegration {
    @Suite struct OpenAPIRouteTests {}
}

/// The project root: three directories up from this file (Tests/SheetServiceTests/…).
private let specURL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("openapi.yaml")

/// The operations OpenAPI 3.1 allows on a path item.
private let operationKeys = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/// path template → its methods (upper case), as openapi.yaml declares them.
private func specRoutes() throws -> [String: Set<String>] {
    let text = try String(contentsOf: specURL, encoding: .utf8)
    let document = try #require(try Yams.load(yaml: text) as? [String: Any])
    let paths = try #require(document["paths"] as? [String: Any])
    var routes: [String: Set<String>] = [:]
    for (path, item) in paths {
        let item = try #require(item as? [String: Any], "\(path)")
        routes[path] = Set(item.keys.filter(operationKeys.contains).map { $0.uppercased() })
    }
    return routes
}

extension ServiceIntegration.OpenAPIRouteTests {
    @Test func specPathsAreExactlyTheServerRoutes() throws {
        let spec = try specRoutes()
        var served: [String: Set<String>] = [:]
        for route in SheetServer.routes {
            #expect(served[route.path] == nil, "\(route.path) listed twice")
            served[route.path] = Set(route.methods)
        }
        #expect(Set(spec.keys) == Set(served.keys))
        for (path, methods) in spec {
            #expect(
                methods == served[path], "\(path): spec \(methods.sorted()), server \(served[path]?.sorted() ?? [])")
            #expect(methods.contains("OPTIONS"), "\(path) has no options (CORS preflight)")
        }

        // And the service answers each path as declared: its preflight's Allow lists the spec's
        // methods (plus HEAD with GET).
        let c = try InProcessService()
        for (path, methods) in spec {
            let concrete = path.replacingOccurrences(of: "{id}", with: "some-id")
            let r = try c.request("OPTIONS", concrete)
            #expect(r.status == 204, "OPTIONS \(concrete): \(r)")
            let allow = Set(
                (r.headers["Allow"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allow.subtracting(["HEAD"]) == methods, "\(path): Allow \(r.headers["Allow"] ?? "none")")
        }
    }

    @Test func servedSpecIsTheFileByteForByte() throws {
        let file = try [UInt8](Data(contentsOf: specURL))
        let c = try InProcessService()
        let r = try c.get("/openapi.yaml")
        #expect(r.status == 200)
        #expect(r.headers["Content-Type"]?.hasPrefix("application/yaml") == true)
        #expect(r.body.count == file.count)
        #expect(r.body == file)
    }
}
