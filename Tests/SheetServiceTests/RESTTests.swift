// The REST surface of sheetd, end to end: a real SheetServer on an ephemeral port, spoken to over
// real TCP sockets (Support/HTTPClient.swift). API.md is the contract; PHYSICS.md's public check
// values are replayed through HTTP at the end.

import Foundation
import Testing

@testable import SheetService

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Shared checks

/// Checks an RFC 9457 problem: status, media type, the five members, and the code.
@discardableResult
func expectProblem(
    _ r: Response, status: Int, code: String?, sourceLocation: SourceLocation = #_sourceLocation
) -> [String: Any] {
    #expect(r.status == status, "\(r)", sourceLocation: sourceLocation)
    #expect(
        r.headers["Content-Type"]?.hasPrefix("application/problem+json") == true, "\(r)",
        sourceLocation: sourceLocation)
    guard let json = r.json else {
        Issue.record("the problem body is not a JSON object: \(r)", sourceLocation: sourceLocation)
        return [:]
    }
    #expect(json["type"] is String, "type in \(r.text)", sourceLocation: sourceLocation)
    #expect((json["title"] as? String)?.isEmpty == false, "title in \(r.text)", sourceLocation: sourceLocation)
    #expect(num(json["status"]) == Double(status), "status in \(r.text)", sourceLocation: sourceLocation)
    #expect((json["detail"] as? String)?.isEmpty == false, "detail in \(r.text)", sourceLocation: sourceLocation)
    #expect(json["code"] is String, "code in \(r.text)", sourceLocation: sourceLocation)
    if let code {
        #expect(json["code"] as? String == code, "code in \(r.text)", sourceLocation: sourceLocation)
    }
    return json
}

/// The facebook dimmer rule (PHYSICS.md), default geometry.
func facebookAlpha(_ v: Double) -> Double {
    let h = 797.0
    if v <= h / 2 { return 0.7 }
    if v >= h { return 0 }
    return 0.7 * (1 - (v - h / 2) / (h / 2))
}

/// The detent each preset rests at before a drag in the check tables, with its constant.
let restingDetent: [String: (name: String, constant: Double)] = [
    "facebook": ("normal", 398.5),
    "twitter": ("open", 0),
    "glide": ("compressed", 398.5),
    "fluid": ("half", 398.5),
]

extension ServiceIntegration {
    @Suite struct RESTTests {}
}

// MARK: - Every route

extension ServiceIntegration.RESTTests {
    @Test func everyRouteAnswers() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)

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

        // GET /presets: all six, every option with type, default and description.
        let presets = try c.get("/presets")
        #expect(presets.status == 200, "\(presets)")
        let list = try #require(presets.json?["presets"] as? [[String: Any]])
        #expect(
            Set(list.compactMap { $0["name"] as? String })
                == ["facebook", "twitter", "glide", "transition", "swipeCell", "fluid"])
        #expect(list.count == 6)
        for preset in list {
            let name = preset["name"] as? String ?? "?"
            #expect(obj(preset["detents"])?.isEmpty == false, "\(name) detents")
            #expect(preset["showDefault"] is String, "\(name) showDefault")
            #expect(preset["dismissTarget"] is String, "\(name) dismissTarget")
            let options = try #require(obj(preset["options"]), "\(name) options")
            for (option, info) in options {
                let info = obj(info)
                #expect(info?["type"] is String, "\(name).\(option).type")
                #expect(info?.keys.contains("default") == true, "\(name).\(option).default")
                #expect((info?["description"] as? String)?.isEmpty == false, "\(name).\(option).description")
            }
        }
        let facebook = list.first { $0["name"] as? String == "facebook" }
        #expect(obj(facebook?["options"])?["expandedOffset"] != nil)

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
        #expect(started.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0 >= 3, "\(started ?? "")")

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

    @Test func generatedIDsAreURLSafeAndUnique() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let urlSafe = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var ids = Set<String>()
        for _ in 0..<1000 {
            let r = try c.request("POST", "/sessions")
            #expect(r.status == 201)
            let id = try #require(r.json?["id"] as? String)
            #expect(id.count >= 22, "\(id)")
            #expect(id.allSatisfy(urlSafe.contains), "\(id)")
            #expect(r.headers["Location"] == "/sessions/\(id)")
            ids.insert(id)
        }
        #expect(ids.count == 1000)
        #expect(server.sessionCount == 1000)
    }
}

// MARK: - Errors

/// One row of API.md's error table.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    let method: String
    let path: String
    var headers: [(String, String)] = []
    var body: String?
    /// Send only the head (the declared body never follows): the server must answer anyway.
    var headOnly = false
    let status: Int
    let code: String
    var field: String?
    var detailContains: String?
    var allow: String?

    var testDescription: String { name }
}

extension ServiceIntegration.RESTTests {
    static let longID = String(repeating: "a", count: 65)

