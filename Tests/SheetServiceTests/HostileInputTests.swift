import Foundation
import MicroHTTP
import RedisClient
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

// No client can stall the server through its streams, and nothing read back from the store can
// crash it or open a session to a stranger (issue 29). Verdicts on what the server wrote and
// answered, never on time.

extension ServiceIntegration {
    @Suite struct HostileInputTests {}
}

extension ServiceIntegration.HostileInputTests {
    /// An instant-pace stream of a 60 s animation at 240 fps (14,401 frames): the event that starts
    /// it writes one frame, not 14,401 (it ran under the session's lock, on the thread answering
    /// the event, and every other client waited); each call of the connection's reader writes about
    /// one block more. The frames themselves are checked end to end in FrameStreamTests.
    @Test func anInstantStreamMakesFramesAsTheClientReads() throws {
        let model = try SheetModel(preset: .transition, options: [("duration", .number(60))])
        var sheet = try SheetSession(model: model)
        let outcome = sheet.handle(SheetEvent.show(detent: nil), at: 0)
        let animation = try #require(outcome.animation)
        #expect(animation.frameCount(fps: 240) == 14_401)
        let http = HTTPStream(bufferLimit: 1 << 30)
        let stream = FrameStream(
            http: http, fps: 240, pace: .instant, once: false, profile: SessionProfile(model: model, clock: .server),
            sessionID: "s", metrics: ServiceMetrics(), budget: InstantFrameBudget(framesPerSecond: 1 << 30, block: 16))
        let pacer = FramePacer(clock: Stopwatch(), keepAliveInterval: 15)
        defer { pacer.stop() }
        stream.begin(animation, origin: 0, interrupted: nil, now: 0, pacer: pacer)
        let first = http.bufferedByteCount
        // The rule: the event's own work is one frame (and the stream's first `retry:` line).
        #expect(first > 0 && first < 600, "\(first) bytes written by the event")
        var sizes: [Int] = []
        for _ in 0..<5 {
            let before = http.bufferedByteCount
            stream.refill(now: 0, pacer: pacer)
            sizes.append(http.bufferedByteCount - before)
        }
        // The rule: each refill writes about one block (the last frame may cross it), no more.
        for size in sizes {
            #expect(size >= FrameStream.refillBytes && size < FrameStream.refillBytes + 600, "\(sizes)")
        }
    }

    /// Records in the store that sheetd did not write: a session whose numbers are absurd (an
    /// `origin` of 1e300 once trapped a Double-to-Int conversion in the frame stream of any instance
    /// that loaded it) or whose JSON is not a session. Each read, stream, event, replacement and
    /// deletion of such an id is a 503 (the store cannot say what the session is; never 404, which
    /// would let anyone take the id), counted, and the server goes on answering.
    @Test func aRecordSheetdCannotReadIsA503AndNeverACrash() throws {
        try ProcessResource.redisSubscriberThreads.exclusively {
            let redis = try RedisServer()
            let writer = try startServer { $0.store = redis.url() }
            defer { writer.stop() }
            let w = try HTTPConnection(port: writer.port)
            #expect(try w.put("model", #"{"preset": "facebook", "initialDetent": "normal"}"#).status == 201)
            #expect(try w.request("POST", "/sessions/model/show", json: #"{"detent": "expanded"}"#).status == 200)
            let connection = try RedisConnection(endpoint: try RedisEndpoint(url: redis.url()))
            let key = RedisSessionStore.keyPrefix
            let good = try #require(try connection.get(key + "model"))
            let text = String(decoding: good, as: UTF8.self)
            let rows: [(id: String, record: String)] = [
                // An origin far past any time: the frame index overflowed Int.
                ("origin", text.replacingOccurrences(of: #""origin":"#, with: #""origin":1e300,"x":"#)),
                // A wall clock far off: every time shifted by 1e300.
                ("wall", text.replacingOccurrences(of: #""wall":"#, with: #""wall":-1e300,"x":"#)),
                // Not a session at all.
                ("garbage", #"{"v":1,"version":1,"config":"nope"}"#),
                // Not JSON.
                ("bytes", "\u{1}\u{2}not json"),
            ]
            let reader = try startServer {
                $0.store = redis.url()
                $0.sessionTokens = true
            }
            defer { reader.stop() }
            let r = try HTTPConnection(port: reader.port)
            for row in rows {
                try connection.set(key + row.id, Array(row.record.utf8), ttlSeconds: 600)
                for (method, path) in [
                    ("GET", "/sessions/\(row.id)"), ("GET", "/sessions/\(row.id)/frames?once=true&pace=instant"),
                    ("POST", "/sessions/\(row.id)/show"), ("PUT", "/sessions/\(row.id)"),
                    ("DELETE", "/sessions/\(row.id)"),
                ] {
                    let answer = try r.request(method, path)
                    expectProblem(answer, status: 503, code: "store-unavailable")
                }
                #expect(try r.get("/healthz").status == 200, "\(row.id)")
            }
            #expect(reader.sessionCount == 0)
        }
    }
}
