/// The detent a matching rule sends the card to.
public enum ReleaseTarget: Sendable, Hashable {
    /// This detent.
    case detent(Detent)
    /// The nearest of `candidates` (a tie goes to the earlier one) to the constant, or to the
    /// law's projection with `toProjection`. With `clampToNeighbours` (candidates ordered
    /// top-down), the projection passes at most one detent: it is clamped between the nearest
    /// candidates above and below the release point.
    case nearest(candidates: [Detent], toProjection: Bool, clampToNeighbours: Bool)

    func choose(constant c: Double, projected: Double?) -> (detent: Detent, beyond: Detent?) {
        switch self {
        case let .detent(d):
            return (d, nil)
        case let .nearest(candidates, toProjection, clampToNeighbours):
            var q = c
            var beyond: Detent?
            if toProjection, let p = projected {
                q = p
                if clampToNeighbours {
                    let upper = candidates.last(where: { $0.constant < c }) ?? candidates[0]
                    let lower = candidates.first(where: { $0.constant > c }) ?? candidates[candidates.count - 1]
                    if p < upper.constant {
                        q = upper.constant
                        beyond = upper
                    } else if p > lower.constant {
                        q = lower.constant
                        beyond = lower
                    }
                }
            }
            var best = candidates[0]
            for d in candidates.dropFirst() where abs(d.constant - q) < abs(best.constant - q) { best = d }
            return (best, beyond)
        }
    }
}
