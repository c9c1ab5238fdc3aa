/// One preset, whole: its summary, constraint, options, initial detent and capabilities (the
/// catalog entry `GET /presets` lists) and its named detents, drag law, release law and alpha rule,
/// in a file of its own (`Facebook.swift` … `Fluid.swift`). `SheetModel` builds a configuration by
/// calling the preset `PresetName.definition` names, once per configuration; nothing on the
/// per-event path dispatches on the preset (the engine evaluates the laws this returns).
///
/// To add a preset: a caseless enum conforming to this in a file of its own here, a case in
/// `PresetName`, and its row in `PresetName.definition`.
protocol Preset {
    /// What the preset is, in one line (the demo's picker shows it).
    static var summary: String { get }

    /// The constraint system the preset's constant lives in.
    static var constraint: ConstraintKind { get }

    /// The detent a new session that names none rests at; nil: it starts hidden. It must name one
    /// of the detents of every configuration.
    static var initialDetent: String? { get }

    /// What the preset's sessions can do beyond the common state machine.
    static var capabilities: Set<PresetCapability> { get }

    /// Every option: its name, JSON type, default on `geometry` and meaning, in documentation
    /// order (`GET /presets` lists them for the standard geometry).
    static func options(on geometry: Geometry) -> [OptionInfo]

    /// The configuration the options in `reader` give on `layout`. Takes each option it knows
    /// from `reader` (whatever is left is an unknown option, refused by the caller) and throws on
    /// the first one of a wrong type or out of its range.
    static func configuration(
        _ reader: inout OptionReader, in layout: Layout
    ) throws(ConfigurationError) -> PresetConfiguration
}

extension Preset {
    /// Most presets start hidden.
    static var initialDetent: String? { nil }
    /// Most presets have no capability beyond the common state machine.
    static var capabilities: Set<PresetCapability> { [] }
}
