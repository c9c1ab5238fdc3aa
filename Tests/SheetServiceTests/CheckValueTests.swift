import Foundation
import PhysicsCheckValues
import SheetdTesting
import Testing

@testable import SheetService

extension ServiceIntegration {
    /// The physics check values (PhysicsCheckValues, the same rows SheetPhysicsTests replays on the
    /// engine) through the service: sessions and /simulate answer them. Answered in process.
    @Suite struct CheckValueTests {
        /// Creates session `id` of `preset` at its check-table resting detent and drags it to
        /// `constant`: the answer to the `changed` event.
        private func dragFromRest(_ c: some HTTPClient, _ id: String, _ preset: String, to constant: Double) throws
            -> Response
        {
            let rest = try #require(CheckValues.restingDetent[preset])
            #expect(try c.put(id, #"{"preset": "\#(preset)", "initialDetent": "\#(rest.name)"}"#).status == 201)
            #expect(try c.pan(id, #"{"phase": "began"}"#).status == 200)
            return try c.pan(id, #"{"phase": "changed", "translation": \#(constant - rest.constant)}"#)
        }

        @Test(arguments: CheckValues.releases)
        func releaseDecisions(_ row: ReleaseCheck) throws {
            let c = try InProcessService()
            let moved = try dragFromRest(c, "r", row.preset, to: row.constant)
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

        @Test(arguments: CheckValues.dimmer)
        func dimmerWhileDragging(_ row: DimmerCheck) throws {
            let c = try InProcessService()
            let r = try dragFromRest(c, "d", row.preset, to: row.constant)
            #expect(r.status == 200, "\(r)")
            #expect(abs((num(r.json?["dimmerAlpha"]) ?? .nan) - row.alpha) <= 1e-4, "\(r.text)")
        }

        @Test(arguments: CheckValues.dragLimits)
        func dragLimits(_ row: DragLimitCheck) throws {
            let c = try InProcessService()
            let put = try c.put("l", #"{"preset": "\#(row.preset)", "initialDetent": "\#(row.startDetent)"}"#)
            #expect(num(put.json?["constant"]) == row.start, "\(put.text)")
            #expect(try c.pan("l", #"{"phase": "began"}"#).status == 200)
            let r = try c.pan("l", #"{"phase": "changed", "translation": \#(row.translation)}"#)
            #expect(abs((num(r.json?["constant"]) ?? .nan) - row.constant) < 0.01, "\(r.text)")
        }

        @Test(arguments: CheckValues.layouts)
        func layoutChanges(_ row: LayoutCheck) throws {
            let c = try InProcessService()
            let put = try c.put("k", row.configuration)
            #expect(put.status == 201, "\(put.text)")
            var last = put
            for i in row.steps.indices {
                last = try c.pan("k", row.event(i))
                #expect(last.status == 200, "\(last.text)")
                #expect(last.json?["phase"] as? String == "layout")
                #expect(num(last.json?["revision"]) == Double(i + 1), "\(last.text)")
            }
            let detents = try #require(obj(last.json?["detents"]), "\(last.text)")
            #expect(detents.count == row.detents.count, "\(last.text)")
            for (name, constant) in row.detents {
                #expect(abs((detents[name].flatMap(num) ?? .nan) - constant) < 0.01, "\(name): \(last.text)")
            }
            #expect(last.json?["unreachable"] as? [String] == row.unreachable, "\(last.text)")
            let now = try c.get("/sessions/k")
            #expect(now.json?["detent"] as? String == row.rest.0, "\(now.text)")
            #expect(now.json?["state"] as? String == "resting", "\(now.text)")
            #expect(abs((num(now.json?["constant"]) ?? .nan) - row.rest.1) < 0.01, "\(now.text)")
        }

        @Test(arguments: CheckValues.scrolls)
        func momentumAcrossTheBoundary(_ row: ScrollCheck) throws {
            let c = try InProcessService()
            #expect(try c.put("m", row.configuration).status == 201)
            let r: Response
            if row.fling {
                r = try c.pan("m", #"{"phase": "fling", "velocity": \#(row.velocity), "time": 1}"#)
            } else {
                #expect(try c.pan("m", #"{"phase": "began", "time": 1}"#).status == 200)
                r = try c.pan("m", #"{"phase": "ended", "velocity": \#(row.velocity), "time": 1}"#)
            }
            #expect(r.status == 200, "\(r.text)")
            #expect(obj(r.json?["snap"])?["detent"] as? String == row.target, "\(r.text)")
            let handed = obj(r.json?["scrollFling"])
            if let (after, velocity) = row.handOff {
                #expect(abs((handed?["time"].flatMap(num) ?? .nan) - 1 - after) < 1e-6, "\(r.text)")
                #expect(abs((handed?["velocity"].flatMap(num) ?? .nan) - velocity) < 1e-4, "\(r.text)")
            } else {
                #expect(handed == nil, "\(r.text)")
            }
        }

        /// "Stacks": the parent's `transform` and the child's `parentTransform`, exactly the table's.
        @Test(arguments: CheckValues.stacks)
        func stackedTransforms(_ row: StackCheck) throws {
            let c = try InProcessService()
            #expect(try c.put("p", #"{"preset": "fluid", "initialDetent": "tip"}"#).status == 201)
            let child = try c.put("c", row.configuration(parent: "p"))
            #expect(child.status == 201, "\(child.text)")
            let parent = try JSONReader.parse(try c.get("/sessions/p").body)
            let own = try JSONReader.parse(child.body)
            for t in [parent["transform"], own["parentTransform"]] {
                let values = ["scale", "lift", "cornerRadius", "alpha"].compactMap { t?[$0]?.double }
                #expect(values == row.transform, "\(row.rule): \(child.text)")
            }
        }

        @Test(arguments: CheckValues.shapedReleases)
        func shapedReleases(_ row: ShapedReleaseCheck) throws {
            let c = try InProcessService()
            #expect(try c.put("s", row.configuration).status == 201)
            #expect(try c.pan("s", #"{"phase": "began", "time": 1}"#).status == 200)
            let r = try c.pan("s", #"{"phase": "ended", "velocity": \#(row.velocity), "time": 1}"#)
            #expect(obj(r.json?["snap"])?["detent"] as? String == row.target, "\(r.text)")
        }

        @Test(arguments: CheckValues.showFrames)
        func showFramesAt30FPSThroughSimulate(_ row: ShowFramesCheck) throws {
            let c = try InProcessService()
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
            let check = CheckValues.fluidSpring
            let rest = try #require(CheckValues.restingDetent[check.preset])
            let translation = check.from - rest.constant
            let c = try InProcessService()
            // Through a session: release from `from` with `velocity`.
            let config = #"{"preset": "\#(check.preset)", "initialDetent": "\#(check.startDetent)"}"#
            #expect(try c.put("f", config).status == 201)
            #expect(try c.pan("f", #"{"phase": "began"}"#).status == 200)
            let moved = try c.pan("f", #"{"phase": "changed", "translation": \#(translation)}"#)
            #expect(num(moved.json?["constant"]) == check.from)
            let ended = try c.pan("f", #"{"phase": "ended", "velocity": \#(check.velocity)}"#)
            let animation = try #require(obj(ended.json?["animation"]), "\(ended.text)")
            #expect(animation["curve"] as? String == "spring")
            #expect(animation["detent"] as? String == check.detent)
            #expect(num(animation["from"]) == check.from)
            #expect(num(animation["to"]) == check.to)
            #expect(abs((num(animation["duration"]) ?? .nan) - check.duration) < 1e-9, "\(animation)")
            #expect(num(animation["velocity"]) == check.velocity)

            // Through /simulate at 20 fps: the samples are frames (t = k / 20).
            let sim = try c.request(
                "POST", "/simulate",
                json: #"""
                    {"config": \#(config), "fps": 20, "events": [
                      {"phase": "began", "time": 0},
                      {"phase": "changed", "translation": \#(translation), "time": 0.01},
                      {"phase": "ended", "velocity": \#(check.velocity), "time": 0.02}]}
                    """#)
            #expect(sim.status == 200, "\(sim)")
            #expect(abs((num(obj(sim.json?["animation"])?["duration"]) ?? .nan) - check.duration) < 1e-9)
            let frames = try #require(sim.json?["frames"] as? [[String: Any]])
            #expect(frames.count == Int((check.duration * 20).rounded(.up)) + 1)
            for (elapsed, constant) in check.samples {
                let k = Int((elapsed * 20).rounded())
                guard k < frames.count else {
                    Issue.record("no frame \(k)")
                    continue
                }
                #expect(abs((num(frames[k]["constant"]) ?? .nan) - constant) <= 0.01, "frame \(k): \(frames[k])")
            }
            #expect(frames.last.flatMap { num($0["constant"]) } == check.to)
        }

        @Test(arguments: CheckValues.edges)
        func everyEdge(_ row: EdgeCheck) throws {
            let c = try InProcessService()
            let put = try c.put("e", row.configuration)
            #expect(put.status == 201, "\(put.text)")
            let detents = try #require(obj(put.json?["detents"]), "\(put.text)")
            #expect(detents.count == row.detents.count, "\(put.text)")
            for (name, constant) in row.detents {
                #expect(abs((detents[name].flatMap(num) ?? .nan) - constant) < 0.01, "\(name): \(put.text)")
            }
            let law = try #require(obj(put.json?["dragLaw"]), "\(put.text)")
            #expect(law["edge"] as? String == row.edge && law["axis"] as? String == row.axis)
            #expect(num(law["sign"]) == row.sign)
            #expect(obj(put.json?["layoutLaw"])?["edge"] as? String == row.edge)
            #expect(try c.pan("e", #"{"phase": "began"}"#).status == 200)
            let moved = try c.pan("e", #"{"phase": "changed", "translation": \#(row.translation)}"#)
            #expect(abs((num(moved.json?["constant"]) ?? .nan) - row.constant) < 0.01, "\(moved.text)")
            let ended = try c.pan("e", #"{"phase": "ended", "velocity": \#(row.velocity)}"#)
            let snap = try #require(obj(ended.json?["snap"]), "\(ended.text)")
            #expect(snap["detent"] as? String == row.snap, "\(ended.text)")
            #expect(abs((num(snap["constant"]) ?? .nan) - row.snapConstant) < 0.01, "\(ended.text)")
        }

        @Test func velocityIsEstimatedFromTheClientClock() throws {
            let c = try InProcessService()
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
}
