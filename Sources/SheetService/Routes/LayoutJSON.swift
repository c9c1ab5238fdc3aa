import SheetPhysics

// The JSON of layouts: the layout a model was built for, its layout law, and the configuration a
// layout event leaves (what the store keeps).

extension ReplyJSON {
    /// `"geometry":{…}` and, where the preset takes them, `"keyboardInset":…`, `"contentHeight":…`.
    static func layoutMembers(_ model: SheetModel, into w: inout JSONWriter) {
        w.member("geometry")
        geometry(model.geometry, into: &w)
        if model.preset.has(.keyboard) { w.member("keyboardInset", model.layout.keyboardInset) }
        if model.preset.has(.contentFit) {
            w.member("contentHeight")
            if let h = model.layout.contentHeight { w.number(h) } else { w.null() }
        }
        // Only when on: every motion of the session jumps.
        if model.layout.reducedMotion { w.member("reducedMotion", true) }
    }

    /// `"detents":{…}` and, where detents may fit the content, `"unreachable":[…]`.
    static func detentMembers(_ model: SheetModel, into w: inout JSONWriter) {
        w.member("detents")
        detents(model, into: &w)
        if model.preset.has(.contentFit) {
            w.member("unreachable")
            w.beginArray()
            for name in model.unreachable { w.string(name) }
            w.endArray()
        }
    }

    /// The layout law (see `LayoutLaw`): a client evaluates it on its new layout to move the card
    /// on the frame the layout changes.
    static func layoutLaw(_ law: LayoutLaw, into w: inout JSONWriter) {
        w.beginObject()
        w.member("detents")
        w.beginArray()
        for rule in law.detents {
            w.beginObject()
            w.member("name", rule.name)
            w.member("kind", rule.kind.rawValue)
            w.member("value", rule.value)
            if rule.kind == .contentAnchor { w.member("offset", rule.offset) }
            w.endObject()
        }
        w.endArray()
        w.member("hideable", law.hideable)
        w.member("keyboard", law.keyboard.rawValue)
        w.member("keyboardDrag", law.keyboardDrag)
        w.member("motion", law.motion.name)
        w.member("edge", law.edge.rawValue)
        w.endObject()
    }

    /// The configuration a layout event leaves, as JSON members without braces: the preset, the
    /// layout and the options as sent (merged with the event's), and the clock. `POST /sessions`
    /// accepts it, which is how the store rebuilds the model.
    static func configurationMembers(_ model: SheetModel, clock: SessionClock, parent: String?) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.member("preset", model.preset.rawValue)
        layoutMembers(model, into: &w)
        w.member("options")
        w.option(.object(model.sentOptions))
        w.member("clock", clock.rawValue)
        if let parent { w.member("parent", parent) }
        w.endObject()
        return Array(w.bytes.dropFirst().dropLast())
    }
}
