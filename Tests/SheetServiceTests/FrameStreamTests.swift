// GET /sessions/{id}/frames over a real socket: SSE framing, instant and realtime pacing,
// interruption, several streams, Last-Event-ID, keep-alives and slow readers; bad queries, refused
// before a stream opens, in process.

import Foundation
import SheetdTesting
import Synchronization
import Testing

@testable import SheetService

extension ServiceIntegration {
    @Suite struct FrameStreamTests {}
}

/// The frames of one animation in a list of blocks.
private func frames(_ events: [SSEEvent], animation: Int? = nil) -> [SSEEvent] {
    events.filter { $0.type == "frame" && (animation == nil || num($0.json?["animation"]) == Double(animation!)) }
}

/// `n` and `k` of an `id: n:k`.
private func frameID(_ e: SSEEvent) -> (animation: Int, index: Int)? {
    guard let parts = e.id?.split(separator: ":"), parts.count == 2, let n = Int(parts[0]), let k = Int(parts[1])
    else { return nil }
    return (n, k)
}

/// The data of a frame from "t" on, as sent: frames of one animation at two rates must agree on
/// these bytes at shared instants.
private func numbersFromT(_ e: SSEEvent) -> String? {
    guard let range = e.data.range(of: "\"t\":") else { return nil }
    return String(e.data[range.lowerBound...])
}

/// Opens a stream and reads its head: the stream is registered with its session before the head
/// is sent, so once it is in, every later animation reaches the stream.
private func openStream(_ port: UInt16, _ path: String, headers: [(String, String)] = []) throws -> SSEClient {
    let stream = try SSEClient(port: port, path: path, headers: headers)
    #expect(stream.status == 200, "\(stream.errorResponse.map { "\($0)" } ?? "")")
    return stream
}

