// The server's instant frame budget (`--instant-frame-rate`): the rule on its own, time a
// parameter; then over a real socket, streams beyond it still get every frame, in order, booked
// turns counted (issue 29: a client reading 400 instant streams had the server make frames for
// nothing else).

import Foundation
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    @Suite struct InstantFrameBudgetTests {}
}

extension ServiceIntegration.InstantFrameBudgetTests {
    struct Row: Sendable, CustomStringConvertible {
        let description: String
        let rate: Int
        /// Blocks asked for: (frames, server seconds).
        let asks: [(frames: Int, now: Double)]
        /// When each may be made.
        let times: [Double]
    }

    static let rows: [Row] = [
        // A full bucket (10 ms of the rate, 1,000 frames at 100,000/s) gives blocks at once.
        Row(
            description: "within the burst", rate: 100_000, asks: [(16, 0), (16, 0), (968, 0)],
            times: [0, 0, 0]),
        // Past the burst, each block is booked behind the last: 16 frames at 100,000/s are 0.16 ms.
        Row(
            description: "booked in turn", rate: 100_000, asks: [(1_000, 0), (16, 0), (16, 0)],
            times: [0, 0.000_16, 0.000_32]),
        // The bucket refills at the rate: 5 ms later, 500 frames are back.
        Row(
            description: "refilled by time", rate: 100_000, asks: [(1_000, 0), (500, 0.005), (1, 0.005)],
            times: [0, 0.005, 0.005 + 0.000_01]),
        // It never holds more than the burst, however long it was quiet.
        Row(
            description: "capped at the burst", rate: 100_000, asks: [(1_000, 0), (1_000, 60), (16, 60)],
            times: [0, 60, 60 + 0.000_16]),
        // The burst is at least one block, whatever the rate: 16 frames at 100/s come at once, the
        // next block 160 ms later.
        Row(
            description: "a block at the least", rate: 100, asks: [(16, 0), (16, 0)], times: [0, 0.16]),
        // A clock that goes back refills nothing and books from the latest time seen.
        Row(
            description: "clock going back", rate: 1_000, asks: [(16, 1), (16, 0.5)], times: [1, 1 + 0.016]),
    ]

    @Test(arguments: rows)
    func budget(_ row: Row) {
        let budget = InstantFrameBudget(framesPerSecond: row.rate, block: FrameStream.refillFrames)
        let times = row.asks.map { budget.take($0.frames, now: $0.now) }
        for (time, expected) in zip(times, row.times) {
            #expect(abs(time - expected) < 1e-9, "\(times) against \(row.times)")
        }
    }

    /// Two instant streams of a transition at 240 fps (362 frames each) on a server allowed 400
    /// instant frames a second: most of their blocks wait for a booked turn, and each still gets
    /// every frame, in order, then `settled` and the end of its body.
    @Test func streamsBeyondTheBudgetGetEveryFrameInOrder() throws {
        let (server, c) = try connectedServer { $0.instantFrameRate = 400 }
        defer { server.stop() }
        #expect(try c.put("s", #"{"preset":"transition","options":{"duration":1}}"#).status == 201)
        let streams = try (0..<2).map { _ in
            try SSEClient(port: server.port, path: "/sessions/s/frames?fps=240&pace=instant&once=true")
        }
        #expect(streams.allSatisfy { $0.status == 200 })
        let shown = try c.show("s")
        let n = try #require(int(obj(shown.json?["animation"])?["id"]))
        for stream in streams {
            let events = try stream.collectToEnd(timeout: 30)
            let ids = events.filter { $0.type == "frame" }.map(\.id)
            // Every frame once, in order, and `settled` names the last (362 of them: the transition's
            // show lasts 1.5 s with its 1 s fade).
            #expect(ids.count > 300 && ids == (0..<ids.count).map { "\(n):\($0)" }, "\(ids.count) frames")
            #expect(events.last?.type == "settled" && events.last?.id == "\(n):\(ids.count - 1)")
            #expect(stream.ended && stream.endedCleanly)
        }
        let text = try c.get("/metrics").text
        let booked = text.split(separator: "\n").first { $0.hasPrefix("sheetd_instant_blocks_booked_total") }
        // 722 frames from the budget (each stream's first is the event's) against a burst of 16: 44
        // blocks booked when every ask finds the bucket spent; each pause of the machine of 40 ms
        // or more refills one block at most, so 20 leaves room for 24.
        #expect((booked?.split(separator: " ").last.flatMap { Double($0) } ?? 0) >= 20, "\(booked ?? "none")")
    }
}
