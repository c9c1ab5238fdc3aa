// JSONReader: the accept/reject tables (JSONFixtures.swift), error offsets and messages, depth,
// duplicate keys, entry points, numbers.

import MicroHTTP
import SheetdTesting
import Testing

@testable import SheetService

@Suite("JSON reader")
struct JSONReaderTests {
    @Test("accepts valid JSON", arguments: acceptCases)
    func accepts(_ c: JSONAcceptCase) {
        switch parse(c.bytes) {
        case .success(let v):
            #expect(v == c.expected, "\(c.name)")
        case .failure(let e):
            Issue.record("\(c.name): rejected: \(e.message)")
        }
    }

    @Test("rejects invalid JSON", arguments: rejectCases)
    func rejects(_ c: JSONRejectCase) {
        switch parse(c.bytes) {
        case .success(let v):
            Issue.record("\(c.name): accepted as \(v)")
        case .failure(let e):
            #expect(e.kind == c.kind, "\(c.name): \(e.message)")
            #expect(e.offset >= 0 && e.offset <= c.bytes.count, "\(c.name): offset \(e.offset)")
            #expect(e.message.contains("at byte \(e.offset)"), "\(c.name): \(e.message)")
        }
    }

    @Test func tableSizes() {
        #expect(acceptCases.count + rejectCases.count >= 60)
    }

    // MARK: Error offsets and messages

    @Test func duplicateKeyMessage() {
        let text = #"{"phase":"changed","velocity":-800,"velocity":1}"#
        let e = parseError(bytes(text))
        #expect(e?.kind == .duplicateKey)
        #expect(e?.offset == 35)  // the second "velocity"'s opening quote
        #expect(e?.message == #"duplicate key "velocity" at byte 35"#)
    }

    @Test func trailingCommaOffset() {
        let e = parseError(bytes("[1,2,]"))
        #expect(e?.offset == 4)
        #expect(e?.message.hasPrefix("trailing comma at byte 4") == true)
    }

    @Test func depthErrorOffset() {
        let e = parseError(bytes(nested(33)))
        #expect(e?.kind == .tooDeep)
        #expect(e?.offset == 32)  // the 33rd '['
        #expect(e?.message == "nesting deeper than 32 at byte 32")
    }

