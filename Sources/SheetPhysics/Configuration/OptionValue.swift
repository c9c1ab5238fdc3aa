/// An option value as a client sent it: the JSON shapes, without tying the engine to a JSON
/// library (the service converts its parsed JSON into this).
public enum OptionValue: Sendable, Equatable {
    /// JSON null.
    case null
    /// true or false.
    case bool(Bool)
    /// A number (JSON has one kind).
    case number(Double)
    /// A string.
    case string(String)
    /// An array, in order.
    case array([OptionValue])
    /// Members in the order they were sent.
    case object([(key: String, value: OptionValue)])

    /// Equal shapes with equal values; object members compared in order.
    public static func == (a: OptionValue, b: OptionValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The JSON type name, for messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
