import SheetPhysics

// The JSON the service writes, member by member in the order openapi.yaml lists them, straight
// into a byte buffer (no Codable, no intermediate tree): the replies have fixed schemas, and this
// is the hot path of every request.

extension JSONWriter {
    /// An option value as JSON.
    mutating func option(_ value: OptionValue) {
        switch value {
        case .null: null()
        case let .bool(b): bool(b)
        case let .number(x): number(x)
        case let .string(s): string(s)
        case let .array(items):
            beginArray()
            for item in items { option(item) }
            endArray()
        case let .object(members):
            beginObject()
            for (k, v) in members {
                key(k)
                option(v)
            }
            endObject()
        }
    }
}

/// Renders the service's replies.
enum ReplyJSON {
    /// `"preset":…,"constraint":…,"geometry":{…},"options":{…},"clock":…,"detents":{…}`: the
    /// members of a snapshot that never change for a layout, before its laws (`lawMembers`, kept
    /// apart and written after them: a copy of the laws in each would double a profile's largest
    /// part, ≈ 6 KB for 16 long detent names).
    static func staticMembers(model: SheetModel, clock: SessionClock) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.member("preset", model.preset.rawValue)
        w.member("constraint", model.constraint.rawValue)
        layoutMembers(model, into: &w)
        w.member("options")
        w.option(.object(model.effectiveOptions))
        w.member("clock", clock.rawValue)
        detentMembers(model, into: &w)
        w.endObject()
        // Drop the braces: the members go inside each snapshot's own object.
        return Array(w.bytes.dropFirst().dropLast())
    }

    /// `"revision":…,"dragLaw":{…},"releaseLaw":{…}` (and fluid's `"layoutLaw":{…}`): the
    /// session's laws, fixed for its layout, rendered once (every snapshot, every answer that
    /// starts a drag segment and every answer to a layout event carries them, with the layout
    /// revision they belong to).
    static func lawMembers(_ model: SheetModel, revision: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.member("revision", integer: revision)
        w.member("dragLaw")
        dragLaw(model.dragLaw, into: &w)
        w.member("releaseLaw")
        releaseLaw(model.releaseLaw, into: &w)
        if let law = model.layoutLaw {
            w.member("layoutLaw")
            layoutLaw(law, into: &w)
        }
        w.member("modality")
        w.beginObject()
        w.member("interactiveFrom", model.modality.interactiveFrom)
        w.endObject()
        w.member("recedeLaw")
        recedeLaw(model.recede, into: &w)
        w.endObject()
        return Array(w.bytes.dropFirst().dropLast())
    }

    /// The drag law (see `DragLaw`): a client evaluates it to draw the card on the pointer event
    /// that moved it, and gets exactly the constant, alpha and progress a `changed` answers.
    static func dragLaw(_ law: DragLaw, into w: inout JSONWriter) {
        w.beginObject()
        w.member("lower")
        if let l = law.lower { w.number(l) } else { w.null() }
        w.member("upper")
        if let u = law.upper { w.number(u) } else { w.null() }
        w.member("rubberBand")
        if let band = law.rubberBand {
            w.beginObject()
            w.member("coefficient", band.coefficient)
            w.member("dimension", band.dimension)
            w.endObject()
        } else {
            w.null()
        }
        w.member("dimmer")
        w.beginObject()
        w.member("full", law.dimmer.full)
        w.member("fullAt", law.dimmer.fullAt)
        w.member("clearAt", law.dimmer.clearAt)
        w.endObject()
        w.member("progress")
        w.beginObject()
        w.member("low", law.progress.low)
        w.member("top", law.progress.top)
        w.endObject()
        w.member("finishThreshold")
        if let t = law.finishThreshold { w.number(t) } else { w.null() }
        // translation = sign · the pointer's delta along axis (docs/PHYSICS.md, "Every edge").
        w.member("edge", law.edge.rawValue)
        w.member("axis", law.edge.axis.rawValue)
        w.member("sign", law.edge.sign)
        w.endObject()
    }

    /// The recede law (see `RecedeLaw`): a client draws the sheet beneath (and, with `backdrop`,
    /// the page behind a root sheet) from the card's constant.
    static func recedeLaw(_ law: RecedeLaw, into w: inout JSONWriter) {
        w.beginObject()
        w.member("scale", law.scale)
        w.member("lift", law.lift)
        w.member("cornerRadius", law.cornerRadius)
        w.member("alpha", law.alpha)
        w.member("backdrop", law.backdrop)
        w.endObject()
    }

    /// A transform of what lies beneath a card (`SheetTransform`).
    static func transform(_ t: SheetTransform, into w: inout JSONWriter) {
        w.beginObject()
        w.member("scale", t.scale)
        w.member("lift", t.lift)
        w.member("cornerRadius", t.cornerRadius)
        w.member("alpha", t.alpha)
        w.endObject()
    }

    /// `"parentTransform"` or `"backdropTransform"`: how the card at `constant` draws what lies
    /// beneath it, where anything does.
    @inline(__always)
    static func beneath(_ profile: SessionProfile, at constant: Double, into w: inout JSONWriter) {
        guard let target = profile.recedes else { return }
        switch target {
        case .parent: w.member("parentTransform")
        case .backdrop: w.member("backdropTransform")
        }
        transform(profile.model.recede.transform(at: constant), into: &w)
    }

    /// The release law (see `ReleaseLaw`): a client evaluates it at the release to start the
    /// card's animation at once, and gets the snap and the animation `ended` answers.
    static func releaseLaw(_ law: ReleaseLaw, into w: inout JSONWriter) {
        w.beginObject()
        w.member("velocityWindow", law.velocityWindow)
        w.member("projection")
        if let p = law.projection {
            w.beginObject()
            w.member("decelerationRate", p.decelerationRate)
            w.endObject()
        } else {
            w.null()
        }
        w.member("rules")
        w.beginArray()
        for rule in law.rules {
            w.beginObject()
            w.member("when")
            w.beginArray()
            for condition in rule.conditions { releaseCondition(condition, into: &w) }
            w.endArray()
            switch rule.target {
            case let .detent(d):
                w.member("detent", d.name)
            case let .nearest(candidates, toProjection, clamp):
                w.member("nearest")
                w.beginObject()
                w.member("candidates")
                w.beginArray()
                for d in candidates { w.string(d.name) }
                w.endArray()
                w.member("of", toProjection ? "projection" : "constant")
                w.member("clampToNeighbours", clamp)
                w.endObject()
            }
            w.endObject()
        }
        w.endArray()
        motionMembers(law.session, into: &w)
        w.member("alphaRule", law.alphaRule.rawValue)
        w.member("reducedMotion", law.reducedMotion)
        // What a request that asks the other reduced-motion setting uses (`reducedMotion` on it).
        w.member("requestOverride")
        w.beginObject()
        w.member("reducedMotion", law.requestOverride.reducedMotion)
        motionMembers(law.requestOverride, into: &w)
        w.endObject()
        w.endObject()
    }

    /// `"motions":[…],"handOff":…` of one reduced-motion variant of a release law.
    private static func motionMembers(_ variant: MotionVariant, into w: inout JSONWriter) {
        w.member("motions")
        w.beginArray()
        for motion in variant.motions {
            w.beginObject()
            w.member("when")
            w.beginArray()
            for condition in motion.conditions {
                w.beginObject()
                switch condition {
                case .toHidden: w.member("toHidden", true)
                case let .releasedAbove(limit): w.member("releasedAbove", limit)
                }
                w.endObject()
            }
            w.endArray()
            w.member("curve")
            curveLaw(motion.curve, into: &w)
            w.endObject()
        }
        w.endArray()
        w.member("handOff")
        if let h = variant.handOff {
            w.beginObject()
            w.member("detent", h.name)
            w.endObject()
        } else {
            w.null()
        }
    }

    private static func releaseCondition(_ condition: ReleaseCondition, into w: inout JSONWriter) {
        w.beginObject()
        switch condition {
        case let .origin(name):
            w.member("origin", name)
        case let .compare(quantity, comparison, value):
            switch quantity {
            case .constant: w.member("quantity", "constant")
            case .truncatedConstant: w.member("quantity", "truncatedConstant")
            case .velocity: w.member("quantity", "velocity")
            case let .velocityPerDistance(to):
                w.member("quantity", "velocityPerDistance")
                w.member("to", to)
            case let .fraction(from, toward):
                w.member("quantity", "fraction")
                w.member("from", from)
                w.member("toward", toward)
            case let .projectedFraction(from, toward):
                w.member("quantity", "projectedFraction")
                w.member("from", from)
                w.member("toward", toward)
            }
            w.member("is", comparison.rawValue)
            w.member("value", value)
        }
        w.endObject()
    }

    private static func curveLaw(_ curve: CurveLaw, into w: inout JSONWriter) {
        w.beginObject()
        switch curve {
        case let .timed(c, duration):
            timingCurve(c, into: &w)
            w.member("duration", duration)
        case let .timedRemaining(c, whole, span, speed):
            timingCurve(c, into: &w)
            w.member("remaining")
            w.beginObject()
            w.member("whole", whole)
            w.member("span", span)
            w.member("speed", speed)
            w.member("max", Animation.maxDuration)
            w.endObject()
        case let .durationSpring(zeta, initial, duration):
            w.member("name", "durationSpring")
            w.member("dampingRatio", zeta)
            w.member("initialVelocity")
            if let initial { w.number(initial) } else { w.null() }
            w.member("duration", duration)
            w.member("omega", curve.omega ?? 0)
        case let .spring(response, zeta):
            w.member("name", "spring")
            w.member("response", response)
            w.member("dampingRatio", zeta)
            w.member("omega", curve.omega ?? 0)
            w.member("settle")
            w.beginObject()
            w.member("distance", Animation.settleDistance)
            w.member("speed", Animation.settleSpeed)
            w.member("max", Animation.maxDuration)
            w.endObject()
        }
        w.endObject()
    }

    private static func timingCurve(_ c: TimingCurve, into w: inout JSONWriter) {
        w.member("name", c.name.rawValue)
        w.member("controlPoints")
        w.beginArray()
        for x in [c.x1, c.y1, c.x2, c.y2] { w.number(x) }
        w.endArray()
    }

    /// A drag's current segment: with the drag law, where every later `changed` puts the card.
    static func dragSegment(_ s: DragSegment, into w: inout JSONWriter) {
        w.beginObject()
        w.member("start", s.start)
        w.member("base", s.base)
        w.member("origin", s.origin.name)
        w.member("contentCanScroll", s.contentCanScroll)
        w.member("contentFirst", s.contentFirst)
        w.member("finish")
        if let f = s.finish {
            w.beginObject()
            w.member("from", f.from)
            w.member("toward", f.toward)
            w.member("threshold", f.threshold)
            w.member("detent", f.detent.name)
            w.endObject()
        } else {
            w.null()
        }
        w.endObject()
    }

    static func geometry(_ g: Geometry, into w: inout JSONWriter) {
        w.beginObject()
        w.member("height", g.height)
        w.member("safeAreaTop", g.safeAreaTop)
        w.member("safeAreaBottom", g.safeAreaBottom)
        // The side members where given (a geometry without them answers as it always did).
        if let width = g.width { w.member("width", width) }
        if g.width != nil || g.safeAreaLeft != 0 { w.member("safeAreaLeft", g.safeAreaLeft) }
        if g.width != nil || g.safeAreaRight != 0 { w.member("safeAreaRight", g.safeAreaRight) }
        w.endObject()
    }

    static func detents(_ model: SheetModel, into w: inout JSONWriter) {
        w.beginObject()
        for d in model.detents {
            w.key(d.name)
            w.number(d.constant)
        }
        w.endObject()
    }

    /// A session snapshot (GET /sessions/{id}, creation, `settled` and `interrupted` events).
    static func snapshot(
        id: String?, profile: SessionProfile, _ s: SheetSnapshot, drag: DragSegment? = nil, token: String? = nil,
        coveredBy: (id: String, transform: SheetTransform)? = nil, into w: inout JSONWriter
    ) {
        w.beginObject()
        if let id { w.member("id", id) }
        // Only in the answer that creates a session with --session-tokens on.
        if let token { w.member("token", token) }
        w.rawMembers(profile.staticMembers)
        w.rawMembers(profile.lawMembers)
        card(s, profile, into: &w)
        if let parent = profile.parent { w.member("parent", parent) }
        if let coveredBy {
            // The open child on top of it, and how its recede law draws this sheet now.
            w.member("coveredBy", coveredBy.id)
            w.member("transform")
            transform(coveredBy.transform, into: &w)
        }
        if let drag {
            w.member("drag")
            dragSegment(drag, into: &w)
        }
        w.member("animation")
        if let a = s.animation { animation(a, into: &w) } else { w.null() }
        w.member("time", s.time)
        w.endObject()
    }

    /// `"state"` and `"detent"` of a card being dragged, as `card` writes them member by member.
    static let draggingMembers: StaticString = #""state":"dragging","detent":null"#

    /// `"snap"` and `"animation"` of a result that started nothing, as `result` writes them member by
    /// member.
    static let nothingStartedMembers: StaticString = #""snap":null,"animation":null"#

    /// Where the card is: the members a snapshot and a result share, in openapi.yaml's order.
    @inline(__always)
    static func card(_ s: SheetSnapshot, _ profile: SessionProfile, into w: inout JSONWriter) {
        if s.state == .dragging && s.detent == nil {
            // A card under the finger (every `changed` answer): one piece.
            w.rawMembers(draggingMembers)
        } else {
            w.member("state", s.state.rawValue)
            w.member("detent", s.detent?.name)
        }
        w.member("constant", s.constant)
        w.member("dimmerAlpha", s.dimmerAlpha)
        w.member("progress", s.progress)
        w.member("backgroundInteractive", profile.model.modality.backgroundInteractive(at: s.constant))
        beneath(profile, at: s.constant, into: &w)
    }

    /// The result of a pan, show or dismiss. A batch's answer is its last event's result with
    /// `batch` (what the events before it started) and, when asked for, `frames`.
    static func result(
        _ o: SheetOutcome, phase: String?, profile: SessionProfile, batch: BatchSummary? = nil,
        frames: InlineFrames? = nil, cascade: [String]? = nil, into w: inout JSONWriter
    ) {
        let s = o.snapshot
        w.beginObject()
        if let phase { w.member("phase", phase) }
        card(s, profile, into: &w)
        if case let .settle(a, snap) = o.action {
            self.snap(snap, reducedMotion: o.reducedMotion, into: &w)
            w.member("animation")
            animation(a, into: &w)
        } else {
            // Nothing started (every `changed` answer): one piece.
            w.rawMembers(nothingStartedMembers)
        }
        if let v = o.velocity { w.member("velocity", v) }
        if let source = o.velocitySource { w.member("velocitySource", source.rawValue) }
        if let consumer = o.consumer { w.member("consumer", consumer.rawValue) }
        if let handed = o.scrollFling {
            w.member("scrollFling")
            w.beginObject()
            w.member("time", handed.time)
            w.member("velocity", handed.velocity)
            w.endObject()
        }
        w.member("time", s.time)
        if let step = o.step { self.step(step, into: &w) }
        let relaid = batch?.relaid ?? o.relaid
        if relaid {
            // A layout event's answer: the layout, the detents and the laws of the new revision.
            let model = profile.model
            layoutMembers(model, into: &w)
            detentMembers(model, into: &w)
        }
        if let drag = batch?.drag ?? o.drag {
            w.member("drag")
            dragSegment(drag, into: &w)
            w.rawMembers(profile.lawMembers)
        } else if relaid {
            w.rawMembers(profile.lawMembers)
        }
        if let batch {
            w.member("batch")
            w.beginObject()
            w.member("count", integer: batch.count)
            w.member("settles")
            w.beginArray()
            for settle in batch.settles {
                w.beginObject()
                w.member("index", integer: settle.index)
                w.member("phase", settle.phase)
                snap(settle.snap, reducedMotion: settle.reducedMotion, into: &w)
                w.member("animation")
                animation(settle.animation, into: &w)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        if let cascade {
            // The sheets a cascading dismiss closed with this one, top-most first.
            w.member("cascade")
            w.beginArray()
            for id in cascade { w.string(id) }
            w.endArray()
        }
        if let frames {
            w.member("frames")
            w.beginArray()
            if let a = frames.animation {
                for (k, f) in a.frames(fps: frames.fps).enumerated() {
                    frame(animation: a.id, index: k, f, profile: profile, into: &w)
                }
            }
            w.endArray()
        }
        w.endObject()
    }

    /// A step's `announcement` (what a screen reader says, politely) and `value` (what it reads as
    /// the sheet's accessibility value): "Expanded to full, 1 of 3" and "full, 1 of 3".
    static func step(_ s: StepFacts, into w: inout JSONWriter) {
        let value = s.position == 0 ? "hidden" : "\(s.detent.name), \(s.position) of \(s.count)"
        let announcement: String
        if !s.moved {
            announcement = s.position == 0 ? "Already hidden" : "Already at \(value)"
        } else if s.position == 0 {
            announcement = "Dismissed"
        } else if s.presented {
            announcement = "Shown at \(value)"
        } else {
            announcement = "\(s.expand ? "Expanded" : "Collapsed") to \(value)"
        }
        w.member("announcement", announcement)
        w.member("value", value)
    }

    /// `"snap":{…}`; `reducedMotion`: whether the motion to it is reduced motion's jump (the
    /// request's own setting, else the session's).
    static func snap(_ snap: Snap, reducedMotion: Bool?, into w: inout JSONWriter) {
        w.member("snap")
        w.beginObject()
        w.member("detent", snap.detent.name)
        w.member("constant", snap.detent.constant)
        w.member("dismiss", snap.detent.isHidden)
        w.member("reason", snap.reason)
        if let p = snap.projected { w.member("projected", p) }
        if let r = reducedMotion { w.member("reducedMotion", r) }
        w.endObject()
    }

    /// An animation, with what a client needs to run it locally.
    static func animation(_ a: Animation, into w: inout JSONWriter) {
        w.beginObject()
        w.member("id", integer: a.id)
        w.member("curve", a.curve.name)
        w.member("duration", a.duration)
        w.member("from", a.from)
        w.member("to", a.to)
        w.member("fromAlpha", a.fromAlpha)
        w.member("toAlpha", a.toAlpha)
        w.member("alphaRule", a.alphaRule.rawValue)
        w.member("startTime", a.startTime)
        w.member("detent", a.detent.name)
        w.member("dismiss", a.dismiss)
        switch a.curve {
        case .timed: break
        case let .durationSpring(zeta, v):
            w.member("dampingRatio", zeta)
            w.member("initialVelocity", v)
        case let .spring(response, zeta, velocity):
            let omega = 2 * Double.pi / response
            w.member("response", response)
            w.member("dampingRatio", zeta)
            w.member("velocity", velocity)
            w.member("stiffness", omega * omega)
            w.member("damping", 2 * zeta * omega)
            w.member("mass", 1)
        }
        w.endObject()
    }

    /// One frame of an animation (the data of an SSE `frame` event).
    static func frame(
        animation: Int, index: Int, _ f: AnimationSample, profile: SessionProfile, into w: inout JSONWriter
    ) {
        w.beginObject()
        w.member("animation", integer: animation)
        w.member("index", integer: index)
        w.member("t", f.t)
        w.member("constant", f.constant)
        w.member("dimmerAlpha", f.dimmerAlpha)
        w.member("progress", f.progress)
        w.member("velocity", f.velocity)
        w.member("backgroundInteractive", f.backgroundInteractive)
        beneath(profile, at: f.constant, into: &w)
        w.endObject()
    }

    /// An RFC 9457 problem document.
    static func problem(_ p: Problem) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.member("type", "about:blank")
        w.member("title", p.title)
        w.member("status", Double(p.status))
        w.member("detail", p.detail)
        w.member("code", p.code)
        if let field = p.field { w.member("field", field) }
        if let lastSeq = p.lastSeq { w.member("lastSeq", integer: lastSeq) }
        w.endObject()
        return w.takeBytes()
    }

    /// GET /presets: the catalog. Every preset with its summary, constraint, capabilities, initial
    /// detent (null: it starts hidden), options and its detents on the standard geometry.
    static func presets() -> [UInt8] {
        var w = JSONWriter(capacity: 8192)
        w.beginObject()
        w.member("presets")
        w.beginArray()
        for preset in PresetName.allCases {
            // The defaults always resolve; a failure here is a bug in the catalog, not input.
            guard let model = try? SheetModel(preset: preset) else { continue }
            w.beginObject()
            w.member("name", preset.rawValue)
            w.member("summary", preset.summary)
            w.member("constraint", preset.constraint.rawValue)
            w.member("capabilities")
            w.beginArray()
            for capability in preset.capabilities { w.string(capability.rawValue) }
            w.endArray()
            w.member("initialDetent")
            if let name = preset.initialDetent { w.string(name) } else { w.null() }
            w.member("detents")
            detents(model, into: &w)
            w.member("showDefault", model.showDefault.name)
            w.member("dismissTarget", model.dismissTarget.name)
            w.member("options")
            w.beginObject()
            for info in preset.optionCatalog {
                w.key(info.name)
                w.beginObject()
                w.member("type", info.type)
                w.member("default")
                w.option(info.defaultValue)
                w.member("description", info.summary)
                w.endObject()
            }
            w.endObject()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.takeBytes()
    }
}
