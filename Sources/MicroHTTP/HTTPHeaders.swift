#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// HTTP header fields as ordered `(name, value)` pairs, kept exactly as received or appended.
///
/// Lookups compare names ASCII case-insensitively (RFC 9110 §5.1) without allocating. Repeated
/// fields stay separate entries in their original order, so nothing is merged or lost.
///
/// The fields live in one byte buffer, each as its name and value, both NUL-terminated, after an
/// 8-byte length prefix. A request's head costs one allocation however many fields it has, no
/// `String` is made for a field nobody asks for, and a response's fields are handed to
/// libmicrohttpd as C strings straight from the buffer (measured: building a `String` pair per
/// field and a C copy per name and value on the way out were ≈ 5,000 instructions of a
/// `pan changed` request's ≈ 37,000 in Swift).
///
/// `@unchecked Sendable`: the buffer is a class, copied before any write unless uniquely
/// referenced, so a value sent elsewhere never shares mutable bytes.
public struct HTTPHeaders: @unchecked Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public typealias Element = (name: String, value: String)

    /// The fields: per field its name's and its value's lengths (UInt32, little-endian), the
    /// name, a NUL, the value, a NUL.
    @usableFromInline var storage: FieldBytes
    /// The number of fields, counting repeated names separately.
    public private(set) var count: Int

    /// Bytes before a field's name: its name's and its value's lengths.
    @usableFromInline static let prefixBytes = 8

    /// No fields.
    public init() {
        storage = FieldBytes.empty
        count = 0
    }

    /// The given fields, in order.
    public init(_ fields: [(name: String, value: String)]) {
        self.init()
        for field in fields { append(name: field.name, value: field.value) }
    }

    /// The given fields, in the literal's order (duplicates allowed).
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init()
        for (name, value) in elements { append(name: name, value: value) }
    }

    /// Whether there are no fields.
    public var isEmpty: Bool { count == 0 }

    /// The bytes of the buffer the fields are kept in.
    var bytesAllocated: Int { storage.allocated }

    /// Removes every field, keeping the buffer when nothing else holds it and it has room for
    /// `bytes` bytes of names and values in `fields` fields (else a new one with that room): for
    /// a buffer filled again request after request.
    mutating func removeAll(keepingRoomFor bytes: Int, fields: Int) {
        let size = bytes + fields * (Self.prefixBytes + 2)
        if isKnownUniquelyReferenced(&storage), storage.allocated >= size {
            storage.withUnsafeMutablePointerToHeader { header in
                header.pointee.used = 0
                header.pointee.vetted = false
            }
        } else {
            storage = FieldBytes.make(capacity: size)
        }
        count = 0
    }

    /// The value of the first field with this name (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        var found: String?
        forEachField(named: name) { value in
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// The values of every field with this name (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        forEachField(named: name) { value in
            values.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return values
    }

    /// Whether at least one field has this name (case-insensitive).
    public func contains(_ name: String) -> Bool {
        var found = false
        forEachField(named: name) { _ in
            found = true
            return false
        }
        return found
    }

    /// Adds a field after the existing ones, even if the name is already present.
    public mutating func append(name: String, value: String) {
        var name = name
        var value = value
        name.withUTF8 { n in
            value.withUTF8 { v in append(name: UnsafeRawBufferPointer(n), value: UnsafeRawBufferPointer(v)) }
        }
    }

    /// Adds a field from raw bytes.
    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        // One capacity check, growing geometrically, then plain copies into the buffer (Array's
        // append(contentsOf:), four per field, cost ≈ 600 instructions per field).
        let size = Self.prefixBytes + name.count + value.count + 2
        if !isKnownUniquelyReferenced(&storage) || !storage.hasRoom(for: size) {
            storage = storage.copy(adding: size)
        }
        storage.withUnsafeMutablePointers { header, elements in
            let field = UnsafeMutableRawPointer(elements + header.pointee.used)
            field.storeBytes(of: UInt32(truncatingIfNeeded: name.count).littleEndian, as: UInt32.self)
            field.storeBytes(of: UInt32(truncatingIfNeeded: value.count).littleEndian, toByteOffset: 4, as: UInt32.self)
            var at = Self.prefixBytes
            if let base = name.baseAddress { (field + at).copyMemory(from: base, byteCount: name.count) }
            at += name.count
            field.storeBytes(of: 0, toByteOffset: at, as: UInt8.self)
            at += 1
            if let base = value.baseAddress { (field + at).copyMemory(from: base, byteCount: value.count) }
            at += value.count
            field.storeBytes(of: 0, toByteOffset: at, as: UInt8.self)
            header.pointee.used += size
            header.pointee.vetted = false
        }
        count += 1
    }

    /// Removes every field with this name (case-insensitive).
    public mutating func removeAll(named name: String) {
        let kept = filter { !HTTPHeaders.namesMatch($0.name, name) }
        self = HTTPHeaders(kept)
    }

    /// Iterates the fields in order (each as a pair of new strings; invalid UTF-8 is repaired).
    public func makeIterator() -> Iterator {
        Iterator(headers: self)
    }

    /// The fields in order, as strings.
    public struct Iterator: IteratorProtocol {
        let headers: HTTPHeaders
        var offset = 0

        public mutating func next() -> Element? {
            guard offset < headers.storage.used else { return nil }
            var element: Element?
            offset = headers.storage.withUnsafeBytes { all in
                let field = HTTPHeaders.field(in: all, at: offset)
                element = (
                    name: String(decoding: field.name, as: UTF8.self),
                    value: String(decoding: field.value, as: UTF8.self)
                )
                return field.next
            }
            return element
        }
    }

    /// These fields, checked once as a response's fields are before sending (names tokens,
    /// values without control characters), and marked so that sending them checks nothing:
    /// for headers built once and sent with many responses. Nil when a field is unfit.
    package func vetted() -> HTTPHeaders? {
        var ok = true
        forEachRaw { name, value in
            ok = Self.isToken(name) && Self.isFieldValue(value)
            return ok
        }
        guard ok else { return nil }
        // A buffer of our own, marked before anything else can see it.
        var copy = HTTPHeaders()
        copy.storage = storage.copy(adding: 0)
        copy.count = count
        copy.storage.withUnsafeMutablePointerToHeader { $0.pointee.vetted = true }
        return copy
    }

    /// Adds a field after the existing ones and, when these fields were vetted and the new one
    /// is fit too (its name a token, its value without control characters), keeps them vetted:
    /// for a field added to a service's constant reply headers on every answer (checking one
    /// field here costs less than sending checks them all).
    package mutating func appendKeepingVetted(name: String, value: String) {
        let wasVetted = isVetted
        var name = name
        var value = value
        // One pass over the two strings' bytes for the append and the check (appending the
        // strings, then reading their bytes again to check them, cost ≈ 120 instructions more).
        name.withUTF8 { n in
            value.withUTF8 { v in
                let (name, value) = (UnsafeRawBufferPointer(n), UnsafeRawBufferPointer(v))
                append(name: name, value: value)
                if wasVetted, Self.isToken(name), Self.isFieldValue(value) {
                    storage.withUnsafeMutablePointerToHeader { $0.pointee.vetted = true }
                }
            }
        }
    }

    /// A field name found to be a token once, for a field added to many answers: appending it
    /// with `appendKeepingVetted(_:value:)` checks only the value (checking a 12-byte name again
    /// on every answer cost ≈ 140 instructions).
    package struct TokenName: Sendable {
        /// The name's bytes (read in place: a short `String` is copied out to be read).
        let bytes: [UInt8]

        /// `text`, if it is a token (RFC 9110 §5.1).
        package init?(_ text: String) {
            let bytes = Array(text.utf8)
            guard bytes.withUnsafeBytes({ HTTPHeaders.isToken($0) }) else { return nil }
            self.bytes = bytes
        }
    }

    /// `appendKeepingVetted(name:value:)` for a name known to be a token.
    package mutating func appendKeepingVetted(_ name: TokenName, value: String) {
        var value = value
        value.withUTF8 { appendKeepingVetted(name, value: UnsafeRawBufferPointer($0)) }
    }

    /// The same with the value's bytes (a value made for the field alone need not be a String).
    package mutating func appendKeepingVetted(_ name: TokenName, value: UnsafeRawBufferPointer) {
        let wasVetted = isVetted
        name.bytes.withUnsafeBytes { append(name: $0, value: value) }
        if wasVetted, Self.isFieldValue(value) {
            storage.withUnsafeMutablePointerToHeader { $0.pointee.vetted = true }
        }
    }

    /// `appendKeepingVetted(_:value:)` for a value its maker knows to be fit (made of printable
    /// ASCII: a request id it generated or checked), so that nothing is checked again.
    package mutating func appendKeepingVetted(_ name: TokenName, fitValue value: UnsafeRawBufferPointer) {
        assert(Self.isFieldValue(value), "appendKeepingVetted(_:fitValue:): the value has a control character")
        let wasVetted = isVetted
        name.bytes.withUnsafeBytes { append(name: $0, value: value) }
        if wasVetted { storage.withUnsafeMutablePointerToHeader { $0.pointee.vetted = true } }
    }

    /// Whether these fields are `other`'s own buffer, shared (a copy of it not appended to
    /// since): one comparison, for a responder that recognises its constant reply headers.
    package func sharesStorage(with other: HTTPHeaders) -> Bool { storage === other.storage }

    /// Makes these fields a copy of `other`'s, vetted if it was: in this value's own buffer when
    /// nothing else holds it and it has room, else in a new one. For a buffer kept and filled
    /// again answer after answer (a fresh copy of shared fields is an allocation and a free).
    package mutating func replaceFields(with other: HTTPHeaders) {
        let source = other.storage
        let used = source.used
        if isKnownUniquelyReferenced(&storage), storage.allocated >= used {
            storage.withUnsafeMutablePointers { header, target in
                source.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress {
                        UnsafeMutableRawPointer(target).copyMemory(from: base, byteCount: used)
                    }
                }
                header.pointee.used = used
                header.pointee.vetted = source.vetted
            }
        } else {
            // Room for a few more fields, so that the fields appended next fit.
            storage = source.copy(adding: 64)
            let vetted = source.vetted
            storage.withUnsafeMutablePointerToHeader { $0.pointee.vetted = vetted }
        }
        count = other.count
    }

    /// Whether these fields were vetted (and not changed since).
    package var isVetted: Bool { storage.vetted }

    /// The fields as `Name: value` lines.
    public var description: String {
        map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Calls `body` with each field's name and value bytes, in order, until it returns false;
    /// nothing is copied. The buffers are valid only during the call; each is followed in memory
    /// by a NUL (so `baseAddress` is also a C string of the field).
    func forEachRaw(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) rethrows {
        try storage.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let field = Self.field(in: all, at: offset)
                guard try body(field.name, field.value) else { return }
                offset = field.next
            }
        }
    }

    /// Calls `body` with the value of each field named `name` (case-insensitive), in order,
    /// until it returns false.
    private func forEachField(named name: String, _ body: (UnsafeRawBufferPointer) -> Bool) {
        var name = name
        name.withUTF8 { wanted in
            forEachRaw { fieldName, value in
                guard Self.namesMatch(fieldName, UnsafeRawBufferPointer(wanted)) else { return true }
                return body(value)
            }
        }
    }

    /// The field whose prefix starts at `offset`, and where the next one starts.
    @inline(__always)
    private static func field(in all: UnsafeRawBufferPointer, at offset: Int)
        -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, next: Int)
    {
        let nameCount = Int(UInt32(littleEndian: all.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let valueCount = Int(UInt32(littleEndian: all.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)))
        let nameStart = offset + prefixBytes
        let valueStart = nameStart + nameCount + 1
        return (
            UnsafeRawBufferPointer(rebasing: all[nameStart..<nameStart + nameCount]),
            UnsafeRawBufferPointer(rebasing: all[valueStart..<valueStart + valueCount]),
            valueStart + valueCount + 1
        )
    }

    /// ASCII case-insensitive comparison of two field names, byte by byte (no lowercased copies).
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in namesMatch(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right)) }
        }
    }

    /// ASCII case-insensitive comparison of two field names' bytes.
    static func namesMatch(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        guard left.count == right.count else { return false }
        for index in 0..<left.count {
            // Setting bit 5 lowercases ASCII letters; only letters may differ in that bit.
            let a = left[index]
            let b = right[index]
            if a == b { continue }
            let lowerA = a | 0x20
            guard lowerA == b | 0x20, lowerA >= UInt8(ascii: "a"), lowerA <= UInt8(ascii: "z") else { return false }
        }
        return true
    }

    /// Whether `name` (bytes) is `lowercase`, ASCII case-insensitively. `lowercase` is made of
    /// lowercase letters and "-" (a field name): compared 8 (or 4) bytes at a time, a name byte may
    /// differ from it only in bit 5 and only where it has a letter (bit 6 set), so "-" never
    /// matches CR. A name of 4 to 16 bytes takes two loads from each side, the second overlapping
    /// the first where the length is not a multiple of the word (a byte loop for the tail cost
    /// ≈ 5 instructions a byte: Content-Length's 6 of 14, in every request).
    @inline(__always)
    static func name(_ name: UnsafeRawBufferPointer, is lowercase: StaticString) -> Bool {
        let n = lowercase.utf8CodeUnitCount
        guard name.count == n else { return false }
        guard n > 0 else { return true }
        let target = UnsafeRawPointer(lowercase.utf8Start)
        let source = name.baseAddress!
        @inline(__always) func same64(_ offset: Int) -> Bool {
            let wanted = target.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let caseBits = (wanted & 0x4040_4040_4040_4040) >> 1
            return source.loadUnaligned(fromByteOffset: offset, as: UInt64.self) | caseBits == wanted
        }
        @inline(__always) func same32(_ offset: Int) -> Bool {
            let wanted = target.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            let caseBits = (wanted & 0x4040_4040) >> 1
            return source.loadUnaligned(fromByteOffset: offset, as: UInt32.self) | caseBits == wanted
        }
        if n >= 8 && n <= 16 { return same64(0) && same64(n - 8) }
        if n >= 4 && n < 8 { return same32(0) && same32(n - 4) }
        var i = 0
        while i + 8 <= n {
            if !same64(i) { return false }
            i += 8
        }
        while i < n {
            let wanted = target.load(fromByteOffset: i, as: UInt8.self)
            if source.load(fromByteOffset: i, as: UInt8.self) | ((wanted & 0x40) >> 1) != wanted { return false }
            i += 1
        }
        return true
    }

    /// The value of a Content-Length field: its decimal digits as a number; nil when it has
    /// anything but digits (libmicrohttpd refuses such heads itself) or does not fit an Int.
    static func decimalValue(_ value: UnsafeRawBufferPointer) -> Int? {
        var n = 0
        for b in value {
            guard b >= 0x30 && b <= 0x39 else { return nil }
            let (times10, overflow1) = n.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(b - 0x30))
            if overflow1 || overflow2 { return nil }
            n = sum
        }
        return n
    }

    /// Whether `bytes` are exactly `text` (case-sensitive).
    static func bytes(_ bytes: UnsafeRawBufferPointer, are text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount
            && (bytes.isEmpty || memcmp(bytes.baseAddress!, text.utf8Start, bytes.count) == 0)
    }

    /// Whether `bytes` is an RFC 9110 token (letters, digits and !#$%&'*+-.^_`|~): what a field
    /// name must be, so that it cannot smuggle a ":", a space or a line break.
    static func isToken(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty else { return false }
        for b in bytes where !isTokenByte(b) { return false }
        return true
    }

    /// One bit per ASCII byte that may appear in a token: two 64-bit masks, no table in memory.
    @inline(__always)
    static func isTokenByte(_ b: UInt8) -> Bool {
        // Bytes 0–63: ! # $ % & ' * + - . and 0–9.
        let low: UInt64 = 0x03FF_6CFA_0000_0000
        // Bytes 64–127: A–Z ^ _ ` a–z | ~.
        let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        let mask = b < 64 ? low : high
        return b < 128 && (mask >> UInt64(b & 63)) & 1 == 1
    }

    /// Whether `value` has no control characters but tab (RFC 9110 §5.5): a CR or LF here would
    /// let a responder that echoes client input inject header lines (response splitting).
    static func isFieldValue(_ value: UnsafeRawBufferPointer) -> Bool {
        for b in value where !(b == 0x09 || (b >= 0x20 && b != 0x7F)) { return false }
        return true
    }
}

