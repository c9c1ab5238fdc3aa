/// The screen the card lives on, in points (y grows downward, as in UIKit).
public struct Geometry: Sendable, Hashable {
    /// The container's height h.
    public let height: Double
    /// The top safe-area inset st (status bar, notch).
    public let safeAreaTop: Double
    /// The bottom safe-area inset sb (home indicator).
    public let safeAreaBottom: Double

    /// An iPhone 14-class screen: 844 × (47, 34).
    public static let standard = Geometry(uncheckedHeight: 844, safeAreaTop: 47, safeAreaBottom: 34)

    /// A validated geometry: all finite, h > 0, st ≥ 0, sb ≥ 0, st + sb < h.
    public init(height: Double, safeAreaTop: Double, safeAreaBottom: Double) throws(ConfigurationError) {
        guard height.isFinite, safeAreaTop.isFinite, safeAreaBottom.isFinite else {
            throw .invalidGeometry("height, safeAreaTop and safeAreaBottom must be finite numbers")
        }
        guard height > 0 else { throw .invalidGeometry("height must be > 0, got \(Format.number(height))") }
        guard safeAreaTop >= 0 else {
            throw .invalidGeometry("safeAreaTop must be ≥ 0, got \(Format.number(safeAreaTop))")
        }
        guard safeAreaBottom >= 0 else {
            throw .invalidGeometry("safeAreaBottom must be ≥ 0, got \(Format.number(safeAreaBottom))")
        }
        guard safeAreaTop + safeAreaBottom < height else {
            throw .invalidGeometry(
                "safeAreaTop + safeAreaBottom (\(Format.number(safeAreaTop + safeAreaBottom))) must be less than height (\(Format.number(height)))"
            )
        }
        self.init(uncheckedHeight: height, safeAreaTop: safeAreaTop, safeAreaBottom: safeAreaBottom)
    }

    private init(uncheckedHeight: Double, safeAreaTop: Double, safeAreaBottom: Double) {
        self.height = uncheckedHeight
        self.safeAreaTop = safeAreaTop
        self.safeAreaBottom = safeAreaBottom
    }

    /// S = h − st − sb: the seeds' `safeAreaHeight`.
    public var safeAreaHeight: Double { height - safeAreaTop - safeAreaBottom }
    /// H = S + sb = h − st: the seeds' `safeAreaHeight + bottomPadding`.
    public var availableHeight: Double { height - safeAreaTop }
}

/// A configuration the engine refuses, with the field it names (a JSON-style path such as
/// `options.expandedOffset`) and a message a person can act on.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Geometry outside the valid region.
    case invalidGeometry(String)
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
        case .invalidGeometry: "geometry"
        case .unknownPreset: "preset"
        case let .unknownOption(field, _): field
        case let .invalidOption(field, _): field
        case let .unknownDetent(field, _, _): field
        }
    }

    /// What went wrong, for a person.
    public var description: String {
        switch self {
        case let .invalidGeometry(reason): "invalid geometry: \(reason)"
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

/// Number formatting for messages and snap reasons (no Foundation): at most `decimals` places,
/// no trailing ".0".
enum Format {
    static func number(_ x: Double, decimals: Int = 2) -> String {
        guard x.isFinite else { return x.isNaN ? "NaN" : (x > 0 ? "inf" : "-inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let r = (x * scale).rounded() / scale
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return r.description
    }
}
