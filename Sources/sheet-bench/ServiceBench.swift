import Foundation
import Logging
import MicroHTTP
import SheetService

// The service's own cost per request, without the network: `screen` and `respond` called
// directly with the request wrk sends, so the figure is the Swift work on top of libmicrohttpd
// (routing, decoding, the store, the engine, the reply, metrics), free of kernel noise.

/// ns per request for a few request kinds.
func runServiceBench(rounds: Int, iterations: Int) throws -> [BenchFigure] {
    var config = ServiceConfiguration()
    config.port = 0
    // SHEET_BENCH_STORE=redis://127.0.0.1:6379: the same requests with the session store on (every
    // accepted event encoded and queued for the write-behind thread).
    config.store = ProcessInfo.processInfo.environment["SHEET_BENCH_STORE"]
    let responder = try SheetResponder(configuration: config, logger: Logger(label: "bench"), clock: Stopwatch())
    func request(_ method: String, _ target: String, _ body: String) -> HTTPRequest {
        var headers = HTTPHeaders()
        headers.append(name: "Host", value: "127.0.0.1:8080")
        if !body.isEmpty {
            headers.append(name: "Content-Type", value: "application/json")
            headers.append(name: "Content-Length", value: String(body.utf8.count))
        }
        return HTTPRequest(
            head: HTTPRequestHead(method: method, target: target, headers: headers), body: Array(body.utf8))
    }
    _ = responder.respond(to: request("PUT", "/sessions/s0", #"{"preset":"facebook","initialDetent":"normal"}"#))
    _ = responder.respond(to: request("POST", "/sessions/s0/pan", #"{"phase":"began"}"#))
    let cases: [(String, HTTPRequest)] = [
        (
            "service: pan changed",
            request("POST", "/sessions/s0/pan", #"{"phase":"changed","translation":-120.5,"velocity":-800}"#)
        ),
        ("service: GET /sessions/{id}", request("GET", "/sessions/s0", "")),
        ("service: GET /healthz", request("GET", "/healthz", "")),
        ("service: POST /healthz (405 problem)", request("POST", "/healthz", #"{"phase":"changed"}"#)),
    ]
    var figures: [BenchFigure] = []
    // A whole gesture on each of 10,000 sessions in turn (began, changed, ended): the `ended`
    // path (snap, animation, reply) on sessions that are not in cache.
    let sessions = 10_000
    for i in 0..<sessions {
        _ = responder.respond(to: request("PUT", "/sessions/g\(i)", #"{"preset":"facebook","initialDetent":"normal"}"#))
    }
    let gesture = (0..<sessions).map { i in
        [
            request("POST", "/sessions/g\(i)/pan", #"{"phase":"began"}"#),
            request("POST", "/sessions/g\(i)/pan", #"{"phase":"changed","translation":-250}"#),
            request("POST", "/sessions/g\(i)/pan", #"{"phase":"ended","velocity":-300}"#),
        ]
    }
    let (gestureNS, gestureSum) = medianNanoseconds(rounds: rounds, iterations: iterations / 3) { n in
        var acc = 0.0
        for k in 0..<n {
            for req in gesture[k % sessions] { acc += Double(responder.respond(to: req).status) }
        }
        return acc
    }
    if gestureSum == 42 { print("") }
    figures.append(
        BenchFigure(name: "service: gesture (began + changed + ended), 10,000 sessions", nanosecondsPerOp: gestureNS))
    for (name, req) in cases {
        let (ns, sum) = medianNanoseconds(rounds: rounds, iterations: iterations) { n in
            var acc = 0.0
            for _ in 0..<n {
                if responder.screen(req.head) != nil { acc += 1 }
                acc += Double(responder.respond(to: req).status)
            }
            return acc
        }
        if sum == 42 { print("") }
        figures.append(BenchFigure(name: name, nanosecondsPerOp: ns))
    }
    return figures
}
