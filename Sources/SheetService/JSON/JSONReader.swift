// A strict RFC 8259 JSON reader over raw UTF-8 bytes. Pure Swift, no Foundation.
//
// Accepts exactly the JSON-text grammar of RFC 8259 (any value at top level,
// surrounded by optional whitespace) and rejects everything else, each with a
// `JSONError` naming the byte offset:
//   - empty or whitespace-only input;
//   - a byte order mark (RFC 8259 §8.1 lets parsers ignore one; we reject it,
//     because a client sending one is misconfigured and JSON over HTTP must not
//     carry one);
//   - anything but whitespace after the value;
//   - trailing commas, comments, single quotes, unquoted keys;
//   - numbers outside the grammar ("01", "+1", ".5", "1.", "1e", NaN, Infinity)
//     and numbers whose magnitude rounds to infinity ("1e999"); numbers that
//     underflow become ±0 as any correctly rounding parser does;
//   - raw control characters (< 0x20) in strings, unknown escapes, malformed
//     \u escapes, unpaired or misordered UTF-16 surrogates in \u escapes;
//   - invalid UTF-8 anywhere (overlong forms, encoded surrogates, > U+10FFFF,
//     truncated sequences, stray continuation bytes);
//   - duplicate keys in one object, compared code unit by code unit after
//     unescaping (so "a" and "\u0061" collide, "é" and "e\u0301" do not);
//   - nesting of arrays/objects deeper than `maxDepth` (default 32; a depth of
//     exactly `maxDepth` is accepted).
//
// Numbers are correctly rounded to the nearest Double: short decimals take an
// exact fast path (mantissa ≤ 2^53 and a power of ten ≤ 10^22, one IEEE
// multiply or divide), the rest go through the standard library's correctly
// rounded `Double(_: String)`.

package enum JSONReader {
    package static let defaultMaxDepth = 32

    /// Parses one JSON text. `maxDepth` bounds the nesting of arrays and objects
    /// (and so the reader's recursion); keep it small for untrusted input.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONError)
        -> JSONValue
    {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw JSONError(.emptyInput, at: 0, "empty input")
        }
        var parser = JSONParser(base: base, count: bytes.count, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    package static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONError)
        -> JSONValue
    {
        let typed = UnsafeBufferPointer(
            start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        return try parse(typed, maxDepth: maxDepth)
    }

    package static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer in result(buffer, maxDepth) }.get()
    }

    package static func parse(_ bytes: ArraySlice<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONError)
        -> JSONValue
    {
        try bytes.withUnsafeBufferPointer { buffer in result(buffer, maxDepth) }.get()
    }

    /// Parses the UTF-8 form of `text` (a Swift String is always valid Unicode,
    /// so only the JSON grammar can fail here).
    package static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in result(buffer, maxDepth) }.get()
    }

    /// Any other byte collection; contiguous ones are read in place.
    package static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONError)
        -> JSONValue
    {
        if let r = bytes.withContiguousStorageIfAvailable({ buffer in result(buffer, maxDepth) }) {
            return try r.get()
        }
        return try Array(bytes).withUnsafeBufferPointer { buffer in result(buffer, maxDepth) }.get()
    }

    private static func result(_ buffer: UnsafeBufferPointer<UInt8>, _ maxDepth: Int) -> Result<JSONValue, JSONError> {
        do throws(JSONError) {
            return .success(try parse(buffer, maxDepth: maxDepth))
        } catch {
            return .failure(error)
        }
    }

    /// The number that starts at `start` in `bytes`, read by the reader's own number parser (same
    /// grammar, same correctly rounded result, same out-of-range rejection), and the index just past
    /// it; nil where `parse` would fail inside the number. What follows the number is not looked at:
    /// a caller reading a document checks that a delimiter comes next, as the reader does.
    package static func number(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (value: Double, end: Int)? {
        guard let base = bytes.baseAddress, start >= 0, start < bytes.count else { return nil }
        var parser = JSONParser(base: base, count: bytes.count, maxDepth: defaultMaxDepth)
        parser.i = start
        do throws(JSONError) {
            let value = try parser.parseNumber()
            return (value, parser.i)
        } catch {
            return nil
        }
    }
}

