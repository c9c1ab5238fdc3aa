/// The presets: five cards from the seed tutorials and `fluid`, our own. Each is defined whole in
/// a file of its own under `Presets/`.
public enum PresetName: String, Sendable, CaseIterable {
    case facebook, twitter, glide, transition, swipeCell, fluid

    /// The preset's definition: the one table from name to rules (configuration time only).
    var definition: any Preset.Type {
        switch self {
        case .facebook: Facebook.self
        case .twitter: Twitter.self
        case .glide: Glide.self
        case .transition: Transition.self
        case .swipeCell: SwipeCell.self
        case .fluid: Fluid.self
        }
    }

    /// What the preset is, in one line.
    public var summary: String { definition.summary }

    /// The constraint system the preset's constant lives in.
    public var constraint: ConstraintKind { definition.constraint }

    /// The detent a new session that names none rests at; nil: it starts hidden.
    public var initialDetent: String? { definition.initialDetent }

    /// What the preset's sessions can do, in `PresetCapability`'s order.
    public var capabilities: [PresetCapability] {
        let own = definition.capabilities
        return PresetCapability.allCases.filter(own.contains)
    }

    /// Whether the preset's sessions can do `capability`.
    public func has(_ capability: PresetCapability) -> Bool { definition.capabilities.contains(capability) }

    /// The names of the preset's options, in documentation order.
    public var optionNames: [String] { optionCatalog.map(\.name) }

    /// Every option: its name, JSON type, default for the standard geometry, and meaning.
    public var optionCatalog: [OptionInfo] { definition.options(on: .standard) }
}
