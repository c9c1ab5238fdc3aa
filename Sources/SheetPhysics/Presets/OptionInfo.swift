/// One option of a preset, for `GET /presets`.
public struct OptionInfo: Sendable {
    /// The option's key in `options`.
    public let name: String
    /// Its JSON type (`number`, `boolean`, `string|object`, `number|null`, …).
    public let type: String
    /// Its value when not sent, for the standard geometry.
    public let defaultValue: OptionValue
    /// Whether `defaultValue` is the default everywhere; false: the default follows the geometry or
    /// the other options (`defaultValue` is the one with the standard geometry and every other
    /// default), so openapi.yaml states it in words, not as a `default`.
    public let hasFixedDefault: Bool
    /// What it means, with its unit and range.
    public let summary: String

    init(_ name: String, _ type: String, _ defaultValue: OptionValue, fixed: Bool = true, _ summary: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.hasFixedDefault = fixed
        self.summary = summary
    }
}
