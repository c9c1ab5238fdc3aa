// Many threads on one session and on many: answers stay consistent, sessions do not cross-talk.
// Answered in process: the responder called from 8 threads at once, as libmicrohttpd's threads
// call it (the subject is the sessions' locking, not the connections).

import Foundation
import PhysicsCheckValues
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    @Suite struct ConcurrencyTests {}
}

/// The facebook dimmer rule (docs/PHYSICS.md), default geometry.
func facebookAlpha(_ v: Double) -> Double {
    let h = 797.0
    if v <= h / 2 { return 0.7 }
    if v >= h { return 0 }
    return 0.7 * (1 - (v - h / 2) / (h / 2))
}

extension ServiceIntegration.ConcurrencyTests {
    /// 8 threads × 200 `changed` events on one session: every answer is 200 and consistent with
    /// its own translation, and the session ends at the last event applied.
    @Test func concurrentEventsOnOneSession() throws {
        let c = try InProcessService()
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
                let conn = c
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
        let all = results.value
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
        let c = try InProcessService()
        let failures = Locked<[String]>([])
        onThreads(8) { thread in
            do {
                let conn = c
                let ids = (0..<8).map { "t\(thread)-s\($0)" }
                for (k, id) in ids.enumerated() {
                    let preset = ["facebook", "twitter", "glide", "fluid"][k % 4]
                    let rest = CheckValues.restingDetent[preset]!
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
                    let expected = CheckValues.restingDetent[preset]!.constant + Double(thread * 8 + k) + 24 * 0.25
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
        let found = failures.value
        #expect(found.isEmpty, "\(found.prefix(10))")
        #expect(c.sessionCount == 64)
    }
}
