/// Where the card's content scrolls (fluid's `contentScrollsAt`): a drag that begins resting at
/// such a detent may hand the finger's movement to the content (`scrollOffset`), and a content
/// fling that reaches the content's top there may hand its momentum to the card (`fling`).
public enum ContentScroll: Sendable, Hashable {
    /// At the top-most detent only (SwiftUI's `resizes`: the sheet grows first).
    case topMost
    /// At every detent (SwiftUI's `scrolls`).
    case everywhere
    /// At the detents of these names.
    case detents([String])

    /// Whether the content scrolls while the card rests at `detent` (`topMost` the model's first).
    func scrolls(at detent: Detent, topMost: Detent) -> Bool {
        switch self {
        case .topMost: detent.constant == topMost.constant
        case .everywhere: !detent.isHidden
        case let .detents(names): names.contains(detent.name)
        }
    }

    /// The option's value as a client sends it.
    var option: OptionValue {
        switch self {
        case .topMost: .string("topMost")
        case .everywhere: .string("everywhere")
        case let .detents(names): .array(names.map { .string($0) })
        }
    }
}