// MARK: - Byte constants

private enum B {
    static let quote: UInt8 = 0x22  // "
    static let backslash: UInt8 = 0x5C  // \
    static let slash: UInt8 = 0x2F  // /
    static let comma: UInt8 = 0x2C  // ,
    static let colon: UInt8 = 0x3A  // :
    static let openBrace: UInt8 = 0x7B  // {
    static let closeBrace: UInt8 = 0x7D  // }
    static let openBracket: UInt8 = 0x5B  // [
    static let closeBracket: UInt8 = 0x5D  // ]
    static let minus: UInt8 = 0x2D  // -
    static let plus: UInt8 = 0x2B  // +
    static let dot: UInt8 = 0x2E  // .
    static let zero: UInt8 = 0x30  // 0
    static let nine: UInt8 = 0x39  // 9
    static let lowerE: UInt8 = 0x65  // e
    static let upperE: UInt8 = 0x45  // E
    static let apostrophe: UInt8 = 0x27  // '
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
}

/// Exact powers of ten representable in a Double (10^0 ... 10^22).
private let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

// MARK: - Parser

private struct JSONParser {
    let p: UnsafePointer<UInt8>
    let end: Int
    let maxDepth: Int
    var i = 0
    var depth = 0
    /// Whether the last string parsed was all ASCII (set by `parseString`).
    var lastStringASCII = true

