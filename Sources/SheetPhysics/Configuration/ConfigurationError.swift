/// A configuration the engine refuses, with the field it names (a JSON-style path such as
/// `options.expandedOffset`) and a message a person can act on.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Geometry outside the valid region, and the field at fault (`geometry` unless one member is).
    case invalidGeometry(String, field: String = "geometry")
    /// A preset name the engine does not know.
    case unknownPreset(String)
    /// An option the preset does not have (field path).
    case unknownOption(field: String, preset: PresetName)
    /// An option with a wrong type or out of its range.
    case invalidOption(field: String, reason: String)
    /// A detent name the session's preset does not have.
    case unknownDetent(field: String, name: String, known: [String])

    /// The offending field as a path (`geometry`, `options.detents.half.fraction`, `detent`).
    public var field: String {
        switch self {
        case let .invalidGeometry(_, field): field
        case .unknownPreset: "preset"
        case let .unknownOption(field, _): field
        case let .invalidOption(field, _): field
        case let .unknownDetent(field, _, _): field
        }
    }

    /// What went wrong, for a person.
    public var description: String {
        switch self {
        case let .invalidGeometry(reason, _): "invalid geometry: \(reason)"
        case let .unknownPreset(name):
            "unknown preset \"\(name)\"; presets are \(PresetName.allCases.map(\.rawValue).joined(separator: ", "))"
        case let .unknownOption(field, preset):
            "unknown option \"\(field)\" for preset \(preset.rawValue); its options are \(preset.optionNames.joined(separator: ", "))"
        case let .invalidOption(field, reason): "\(field): \(reason)"
        case let .unknownDetent(_, name, known):
            "unknown detent \"\(name)\"; this session's detents are \(known.joined(separator: ", "))"
        }
    }
}
