import MicroHTTP
import SheetPhysics

/// The members of one JSON object, taken one known key at a time; what is left is unknown.
struct FieldReader {
    private var members: [(key: String, value: JSONValue)]
    private let prefix: String

    /// Reads `value`, which must be an object (or absent: an empty object). A JSON `null` is a
    /// value of the wrong type, not an absence (schemathesis found `null` bodies and
    /// `"geometry": null` taken as "no value").
    init(_ value: JSONValue?, path: String = "") throws(Problem) {
        prefix = path.isEmpty ? "" : path + "."
        switch value {
        case nil: members = []
        case let .object(o)?: members = o.members
        case let v?:
            throw .invalid(
                "invalid-value", "\(path.isEmpty ? "the body" : path) must be a JSON object, got \(v.kindName)",
                field: path.isEmpty ? nil : path)
        }
    }

    func path(_ key: String) -> String { prefix + key }

    /// Takes `key` out if present.
    mutating func take(_ key: String) -> JSONValue? {
        // Small objects (≤ 6 members): a linear scan beats hashing.
        guard let i = members.firstIndex(where: { $0.key == key }) else { return nil }
        return members.remove(at: i).value
    }

    /// A finite number with |x| ≤ `limit`, if present.
    mutating func number(_ key: String, limit: Double = 1e6) throws(Problem) -> Double? {
        guard let value = take(key) else { return nil }
        guard case let .number(x) = value else {
            throw .invalid("invalid-value", "\(path(key)) must be a number, got \(value.kindName)", field: path(key))
        }
        guard x.isFinite, abs(x) <= limit else {
            throw .invalid(
                "invalid-value", "\(path(key)) must be a finite number with magnitude ≤ \(Int(limit))", field: path(key)
            )
        }
        return x
    }

    /// A string, if present.
    mutating func string(_ key: String) throws(Problem) -> String? {
        guard let value = take(key) else { return nil }
        guard case let .string(s) = value else {
            throw .invalid("invalid-value", "\(path(key)) must be a string, got \(value.kindName)", field: path(key))
        }
        return s
    }

    /// Fails on the first member nobody took.
    func finish(known: String) throws(Problem) {
        if let first = members.first {
            throw .invalid(
                "unknown-field", "unknown field \"\(path(first.key))\"; known fields are \(known)",
                field: path(first.key))
        }
    }
}