    @Test func numberOutOfRangeMessage() {
        let e = parseError(bytes(#"{"t":1e999}"#))
        #expect(e?.offset == 5)
        #expect(e?.message.hasPrefix("number 1e999 is out of range at byte 5") == true)
    }

    @Test func invalidUTF8Offset() {
        let e = parseError([0x22, 0x61, 0x62, 0xFF, 0x22])
        #expect(e?.kind == .invalidUTF8)
        #expect(e?.offset == 3)
        #expect(e?.message.hasPrefix("invalid UTF-8 at byte 3") == true)
    }

    @Test func unexpectedCharacterMessage() {
        let e = parseError(bytes(#"{"velocity":NaN}"#))
        #expect(e?.offset == 12)
        #expect(e?.message.hasPrefix("unexpected character 'N' at byte 12") == true)
    }

    @Test func controlCharacterOffset() {
        let e = parseError(bytes("{\"a\":\"x\ty\"}"))
        #expect(e?.kind == .controlCharacterInString)
        #expect(e?.offset == 7)
    }

    @Test func unexpectedEndOffsetIsInputLength() {
        let e = parseError(bytes(#"{"a":[1,2"#))
        #expect(e?.kind == .unexpectedEnd)
        #expect(e?.offset == 9)
    }

    @Test func surrogateErrorPointsAtEscape() {
        let e = parseError(bytes(#"["ab\uDC00"]"#))
        #expect(e?.kind == .invalidSurrogate)
        #expect(e?.offset == 4)
    }

    // MARK: Depth

    @Test func depthBoundaryForArraysAndObjects() {
        #expect(parseError(bytes(nested(32))) == nil)
        #expect(parseError(bytes(nested(33)))?.kind == .tooDeep)
        let objects32 = nested(32, open: #"{"k":"#, close: "}", inner: "true")
        #expect(parseError(bytes(objects32)) == nil)
        let mixed33 = nested(16, open: #"{"k":["#, close: "]}", inner: "[]")
        #expect(parseError(bytes(mixed33))?.kind == .tooDeep)
    }

    @Test func customMaxDepth() {
        #expect(parseError(bytes("[[1]]"), maxDepth: 2) == nil)
        #expect(parseError(bytes("[[[1]]]"), maxDepth: 2)?.message == "nesting deeper than 2 at byte 2")
        #expect(parseError(bytes("7"), maxDepth: 0) == nil)  // scalars have depth 0
        #expect(parseError(bytes("[]"), maxDepth: 0)?.kind == .tooDeep)
    }

    // MARK: Duplicate keys in large objects (hash path)

    @Test func duplicateKeysInLargeObject() {
        let members = (0..<100).map { #""k\#($0)":\#($0)"# }
        #expect(parseError(bytes("{" + members.joined(separator: ",") + "}")) == nil)
        let dup = members + [#""k\u0037":1"#]  // "k7" spelled with an escape, after the switch to hashing
        let e = parseError(bytes("{" + dup.joined(separator: ",") + "}"))
        #expect(e?.kind == .duplicateKey)
        #expect(e?.message.hasPrefix(#"duplicate key "k7""#) == true)
    }

    // MARK: Entry points

    @Test func entryPointsAgree() throws {
        let bytes = bytes(panBody)
        let expected = try JSONReader.parse(bytes)
        #expect(try JSONReader.parse(panBody) == expected)
        #expect(try JSONReader.parse(bytes[...]) == expected)
        #expect(try bytes.withUnsafeBytes { try JSONReader.parse($0) } == expected)
        #expect(try JSONReader.parse(bytes.lazy.map { $0 }) == expected)  // non-contiguous collection
        #expect(expected["velocity"]?.double == -800)
        #expect(expected["phase"]?.string == "changed")
        #expect(expected.object?.keys == ["phase", "translation", "velocity", "time"])
        #expect(expected["missing"] == nil)
    }

    // MARK: Numbers

    @Test func numbersParseCorrectlyRounded() throws {
        let cases: [(String, Double)] = [
            ("0.1", 0.1),
            ("1e23", 1e23),  // not exactly representable; classic fast-path trap
            ("1e22", 1e22),
            ("9007199254740993", 9_007_199_254_740_992),  // 2^53 + 1 rounds to even
            ("9007199254740995", 9_007_199_254_740_996),
            ("2.2250738585072011e-308", Double(bitPattern: 0x000F_FFFF_FFFF_FFFF)),  // rounds to the largest subnormal
            ("2.2250738585072014e-308", 2.2250738585072014e-308),  // smallest normal
            ("4.9406564584124654e-324", .leastNonzeroMagnitude),
            ("0.30000000000000004", 0.30000000000000004),
            ("123456789012345678901234567890", 1.2345678901234568e29),
            ("0.000000000000000000000000000001", 1e-30),
            ("-120.5", -120.5),
            ("12.25", 12.25),
            ("1.7976931348623157e308", 1.7976931348623157e308),
            ("1.7976931348623158e308", 1.7976931348623157e308),  // still rounds down to max
        ]
        for (text, expected) in cases {
            let v = try JSONReader.parse(text)
            #expect(v.double?.bitPattern == expected.bitPattern, "\(text) → \(String(describing: v.double))")
        }
        let negZero = try JSONReader.parse("-0").double
        #expect(negZero?.bitPattern == (-0.0 as Double).bitPattern)
    }

    /// Differential test against the standard library's correctly rounded parser,
    /// concentrated around the fast path's limits (2^53 mantissas, 10^±22).
    @Test func numbersMatchStandardLibrary() throws {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<20_000 {
            let digitCount = Int(rng.next() % 20) + 1
            var digits = ""
            for k in 0..<digitCount {
                let d = rng.next() % 10
                digits += String(k == 0 && digitCount > 1 ? max(d, 1) : d)
            }
            let pointAt = Int(rng.next() % UInt64(digitCount + 1))
            var text = digits
            if pointAt > 0 && pointAt < digitCount {
                text.insert(".", at: text.index(text.startIndex, offsetBy: pointAt))
            }
            if rng.next() % 2 == 0 {
                text += "e" + String(Int(rng.next() % 61) - 30)
            }
            if rng.next() % 3 == 0 { text = "-" + text }
            let ours = try JSONReader.parse(text).double!
            let reference = Double(text)!
            #expect(ours.bitPattern == reference.bitPattern, "\(text)")
        }
    }

    @Test func numberRoundTripsBitExactly() throws {
        var values: [Double] = [
            0.1, 0.2, 0.3, 1e22, 1e23, .leastNonzeroMagnitude, 1.7976931348623157e308, -0.0, 0, 1, -1, 30, 278, 398.5,
            0.7, 0.68,
            12.25, -120.5, -800, 1e15, 1e16, 123456789012345.6, 9_007_199_254_740_992, 9_007_199_254_740_994,
            2.2250738585072014e-308,
            Double.leastNormalMagnitude, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, .pi, -.ulpOfOne,
            1e-5, 1e-7, 1e21, 4.35, 0.1 + 0.2,
        ]
        var rng = SplitMix64(seed: 42)
        for _ in 0..<20_000 {  // random finite bit patterns (all magnitudes, both signs)
            let x = Double(bitPattern: rng.next())
            if x.isFinite { values.append(x) }
        }
        for _ in 0..<2_000 {  // subnormals
            values.append(Double(bitPattern: rng.next() & ((1 << 52) - 1)))
        }
        for _ in 0..<5_000 {  // values a sheet actually produces: short decimals
            values.append(Double(Int64(bitPattern: rng.next()) % 1_000_000) / 100)
        }
        var w = JSONWriter(capacity: 64)
        for x in values {
            w.reset()
            w.number(x)
            let back = try JSONReader.parse(w.bytes).double
            #expect(back?.bitPattern == x.bitPattern, "\(x) wrote \(w.text)")
        }
    }
}
