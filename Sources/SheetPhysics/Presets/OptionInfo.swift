/// One option of a preset, for `GET /presets`.
public struct OptionInfo: Sendable {
    /// The option's key in `options`.
    public let name: String
    /// Its JSON type (`number`, `boolean`, `string|object`, `number|null`, …).
    public let type: String
    /// Its value when not sent, for the standard geometry.
    public let defaultValue: OptionValue
    /// What it means, with its unit and range.
    public let summary: String

    init(_ name: String, _ type: String, _ defaultValue: OptionValue, _ summary: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.summary = summary
    }
}