    init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.p = base
        self.end = count
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        if end >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF {
            throw JSONError(
                .byteOrderMark, at: 0, "byte order mark (U+FEFF) is not allowed", hint: "send UTF-8 without a BOM")
        }
        skipWhitespace()
        if i == end {
            throw JSONError(.emptyInput, at: i, "empty input", hint: "only whitespace")
        }
        let value = try parseValue()
        skipWhitespace()
        if i != end {
            throw unexpected(
                at: i, kind: .trailingCharacters, hint: "after the JSON value; only whitespace may follow it")
        }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while i < end {
            let c = p[i]
            if c == B.space || c == B.lf || c == B.cr || c == B.tab {
                i &+= 1
            } else {
                return
            }
        }
    }

    // MARK: Values

    mutating func parseValue() throws(JSONError) -> JSONValue {
        // Callers guarantee i < end.
        let c = p[i]
        switch c {
        case B.quote:
            return .string(try parseString())
        case B.minus, B.zero...B.nine:
            return .number(try parseNumber())
        case B.openBrace:
            return try parseObject()
        case B.openBracket:
            return try parseArray()
        case 0x74:  // t
            try expectLiteral("true")
            return .bool(true)
        case 0x66:  // f
            try expectLiteral("false")
            return .bool(false)
        case 0x6E:  // n
            try expectLiteral("null")
            return .null
        default:
            throw unexpectedValueStart(at: i)
        }
    }

    mutating func expectLiteral(_ word: StaticString) throws(JSONError) {
        let n = word.utf8CodeUnitCount
        let w = word.utf8Start
        var k = 0
        while k < n {
            guard i + k < end else {
                throw JSONError(.unexpectedEnd, at: end, "unexpected end of input", hint: "expected \"\(word)\"")
            }
            if p[i + k] != w[k] {
                throw unexpected(at: i + k, kind: .unexpectedCharacter, hint: "expected \"\(word)\"")
            }
            k += 1
        }
        i += n
    }

    mutating func enterContainer() throws(JSONError) {
        depth += 1
        if depth > maxDepth {
            throw JSONError(.tooDeep, at: i, "nesting deeper than \(maxDepth)")
        }
    }

    mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        i += 1  // [
        skipWhitespace()
        guard i < end else { throw unexpectedEnd(hint: "expected a value or ']'") }
        if p[i] == B.closeBracket {
            i += 1
            depth -= 1
            return .array([])
        }
        var elements: [JSONValue] = []
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard i < end else { throw unexpectedEnd(hint: "expected ',' or ']'") }
            let c = p[i]
            if c == B.comma {
                let commaAt = i
                i += 1
                skipWhitespace()
                guard i < end else { throw unexpectedEnd(hint: "expected a value") }
                if p[i] == B.closeBracket {
                    throw JSONError(.trailingComma, at: commaAt, "trailing comma", hint: "remove the ',' before ']'")
                }
            } else if c == B.closeBracket {
                i += 1
                depth -= 1
                return .array(elements)
            } else {
                throw unexpected(at: i, kind: .unexpectedCharacter, hint: "expected ',' or ']'")
            }
        }
    }

    mutating func parseObject() throws(JSONError) -> JSONValue {
        try enterContainer()
        i += 1  // {
        skipWhitespace()
        guard i < end else { throw unexpectedEnd(hint: "expected a string key or '}'") }
        if p[i] == B.closeBrace {
            i += 1
            depth -= 1
            return .object(JSONObject())
        }
        var members: [JSONObject.Member] = []
        members.reserveCapacity(4)
        // Past `linearLimit` members, duplicates are found through a hash set so
        // that a hostile object with many keys stays O(n).
        let linearLimit = 16
        var seen: Set<HashableUTF8>? = nil
        var asciiKeys = true
        while true {
            // Here i < end and p[i] is not whitespace.
            guard p[i] == B.quote else {
                throw unexpected(at: i, kind: .unexpectedCharacter, hint: "expected a string key in double quotes")
            }
            let keyAt = i
            let key = try parseString()
            if members.count < linearLimit {
                if lastStringASCII {
                    // An ASCII key: `==` with equal byte length means identical
                    // code units (see JSONObject's subscript), and is fast.
                    let n = key.utf8.count
                    for m in members where m.key.utf8.count == n && m.key == key {
                        throw duplicateKey(key, at: keyAt)
                    }
                } else {
                    for m in members where JSONObject.sameKey(m.key, key) {
                        throw duplicateKey(key, at: keyAt)
                    }
                }
            } else {
                if seen == nil {
                    seen = Set(members.map { HashableUTF8($0.key) })
                }
                if seen!.insert(HashableUTF8(key)).inserted == false {
                    throw duplicateKey(key, at: keyAt)
                }
            }
            skipWhitespace()
            guard i < end else { throw unexpectedEnd(hint: "expected ':'") }
            guard p[i] == B.colon else {
                throw unexpected(at: i, kind: .unexpectedCharacter, hint: "expected ':' after the key")
            }
            i += 1
            skipWhitespace()
            guard i < end else { throw unexpectedEnd(hint: "expected a value") }
            asciiKeys = asciiKeys && lastStringASCII
            let value = try parseValue()
            members.append((key: key, value: value))
            skipWhitespace()
            guard i < end else { throw unexpectedEnd(hint: "expected ',' or '}'") }
            let c = p[i]
            if c == B.comma {
                let commaAt = i
                i += 1
                skipWhitespace()
                guard i < end else { throw unexpectedEnd(hint: "expected a string key") }
                if p[i] == B.closeBrace {
                    throw JSONError(.trailingComma, at: commaAt, "trailing comma", hint: "remove the ',' before '}'")
                }
            } else if c == B.closeBrace {
                i += 1
                depth -= 1
                return .object(JSONObject(members: members, asciiKeys: asciiKeys))
            } else {
                throw unexpected(at: i, kind: .unexpectedCharacter, hint: "expected ',' or '}'")
            }
        }
    }

    // MARK: Strings

    /// Parses a string whose opening quote is at `i`; leaves `i` after the closing quote.
    mutating func parseString() throws(JSONError) -> String {
        let p = self.p
        let end = self.end
        let start = i + 1
        var j = start
        var ascii = true
        while true {
            // Skip 8 plain bytes at a time (SWAR): stop at the first byte that is
            // '"', '\\', a control character (< 0x20) or non-ASCII (≥ 0x80).
            while j &+ 8 <= end {
                let w = UInt64(littleEndian: UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self))
                let special = JSONParser.specialBytes(w)
                if special != 0 {
                    j &+= special.trailingZeroBitCount >> 3
                    break
                }
                j &+= 8
            }
            guard j < end else { throw unterminatedString(openedAt: start - 1) }
            let c = p[j]
            if c == B.quote {
                i = j + 1
                lastStringASCII = ascii
                return String(decoding: UnsafeBufferPointer(start: p + start, count: j - start), as: UTF8.self)
            }
            if c == B.backslash {
                return try parseEscapedString(start: start, firstEscape: j, ascii: ascii)
            }
            if c < 0x20 {
                throw controlCharacter(at: j)
            }
            if c >= 0x80 {
                ascii = false
                j = try utf8SequenceEnd(at: j)
            } else {
                j &+= 1
            }
        }
    }

    /// High bit set in each byte of `w` that is '"', '\\', < 0x20 or ≥ 0x80. Bits
    /// above the lowest flagged byte may be spurious (borrows), the lowest is exact.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let q = w ^ (ones &* 0x22)  // zero bytes where '"'
        let b = w ^ (ones &* 0x5C)  // zero bytes where '\\'
        let zeroQ = (q &- ones) & ~q
        let zeroB = (b &- ones) & ~b
        let control = (w &- ones &* 0x20) & ~w  // bytes < 0x20 (and spurious above them)
        return (zeroQ | zeroB | control | w) & high
    }

    /// Slow path: the string has escapes. Unescaped runs are copied in bulk.
    mutating func parseEscapedString(start: Int, firstEscape: Int, ascii: Bool) throws(JSONError) -> String {
        var ascii = ascii
        var out: [UInt8] = []
        out.reserveCapacity(firstEscape - start + 16)
        var runStart = start
        var j = firstEscape
        while j < end {
            let c = p[j]
            if c == B.quote {
                out.append(contentsOf: UnsafeBufferPointer(start: p + runStart, count: j - runStart))
                i = j + 1
                lastStringASCII = ascii
                return String(decoding: out, as: UTF8.self)
            }
            if c == B.backslash {
                out.append(contentsOf: UnsafeBufferPointer(start: p + runStart, count: j - runStart))
                let before = out.count
                j = try decodeEscape(at: j, into: &out)
                if out[before] >= 0x80 { ascii = false }
                runStart = j
                continue
            }
            if c < 0x20 {
                throw controlCharacter(at: j)
            }
            if c >= 0x80 {
                ascii = false
                j = try utf8SequenceEnd(at: j)
            } else {
                j += 1
            }
        }
        throw unterminatedString(openedAt: start - 1)
    }

    /// Decodes the escape starting with the backslash at `j`; returns the index after it.
    func decodeEscape(at j: Int, into out: inout [UInt8]) throws(JSONError) -> Int {
        guard j + 1 < end else {
            throw JSONError(
                .unexpectedEnd, at: end, "unexpected end of input", hint: "unfinished escape sequence at byte \(j)")
        }
        let e = p[j + 1]
        switch e {
        case B.quote, B.backslash, B.slash: out.append(e)
        case 0x62: out.append(0x08)  // \b
        case 0x66: out.append(0x0C)  // \f
        case 0x6E: out.append(0x0A)  // \n
        case 0x72: out.append(0x0D)  // \r
        case 0x74: out.append(0x09)  // \t
        case 0x75:  // \u
            let unit = try hex4(at: j + 2, escapeAt: j)
            var scalar = UInt32(unit)
            var next = j + 6
            if unit >= 0xD800 && unit <= 0xDBFF {
                guard next + 1 < end, p[next] == B.backslash, p[next + 1] == 0x75 else {
                    throw JSONError(
                        .invalidSurrogate, at: j, "unpaired high surrogate \(escapeText(unit))",
                        hint: "it must be followed by a \\uDC00-\\uDFFF escape")
                }
                let low = try hex4(at: next + 2, escapeAt: next)
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw JSONError(
                        .invalidSurrogate, at: next,
                        "\(escapeText(low)) cannot follow high surrogate \(escapeText(unit))",
                        hint: "expected a low surrogate \\uDC00-\\uDFFF")
                }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                next += 6
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw JSONError(
                    .invalidSurrogate, at: j, "unpaired low surrogate \(escapeText(unit))",
                    hint: "a low surrogate must follow a high surrogate \\uD800-\\uDBFF")
            }
            appendUTF8(scalar, to: &out)
            return next
        default:
            if e >= 0x80 {
                _ = try utf8SequenceEnd(at: j + 1)  // invalid UTF-8 is reported as such
            }
            let what =
                e >= 0x21 && e < 0x7F
                ? "invalid escape '\\\(Character(Unicode.Scalar(e)))'"
                : "invalid escape: backslash before \(describeByte(at: j + 1))"
            throw JSONError(
                .invalidEscape, at: j, what,
                hint: "valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
        return j + 2
    }

    func hex4(at k: Int, escapeAt: Int) throws(JSONError) -> UInt16 {
        guard k + 4 <= end else {
            // Report a bad digit before the end if there is one.
            var m = k
            while m < end {
                if hexValue(p[m]) == nil { throw badHex(at: m, escapeAt: escapeAt) }
                m += 1
            }
            throw JSONError(
                .unexpectedEnd, at: end, "unexpected end of input", hint: "unfinished \\u escape at byte \(escapeAt)")
        }
        var v: UInt16 = 0
        for m in k..<(k + 4) {
            guard let d = hexValue(p[m]) else { throw badHex(at: m, escapeAt: escapeAt) }
            v = v << 4 | UInt16(d)
        }
        return v
    }

    @inline(__always)
    func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    @inline(never)
    func badHex(at m: Int, escapeAt: Int) -> JSONError {
        if p[m] >= 0x80, let e = utf8Error(at: m) { return e }
        return JSONError(
            .invalidEscape, at: escapeAt, "invalid \\u escape",
            hint: "\(describeByte(at: m)) at byte \(m) is not a hex digit; \\u needs exactly 4")
    }

    func appendUTF8(_ s: UInt32, to out: inout [UInt8]) {
        if s < 0x80 {
            out.append(UInt8(s))
        } else if s < 0x800 {
            out.append(UInt8(0xC0 | (s >> 6)))
            out.append(UInt8(0x80 | (s & 0x3F)))
        } else if s < 0x10000 {
            out.append(UInt8(0xE0 | (s >> 12)))
            out.append(UInt8(0x80 | ((s >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (s & 0x3F)))
        } else {
            out.append(UInt8(0xF0 | (s >> 18)))
            out.append(UInt8(0x80 | ((s >> 12) & 0x3F)))
            out.append(UInt8(0x80 | ((s >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (s & 0x3F)))
        }
    }

    // MARK: UTF-8

    /// Validates the multi-byte UTF-8 sequence whose lead byte (≥ 0x80) is at `j`
    /// (RFC 3629 table 1: no overlongs, no surrogates, nothing above U+10FFFF)
    /// and returns the index just past it.
    @inline(__always)
    func utf8SequenceEnd(at j: Int) throws(JSONError) -> Int {
        let c = p[j]
        @inline(__always) func cont(_ k: Int) -> Bool { k < end && p[k] & 0xC0 == 0x80 }
        @inline(__always) func within(_ k: Int, _ lo: UInt8, _ hi: UInt8) -> Bool {
            k < end && p[k] >= lo && p[k] <= hi
        }
        if c >= 0xC2 && c <= 0xDF {
            if cont(j + 1) { return j + 2 }
        } else if c >= 0xE0 && c <= 0xEF {
            let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80
            let hi: UInt8 = c == 0xED ? 0x9F : 0xBF
            if within(j + 1, lo, hi) && cont(j + 2) { return j + 3 }
        } else if c >= 0xF0 && c <= 0xF4 {
            let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80
            let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF
            if within(j + 1, lo, hi) && cont(j + 2) && cont(j + 3) { return j + 4 }
        }
        throw utf8Error(at: j)!
    }

    /// The error for an invalid sequence starting at `j`, or nil if it is valid.
    @inline(never)
    func utf8Error(at j: Int) -> JSONError? {
        let c = p[j]
        func err(_ why: String) -> JSONError { JSONError(.invalidUTF8, at: j, "invalid UTF-8", hint: why) }
        func byte(_ k: Int) -> UInt8? { k < end ? p[k] : nil }
        if c < 0x80 { return nil }
        if c < 0xC0 { return err("stray continuation byte \(hex(c))") }
        if c == 0xC0 || c == 0xC1 { return err("overlong encoding, lead byte \(hex(c))") }
        if c >= 0xF5 { return err("byte \(hex(c)) never appears in UTF-8") }
        let n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4
        for k in 1..<n {
            guard let b = byte(j + k) else { return err("sequence truncated by the end of input") }
            guard b & 0xC0 == 0x80 else { return err("sequence of \(n) bytes truncated at byte \(j + k)") }
        }
        let b1 = p[j + 1]
        if c == 0xE0 && b1 < 0xA0 { return err("overlong encoding") }
        if c == 0xF0 && b1 < 0x90 { return err("overlong encoding") }
        if c == 0xED && b1 > 0x9F { return err("UTF-16 surrogate encoded in UTF-8") }
        if c == 0xF4 && b1 > 0x8F { return err("code point above U+10FFFF") }
        return nil
    }

    // MARK: Numbers

    /// Parses a number starting at `i` (a '-' or a digit) per RFC 8259 §6.
    mutating func parseNumber() throws(JSONError) -> Double {
        let p = self.p
        let end = self.end
        let start = i
        var j = i
        var negative = false
        if p[j] == B.minus {
            negative = true
            j += 1
            guard j < end else {
                throw JSONError(.unexpectedEnd, at: end, "unexpected end of input", hint: "expected a digit after '-'")
            }
        }
        var mantissa: UInt64 = 0
        var digits = 0  // significant digits accumulated into `mantissa`
        var exact = true  // false once a significant digit does not fit in `mantissa`
        var exponent = 0  // decimal exponent applied to `mantissa`

        let first = p[j]
        if first == B.zero {
            j += 1
            if j < end && isDigit(p[j]) {
                throw JSONError(
                    .invalidNumber, at: start, "leading zero in number", hint: "only 0 itself or 0.x may start with 0")
            }
        } else if first > B.zero && first <= B.nine {
            while j < end {
                let d = p[j] &- B.zero
                if d > 9 { break }
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    digits += 1
                } else {
                    exact = false
                    exponent += 1
                }
                j += 1
            }
        } else {
            throw invalidNumberStart(at: j, numberAt: start)
        }

        if j < end && p[j] == B.dot {
            j += 1
            guard j < end, isDigit(p[j]) else {
                if j == end {
                    throw JSONError(
                        .unexpectedEnd, at: end, "unexpected end of input", hint: "expected a digit after '.'")
                }
                throw JSONError(
                    .invalidNumber, at: j, "expected a digit after '.'", hint: "in number starting at byte \(start)")
            }
            while j < end {
                let d = p[j] &- B.zero
                if d > 9 { break }
                if mantissa == 0 && d == 0 {
                    exponent -= 1  // leading zeros of the fraction
                } else if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    digits += 1
                    exponent -= 1
                } else {
                    exact = false
                }
                j += 1
            }
        }

        if j < end && (p[j] == B.lowerE || p[j] == B.upperE) {
            j += 1
            var expNegative = false
            if j < end && (p[j] == B.plus || p[j] == B.minus) {
                expNegative = p[j] == B.minus
                j += 1
            }
            guard j < end, isDigit(p[j]) else {
                if j == end {
                    throw JSONError(
                        .unexpectedEnd, at: end, "unexpected end of input", hint: "expected a digit in the exponent")
                }
                throw JSONError(
                    .invalidNumber, at: j, "expected a digit in the exponent",
                    hint: "in number starting at byte \(start)")
            }
            var e = 0
            while j < end {
                let d = p[j] &- B.zero
                if d > 9 { break }
                if e < 1_000_000 { e = e * 10 + Int(d) }
                j += 1
            }
            exponent += expNegative ? -e : e
        }
        i = j

        // Exact fast path (Clinger): both operands exact, one correctly rounded operation.
        if exact {
            if mantissa == 0 {
                return negative ? -0.0 : 0.0
            }
            if mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
                let m = Double(mantissa)
                let v = exponent >= 0 ? m * exactPowersOfTen[exponent] : m / exactPowersOfTen[-exponent]
                return negative ? -v : v
            }
        }
        return try slowNumber(from: start, to: j)
    }

    @inline(never)
    func slowNumber(from start: Int, to stop: Int) throws(JSONError) -> Double {
        let text = String(decoding: UnsafeBufferPointer(start: p + start, count: stop - start), as: UTF8.self)
        // The grammar was checked above, so the standard library accepts the text;
        // it returns ±infinity when the magnitude overflows.
        guard let v = Double(text), v.isFinite else {
            throw JSONError(
                .numberOutOfRange, at: start, "number \(describeNumber(from: start, to: stop)) is out of range",
                hint: "the largest finite value is 1.7976931348623157e308")
        }
        return v
    }

    @inline(__always)
    func isDigit(_ c: UInt8) -> Bool { c &- B.zero <= 9 }

    // MARK: Errors (cold)

    @inline(never)
    func unexpectedEnd(hint: String) -> JSONError {
        JSONError(.unexpectedEnd, at: end, "unexpected end of input", hint: hint)
    }

    @inline(never)
    func unterminatedString(openedAt q: Int) -> JSONError {
        JSONError(.unexpectedEnd, at: end, "unexpected end of input", hint: "string opened at byte \(q) is not closed")
    }

    @inline(never)
    func controlCharacter(at j: Int) -> JSONError {
        let c = p[j]
        let name: String
        switch c {
        case 0x0A: name = "line feed; write \\n"
        case 0x0D: name = "carriage return; write \\r"
        case 0x09: name = "tab; write \\t"
        default: name = "write \\u00\(hex2(c))"
        }
        return JSONError(
            .controlCharacterInString, at: j, "unescaped control character U+00\(hex2(c)) in string", hint: name)
    }

    @inline(never)
    func duplicateKey(_ key: String, at k: Int) -> JSONError {
        JSONError(.duplicateKey, at: k, "duplicate key \(quoted(key))")
    }

    /// An error for the byte at `k` where a value should start.
    @inline(never)
    func unexpectedValueStart(at k: Int) -> JSONError {
        let c = p[k]
        if c == B.plus { return JSONError(.invalidNumber, at: k, "a number cannot start with '+'") }
        if c == B.dot { return JSONError(.invalidNumber, at: k, "a number needs a digit before '.'") }
        if c == B.comma {
            return JSONError(
                .unexpectedCharacter, at: k, "unexpected character ','",
                hint: "expected a value; empty elements are not allowed")
        }
        if startsWith("NaN", at: k) || startsWith("Infinity", at: k) {
            return JSONError(
                .unexpectedCharacter, at: k, "unexpected character \(describeByte(at: k))",
                hint: "NaN and Infinity are not JSON numbers")
        }
        return unexpected(at: k, kind: .unexpectedCharacter, hint: "expected a value")
    }

    @inline(never)
    func invalidNumberStart(at k: Int, numberAt start: Int) -> JSONError {
        if startsWith("Infinity", at: k) {
            return JSONError(
                .unexpectedCharacter, at: k, "unexpected character 'I'", hint: "Infinity is not a JSON number")
        }
        if p[k] >= 0x80, let e = utf8Error(at: k) { return e }
        return JSONError(.invalidNumber, at: k, "expected a digit after '-'", hint: "found \(describeByte(at: k))")
    }

    /// A generic "unexpected X" error, recognising comments, single quotes and bad UTF-8.
    @inline(never)
    func unexpected(at k: Int, kind: JSONError.Kind, hint: String) -> JSONError {
        let c = p[k]
        if c >= 0x80, let e = utf8Error(at: k) { return e }
        if c == B.slash && k + 1 < end && (p[k + 1] == B.slash || p[k + 1] == 0x2A) {
            return JSONError(.comment, at: k, "comments are not allowed in JSON")
        }
        if c == B.apostrophe {
            return JSONError(.singleQuote, at: k, "single-quoted strings are not allowed", hint: "use double quotes")
        }
        return JSONError(kind, at: k, "unexpected character \(describeByte(at: k))", hint: hint)
    }

    func startsWith(_ word: StaticString, at k: Int) -> Bool {
        let n = word.utf8CodeUnitCount
        guard k + n <= end else { return false }
        for m in 0..<n where p[k + m] != word.utf8Start[m] { return false }
        return true
    }

    /// 'x' for printable ASCII, U+XXXX for control characters, the decoded character for valid UTF-8.
    func describeByte(at k: Int) -> String {
        guard k < end else { return "end of input" }
        let c = p[k]
        if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        if c < 0x80 { return "U+00\(hex2(c))" }
        if utf8Error(at: k) == nil, let n = try? utf8SequenceEnd(at: k) {
            return "'\(String(decoding: UnsafeBufferPointer(start: p + k, count: n - k), as: UTF8.self))'"
        }
        return "byte \(hex(c))"
    }

    func describeNumber(from start: Int, to stop: Int) -> String {
        let n = min(stop - start, 40)
        let text = String(decoding: UnsafeBufferPointer(start: p + start, count: n), as: UTF8.self)
        return n < stop - start ? text + "…" : text
    }

    func escapeText(_ unit: UInt16) -> String {
        "\\u" + hex2(UInt8(unit >> 8)) + hex2(UInt8(unit & 0xFF))
    }
}

// MARK: - Helpers

private func hex2(_ c: UInt8) -> String {
    let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
    return String([digits[Int(c >> 4)], digits[Int(c & 0xF)]])
}

private func hex(_ c: UInt8) -> String { "0x" + hex2(c) }

/// A key in double quotes for messages, with quotes, backslashes and control characters escaped, cut at 60 characters.
private func quoted(_ s: String) -> String {
    var out = "\""
    var n = 0
    for ch in s.unicodeScalars {
        if n == 60 {
            out += "…"
            break
        }
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where ch.value < 0x20: out += "\\u00" + hex2(UInt8(ch.value))
        default: out.unicodeScalars.append(ch)
        }
        n += 1
    }
    return out + "\""
}

/// A String hashed and compared by its UTF-8 code units.
private struct HashableUTF8: Hashable {
    let s: String
    init(_ s: String) { self.s = s }
    static func == (a: HashableUTF8, b: HashableUTF8) -> Bool { JSONObject.sameKey(a.s, b.s) }
    func hash(into h: inout Hasher) {
        for b in s.utf8 { h.combine(b) }
    }
}