    static let errorCases: [ErrorCase] = [
        // 400: the body is not JSON.
        ErrorCase(
            name: "malformed JSON", method: "PUT", path: "/sessions/x", body: #"{"preset": "#,
            status: 400, code: "invalid-json"),
        // 400: RFC 8259 has no trailing commas.
        ErrorCase(
            name: "trailing comma", method: "PUT", path: "/sessions/x", body: #"{"preset": "facebook",}"#,
            status: 400, code: "invalid-json"),
        // 400: duplicate keys are refused, never last-wins.
        ErrorCase(
            name: "duplicate key", method: "PUT", path: "/sessions/x",
            body: #"{"preset": "facebook", "preset": "twitter"}"#, status: 400, code: "invalid-json",
            detailContains: "duplicate"),
        // 400: a string field given a number.
        ErrorCase(
            name: "wrong type", method: "PUT", path: "/sessions/x", body: #"{"preset": 3}"#,
            status: 400, code: "invalid-value", field: "preset"),
        // 400: numbers are finite with magnitude ≤ 1e6.
        ErrorCase(
            name: "translation 1e7", method: "POST", path: "/sessions/s1/pan",
            body: #"{"phase": "changed", "translation": 1e7}"#, status: 400, code: "invalid-value",
            field: "translation"),
        // 400: a number that overflows to infinity is not finite.
        ErrorCase(
            name: "velocity 1e400", method: "POST", path: "/sessions/s1/pan",
            body: #"{"phase": "ended", "velocity": 1e400}"#, status: 400, code: "invalid-json"),
        // 400: a typo never passes silently, and the problem names it.
        ErrorCase(
            name: "unknown field velocty", method: "POST", path: "/sessions/s1/pan",
            body: #"{"phase": "ended", "velocty": 300}"#, status: 400, code: "unknown-field",
            field: "velocty", detailContains: "velocty"),
        // 400: an option the preset does not have, named with its path.
        ErrorCase(
            name: "unknown option expandedOfset", method: "PUT", path: "/sessions/x",
            body: #"{"preset": "facebook", "options": {"expandedOfset": 30}}"#, status: 400,
            code: "unknown-option", field: "options.expandedOfset", detailContains: "expandedOfset"),
        // 400: presets are the six of PHYSICS.md.
        ErrorCase(
            name: "unknown preset", method: "PUT", path: "/sessions/x", body: #"{"preset": "facebok"}"#,
            status: 400, code: "unknown-preset", field: "preset", detailContains: "facebok"),
        // 400: show to a detent the preset does not have.
        ErrorCase(
            name: "unknown detent (show)", method: "POST", path: "/sessions/s1/show",
            body: #"{"detent": "middle"}"#, status: 400, code: "unknown-detent", field: "detent",
            detailContains: "middle"),
        // 400: initialDetent is checked the same way.
        ErrorCase(
            name: "unknown detent (initialDetent)", method: "PUT", path: "/sessions/x",
            body: #"{"initialDetent": "middle"}"#, status: 400, code: "unknown-detent",
            field: "initialDetent"),
        // 400: ids are checked after percent-decoding: %2F never reaches another session.
        ErrorCase(
            name: "bad id a%2Fb", method: "GET", path: "/sessions/a%2Fb", status: 400, code: "bad-id",
            field: "id"),
        // 400: ids are at most 64 characters.
        ErrorCase(
            name: "65-character id", method: "PUT", path: "/sessions/\(longID)", status: 400, code: "bad-id",
            field: "id"),
        // 400: st + sb < h.
        ErrorCase(
            name: "bad geometry", method: "PUT", path: "/sessions/x",
            body: #"{"geometry": {"height": 100, "safeAreaTop": 60, "safeAreaBottom": 50}}"#, status: 400,
            code: "bad-geometry", field: "geometry"),
        // 400: a negative height.
        ErrorCase(
            name: "negative height", method: "PUT", path: "/sessions/x",
            body: #"{"geometry": {"height": -844}}"#, status: 400, code: "bad-geometry"),
        // 404: the detail says how to create the session.
        ErrorCase(
            name: "no such session", method: "GET", path: "/sessions/nosuch", status: 404,
            code: "session-not-found", detailContains: "PUT /sessions/nosuch"),
        // 404: events to a missing session, too.
        ErrorCase(
            name: "pan on no such session", method: "POST", path: "/sessions/nosuch/pan",
            body: #"{"phase": "began"}"#, status: 404, code: "session-not-found",
            detailContains: "PUT /sessions/nosuch"),
        // 404: a path that matches no route.
        ErrorCase(name: "unknown route", method: "GET", path: "/nope", status: 404, code: "not-found"),
        // 404: an unknown action of a session.
        ErrorCase(
            name: "unknown session action", method: "POST", path: "/sessions/s1/fling", body: "{}",
            status: 404, code: "not-found"),
        // 405: with the route's methods in Allow.
        ErrorCase(
            name: "DELETE /presets", method: "DELETE", path: "/presets", status: 405,
            code: "method-not-allowed", allow: "GET, HEAD, OPTIONS"),
        // 405: PATCH on a session.
        ErrorCase(
            name: "PATCH /sessions/{id}", method: "PATCH", path: "/sessions/s1", body: "{}", status: 405,
            code: "method-not-allowed", allow: "GET, HEAD, PUT, DELETE, OPTIONS"),
        // 405: pan is POST only.
        ErrorCase(
            name: "GET pan", method: "GET", path: "/sessions/s1/pan", status: 405,
            code: "method-not-allowed", allow: "POST, OPTIONS"),
        // 409: changed with no drag in progress.
        ErrorCase(
            name: "changed without a drag", method: "POST", path: "/sessions/s1/pan",
            body: #"{"phase": "changed", "translation": 5}"#, status: 409, code: "conflict"),
        // 409: ended with no drag in progress.
        ErrorCase(
            name: "ended without a drag", method: "POST", path: "/sessions/s1/pan",
            body: #"{"phase": "ended"}"#, status: 409, code: "conflict"),
        // 409: the client clock never goes backwards (c1's last event is at 5).
        ErrorCase(
            name: "client clock backwards", method: "POST", path: "/sessions/c1/pan",
            body: #"{"phase": "changed", "translation": 1, "time": 4}"#, status: 409,
            code: "clock-backwards"),
        // 411: a chunked request body (the server answers before reading it).
        ErrorCase(
            name: "chunked body", method: "POST", path: "/sessions",
            headers: [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
            headOnly: true, status: 411, code: "length-required"),
        // 413: a Content-Length over the limit, answered before the body is read.
        ErrorCase(
            name: "Content-Length over the limit", method: "PUT", path: "/sessions/x",
            headers: [("Content-Type", "application/json"), ("Content-Length", "16385")], headOnly: true,
            status: 413, code: "body-too-large"),
        // 400: a JSON null body is a value of the wrong type, not "no body" (schemathesis).
        ErrorCase(
            name: "null body", method: "POST", path: "/sessions", body: "null", status: 400,
            code: "invalid-value"),
        // 400: a null geometry is not an absent one (schemathesis).
        ErrorCase(
            name: "null geometry", method: "PUT", path: "/sessions/x", body: #"{"geometry": null}"#,
            status: 400, code: "invalid-value"),
        // 400: /simulate's config null likewise.
        ErrorCase(
            name: "null simulate config", method: "POST", path: "/simulate",
            body: #"{"config": null, "events": [{"type": "show", "time": 0}]}"#, status: 400,
            code: "invalid-value"),
        // 415: a body of another media type.
        ErrorCase(
            name: "text/plain body", method: "PUT", path: "/sessions/x",
            headers: [("Content-Type", "text/plain")], body: #"{"preset": "facebook"}"#, status: 415,
            code: "unsupported-media-type"),
    ]

    @Test(arguments: errorCases)
    func errorStatuses(_ row: ErrorCase) throws {
        let server = try startServer()
        defer { server.stop() }
        let setup = try HTTPConnection(port: server.port)
        #expect(try setup.put("s1", #"{"initialDetent": "normal"}"#).status == 201)
        #expect(try setup.put("c1", #"{"clock": "client", "initialDetent": "normal"}"#).status == 201)
        #expect(try setup.pan("c1", #"{"phase": "began", "time": 5}"#).status == 200)

        let c = try HTTPConnection(port: server.port)
        let r: Response
        if row.headOnly {
            var head = "\(row.method) \(row.path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for (name, value) in row.headers { head += "\(name): \(value)\r\n" }
            try c.send(head + "\r\n")
            r = try c.readResponse(method: row.method, timeout: 5)
        } else {
            r = try c.request(row.method, row.path, headers: row.headers, body: row.body.map(bytes))
        }
        let json = expectProblem(r, status: row.status, code: row.code)
        if let field = row.field {
            #expect(json["field"] as? String == field, "\(r.text)")
        }
        if let text = row.detailContains {
            #expect((json["detail"] as? String)?.contains(text) == true, "\(r.text)")
        }
        if let allow = row.allow {
            #expect(r.headers["Allow"] == allow, "\(r.headers)")
        }
        // The sessions the errors were aimed at are untouched.
        let s1 = try setup.get("/sessions/s1")
        #expect(s1.json?["state"] as? String == "resting")
        #expect(num(s1.json?["constant"]) == 398.5)
    }

    @Test func sessionLimitIs503AndFreesOnDelete() throws {
        let server = try startServer { $0.maxSessions = 5 }
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        var ids: [String] = []
        for _ in 0..<5 {
            let r = try c.request("POST", "/sessions")
            #expect(r.status == 201)
            ids.append(r.json?["id"] as? String ?? "")
        }
        // The sixth, by POST or by PUT of a new id: 503 session-limit with Retry-After.
        let sixth = try c.request("POST", "/sessions")
        expectProblem(sixth, status: 503, code: "session-limit")
        #expect(sixth.headers["Retry-After"].flatMap { Int($0) } ?? 0 >= 1, "\(sixth.headers)")
        let put = try c.put("sixth")
        expectProblem(put, status: 503, code: "session-limit")
        #expect(put.headers.contains("Retry-After"))
        // Replacing an existing id is not a new session.
        #expect(try c.put(ids[0]).status == 200)
        // After a DELETE, a new one fits.
        #expect(try c.request("DELETE", "/sessions/\(ids[1])").status == 204)
        #expect(try c.request("POST", "/sessions").status == 201)
        expectProblem(try c.request("POST", "/sessions"), status: 503, code: "session-limit")
        #expect(server.sessionCount == 5)
    }
}

// MARK: - Media types, state after errors, CORS, keep-alive, limits

extension ServiceIntegration.RESTTests {
    static let jsonMediaTypes = [
        "application/json",  // the type itself
        "application/json; charset=utf-8",  // with a parameter
        "application/merge-patch+json",  // any application/*+json
        "application/vnd.sheet+json",  // a vendor +json
        "application/x-www-form-urlencoded",  // curl -d's default
    ]

    @Test(arguments: jsonMediaTypes)
    func jsonBodiesAreAcceptedUnderTheirMediaTypes(_ type: String) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let r = try c.request(
            "PUT", "/sessions/m", headers: [("Content-Type", type)], body: bytes(#"{"preset": "twitter"}"#))
        #expect(r.status == 201, "\(r)")
        #expect(r.json?["preset"] as? String == "twitter")
        let pan = try c.request(
            "POST", "/sessions/m/show", headers: [("Content-Type", type)], body: bytes(#"{"detent": "open"}"#))
        #expect(pan.status == 200, "\(pan)")
    }

    @Test func stateIsUnchangedAfterAnError() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        // A dragging session on the client clock.
        #expect(try c.put("d", #"{"clock": "client", "initialDetent": "normal"}"#).status == 201)
        #expect(try c.pan("d", #"{"phase": "began", "time": 1}"#).status == 200)
        let moved = try c.pan("d", #"{"phase": "changed", "translation": -50, "time": 1.1}"#)
        #expect(num(moved.json?["constant"]) == 348.5)
        let before = try c.get("/sessions/d")
        #expect(before.json?["state"] as? String == "dragging")

        // 409: the clock goes backwards.
        expectProblem(
            try c.pan("d", #"{"phase": "changed", "translation": -200, "time": 1.0}"#), status: 409,
            code: "clock-backwards")
        // 400s: a typo, a number out of range, a missing time.
        expectProblem(
            try c.pan("d", #"{"phase": "changed", "translation": -200, "time": 1.2, "velocty": 1}"#), status: 400,
            code: "unknown-field")
        expectProblem(
            try c.pan("d", #"{"phase": "changed", "translation": -1e7, "time": 1.2}"#), status: 400,
            code: "invalid-value")
        expectProblem(try c.pan("d", #"{"phase": "changed", "translation": -200}"#), status: 400, code: "invalid-value")
        expectProblem(try c.show("d", #"{"detent": "nowhere", "time": 1.3}"#), status: 400, code: "unknown-detent")

        let after = try c.get("/sessions/d")
        #expect(after.json?["state"] as? String == "dragging")
        #expect(num(after.json?["constant"]) == 348.5)
        #expect(num(after.json?["time"]) == num(before.json?["time"]))
        // The rejected time 1.2/1.3 was not taken either: 1.15 is still after the last event.
        let next = try c.pan("d", #"{"phase": "changed", "translation": -60, "time": 1.15}"#)
        #expect(next.status == 200, "\(next)")
        #expect(num(next.json?["constant"]) == 338.5)

        // A resting session on the server clock: a 409 leaves it resting where it was.
        #expect(try c.put("r", #"{"initialDetent": "expanded"}"#).status == 201)
        expectProblem(try c.pan("r", #"{"phase": "ended", "velocity": 2000}"#), status: 409, code: "conflict")
        let rest = try c.get("/sessions/r")
        #expect(rest.json?["state"] as? String == "resting")
        #expect(num(rest.json?["constant"]) == 30)
    }

    @Test func corsPreflightAndOrigins() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
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
                "OPTIONS", path, headers: [("Origin", "http://demo.example"), ("Access-Control-Request-Method", "GET")])
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
        let server = try startServer { $0.corsOrigins = ["http://a.example"] }
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
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

    @Test func keepAliveServesAHundredRequestsOnOneConnection() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let fd = c.fd
        #expect(try c.put("k", #"{"initialDetent": "normal"}"#).status == 201)
        var statuses: [Int] = []
        for i in 0..<100 {
            let r: Response
            switch i % 5 {
            case 0: r = try c.get("/sessions/k")
            case 1: r = try c.pan("k", #"{"phase": "began"}"#)
            case 2: r = try c.pan("k", #"{"phase": "changed", "translation": \#(i)}"#)
            case 3: r = try c.request("POST", "/sessions/k/pan", json: #"{"phase": "cancelled"}"#)
            default: r = try c.get(i % 2 == 0 ? "/healthz" : "/presets")
            }
            statuses.append(r.status)
            #expect(!r.closesConnection, "request \(i): \(r.headers)")
        }
        #expect(statuses.count == 100)
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(c.fd == fd)
    }

    @Test func bodyLimitIsConfigurable() throws {
        let server = try startServer { $0.maxBodyBytes = 1024 }
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        // 1000 bytes of valid JSON: accepted.
        let valid = #"{"preset": "glide"}"#
        let padded = valid + String(repeating: " ", count: 1000 - valid.utf8.count)
        let ok = try c.request("PUT", "/sessions/a", body: bytes(padded))
        #expect(ok.status == 201, "\(ok)")
        // 1024 bytes exactly: still within the limit.
        let exact = valid + String(repeating: " ", count: 1024 - valid.utf8.count)
        #expect(try c.request("PUT", "/sessions/a", body: bytes(exact)).status == 200)
        // 1000 bytes of invalid JSON: read and refused as JSON (400), not as too large.
        let invalid = String(repeating: "x", count: 1000)
        expectProblem(try c.request("PUT", "/sessions/b", body: bytes(invalid)), status: 400, code: "invalid-json")
        // 1025 declared: 413 at once, before any body byte is sent; like every response, it
        // carries CORS headers for an allowed Origin.
        let big = try HTTPConnection(port: server.port)
        try big.send(
            "PUT /sessions/b HTTP/1.1\r\nHost: x\r\nOrigin: http://demo.example\r\n"
                + "Content-Type: application/json\r\nContent-Length: 1025\r\n\r\n")
        let refused = try big.readResponse(method: "PUT", timeout: 5)
        expectProblem(refused, status: 413, code: "body-too-large")
        #expect(refused.headers["Access-Control-Allow-Origin"] == "*", "\(refused.headers)")
        #expect(big.closedByPeer(within: 2), "the unread body is never read: the connection closes")
        #expect(try c.get("/sessions/b").status == 404)
    }

    @Test func idleSessionsExpireAndBusyOnesStay() throws {
        let server = try startServer { $0.sessionTTL = 0.3 }
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        #expect(try c.put("idle").status == 201)
        #expect(try c.put("busy").status == 201)
        let start = Monotonic.now()
        while Monotonic.now() - start < 1.0 {
            let r = try c.get("/sessions/busy")
            #expect(r.status == 200, "busy session evicted after \(Monotonic.now() - start) s")
            if r.status != 200 { break }
            Monotonic.sleep(0.05)
        }
        let idle = try c.get("/sessions/idle")
        expectProblem(idle, status: 404, code: "session-not-found")
        #expect(try c.get("/sessions/busy").status == 200)
        #expect(server.sessionCount == 1)
    }
}

// MARK: - Concurrency

extension ServiceIntegration.RESTTests {
    /// 8 threads × 200 `changed` events on one session: every answer is 200 and consistent with
    /// its own translation, and the session ends at the last event applied.
    @Test func concurrentEventsOnOneSession() throws {
        let server = try startServer { $0.threads = 4 }
        defer { server.stop() }
        let port = server.port
        let c = try HTTPConnection(port: port)
        #expect(try c.put("shared", #"{"initialDetent": "normal"}"#).status == 201)
        #expect(try c.pan("shared", #"{"phase": "began"}"#).status == 200)

        struct Applied: Sendable {
            var status: Int
            var translation: Double
            var constant: Double?
            var alpha: Double?
            var time: Double?
            var state: String?
        }
        let results = Locked<[Applied]>([])
        onThreads(8) { thread in
            var mine: [Applied] = []
            do {
                let conn = try HTTPConnection(port: port)
                for j in 0..<200 {
                    // Unique translations from -400 to 399.5: the clamp at E = 30 is crossed.
                    let translation = Double(thread * 200 + j) * 0.5 - 400
                    let r = try conn.pan("shared", #"{"phase": "changed", "translation": \#(translation)}"#)
                    let json = r.json
                    mine.append(
                        Applied(
                            status: r.status, translation: translation, constant: num(json?["constant"]),
                            alpha: num(json?["dimmerAlpha"]), time: num(json?["time"]), state: json?["state"] as? String
                        ))
                }
            } catch {
                mine.append(Applied(status: -1, translation: .nan))
            }
            results.withLock { $0 += mine }
        }
        let all = results.current
        #expect(all.count == 1600)
        #expect(all.allSatisfy { $0.status == 200 }, "\(all.filter { $0.status != 200 }.prefix(5))")
        for a in all where a.status == 200 {
            let expected = max(398.5 + a.translation, 30)
            #expect(a.constant == expected, "translation \(a.translation): constant \(a.constant ?? .nan)")
            #expect(abs((a.alpha ?? -1) - facebookAlpha(expected)) < 1e-9, "alpha at \(expected)")
            #expect(a.state == "dragging")
        }
        // The last event applied has the latest time (server times never decrease in the order
        // the events take the session's lock); the session sits where it put the card.
        let latest = all.compactMap(\.time).max() ?? 0
        let candidates = Set(all.filter { $0.time == latest }.compactMap(\.constant))
        let final = try c.get("/sessions/shared")
        #expect(final.json?["state"] as? String == "dragging")
        let finalConstant = try #require(num(final.json?["constant"]))
        #expect(candidates.contains(finalConstant), "final \(finalConstant), last events \(candidates)")
        #expect(num(final.json?["time"]) ?? 0 >= latest)
    }

    /// 8 threads, each driving 8 sessions of its own, interleaved: no cross-talk.
    @Test func concurrentSessionsDoNotCrossTalk() throws {
        let server = try startServer { $0.threads = 4 }
        defer { server.stop() }
        let port = server.port
        let failures = Locked<[String]>([])
        onThreads(8) { thread in
            do {
                let conn = try HTTPConnection(port: port)
                let ids = (0..<8).map { "t\(thread)-s\($0)" }
                for (k, id) in ids.enumerated() {
                    let preset = ["facebook", "twitter", "glide", "fluid"][k % 4]
                    let rest = restingDetent[preset]!
                    let r = try conn.put(id, #"{"preset": "\#(preset)", "initialDetent": "\#(rest.name)"}"#)
                    if r.status != 201 { failures.withLock { $0.append("\(id) put \(r.status)") } }
                    _ = try conn.pan(id, #"{"phase": "began"}"#)
                }
                for round in 0..<25 {
                    for (k, id) in ids.enumerated() {
                        // Each session's own small translation, different in every session.
                        let translation = Double(thread * 8 + k) + Double(round) * 0.25
                        let r = try conn.pan(id, #"{"phase": "changed", "translation": \#(translation)}"#)
                        if r.status != 200 { failures.withLock { $0.append("\(id) changed \(r.status)") } }
                    }
                }
                for (k, id) in ids.enumerated() {
                    let preset = ["facebook", "twitter", "glide", "fluid"][k % 4]
                    let expected = restingDetent[preset]!.constant + Double(thread * 8 + k) + 24 * 0.25
                    let r = try conn.get("/sessions/\(id)")
                    let constant = num(r.json?["constant"]) ?? .nan
                    if r.json?["preset"] as? String != preset || abs(constant - expected) > 1e-9 {
                        failures.withLock { $0.append("\(id): \(constant) ≠ \(expected) (\(r.text.prefix(120)))") }
                    }
                }
            } catch {
                failures.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        let found = failures.current
        #expect(found.isEmpty, "\(found.prefix(10))")
        #expect(server.sessionCount == 64)
    }
}

// MARK: - Drain

extension ServiceIntegration.RESTTests {
    @Test func drainTurnsReadinessOffFinishesInFlightRequestsThenCloses() throws {
        let server = try startServer { $0.drainGrace = 0.3 }
        defer { server.stop() }
        let port = server.port
        let c = try HTTPConnection(port: port)
        #expect(try c.put("s", #"{"initialDetent": "normal"}"#).status == 201)
        #expect(try c.get("/readyz").status == 200)

        // An in-flight request: its head and half its body are in before the drain starts.
        let inflight = try HTTPConnection(port: port)
        let panBody = bytes(#"{"phase": "began", "translation": 0}"#)
        try inflight.send(
            bytes(
                "POST /sessions/s/pan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(panBody.count)\r\n\r\n"
            ) + panBody.prefix(10))

        let drainer = Background { server.drain() }
        // Once draining, every answer closes its connection (clients reconnect for the next
        // request, so none is left idle on a connection the final stop would cut): each request
        // below goes on a connection of its own, as a client honouring `Connection: close` does.
        func fresh() throws -> HTTPConnection { try HTTPConnection(port: port) }
        // Readiness turns false at once; liveness stays.
        #expect(try eventually(within: 2) { try fresh().get("/readyz").status == 503 })
        let ready = try fresh().get("/readyz")
        #expect(ready.headers.contains("Retry-After"))
        #expect(ready.headers["Connection"]?.lowercased() == "close")
        #expect(try fresh().get("/healthz").status == 200)
        #expect(server.isDraining)
        // New sessions: 503 draining with Retry-After, by POST or by PUT of a new id.
        let post = try fresh().request("POST", "/sessions")
        expectProblem(post, status: 503, code: "draining")
        #expect(post.headers["Retry-After"].flatMap { Int($0) } ?? 0 >= 1)
        expectProblem(try fresh().put("new-one"), status: 503, code: "draining")
        // The in-flight request completes.
        try inflight.send(Array(panBody.dropFirst(10)))
        let finished = try inflight.readResponse(method: "POST")
        #expect(finished.status == 200, "\(finished)")
        #expect(finished.json?["state"] as? String == "dragging")

        // Requests keep being answered until the listener closes; nothing but readiness and new
        // sessions is 5xx.
        var statuses: [String: [Int]] = [:]
        var i = 0
        loop: while i < 10_000 {
            let (method, path): (String, String) =
                [("GET", "/sessions/s"), ("GET", "/readyz"), ("POST", "/sessions"), ("GET", "/presets")][i % 4]
            i += 1
            do {
                let r = try fresh().request(method, path)
                statuses["\(method) \(path)", default: []].append(r.status)
            } catch {
                break loop  // the server closed the connection: drained
            }
        }
        #expect(drainer.wait(seconds: 10))
        for (request, codes) in statuses {
            let allowed: Set<Int> =
                switch request {
                case "GET /readyz", "POST /sessions": [503]
                default: [200]
                }
            #expect(codes.allSatisfy(allowed.contains), "\(request): \(codes)")
        }
        // Then the port refuses connections.
        #expect(throws: HTTPClientError.system("connect", ECONNREFUSED)) {
            _ = try HTTPConnection.connectSocket(port: port)
        }
    }
}

// MARK: - PHYSICS.md check values through HTTP

/// A row of PHYSICS.md's "Release decisions" table.
struct ReleaseRow: Sendable, CustomTestStringConvertible {
    let preset: String
    let constant: Double
    let velocity: Double
    let detent: String
    let snapConstant: Double
    let rule: String
    init(_ preset: String, _ constant: Double, _ velocity: Double, _ detent: String, _ snap: Double, _ rule: String) {
        (self.preset, self.constant, self.velocity, self.detent, self.snapConstant, self.rule) =
            (preset, constant, velocity, detent, snap, rule)
    }
    var testDescription: String { "\(preset) \(constant) v\(velocity) → \(detent) (\(rule))" }
}

/// A row of the "Dimmer alpha while dragging" table.
struct DimmerRow: Sendable, CustomTestStringConvertible {
    let preset: String
    let constant: Double
    let alpha: Double
    let rule: String
    init(_ preset: String, _ constant: Double, _ alpha: Double, _ rule: String) {
        (self.preset, self.constant, self.alpha, self.rule) = (preset, constant, alpha, rule)
    }
    var testDescription: String { "\(preset) at \(constant) → \(alpha) (\(rule))" }
}

/// A row of the "Drag limits" table.
struct DragLimitRow: Sendable, CustomTestStringConvertible {
    let preset: String
    let startDetent: String
    let start: Double
    let translation: Double
    let constant: Double
    let rule: String
    init(
        _ preset: String, _ startDetent: String, _ start: Double, _ translation: Double, _ constant: Double,
        _ rule: String
    ) {
        (self.preset, self.startDetent, self.start, self.translation, self.constant, self.rule) =
            (preset, startDetent, start, translation, constant, rule)
    }
    var testDescription: String { "\(preset) \(start) + \(translation) → \(constant) (\(rule))" }
}

/// A "Frames at 30 fps of show from hidden" list.
struct ShowFramesRow: Sendable, CustomTestStringConvertible {
    let preset: String
    let target: String
    let frameCount: Int
    let frames: [(t: Double, constant: Double, alpha: Double)]
    var testDescription: String { "\(preset) → \(target)" }
}

extension ServiceIntegration.RESTTests {
    static let releaseRows: [ReleaseRow] = [
        ReleaseRow("facebook", 150, -300, "expanded", 30, "constant < 0.25·H"),
        ReleaseRow("facebook", 150, 1600, "hidden", 797, "velocity > 1500 wins over position"),
        ReleaseRow("facebook", 250, 0, "normal", 398.5, "0.25·H ≤ constant < S − 70"),
        ReleaseRow("facebook", 600, 0, "normal", 398.5, "below H/2 but above S − 70"),
        ReleaseRow("facebook", 700, 0, "hidden", 797, "constant ≥ S − 70"),
        ReleaseRow("facebook", 693, 10, "hidden", 797, "exactly S − 70 is not < S − 70"),
        ReleaseRow("facebook", 500, 1499, "normal", 398.5, "velocity 1499 is not > 1500"),
        ReleaseRow("twitter", -0.5, 0, "open", 0, "trunc(-0.5) = 0 is not < 0; v ≤ 0 → open"),
        ReleaseRow("twitter", -3, -50, "open", 0, "trunc(constant) < 0 → open"),
        ReleaseRow("twitter", 100, 250, "open", 0, "slow (< 300) and near (< 180) → open"),
        ReleaseRow("twitter", 100, 350, "hidden", 633, "velocity ≥ 300 downward → hidden"),
        ReleaseRow("twitter", 179.9, 299, "open", 0, "trunc(179.9) = 179 < 180, 299 < 300"),
        ReleaseRow("twitter", 181, 100, "hidden", 633, "trunc(181) ≥ 180, downward → hidden"),
        ReleaseRow("twitter", 50, 0, "open", 0, "velocity 0 → open"),
        ReleaseRow("twitter", 300, -10, "open", 0, "upward → open"),
        ReleaseRow("glide", 300, 200, "compressed", 398.5, "above K, downward → compressed"),
        ReleaseRow("glide", 300, -200, "open", 44, "above K, upward → open"),
        ReleaseRow("glide", 500, 10, "closed", 717, "between K and S, downward → closed"),
        ReleaseRow("glide", 500, -10, "compressed", 398.5, "between K and S, upward → compressed"),
        ReleaseRow("glide", 770, -900, "closed", 717, "below S → closed whatever the velocity"),
        ReleaseRow("glide", 398.5, 0, "compressed", 398.5, "at K, velocity 0 counts as upward"),
        ReleaseRow("fluid", 398.5, -800, "full", 18, "projection passes one detent up"),
        ReleaseRow("fluid", 398.5, -100, "half", 398.5, "short projection stays"),
        ReleaseRow("fluid", 600, 300, "tip", 728, "projection toward tip"),
        ReleaseRow("fluid", 700, -200, "tip", 728, "projection clamped to the detent above: nearest is tip"),
        ReleaseRow("fluid", 650, 900, "hidden", 797, "removal velocity 900/147 ≥ 5.5"),
        ReleaseRow("fluid", 500, 1600, "tip", 728, "removal not reached (1600/297 < 5.5), one detent passed"),
        ReleaseRow("fluid", 100, 2500, "half", 398.5, "skipDetents false: at most one detent passed"),
    ]

    @Test(arguments: releaseRows)
    func releaseDecisions(_ row: ReleaseRow) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let rest = try #require(restingDetent[row.preset])
        #expect(try c.put("r", #"{"preset": "\#(row.preset)", "initialDetent": "\#(rest.name)"}"#).status == 201)
        #expect(try c.pan("r", #"{"phase": "began"}"#).status == 200)
        let moved = try c.pan("r", #"{"phase": "changed", "translation": \#(row.constant - rest.constant)}"#)
        #expect(abs((num(moved.json?["constant"]) ?? .nan) - row.constant) < 0.01, "\(moved.text)")
        let ended = try c.pan("r", #"{"phase": "ended", "velocity": \#(row.velocity)}"#)
        #expect(ended.status == 200, "\(ended)")
        let snap = try #require(obj(ended.json?["snap"]), "\(ended.text)")
        #expect(snap["detent"] as? String == row.detent, "\(ended.text)")
        #expect(abs((num(snap["constant"]) ?? .nan) - row.snapConstant) < 0.01, "\(ended.text)")
        #expect(snap["dismiss"] as? Bool == (row.detent == "hidden"))
        #expect(ended.json?["velocitySource"] as? String == "client")
        #expect(obj(ended.json?["animation"])?["to"].flatMap(num) == row.snapConstant)
    }

    static let dimmerRows: [DimmerRow] = [
        DimmerRow("facebook", 20, 0.7, "above E the drag clamps to E; full dim at or above H/2"),
        DimmerRow("facebook", 398.5, 0.7, "full dim at H/2"),
        DimmerRow("facebook", 500, 0.5217, "linear between H/2 and H"),
        DimmerRow("facebook", 700, 0.1704, "linear between H/2 and H"),
        DimmerRow("facebook", 797, 0.0, "0 at H"),
        DimmerRow("facebook", 900, 0.0, "0 below H (never negative: the seed's bug is fixed)"),
        DimmerRow("twitter", -40, 0.7, "pulled above open: clamp(b/C) = 0"),
        DimmerRow("twitter", 0, 0.7, "open"),
        DimmerRow("twitter", 100, 0.5894, "0.7·(1 − b/C)"),
        DimmerRow("twitter", 400, 0.2577, "0.7·(1 − b/C)"),
        DimmerRow("twitter", 633, 0.0, "at C"),
        DimmerRow("glide", 44, 0.7, "above K"),
        DimmerRow("glide", 398.5, 0.7, "at K"),
        DimmerRow("glide", 500, 0.4769, "linear between K and closed"),
        DimmerRow("glide", 717, 0.0, "at closed"),
        DimmerRow("fluid", 18, 0.3, "maxDimAlpha at the top-most detent"),
        DimmerRow("fluid", 398.5, 0.3, "maxDimAlpha at the detent above the undimmed one"),
        DimmerRow("fluid", 500, 0.2076, "linear between half and tip"),
        DimmerRow("fluid", 728, 0.0, "0 at the undimmed detent"),
    ]

    @Test(arguments: dimmerRows)
    func dimmerWhileDragging(_ row: DimmerRow) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let rest = try #require(restingDetent[row.preset])
        #expect(try c.put("d", #"{"preset": "\#(row.preset)", "initialDetent": "\#(rest.name)"}"#).status == 201)
        #expect(try c.pan("d", #"{"phase": "began"}"#).status == 200)
        let r = try c.pan("d", #"{"phase": "changed", "translation": \#(row.constant - rest.constant)}"#)
        #expect(r.status == 200, "\(r)")
        #expect(abs((num(r.json?["dimmerAlpha"]) ?? .nan) - row.alpha) <= 1e-4, "\(r.text)")
    }

    static let dragLimitRows: [DragLimitRow] = [
        DragLimitRow("facebook", "normal", 398.5, -400, 30, "clamped at E (the seed stopped short)"),
        DragLimitRow("glide", "compressed", 398.5, -500, 0, "clamped at 0"),
        DragLimitRow("twitter", "open", 0, -80, -80, "unbounded above open"),
        DragLimitRow("fluid", "full", 18, -50, -8.632, "rubber band past the top-most detent"),
        DragLimitRow("fluid", "tip", 728, 172, 850.087, "rubber band past the bottom-most detent"),
    ]

    @Test(arguments: dragLimitRows)
    func dragLimits(_ row: DragLimitRow) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let put = try c.put("l", #"{"preset": "\#(row.preset)", "initialDetent": "\#(row.startDetent)"}"#)
        #expect(num(put.json?["constant"]) == row.start, "\(put.text)")
        #expect(try c.pan("l", #"{"phase": "began"}"#).status == 200)
        let r = try c.pan("l", #"{"phase": "changed", "translation": \#(row.translation)}"#)
        #expect(abs((num(r.json?["constant"]) ?? .nan) - row.constant) < 0.01, "\(r.text)")
    }

    static let showFrames: [ShowFramesRow] = [
        ShowFramesRow(
            preset: "facebook", target: "normal", frameCount: 9,
            frames: [
                (0.0000, 797.00, 0.0000), (0.0333, 785.31, 0.0205), (0.0667, 755.17, 0.0735),
                (0.1000, 711.38, 0.1504), (0.2333, 441.82, 0.6239), (0.2500, 398.50, 0.7000),
            ]),
        ShowFramesRow(
            preset: "twitter", target: "open", frameCount: 10,
            frames: [
                (0.0000, 633.00, 0.0000), (0.0333, 465.39, 0.1854), (0.0667, 266.14, 0.4057),
                (0.1000, 129.93, 0.5563), (0.2667, -0.94, 0.7000), (0.3000, 0.00, 0.7000),
            ]),
        ShowFramesRow(
            preset: "glide", target: "compressed", frameCount: 13,
            frames: [
                (0.0000, 797.00, 0.0000), (0.0333, 727.06, 0.1229), (0.0667, 608.10, 0.3318),
                (0.1000, 508.70, 0.5064), (0.3667, 397.58, 0.7000), (0.4000, 398.50, 0.7000),
            ]),
    ]

    @Test(arguments: showFrames)
    func showFramesAt30FPSThroughSimulate(_ row: ShowFramesRow) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let r = try c.request(
            "POST", "/simulate",
            json: #"{"config": {"preset": "\#(row.preset)"}, "events": [{"type": "show", "time": 0}], "fps": 30}"#)
        #expect(r.status == 200, "\(r)")
        #expect(obj(r.json?["animation"])?["detent"] as? String == row.target)
        let frames = try #require(r.json?["frames"] as? [[String: Any]])
        #expect(frames.count == row.frameCount)
        for (t, constant, alpha) in row.frames {
            let k = Int((t * 30).rounded())
            guard k < frames.count else {
                Issue.record("no frame \(k)")
                continue
            }
            let f = frames[k]
            #expect(num(f["index"]) == Double(k))
            #expect(abs((num(f["t"]) ?? .nan) - t) < 1e-4, "t of frame \(k): \(f)")
            #expect(abs((num(f["constant"]) ?? .nan) - constant) <= 0.01, "constant at \(t): \(f)")
            #expect(abs((num(f["dimmerAlpha"]) ?? .nan) - alpha) <= 1e-4, "alpha at \(t): \(f)")
        }
        #expect(obj(r.json?["final"])?["detent"] as? String == row.target)
    }

    @Test func fluidSpringCheck() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        // Through a session: release from 300 with velocity −1200.
        #expect(try c.put("f", #"{"preset": "fluid", "initialDetent": "half"}"#).status == 201)
        #expect(try c.pan("f", #"{"phase": "began"}"#).status == 200)
        #expect(num(try c.pan("f", #"{"phase": "changed", "translation": -98.5}"#).json?["constant"]) == 300)
        let ended = try c.pan("f", #"{"phase": "ended", "velocity": -1200}"#)
        let animation = try #require(obj(ended.json?["animation"]), "\(ended.text)")
        #expect(animation["curve"] as? String == "spring")
        #expect(num(animation["from"]) == 300)
        #expect(num(animation["to"]) == 18)
        #expect(abs((num(animation["duration"]) ?? .nan) - 0.577) < 1e-9, "\(animation)")
        #expect(num(animation["velocity"]) == -1200)

        // Through /simulate at 20 fps: frames at t = 0.05, 0.1, 0.2.
        let sim = try c.request(
            "POST", "/simulate",
            json: #"""
                {"config": {"preset": "fluid", "initialDetent": "half"}, "fps": 20, "events": [
                  {"phase": "began", "time": 0},
                  {"phase": "changed", "translation": -98.5, "time": 0.01},
                  {"phase": "ended", "velocity": -1200, "time": 0.02}]}
                """#)
        #expect(sim.status == 200, "\(sim)")
        #expect(abs((num(obj(sim.json?["animation"])?["duration"]) ?? .nan) - 0.577) < 1e-9)
        let frames = try #require(sim.json?["frames"] as? [[String: Any]])
        #expect(frames.count == 13)  // ceil(0.577·20) + 1
        for (k, constant) in [(1, 220.20), (2, 143.76), (4, 58.10)] where k < frames.count {
            #expect(abs((num(frames[k]["constant"]) ?? .nan) - constant) <= 0.01, "frame \(k): \(frames[k])")
        }
        #expect(frames.last.flatMap { num($0["constant"]) } == 18)
    }

    @Test func velocityIsEstimatedFromTheClientClock() throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        #expect(try c.put("v", #"{"clock": "client", "initialDetent": "normal"}"#).status == 201)
        #expect(try c.pan("v", #"{"phase": "began", "time": 0}"#).status == 200)
        for (t, translation) in [(0.0, 0.0), (0.02, 10.0), (0.04, 20.0)] {
            let r = try c.pan("v", #"{"phase": "changed", "translation": \#(translation), "time": \#(t)}"#)
            #expect(r.status == 200, "\(r)")
        }
        let ended = try c.pan("v", #"{"phase": "ended", "time": 0.05}"#)
        #expect(ended.status == 200, "\(ended)")
        #expect(abs((num(ended.json?["velocity"]) ?? .nan) - 500) < 1e-6, "\(ended.text)")
        #expect(ended.json?["velocitySource"] as? String == "estimated")
        #expect(num(obj(ended.json?["animation"])?["startTime"]) == 0.05)
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

extension ServiceIntegration.RESTTests {
    @Test(arguments: pathEdges)
    func routingPathEdges(_ method: String, _ path: String, _ status: Int, _ code: String?) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
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

// MARK: - Fuzz findings

extension ServiceIntegration.RESTTests {
    /// Content-Types the fuzzer found trapping the screen (the whole server went down): refused
    /// as 415 like any other unsupported type, and the server goes on.
    @Test(arguments: ["", ";", ";;", " ; "])
    func contentTypeWithoutAMediaTypeIs415(type: String) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let r = try c.request("POST", "/sessions", headers: [("Content-Type", type)], body: bytes("{}"))
        expectProblem(r, status: 415, code: "unsupported-media-type")
        #expect(try HTTPConnection(port: server.port).get("/healthz").status == 200)
    }
}

extension ServiceIntegration.RESTTests {
    /// A preflight with an empty or blank Access-Control-Request-Headers gets the default list
    /// (it was echoed, an empty header libmicrohttpd refuses: a 500 found by schemathesis).
    @Test(arguments: ["", " ", "\t"])
    func preflightWithEmptyRequestHeaders(value: String) throws {
        let server = try startServer()
        defer { server.stop() }
        let c = try HTTPConnection(port: server.port)
        let r = try c.request(
            "OPTIONS", "/healthz",
            headers: [("Origin", "https://example.com"), ("Access-Control-Request-Headers", value)])
        #expect(r.status == 204, "\(r)")
        #expect(r.headers["Access-Control-Allow-Headers"]?.contains("Content-Type") == true)
    }
}
