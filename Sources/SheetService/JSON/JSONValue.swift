// JSON data model shared by `JSONReader` and `JSONWriter`.
// Pure Swift: no Foundation in the JSON layer.

/// A parsed JSON value (RFC 8259).
///
/// Numbers are `Double`s, so integers beyond ±2^53 lose precision exactly as
/// they would in JavaScript. Equality is structural; `.number` uses `Double`
/// equality (so `-0.0 == 0.0`). Objects compare member by member, in order.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    package var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    package var double: Double? {
        if case .number(let x) = self { return x }
        return nil
    }

    package var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    package var array: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    package var object: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Member lookup when `self` is an object; `nil` otherwise or when absent.
    package subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// A short name of the value's kind, for error messages ("expected a number, got string").
    package var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    package init(nilLiteral: ()) { self = .null }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(integerLiteral value: Int) { self = .number(Double(value)) }
    package init(floatLiteral value: Double) { self = .number(value) }
    package init(stringLiteral value: String) { self = .string(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Members keep the literal's order. Duplicate keys in a literal are a programming error.
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
}

/// A JSON object that keeps its members in document order.
///
/// Lookup is linear, which beats hashing for the small objects this service
/// handles (request bodies have a handful of members). The reader guarantees
/// unique keys; code that builds objects by hand should use the subscript
/// setter (replaces an existing member) or `append` only for keys it knows are new.
package struct JSONObject: Sendable, Equatable, Sequence {
    package typealias Member = (key: String, value: JSONValue)
    package typealias Element = Member

    package private(set) var members: [Member]
    /// True when every key is ASCII, which lets lookups use `String.==` (see `subscript`).
    private var asciiKeys: Bool

    package init() {
        members = []
        asciiKeys = true
    }

    /// Takes members as given (no duplicate check).
    package init(_ members: [Member]) {
        self.members = members
        asciiKeys = members.allSatisfy { JSONObject.isASCII($0.key) }
    }

    /// For the reader, which already knows whether the keys are ASCII.
    init(members: [Member], asciiKeys: Bool) {
        self.members = members
        self.asciiKeys = asciiKeys
    }

    static func isASCII(_ s: String) -> Bool { s.utf8.allSatisfy { $0 < 0x80 } }

    package var count: Int { members.count }
    package var isEmpty: Bool { members.isEmpty }
    package var keys: [String] { members.map(\.key) }

    /// JSON key identity: code unit by code unit (RFC 8259 §8.3), not Unicode
    /// canonical equivalence as `String.==` would do ("é" ≠ "e\u{301}").
    package static func sameKey(_ a: String, _ b: String) -> Bool {
        let n = a.utf8.count
        guard n == b.utf8.count else { return false }
        // Native and small strings always have contiguous UTF-8 (small ones are
        // copied to the stack); the fallback covers bridged strings.
        let same = a.utf8.withContiguousStorageIfAvailable { pa in
            b.utf8.withContiguousStorageIfAvailable { pb in
                var k = 0
                while k < n {
                    if pa[k] != pb[k] { return false }
                    k &+= 1
                }
                return true
            }
        }
        if let contiguous = same, let result = contiguous { return result }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// The value for `key`, or `nil` when absent. Setting `nil` removes the member;
    /// setting a value replaces the existing member in place or appends a new one.
    package subscript(key: String) -> JSONValue? {
        get {
            if asciiKeys {
                // If one of two strings is ASCII, equal UTF-8 length plus canonical
                // equivalence (`==`, fast for small strings) implies identical code
                // units: no non-ASCII scalar is canonically equivalent to an ASCII
                // sequence of the same byte length.
                let n = key.utf8.count
                for m in members where m.key.utf8.count == n && m.key == key { return m.value }
                return nil
            }
            for m in members where JSONObject.sameKey(m.key, key) { return m.value }
            return nil
        }
        set {
            if let i = members.firstIndex(where: { JSONObject.sameKey($0.key, key) }) {
                if let newValue { members[i].value = newValue } else { members.remove(at: i) }
            } else if let newValue {
                append(key: key, value: newValue)
            }
        }
    }

    /// Appends without checking for an existing member with the same key.
    package mutating func append(key: String, value: JSONValue) {
        members.append((key: key, value: value))
        if asciiKeys && !JSONObject.isASCII(key) { asciiKeys = false }
    }

    package func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (l, r) in zip(lhs.members, rhs.members) where !sameKey(l.key, r.key) || l.value != r.value {
            return false
        }
        return true
    }
}

/// Why a JSON text was rejected.
///
/// `offset` is the 0-based byte index in the input where the problem was
/// found; `message` says what is wrong and where, e.g.
/// `duplicate key "velocity" at byte 41` or
/// `unexpected character 'N' at byte 14 (expected a value)`.
package struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        case emptyInput
        case byteOrderMark
        case unexpectedEnd
        case unexpectedCharacter
        case trailingCharacters
        case trailingComma
        case comment
        case singleQuote
        case invalidNumber
        case numberOutOfRange
        case controlCharacterInString
        case invalidEscape
        case invalidSurrogate
        case invalidUTF8
        case duplicateKey
        case tooDeep
    }

    package var kind: Kind
    package var offset: Int
    package var message: String

    package init(_ kind: Kind, at offset: Int, _ what: String, hint: String? = nil) {
        self.kind = kind
        self.offset = offset
        if let hint {
            self.message = "\(what) at byte \(offset) (\(hint))"
        } else {
            self.message = "\(what) at byte \(offset)"
        }
    }

    package var description: String { message }
}
