extension Fluid {
    /// The `recede` option: absent, the standard recession; else an object of any of
    /// scale (0, 1], lift and cornerRadius (points, [0, 1000]), alpha [0, 1] and backdrop
    /// (whether a root sheet recedes the page behind), the others at their defaults.
    static func recede(_ value: OptionValue?, progress: ProgressScale) throws(ConfigurationError) -> RecedeLaw {
        guard let value else { return .standard(progress) }
        guard case let .object(members) = value else {
            throw .invalidOption(
                field: "options.recede",
                reason:
                    "expected {\"scale\": s, \"lift\": pt, \"cornerRadius\": pt, \"alpha\": a, \"backdrop\": bool}, got \(value.typeName)"
            )
        }
        var reader = OptionReader(members, prefix: "options.recede", preset: .fluid)
        let law = RecedeLaw(
            scale: try reader.number("scale", default: RecedeLaw.standardScale, in: 0...1, open: true),
            lift: try reader.number("lift", default: RecedeLaw.standardLift, in: 0...1000),
            cornerRadius: try reader.number("cornerRadius", default: RecedeLaw.standardCornerRadius, in: 0...1000),
            alpha: try reader.number("alpha", default: RecedeLaw.standardAlpha, in: 0...1),
            backdrop: try reader.bool("backdrop", default: false), progress: progress)
        try reader.finish()
        return law
    }
}

extension RecedeLaw {
    /// The law's parameters as the `recede` option (what `effectiveOptions` shows).
    var option: OptionValue {
        .object([
            ("scale", .number(scale)), ("lift", .number(lift)), ("cornerRadius", .number(cornerRadius)),
            ("alpha", .number(alpha)), ("backdrop", .bool(backdrop)),
        ])
    }
}
