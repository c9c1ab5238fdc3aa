/// Reads one preset's options: each known key once, with its type and range checked; whatever is
/// left over is an unknown option, named in the error.
struct OptionReader {
    private var members: [(key: String, value: OptionValue)]
    private let prefix: String
    private let preset: PresetName

    init(_ options: [(key: String, value: OptionValue)], prefix: String = "options", preset: PresetName) {
        self.members = options
        self.prefix = prefix
        self.preset = preset
    }

    func path(_ key: String) -> String { "\(prefix).\(key)" }

    /// Takes the member `key` out, if present.
    mutating func take(_ key: String) -> OptionValue? {
        guard let i = members.firstIndex(where: { $0.key == key }) else { return nil }
        return members.remove(at: i).value
    }

    /// A finite number within `range`, or `fallback` when absent.
    mutating func number(
        _ key: String, default fallback: Double, in range: ClosedRange<Double>, open: Bool = false
    ) throws(ConfigurationError) -> Double {
        guard let value = take(key) else { return fallback }
        return try Self.number(value, path: path(key), in: range, openLower: open)
    }

    static func number(
        _ value: OptionValue, path: String, in range: ClosedRange<Double>, openLower: Bool = false
    ) throws(ConfigurationError) -> Double {
        guard case let .number(x) = value else {
            throw .invalidOption(field: path, reason: "expected a number, got \(value.typeName)")
        }
        guard x.isFinite else { throw .invalidOption(field: path, reason: "must be finite") }
        let lowerOK = openLower ? x > range.lowerBound : x >= range.lowerBound
        guard lowerOK, x <= range.upperBound else {
            let lo = openLower ? "(" : "["
            throw .invalidOption(
                field: path,
                reason:
                    "must be in \(lo)\(Format.number(range.lowerBound)), \(Format.number(range.upperBound))], got \(Format.number(x, decimals: 6))"
            )
        }
        return x
    }

    mutating func bool(_ key: String, default fallback: Bool) throws(ConfigurationError) -> Bool {
        guard let value = take(key) else { return fallback }
        guard case let .bool(b) = value else {
            throw .invalidOption(field: path(key), reason: "expected a boolean, got \(value.typeName)")
        }
        return b
    }

    mutating func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = take(key) else { return nil }
        guard case let .string(s) = value else {
            throw .invalidOption(field: path(key), reason: "expected a string, got \(value.typeName)")
        }
        return s
    }

    /// One of an enumeration's raw values, or `fallback` when absent.
    mutating func choice<T: RawRepresentable & CaseIterable>(
        _ key: String, default fallback: T
    ) throws(ConfigurationError) -> T where T.RawValue == String {
        guard let name = try string(key) else { return fallback }
        guard let value = T(rawValue: name) else {
            throw .invalidOption(
                field: path(key),
                reason: "must be one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(name)\"")
        }
        return value
    }

    /// Fails on the first member nobody took.
    func finish() throws(ConfigurationError) {
        if let first = members.first {
            throw .unknownOption(field: path(first.key), preset: preset)
        }
    }
}
