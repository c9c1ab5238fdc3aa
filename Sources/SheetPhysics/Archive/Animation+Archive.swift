extension Animation {
    /// The values this animation was started with.
    public func archive(in model: SheetModel) -> AnimationArchive {
        var a = AnimationArchive(
            id: id, curve: curve, from: from, to: to, duration: duration, fromAlpha: fromAlpha, toAlpha: toAlpha,
            startTime: startTime, detent: model.index(of: detent))
        if alphaRule != model.alphaRule { a.alphaRule = alphaRule }
        return a
    }

    /// The animation `archive` describes, on `model`.
    public convenience init(archive a: AnimationArchive, model: SheetModel) throws(ArchiveMismatch) {
        guard model.detents.indices.contains(a.detent) else {
            throw ArchiveMismatch(reason: "animation \(a.id) ends at detent #\(a.detent) of \(model.detents.count)")
        }
        let finite = [a.from, a.to, a.duration, a.fromAlpha, a.toAlpha, a.startTime].allSatisfy(\.isFinite)
        guard finite, a.duration >= 0, a.duration <= Animation.maxDuration, a.id >= 1 else {
            throw ArchiveMismatch(reason: "animation \(a.id) has a non-finite or out-of-range value")
        }
        switch a.curve {
        case .timed: break
        case let .durationSpring(zeta, v):
            guard zeta > 0, zeta.isFinite, v.isFinite, a.duration > 0 else {
                throw ArchiveMismatch(reason: "animation \(a.id) has an invalid duration spring")
            }
        case let .spring(response, zeta, v):
            guard (0.01...10).contains(response), (0.05...10).contains(zeta), v.isFinite else {
                throw ArchiveMismatch(reason: "animation \(a.id) has an invalid spring")
            }
        }
        self.init(
            id: a.id, curve: a.curve, from: a.from, to: a.to, duration: a.duration, fromAlpha: a.fromAlpha,
            toAlpha: a.toAlpha, alphaRule: a.alphaRule ?? model.alphaRule, startTime: a.startTime,
            detent: model.detents[a.detent],
            dimmer: model.dimmer, progressScale: model.progressScale, modality: model.modality)
    }
}