/// The bytes of a set of header fields: a growable buffer shared copy-on-write by `HTTPHeaders`
/// values.
@usableFromInline final class FieldBytes: ManagedBuffer<FieldBytes.Header, UInt8> {
    /// Bytes allocated and bytes in use.
    @usableFromInline struct Header {
        var capacity: Int
        var used: Int
        /// Whether every field was found fit to send (names tokens, values without control
        /// characters); set only by `HTTPHeaders.vetted()`, on a buffer nothing else holds yet.
        var vetted = false
    }

    /// The buffer of every empty `HTTPHeaders` (never written: appending copies it first).
    nonisolated(unsafe) static let empty = make(capacity: 0)

    /// A new, empty buffer of at least `capacity` bytes.
    static func make(capacity: Int) -> FieldBytes {
        let buffer = create(minimumCapacity: capacity) { Header(capacity: $0.capacity, used: 0) }
        // `create` returns the ManagedBuffer base type; the instance is of this subclass.
        return unsafeDowncast(buffer, to: FieldBytes.self)
    }

    /// The bytes in use.
    var used: Int { withUnsafeMutablePointerToHeader { $0.pointee.used } }

    /// The bytes allocated.
    var allocated: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    /// Whether every field is known fit to send.
    var vetted: Bool { withUnsafeMutablePointerToHeader { $0.pointee.vetted } }

    /// Whether `size` more bytes fit.
    func hasRoom(for size: Int) -> Bool {
        withUnsafeMutablePointerToHeader { $0.pointee.capacity - $0.pointee.used >= size }
    }

    /// A new buffer holding this one's bytes with room for `size` more (at least twice the room
    /// of this one, so that appending field after field copies rarely).
    func copy(adding size: Int) -> FieldBytes {
        withUnsafeMutablePointers { header, source in
            let used = header.pointee.used
            let copy = FieldBytes.make(capacity: Swift.max(used + size, header.pointee.capacity * 2, 128))
            copy.withUnsafeMutablePointers { copyHeader, target in
                target.update(from: source, count: used)
                copyHeader.pointee.used = used
            }
            return copy
        }
    }

    /// Calls `body` with the bytes in use (valid only during the call; do not mutate).
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { header, elements in
            try body(UnsafeRawBufferPointer(start: elements, count: header.pointee.used))
        }
    }
}
