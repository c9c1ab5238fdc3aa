/// HTTP header fields as ordered `(name, value)` pairs, kept exactly as received or appended.
///
/// Lookups compare names ASCII case-insensitively (RFC 9110 §5.1) without allocating. Repeated
/// fields stay separate entries in their original order, so nothing is merged or lost.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public typealias Element = (name: String, value: String)

    /// The fields in order. An array, not a dictionary: requests carry a handful of fields, so a
    /// linear scan is cheaper than hashing and keeps the order and the duplicates.
    @usableFromInline var fields: [Element]

    /// No fields.
    public init() {
        fields = []
    }

    /// The given fields, in order.
    public init(_ fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    /// The given fields, in the literal's order (duplicates allowed).
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The number of fields, counting repeated names separately.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field with this name (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        for field in fields where HTTPHeaders.namesMatch(field.name, name) {
            return field.value
        }
        return nil
    }

    /// The values of every field with this name (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        fields.compactMap { HTTPHeaders.namesMatch($0.name, name) ? $0.value : nil }
    }

    /// Whether at least one field has this name (case-insensitive).
    public func contains(_ name: String) -> Bool {
        fields.contains { HTTPHeaders.namesMatch($0.name, name) }
    }

    /// Adds a field after the existing ones, even if the name is already present.
    public mutating func append(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Removes every field with this name (case-insensitive).
    public mutating func removeAll(named name: String) {
        fields.removeAll { HTTPHeaders.namesMatch($0.name, name) }
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    /// ASCII case-insensitive comparison of two field names, byte by byte (no lowercased copies).
    @usableFromInline static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                guard left.count == right.count else { return false }
                for index in 0..<left.count {
                    // Setting bit 5 lowercases ASCII letters; only letters may differ in that bit.
                    let a = left[index]
                    let b = right[index]
                    if a == b { continue }
                    let lowerA = a | 0x20
                    guard lowerA == b | 0x20, lowerA >= UInt8(ascii: "a"), lowerA <= UInt8(ascii: "z") else {
                        return false
                    }
                }
                return true
            }
        }
    }
}
