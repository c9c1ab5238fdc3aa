// docs/HTTP.md's error table: every row's status, problem code and detail, and an error changes
// nothing. Answered in process, but for the rows answered from the head alone (a server on port 0).

import Foundation
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    @Suite struct ErrorTests {}
}

/// One row of docs/HTTP.md's error table.
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

extension ServiceIntegration.ErrorTests {
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
        // 400: presets are the six of docs/PHYSICS.md.
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

    @Test(arguments: errorCases.filter { !$0.headOnly })
    func errorStatuses(_ row: ErrorCase) throws {
        let service = try InProcessService()
        try expectError(row, on: service) {
            try service.request(row.method, row.path, headers: row.headers, body: row.body.map(bytes))
        }
    }

    /// The rows answered from the head alone, their body never sent: that the server answers
    /// without waiting for it is a matter of the socket.
    @Test(arguments: errorCases.filter { $0.headOnly })
    func errorStatusesFromTheHeadAlone(_ row: ErrorCase) throws {
        let server = try startServer()
        defer { server.stop() }
        try expectError(row, on: try HTTPConnection(port: server.port)) {
            let c = try HTTPConnection(port: server.port)
            var head = "\(row.method) \(row.path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for (name, value) in row.headers { head += "\(name): \(value)\r\n" }
            try c.send(head + "\r\n")
            return try c.readResponse(method: row.method, timeout: 5)
        }
    }

    /// Sets up the sessions the rows aim at through `setup`, checks the answer `send` gets for the
    /// row, then that the sessions are untouched.
    private func expectError(_ row: ErrorCase, on setup: some HTTPClient, _ send: () throws -> Response) throws {
        #expect(try setup.put("s1", #"{"initialDetent": "normal"}"#).status == 201)
        #expect(try setup.put("c1", #"{"clock": "client", "initialDetent": "normal"}"#).status == 201)
        #expect(try setup.pan("c1", #"{"phase": "began", "time": 5}"#).status == 200)

        let r = try send()
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
}

extension ServiceIntegration.ErrorTests {
    @Test func stateIsUnchangedAfterAnError() throws {
        let c = try InProcessService()
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
}