extension ServiceIntegration.FrameStreamTests {
    @Test func framingAndInstantOnce() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("s").status == 201)
        let stream = try openStream(server.port, "/sessions/s/frames?fps=30&pace=instant&once=true")
        #expect(stream.headers["Content-Type"]?.hasPrefix("text/event-stream") == true, "\(stream.headers)")
        #expect(stream.headers["Cache-Control"] == "no-cache")
        #expect(stream.headers["X-Accel-Buffering"] == "no")

        let shown = try c.show("s")
        let n = try #require(int(obj(shown.json?["animation"])?["id"]))
        let events = try stream.collectToEnd(timeout: 30)
        #expect(stream.ended && stream.endedCleanly, "the body ends with the chunked terminator")
        let frameEvents = frames(events)
        // facebook show: T = 0.25 at 30 fps: ceil(7.5) + 1 = 9 frames, then settled, then the end.
        #expect(frameEvents.count == 9)
        #expect(events.count == 10, "\(events.map(\.type))")
        // The reconnection delay travels in the first event's block, never in one of its own.
        #expect(events.first?.retry == 1000 && events.first?.event == "frame", "\(events.first.map { "\($0)" } ?? "")")
        #expect(events.dropFirst().allSatisfy { $0.retry == nil })
        // `settled` carries the id of the last frame, so a reconnection after it names that frame.
        #expect(events.last?.id == "\(n):8")
        for (k, e) in frameEvents.enumerated() {
            #expect(e.id == "\(n):\(k)")
            #expect(e.event == "frame")
            let json = try #require(e.json, "\(e)")
            #expect(
                Set(json.keys) == [
                    "animation", "index", "t", "constant", "dimmerAlpha", "progress", "velocity",
                    "backgroundInteractive",
                ],
                "\(e.data)")
            #expect(num(json["animation"]) == Double(n))
            #expect(num(json["index"]) == Double(k))
            #expect(abs((num(json["t"]) ?? .nan) - min(Double(k) / 30, 0.25)) < 1e-12)
        }
        let last = try #require(frameEvents.last?.json)
        #expect(num(last["constant"]) == 398.5)
        #expect(num(last["dimmerAlpha"]) == 0.7)
        #expect(num(last["t"]) == 0.25)
        #expect(num(last["velocity"]) == 0)
        let settled = try #require(events.last)
        #expect(settled.type == "settled")
        #expect(settled.json?["state"] as? String == "resting")
        #expect(settled.json?["detent"] as? String == "normal")
        #expect(num(settled.json?["constant"]) == 398.5)
        // The connection stays usable after the end of the body.
        let after = try stream.connection.request("GET", "/healthz")
        #expect(after.status == 200)
    }

    @Test func ratesAgreeAtSharedInstants() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("s", #"{"preset": "twitter"}"#).status == 201)
        let at120 = try openStream(server.port, "/sessions/s/frames?fps=120&pace=instant&once=true")
        let at30 = try openStream(server.port, "/sessions/s/frames?fps=30&pace=instant&once")
        #expect(try c.show("s").status == 200)
        let fast = frames(try at120.collectToEnd())
        let slow = frames(try at30.collectToEnd())
        // twitter show: T = 0.3: 37 frames at 120, 10 at 30.
        #expect(fast.count == 37)
        #expect(slow.count == 10)
        for (k, frame) in slow.enumerated() where 4 * k < fast.count {
            let a = numbersFromT(fast[4 * k])
            let b = numbersFromT(frame)
            #expect(a != nil && a == b, "frame \(4 * k) at 120 fps vs \(k) at 30 fps")
        }
    }

    @Test func realtimePacing() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("s").status == 201)
        let stream = try openStream(server.port, "/sessions/s/frames?fps=60")
        let sent = Monotonic.now()
        let shown = try c.show("s")
        #expect(shown.status == 200)
        let events = try stream.collect(timeout: 30) { $0.type == "settled" }
        let frameEvents = frames(events)
        let indices = frameEvents.compactMap { int($0.json?["index"]) }
        // Frame 0 and the last frame (15: ceil(0.25·60)) always go out; the pacer may skip frames
        // in between on a stalled machine, never reorder them.
        #expect(indices.first == 0)
        #expect(indices.last == 15)
        #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "\(indices)")
        for (e, k) in zip(frameEvents, indices) {
            // Frame k leaves when its time comes: no earlier than k/fps after the show (−2 ms).
            #expect(e.arrival - sent >= Double(k) / 60 - 0.002, "frame \(k) at \(e.arrival - sent)")
        }
        let settled = try #require(events.last)
        #expect(settled.type == "settled")
        // Paced, not sent at once: settled no earlier than the 0.25 s animation's end (−2 ms as
        // above; a busy machine only makes it later, so there is no upper bound).
        let total = settled.arrival - sent
        #expect(total >= 0.25 - 0.002, "the 0.25 s animation took \(total) s")
    }

    @Test func lateSubscriberStartsAtTheCurrentFrame() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("s").status == 201)
        let sent = Monotonic.now()
        #expect(try c.show("s").status == 200)
        Monotonic.sleep(0.1)
        let stream = try openStream(server.port, "/sessions/s/frames?fps=60")
        let events = try stream.collect(timeout: 30) { $0.type == "settled" }
        let frameEvents = frames(events)
        let first = try #require(frameEvents.first)
        let k = try #require(int(first.json?["index"]))
        // At least 0.1 s in: frame 6 or later; and no later than the frame due when it arrived.
        #expect(k >= 6, "first frame \(k)")
        #expect(k <= Int(((first.arrival - sent) * 60).rounded(.down)) + 1, "first frame \(k)")
        #expect(frameEvents.last.flatMap { num($0.json?["index"]) } == 15)
        #expect(events.last?.type == "settled")
    }

    @Test func beganInterruptsTheStreamedAnimation() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        // glide's show lasts 0.4 s: time to grab it mid-flight (whether the grab came before its end
        // is read from the server's clock, below, not assumed).
        #expect(try c.put("s", #"{"preset": "glide"}"#).status == 201)
        let stream = try openStream(server.port, "/sessions/s/frames?fps=60")
        let shown = try c.show("s")
        let animation = try #require(obj(shown.json?["animation"]))
        let n = try #require(int(animation["id"]))
        let ends = try #require(num(animation["startTime"])) + (try #require(num(animation["duration"])))
        // A few frames in, grab the card.
        let early = try stream.collect(timeout: 30) { (num($0.json?["index"]) ?? 0) >= 3 || $0.type != "frame" }
        #expect(early.last?.type == "frame")
        let began = try c.pan("s", #"{"phase": "began"}"#)
        #expect(began.status == 200)
        #expect(began.json?["state"] as? String == "dragging")
        let grabbed = try #require(num(began.json?["time"]))
        // Frames sent before the grab may still be on their way; then `interrupted`, the grab having
        // come before the animation's end on the server's clock (always, but on a machine stalled
        // for a third of a second: then there was nothing to interrupt, and the stream settles it).
        let untilInterrupted = try stream.collect(timeout: 30) { $0.type != "frame" }
        let interrupted = try #require(untilInterrupted.last)
        #expect(
            interrupted.type == (grabbed < ends ? "interrupted" : "settled"), "\(interrupted), grabbed at \(grabbed)")
        if grabbed < ends {
            #expect(interrupted.json?["state"] as? String == "dragging")
            #expect(num(interrupted.json?["constant"]) == num(began.json?["constant"]))
        }
        #expect(frames(untilInterrupted).allSatisfy { num($0.json?["animation"]) == Double(n) })
        // Nothing more of animation n (it would have run until 0.4 s after the show).
        let quiet = try stream.staysQuiet(for: 0.45)
        #expect(quiet == nil, "after interrupted: \(quiet.map { "\($0)" } ?? "")")
        // The release streams the next animation.
        let ended = try c.pan("s", #"{"phase": "ended", "velocity": 0}"#)
        let m = try #require(int(obj(ended.json?["animation"])?["id"]))
        #expect(m > n)
        let next = try stream.collect(timeout: 30) { $0.type == "settled" }
        #expect(!frames(next).isEmpty)
        #expect(frames(next).allSatisfy { num($0.json?["animation"]) == Double(m) })
        #expect(next.last?.type == "settled")
    }

    @Test func everyAnimationEndsWithSettledOrInterrupted() throws {
        // A client-clock session ahead of the server: the second gesture begins (client time 1.5)
        // after the first animation's end (1.2 + 0.25), while the realtime stream is still playing
        // that animation on the server clock. It skips to its last frame (as a stalled pacer does)
        // and ends properly: at its target frame, then `settled`.
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("r", #"{"preset": "facebook", "clock": "client", "initialDetent": "normal"}"#).status == 201)
        let stream = try openStream(server.port, "/sessions/r/frames?fps=60")
        for json in [
            #"{"phase": "began", "time": 1}"#, #"{"phase": "changed", "translation": -250, "time": 1.1}"#,
            #"{"phase": "ended", "velocity": -300, "time": 1.2}"#,
        ] {
            #expect(try c.pan("r", json).status == 200)
        }
        // The first animation's first frame is on its way (the pacer sends it at once) before the
        // second gesture: without this wait a loaded machine can let the whole second gesture in
        // first, and the first animation would end with no frame at all.
        var events = try stream.collect(timeout: 30) { $0.type == "frame" }
        for json in [
            #"{"phase": "began", "time": 1.5}"#, #"{"phase": "changed", "translation": 300, "time": 1.6}"#,
            #"{"phase": "ended", "velocity": 300, "time": 1.7}"#,
        ] {
            #expect(try c.pan("r", json).status == 200)
        }
        events += try stream.collect(timeout: 30) { $0.type == "settled" && num($0.json?["time"]) ?? 0 > 1.7 }
        // Per animation: its frames, then exactly one settled or interrupted, before the next one's.
        var open: Int?
        for e in events {
            if e.type == "frame", let n = int(e.json?["animation"]) {
                #expect(open == nil || open == n, "animation \(n) began while \(open ?? 0) was unfinished")
                open = n
            } else if e.type == "settled" || e.type == "interrupted" {
                #expect(open != nil, "\(e.type) without an animation: \(events.map { $0.id ?? $0.type })")
                open = nil
            }
        }
        #expect(open == nil)
        // Every `settled` follows its animation's last frame (it names that frame's id), so the
        // card a client draws rests where the engine says (seen missing in the soak: the cut-short
        // animation's `settled` came after a frame 0.33 pt from its target).
        for (i, e) in events.enumerated() where e.type == "settled" {
            #expect(
                i > 0 && events[i - 1].type == "frame" && events[i - 1].id == e.id, "\(events.map { $0.id ?? $0.type })"
            )
        }
        #expect(events.filter { $0.type == "settled" || $0.type == "interrupted" }.count == 2)
        #expect(events.allSatisfy { $0.type != "settled" || $0.json?["id"] as? String == "r" })
    }

    @Test func severalStreamsGetTheFramesAndClosedOnDelete() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("s", #"{"preset": "glide"}"#).status == 201)
        let paths = ["fps=30&pace=instant", "fps=60", "fps=120&pace=instant"]
        let streams = try paths.map { try openStream(server.port, "/sessions/s/frames?\($0)") }
        #expect(try c.show("s").status == 200)
        // glide show: T = 0.4.
        for (stream, (path, count)) in zip(streams, zip(paths, [13, 25, 49])) {
            let events = try stream.collect(timeout: 30) { $0.type == "settled" }
            #expect(events.last?.type == "settled", "\(path)")
            let indices = frames(events).compactMap { int($0.json?["index"]) }
            if path.contains("instant") {
                #expect(indices == Array(0..<count), "\(path)")
            } else {
                #expect(indices.first == 0 && indices.last == count - 1, "\(path): \(indices)")
            }
        }
        #expect(try c.request("DELETE", "/sessions/s").status == 204)
        for (stream, path) in zip(streams, paths) {
            let rest = try stream.collectToEnd(timeout: 30)
            #expect(rest.last?.type == "closed", "\(path): \(rest)")
            #expect(rest.last?.json?["reason"] as? String == "deleted")
            #expect(stream.ended && stream.endedCleanly, "\(path)")
        }
    }

    @Test func replacingASessionClosesItsStreams() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("s").status == 201)
        let stream = try openStream(server.port, "/sessions/s/frames")
        #expect(try c.put("s", #"{"preset": "twitter"}"#).status == 200)
        let events = try stream.collectToEnd(timeout: 30)
        #expect(events.map(\.type) == ["closed"], "\(events)")
        #expect(events.last?.json?["reason"] as? String == "replaced")
        #expect(stream.endedCleanly)
    }

    @Test func streamsGetClosedOnDrain() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("a").status == 201)
        #expect(try c.put("b").status == 201)
        let a = try openStream(server.port, "/sessions/a/frames")
        let b = try openStream(server.port, "/sessions/b/frames?pace=instant")
        let drainer = Background { server.drain() }
        for (name, stream) in [("a", a), ("b", b)] {
            let events = try stream.collectToEnd(timeout: 30)
            #expect(events.last?.type == "closed", "\(name): \(events)")
            #expect(events.last?.json?["reason"] as? String == "draining")
            #expect(stream.ended && stream.endedCleanly, "\(name)")
        }
        #expect(drainer.wait(seconds: 10))
    }

    /// Reconnection cases of docs/HTTP.md: Last-Event-ID n:k.
    enum Resume: String, CaseIterable, Sendable {
        /// n still runs: the stream resumes after frame k.
        case running
        /// n has ended: its `settled` first, then the running animation.
        case ended
        /// n is unknown: one `snapshot` first.
        case unknown
        /// n still runs and k is its last frame: nothing of n is left but its `settled`.
        case runningAtLastFrame
    }

    @Test(arguments: Resume.allCases)
    func lastEventID(_ resume: Resume) throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        // The client clock: an animation runs until the client's next event, whatever the wall
        // clock does, so "still running" is exact.
        #expect(try c.put("s", #"{"clock": "client"}"#).status == 201)
        let shown = try c.show("s", #"{"time": 1}"#)
        let n = try #require(int(obj(shown.json?["animation"])?["id"]))
        switch resume {
        case .running:
            let stream = try openStream(
                server.port, "/sessions/s/frames?pace=instant&fps=60", headers: [("Last-Event-ID", "\(n):3")])
            let events = try stream.collect(timeout: 30) { $0.type == "settled" }
            let ids = frames(events).compactMap(frameID)
            #expect(ids.map(\.animation).allSatisfy { $0 == n })
            #expect(ids.map(\.index) == Array(4...15), "\(events.map { $0.id ?? $0.type })")
            #expect(events.first?.type == "frame")
            #expect(events.last?.type == "settled")
        case .ended:
            let moved = try c.show("s", #"{"detent": "expanded", "time": 2}"#)
            let m = try #require(int(obj(moved.json?["animation"])?["id"]))
            #expect(m > n)
            let stream = try openStream(
                server.port, "/sessions/s/frames?pace=instant&fps=60", headers: [("Last-Event-ID", "\(n):7")])
            let first = try #require(try stream.next(timeout: 30))
            #expect(first.type == "settled", "\(first)")
            #expect(first.json?["detent"] as? String == "normal")
            #expect(num(first.json?["constant"]) == 398.5)
            // Then the animation running now, from its start (instant pace).
            let rest = try stream.collect(timeout: 30) { $0.type == "settled" }
            let ids = frames(rest).compactMap(frameID)
            #expect(ids.first.map { $0 == (m, 0) } == true, "\(rest.map { $0.id ?? $0.type })")
            #expect(ids.allSatisfy { $0.animation == m })
            #expect(rest.last?.json?["detent"] as? String == "expanded")
        case .runningAtLastFrame:
            let stream = try openStream(
                server.port, "/sessions/s/frames?pace=instant&fps=60", headers: [("Last-Event-ID", "\(n):15")])
            let events = try stream.collect(timeout: 30) { $0.type == "settled" }
            #expect(events.map(\.type) == ["settled"], "frame 15 was seen already: \(events.map { $0.id ?? $0.type })")
            #expect(events.last?.json?["detent"] as? String == "normal")
        case .unknown:
            let stream = try openStream(
                server.port, "/sessions/s/frames?pace=instant&fps=60", headers: [("Last-Event-ID", "99:0")])
            let first = try #require(try stream.next(timeout: 30))
            #expect(first.type == "snapshot", "\(first)")
            #expect(first.json?["state"] as? String == "animating")
            #expect(first.json?["preset"] as? String == "facebook")
            // Then the running animation n, whole.
            let rest = try stream.collect(timeout: 30) { $0.type == "settled" }
            #expect(frames(rest).compactMap(frameID).map(\.index) == Array(0...15))
            #expect(frames(rest).compactMap(frameID).allSatisfy { $0.animation == n })
        }
    }

    /// A reconnection that has nothing more to hear is answered 204, after which an EventSource
    /// stops reconnecting (WHATWG): a `once` stream whose client has its animation's last frame, and
    /// any stream whose session is gone. A first connection to a missing session is still 404.
    @Test func reconnectionsWithNothingLeftAre204() throws {
        let (server, c) = try connectedServer()
        defer { server.stop() }
        #expect(try c.put("s", #"{"clock": "client"}"#).status == 201)
        let shown = try c.show("s", #"{"time": 1}"#)
        let n = try #require(int(obj(shown.json?["animation"])?["id"]))
        // facebook show: 16 frames at 60 fps (0…15); the client clock keeps it running.
        let rows: [(path: String, lastEventID: String?, status: Int)] = [
            // once, the last frame seen (running or not): nothing is left.
            ("/sessions/s/frames?once=true&fps=60", "\(n):15", 204),
            // once, the last frame at another rate: 9 frames at 30 fps (0…8).
            ("/sessions/s/frames?once=true&fps=30", "\(n):8", 204),
            // once, frames still to come: the stream resumes.
            ("/sessions/s/frames?once=true&fps=60", "\(n):3", 200),
            // not once: a stream stays open for the animations to come.
            ("/sessions/s/frames?fps=60", "\(n):15", 200),
            // a session that is gone, reconnecting: stop.
            ("/sessions/gone/frames", "\(n):15", 204),
            ("/sessions/gone/frames", "junk", 204),
            // a first connection to a missing session: the error.
            ("/sessions/gone/frames", nil, 404),
        ]
        for row in rows {
            let stream = try SSEClient(
                port: server.port, path: row.path, headers: row.lastEventID.map { [("Last-Event-ID", $0)] } ?? [])
            #expect(stream.status == row.status, "\(row)")
        }
        // once, the animation over while the client was away: its `settled` with the last
        // frame's id, then the end; reconnecting with that id is then 204.
        #expect(try c.show("s", #"{"detent": "expanded", "time": 2}"#).status == 200)
        let late = try openStream(
            server.port, "/sessions/s/frames?once=true&fps=60", headers: [("Last-Event-ID", "\(n):3")])
        let events = try late.collectToEnd(timeout: 30)
        #expect(events.map(\.type) == ["settled"] && events.first?.id == "\(n):15", "\(events)")
        let again = try SSEClient(
            port: server.port, path: "/sessions/s/frames?once=true&fps=60",
            headers: [("Last-Event-ID", events.first?.id ?? "")])
        #expect(again.status == 204)
    }

    @Test func keepAliveCommentsOnAnIdleStream() throws {
        let (server, c) = try connectedServer { $0.keepAliveInterval = 0.2 }
        defer { server.stop() }
        #expect(try c.put("s").status == 201)
        let stream = try openStream(server.port, "/sessions/s/frames")
        let opened = Monotonic.now()
        var comments: [SSEEvent] = []
        for _ in 0..<2 {
            let e = try #require(try stream.next(timeout: 30))
            #expect(e.comments == ["keep-alive"], "\(e)")
            #expect(!e.isDispatched)
            comments.append(e)
        }
        // Not before the interval: the first after ~0.2 s, the second after ~0.4 s.
        #expect(comments[0].arrival - opened >= 0.1, "first keep-alive after \(comments[0].arrival - opened) s")
        #expect(comments[1].arrival - opened >= 0.3, "second keep-alive after \(comments[1].arrival - opened) s")
    }

    @Test func aStalledReaderDelaysNobody() throws {
        let (server, c) = try connectedServer { $0.streamBufferBytes = 4096 }
        defer { server.stop() }
        let port = server.port
        #expect(try c.put("s").status == 201)
        // Two readers that never read, with a small receive window: one instant at 240 fps (a burst
        // of about 10 KB per animation into a 4 KB buffer), one realtime.
        var stalled: [HTTPConnection] = []
        for query in ["fps=240&pace=instant", "fps=240"] {
            let conn = try HTTPConnection(port: port, receiveBuffer: 2048)
            try conn.sendRequest("GET", "/sessions/s/frames?\(query)")
            stalled.append(conn)
        }
        defer { for conn in stalled { conn.close() } }
        // A reader that keeps up, on the same session.
        let good = try openStream(port, "/sessions/s/frames?fps=60")
        // The stalled streams are registered once the session counts them.
        #expect(eventually { (server.responder.table.get("s")?.openStreams.load(ordering: .relaxed) ?? 0) >= 3 })

        for round in 0..<8 {
            let sent = Monotonic.now()
            let r = round % 2 == 0 ? try c.show("s") : try c.dismiss("s")
            #expect(r.status == 200, "\(r)")
            let events = try good.collect(timeout: 30) { $0.type == "settled" }
            let frameEvents = frames(events)
            #expect(frameEvents.first.flatMap { num($0.json?["index"]) } == 0, "round \(round)")
            #expect(frameEvents.last.flatMap { num($0.json?["index"]) } == 15, "round \(round)")
            for e in frameEvents {
                let k = num(e.json?["index"]) ?? 0
                #expect(e.arrival - sent >= k / 60 - 0.002, "round \(round) frame \(k)")
            }
            let total = (events.last?.arrival ?? .infinity) - sent
            #expect(events.last?.type == "settled" && total >= 0.25 - 0.002, "round \(round): \(total) s")
            // REST in between is answered (a stalled reader holding the session's lock or a thread
            // would hold these until the client's timeout).
            #expect(try c.get("/sessions/s").status == 200)
            #expect(try c.get("/healthz").status == 200)
        }
        // The burst overflowed the stalled instant reader's buffer: frames were dropped.
        #expect(
            try eventually(within: 30) {
                let text = try c.get("/metrics").text
                let line = text.split(separator: "\n").first { $0.hasPrefix("sheetd_frames_dropped_total") }
                return (line?.split(separator: " ").last.flatMap { Double($0) } ?? 0) > 0
            })
    }

    /// Query strings the stream refuses.
    static let badQueries: [(query: String, field: String)] = [
        ("fps=0", "fps"),  // fps is 1…240
        ("fps=241", "fps"),  // fps is 1…240
        ("fps=abc", "fps"),  // fps is an integer
        ("fps=29.97", "fps"),  // fps is an integer
        ("pace=fast", "pace"),  // pace is realtime or instant
        ("once=maybe", "once"),  // once is a boolean
        ("access_token=", "access_token"),  // a credential is 1…256 characters, access control on or off
        ("access_token=" + String(repeating: "k", count: 257), "access_token"),
        ("fsp=30", "fsp"),  // unknown parameters are refused, like unknown JSON fields
    ]

    /// Refused before a stream opens: the query's decoding, answered in process.
    @Test(arguments: badQueries)
    func badQueriesAre400(_ query: String, _ field: String) throws {
        let c = try InProcessService()
        #expect(try c.put("s").status == 201)
        let response = try c.get("/sessions/s/frames?\(query)")
        try #require(response.complete, "status \(response.status): a stream opened")
        let json = expectProblem(response, status: 400, code: nil)
        #expect(json["field"] as? String == field, "\(response.text)")
        // The session has no stream attached.
        #expect(c.responder.table.get("s")?.openStreams.load(ordering: .relaxed) == 0)
    }

    /// A first connection to a missing session: the problem, answered in process.
    @Test func framesOfAMissingSessionAre404() throws {
        let response = try InProcessService().get("/sessions/ghost/frames")
        try #require(response.complete, "status \(response.status): a stream opened")
        expectProblem(response, status: 404, code: "session-not-found")
    }
}
