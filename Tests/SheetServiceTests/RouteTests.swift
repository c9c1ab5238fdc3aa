import Foundation
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    /// Every route of the REST surface answers as docs/HTTP.md says, and paths near
    /// /sessions/{id}/{action} route the same on the byte fast path and the decoding one. Answered
    /// in process.
    @Suite struct RouteTests {
        /// Each route with each method: status, Location, media type and body as docs/HTTP.md says.
        @Test func everyRouteAnswers() throws {
            let c = try InProcessService()

            // POST /sessions: 201, Location, a generated id, the snapshot.
            let created = try c.request("POST", "/sessions")
            #expect(created.status == 201, "\(created)")
            let id = try #require(created.json?["id"] as? String)
            #expect(created.headers["Location"] == "/sessions/\(id)")
            #expect(created.json?["state"] as? String == "hidden")
            #expect(created.json?["preset"] as? String == "facebook")
            #expect(created.headers["Content-Type"]?.hasPrefix("application/json") == true)

            // PUT /sessions/{id}: 201 new (with Location), 200 replaced.
            let put1 = try c.put("alpha", #"{"preset": "facebook", "initialDetent": "normal"}"#)
            #expect(put1.status == 201, "\(put1)")
            #expect(put1.headers["Location"] == "/sessions/alpha")
            #expect(put1.json?["state"] as? String == "resting")
            #expect(num(put1.json?["constant"]) == 398.5)
            let put2 = try c.put("alpha", #"{"preset": "facebook"}"#)
            #expect(put2.status == 200, "\(put2)")
            #expect(put2.json?["state"] as? String == "hidden")
            // A 64-character id is the longest allowed; every allowed character class.
            let longID = String(repeating: "aZ9._~-x", count: 8)
            #expect(try c.put(longID).status == 201)

            // GET /sessions/{id}.
            let got = try c.get("/sessions/alpha")
            #expect(got.status == 200, "\(got)")
            #expect(got.json?["id"] as? String == "alpha")
            #expect(got.json?["state"] as? String == "hidden")
            #expect(obj(got.json?["detents"]).flatMap { num($0["normal"]) } == 398.5)

            // show, pan (began interrupts the show, changed, ended), dismiss.
            let shown = try c.show("alpha", #"{"detent": "normal"}"#)
            #expect(shown.status == 200, "\(shown)")
            #expect(shown.json?["state"] as? String == "animating")
            #expect(obj(shown.json?["animation"])?["curve"] as? String == "easeIn")
            let began = try c.pan("alpha", #"{"phase": "began"}"#)
            #expect(began.status == 200, "\(began)")
            #expect(began.json?["phase"] as? String == "began")
            #expect(began.json?["state"] as? String == "dragging")
            let changed = try c.pan("alpha", #"{"phase": "changed", "translation": -10}"#)
            #expect(changed.status == 200, "\(changed)")
            let ended = try c.pan("alpha", #"{"phase": "ended", "velocity": 0}"#)
            #expect(ended.status == 200, "\(ended)")
            #expect(obj(ended.json?["snap"]) != nil)
            #expect(ended.json?["velocitySource"] as? String == "client")
            let dismissed = try c.dismiss("alpha")
            #expect(dismissed.status == 200, "\(dismissed)")
            #expect(obj(dismissed.json?["snap"])?["detent"] as? String == "hidden")
            #expect(obj(dismissed.json?["snap"])?["dismiss"] as? Bool == true)

            // DELETE: 204, then 404 for GET and DELETE.
            let deleted = try c.request("DELETE", "/sessions/alpha")
            #expect(deleted.status == 204, "\(deleted)")
            #expect(deleted.body.isEmpty)
            expectProblem(try c.get("/sessions/alpha"), status: 404, code: "session-not-found")
            expectProblem(try c.request("DELETE", "/sessions/alpha"), status: 404, code: "session-not-found")

            // POST /simulate.
            let sim = try c.request(
                "POST", "/simulate",
                json: #"{"config": {"preset": "twitter"}, "events": [{"type": "show", "time": 0}], "fps": 10}"#)
            #expect(sim.status == 200, "\(sim)")
            #expect((sim.json?["results"] as? [Any])?.count == 1)
            #expect((sim.json?["frames"] as? [Any])?.isEmpty == false)
            #expect(obj(sim.json?["final"])?["state"] as? String == "resting")

            // GET /presets: the catalog, every preset in its order, each with its summary,
            // capabilities, initial detent and every option with type, default and description.
            let presets = try c.get("/presets")
            #expect(presets.status == 200, "\(presets)")
            let list = try #require(presets.json?["presets"] as? [[String: Any]])
            #expect(list.compactMap { $0["name"] as? String } == PresetName.allCases.map(\.rawValue))
            for preset in list {
                let name = preset["name"] as? String ?? "?"
                let catalog = try #require(PresetName(rawValue: name), "\(name)")
                #expect(preset["summary"] as? String == catalog.summary, "\(name) summary")
                #expect(preset["constraint"] as? String == catalog.constraint.rawValue, "\(name) constraint")
                #expect(
                    preset["capabilities"] as? [String] == catalog.capabilities.map(\.rawValue), "\(name) capabilities")
                // null: a new session starts hidden; else one of the preset's detents.
                if let initial = catalog.initialDetent {
                    #expect(preset["initialDetent"] as? String == initial, "\(name) initialDetent")
                    #expect(obj(preset["detents"])?[initial] != nil, "\(name) initialDetent among its detents")
                } else {
                    #expect(preset["initialDetent"] is NSNull, "\(name) initialDetent null")
                }
                #expect(obj(preset["detents"])?.isEmpty == false, "\(name) detents")
                #expect(preset["showDefault"] is String, "\(name) showDefault")
                #expect(preset["dismissTarget"] is String, "\(name) dismissTarget")
                let options = try #require(obj(preset["options"]), "\(name) options")
                #expect(Set(options.keys) == Set(catalog.optionNames), "\(name) options")
                for (option, info) in options {
                    let info = obj(info)
                    #expect(info?["type"] is String, "\(name).\(option).type")
                    #expect(info?.keys.contains("default") == true, "\(name).\(option).default")
                    #expect((info?["description"] as? String)?.isEmpty == false, "\(name).\(option).description")
                }
            }

            // Health, liveness, readiness.
            for path in ["/healthz", "/livez", "/readyz"] {
                let r = try c.get(path)
                #expect(r.status == 200, "\(path): \(r)")
                #expect(r.json?["status"] as? String == "ok", "\(path): \(r)")
            }

            // Metrics: Prometheus text with the service's own series.
            let metrics = try c.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers["Content-Type"]?.hasPrefix("text/plain") == true)
            for name in ["sheetd_requests_total", "sheetd_sessions_live", "sheetd_animations_started_total"] {
                #expect(metrics.text.contains(name), "\(name) in /metrics")
            }
            // Two animations started (show, ended) and one dismiss: at least 3.
            let started = metrics.text.split(separator: "\n").first { $0.hasPrefix("sheetd_animations_started_total") }
            #expect(
                started.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0 >= 3, "\(started ?? "")")

            // The spec and the demo page.
            let spec = try c.get("/openapi.yaml")
            #expect(spec.status == 200)
            #expect(spec.headers["Content-Type"]?.hasPrefix("application/yaml") == true, "\(spec.headers)")
            #expect(spec.text.hasPrefix("openapi: 3.1"))
            let page = try c.get("/")
            #expect(page.status == 200)
            #expect(page.headers["Content-Type"]?.hasPrefix("text/html") == true, "\(page.headers)")
            #expect(page.text.lowercased().contains("<html"))
        }
    }
}

// MARK: - Path edges of the routing fast path

/// (method, path, status, code): paths near /sessions/{id}/{action}, which are matched on bytes
/// when they have no '%', and decoded segment by segment otherwise.
let pathEdges: [(String, String, Int, String?)] = [
    ("POST", "/sessions/e1/pan", 200, nil),  // the fast path itself
    ("POST", "/sessions/%65%31/pan", 200, nil),  // percent-encoded id: decoded, the same session
    ("POST", "/sessions//pan", 400, "bad-id"),  // empty id
    ("GET", "/sessions/e1/", 404, "not-found"),  // empty action
    ("POST", "/sessions/e1/pan/x", 404, "not-found"),  // one segment too many
    ("POST", "/sessions/e1/PAN", 404, "not-found"),  // actions are case-sensitive
    ("GET", "/sessions/e1%2Fpan", 400, "bad-id"),  // %2F stays inside the id segment
    ("GET", "/sessions/", 400, "bad-id"),  // an empty id
    ("POST", "/sessions/e!1/pan", 400, "bad-id"),  // a byte outside the id alphabet, no '%'
    ("GET", "/sessions/e!1", 400, "bad-id"),  // the same on the session route
    ("POST", "/sessions/e!1/nope", 404, "not-found"),  // an unknown action is named before a bad id
    ("GET", "/sessions/\(String(repeating: "e", count: 65))", 400, "bad-id"),  // 65 bytes, no '%'
]

extension ServiceIntegration.RouteTests {
    @Test(arguments: pathEdges)
    func routingPathEdges(_ method: String, _ path: String, _ status: Int, _ code: String?) throws {
        let c = try InProcessService()
        #expect(try c.put("e1", #"{"preset": "facebook", "initialDetent": "normal"}"#).status == 201)
        let body = method == "POST" ? #"{"phase": "began"}"# : nil
        let r = try c.request(method, path, headers: [("Content-Type", "application/json")], body: body.map(bytes))
        if let code {
            expectProblem(r, status: status, code: code)
        } else {
            #expect(r.status == status, "\(r)")
        }
    }
}
