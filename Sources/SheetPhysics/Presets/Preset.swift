/// One preset, whole: its options, its named detents, its drag law, its release law and its alpha
/// rule, in a file of its own (`Facebook.swift` … `Fluid.swift`). `SheetModel` builds a
/// configuration by calling the preset `PresetName.definition` names, once per configuration;
/// nothing on the per-event path dispatches on the preset (the engine evaluates the laws this
/// returns).
///
/// To add a preset: a caseless enum conforming to this in a file of its own here, a case in
/// `PresetName`, and its row in `PresetName.definition`.
protocol Preset {
    /// The constraint system the preset's constant lives in.
    static var constraint: ConstraintKind { get }

    /// Every option: its name, JSON type, default on `geometry` and meaning, in documentation
    /// order (`GET /presets` lists them for the standard geometry).
    static func options(on geometry: Geometry) -> [OptionInfo]

    /// The configuration the options in `reader` give on `geometry`. Takes each option it knows
    /// from `reader` (whatever is left is an unknown option, refused by the caller) and throws on
    /// the first one of a wrong type or out of its range.
    static func configuration(
        _ reader: inout OptionReader, on geometry: Geometry
    ) throws(ConfigurationError) -> PresetConfiguration
}
