// The archive conversion: a session to the plain values a store keeps, and back. The state
// machine's stored properties are internal (not private) so that this file can read and set them.

extension SheetSession {
    /// The session as plain values, for a store (see `init(model:archive:)`).
    public var archive: SheetArchive {
        let p: SheetArchive.Phase
        switch phase {
        case .hidden: p = .hidden
        case let .resting(i): p = .resting(detent: i)
        case let .dragging(d):
            p = .dragging(
                DragArchive(
                    start: d.start, base: d.base, origin: d.origin, constant: d.constant,
                    lastTranslation: d.lastTranslation, canScroll: d.canScroll, consumer: d.consumer))
        case let .animating(a): p = .animating(a.archive(in: model))
        }
        var archive = SheetArchive(
            phase: p, samples: samples.kept, animationCount: animationCount, lastTime: lastTime,
            finishedDrag: finishedDrag)
        archive.layoutRevision = layoutRevision
        archive.keyboardReturn = keyboardReturn
        return archive
    }

    /// The session `archive` describes, on `model` (the configuration it was created with).
    /// Checks what an archive from outside could get wrong: indices, finiteness, the animation's
    /// curve; the restored session answers every event exactly as the archived one would.
    public init(model: SheetModel, archive: SheetArchive) throws(ArchiveMismatch) {
        self.model = model
        let detents = model.detents.indices
        switch archive.phase {
        case .hidden: phase = .hidden
        case let .resting(i):
            guard detents.contains(i), !model.detents[i].isHidden else {
                throw ArchiveMismatch(reason: "resting at detent #\(i)")
            }
            phase = .resting(i)
        case let .dragging(d):
            let values = [d.start, d.base, d.constant, d.lastTranslation]
            guard detents.contains(d.origin), values.allSatisfy(\.isFinite) else {
                throw ArchiveMismatch(reason: "a drag with an invalid origin or a non-finite value")
            }
            phase = .dragging(
                Drag(
                    start: d.start, base: d.base, origin: d.origin, constant: d.constant,
                    lastTranslation: d.lastTranslation, canScroll: d.canScroll, consumer: d.consumer))
        case let .animating(a):
            guard a.id <= archive.animationCount else {
                throw ArchiveMismatch(reason: "animation \(a.id) is newer than the count \(archive.animationCount)")
            }
            phase = .animating(try Animation(archive: a, model: model))
        }
        let times = archive.samples.flatMap { [$0.time, $0.translation] }
        guard times.allSatisfy(\.isFinite), archive.animationCount >= 0,
            archive.lastTime.isFinite || archive.lastTime == -.infinity
        else {
            throw ArchiveMismatch(reason: "a non-finite sample, time or a negative animation count")
        }
        samples = VelocitySamples(archive.samples)
        animationCount = archive.animationCount
        lastTime = archive.lastTime
        finishedDrag = archive.finishedDrag
        guard archive.layoutRevision >= 0 else { throw ArchiveMismatch(reason: "a negative layout revision") }
        layoutRevision = archive.layoutRevision
        keyboardReturn = archive.keyboardReturn
    }
}
