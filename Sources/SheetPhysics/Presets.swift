/// The presets: five cards from the seed tutorials and `fluid`, our own.
public enum PresetName: String, Sendable, CaseIterable {
    case facebook, twitter, glide, transition, swipeCell, fluid

    /// The constraint system the preset's constant lives in.
    public var constraint: ConstraintKind {
        switch self {
        case .facebook, .glide, .fluid: .top
        case .twitter: .bottom
        case .transition: .frameY
        case .swipeCell: .offset
        }
    }

    /// The names of the preset's options, in documentation order.
    public var optionNames: [String] { optionCatalog.map(\.name) }

    /// Every option: its name, JSON type, default for the standard geometry, and meaning.
    public var optionCatalog: [OptionInfo] {
        let H = Geometry.standard.availableHeight
        switch self {
        case .facebook:
            return [
                OptionInfo(
                    "expandedOffset", "number", .number(30),
                    "constant of the expanded detent (card top to safe-area top), pt")
            ]
        case .twitter:
            return [
                OptionInfo(
                    "cardHeightRatio", "number", .number(0.75),
                    "card height C as a fraction of the screen height, (0, 1]"),
                OptionInfo("maxDimAlpha", "number", .number(0.7), "dimmer alpha with the card open, [0, 1]"),
            ]
        case .glide:
            return [
                OptionInfo(
                    "segmented", "boolean", .bool(true), "three states (open, compressed, closed) instead of two"),
                OptionInfo(
                    "segmentHeights", "object",
                    .object([("open", .number(H - 44)), ("compressed", .number(H / 2)), ("closed", .number(80))]),
                    "visible heights of the segmented states, pt (defaults H − 44, H/2, 80)"),
                OptionInfo(
                    "concreteDimension", "string|object", .string("half"),
                    "open position when not segmented: fullScreen, half, oneFourth, oneThird or {\"custom\": pt}"),
                OptionInfo("navigationBar", "boolean", .bool(true), "fullScreen leaves 44 pt for a navigation bar"),
                OptionInfo(
                    "headerHeight", "number", .number(0), "visible height of the closed card when not segmented, pt"),
                OptionInfo("grabber", "boolean", .bool(true), "draw the grabber (echoed for front ends)"),
            ]
        case .transition:
            return [
                OptionInfo("miniHeight", "number", .number(60), "height of the docked mini card, pt"),
                OptionInfo(
                    "finishThreshold", "number|null", .number(0.8),
                    "fraction of the way at which a drag finishes the transition at once; null disables"),
                OptionInfo("duration", "number", .number(0.35), "duration of a whole transition, s"),
                OptionInfo("completionSpeed", "number", .number(0.75), "speed factor of the remaining animation"),
            ]
        case .swipeCell:
            return [OptionInfo("swipeDistance", "number", .number(80), "how far the content slides up, pt")]
        case .fluid:
            return [
                OptionInfo(
                    "detents", "object",
                    .object([
                        ("full", .object([("fromTop", .number(18))])),
                        ("half", .object([("fraction", .number(0.5))])),
                        ("tip", .object([("height", .number(69))])),
                    ]),
                    "name → {\"fromTop\": pt} | {\"fraction\": f} | {\"height\": pt}; \"hidden\" is reserved"),
                OptionInfo("hideable", "boolean", .bool(true), "adds the hidden detent at H"),
                OptionInfo("rubberBand", "boolean", .bool(true), "resist over-drag instead of clamping"),
                OptionInfo("decelerationRate", "number", .number(0.998), "momentum projection rate r, (0, 1)"),
                OptionInfo("removalVelocity", "number", .number(5.5), "v / distance to hidden (1/s) that dismisses"),
                OptionInfo("skipDetents", "boolean", .bool(false), "let a fling pass more than one detent"),
                OptionInfo(
                    "undimmedDetent", "string", .string("tip"),
                    "largest detent with no dimming (default: the lowest visible)"),
                OptionInfo(
                    "maxDimAlpha", "number", .number(0.3), "dimmer alpha at and above the detent over the undimmed one"),
                OptionInfo("response", "number", .number(0.4), "spring response, s"),
                OptionInfo("dampingRatio", "number", .number(1.0), "spring damping ratio"),
            ]
        }
    }
}

/// One option of a preset, for `GET /presets`.
public struct OptionInfo: Sendable {
    public let name: String
    public let type: String
    public let defaultValue: OptionValue
    public let summary: String

    init(_ name: String, _ type: String, _ defaultValue: OptionValue, _ summary: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.summary = summary
    }
}

/// Why a release, show, dismiss or cancel went where it went.
public struct Snap: Sendable, Hashable {
    public let detent: Detent
    /// Free text for people: "velocity 1800 > 1500", "projected 1099.1 beyond tip".
    public let reason: String
    /// fluid only: the projected constant.
    public let projected: Double?
}

/// Where a preset's release rule sends the card, and how it moves there.
enum SnapRule: Sendable {
    case facebook(expandedOffset: Double)
    case twitter(cardHeight: Double)
    case glide(segmented: Bool, threshold: Double)
    /// (The finish threshold is the drag law's: `DragLaw.finishThreshold`.)
    case transition(duration: Double, completionSpeed: Double)
    case swipeCell(distance: Double)
    case fluid(FluidBehaviour)
}

/// fluid's behaviour options.
struct FluidBehaviour: Sendable {
    let hideable: Bool
    let rubberBand: Bool
    let decelerationRate: Double
    let removalVelocity: Double
    let skipDetents: Bool
    let response: Double
    let dampingRatio: Double
}
