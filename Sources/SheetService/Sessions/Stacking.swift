import MicroHTTP
import SheetPhysics

/// Stacks of sheets (`StackRule`): a child names its parent at creation; while it is open the
/// parent is covered, and the parent is drawn by the child's `RecedeLaw`.
extension SheetResponder {
    /// The parent a new configuration names, checked: it exists (here or in the store), shares
    /// the child's clock, is opened by the request's credential when sessions have tokens, is not
    /// the child itself or above it in a cycle, leaves the stack at most `StackRule.maxDepth` deep,
    /// and carries no other open child. nil: the configuration names none.
    func stackParent(_ profile: SessionProfile, for id: String?, _ request: HTTPRequest) throws(Problem)
        -> SessionBox?
    {
        guard let parentID = profile.parent else { return nil }
        if parentID == id { throw Self.stackProblem("parent-cycle", "a session cannot be stacked on itself") }
        let parent: SessionBox
        do {
            parent = try session(parentID)
        } catch  where error.status == 404 {
            throw Self.stackProblem(
                "parent-not-found",
                "no session \"\(parentID)\" to stack on here: create the parent first (a stack lives on one instance: docs/HTTP.md, \"Stacks\")"
            )
        }
        // A stranger must not stack a sheet on someone else's session: that would cover it.
        if configuration.sessionTokens, parent.token != nil || apiKey != nil, !opens(parent, request) {
            throw Problem.unauthorized(
                "stacking on session \(parentID) needs its token (the stack shares it): send Authorization: Bearer <the parent's token>",
                invalid: Self.bearer(request, route: .unmatched) != nil)
        }
        guard parent.clock == profile.clock else {
            throw Self.stackProblem(
                "parent-clock",
                "session \(parentID) runs on the \(parent.clock.rawValue) clock: a stack's sheets share one clock (send \"clock\": \"\(parent.clock.rawValue)\")"
            )
        }
        var depth = 2
        var above = parent.parent
        while let next = above {
            if next == id {
                throw Self.stackProblem(
                    "parent-cycle", "session \(parentID) is stacked on \(next): parents cannot form a cycle")
            }
            depth += 1
            if depth > StackRule.maxDepth {
                throw Self.stackProblem(
                    "stack-depth",
                    "a stack holds at most \(StackRule.maxDepth) sheets; session \(parentID) is deep in one already")
            }
            above = table.get(next)?.parent
        }
        if let (child, _, _) = coveringChild(of: parent, at: nil), child.id != id {
            throw Self.stackProblem(
                "parent-covered",
                "session \(parentID) is covered by its open child \(child.id): a sheet carries one open child at a time (dismiss \(child.id) first)"
            )
        }
        return parent
    }

    /// The child that covers `box` at `time` on its clock (nil: now), with the child's snapshot
    /// then and how it draws `box`; nil when none does. Reads the child under its own lock, never
    /// while holding `box`'s.
    func coveringChild(of box: SessionBox, at time: Double?) -> (SessionBox, SheetSnapshot, SheetTransform)? {
        guard box.mayBeCovered.load(ordering: .relaxed), let childID = table.stacks.child(of: box.id),
            let child = table.get(childID), child.parent == box.id
        else { return nil }
        let now = clock.now
        let (snapshot, transform) = child.record.withLock { r in
            let s = r.sheet.snapshot(at: max(time ?? sessionTime(child, r, now: now), r.sheet.lastTime))
            return (s, r.profile.model.recede.transform(at: s.constant))
        }
        return StackRule.covers(snapshot) ? (child, snapshot, transform) : nil
    }

    /// Refuses `event` on `box` when an open child covers it (a layout change always passes).
    @inline(__always)
    func refuseIfCovered(_ box: SessionBox, _ event: SheetEvent, at time: Double?, field: String? = nil) throws(Problem)
    {
        guard box.mayBeCovered.load(ordering: .relaxed), !StackRule.coveredSheetTakes(event),
            let (child, snapshot, _) = coveringChild(of: box, at: time)
        else { return }
        throw Problem(
            status: 409, code: "covered",
            detail:
                "session \(box.id) is covered by its child \(child.id) (\(snapshot.state.rawValue)): dismiss \(child.id) first, or dismiss this one with {\"cascade\": true}",
            field: field)
    }

    /// The open sheets stacked above `box`, nearest first (at most `StackRule.maxDepth`).
    func openChildren(of box: SessionBox, at time: Double?) -> [SessionBox] {
        var chain: [SessionBox] = []
        var current = box
        while chain.count < StackRule.maxDepth, let (child, _, _) = coveringChild(of: current, at: time) {
            chain.append(child)
            current = child
        }
        return chain
    }

    static func stackProblem(_ code: String, _ detail: String) -> Problem {
        Problem(status: 409, code: code, detail: detail, field: "parent")
    }
}
