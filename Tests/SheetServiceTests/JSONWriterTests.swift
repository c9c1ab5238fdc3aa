// JSONWriter and JSONValue: escapes, numbers, the reply schema, round trips through the reader.

import MicroHTTP
import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

@Suite("JSON writer")
struct JSONWriterTests {

    @Test(arguments: [
        ("plain", "abc", #""abc""#),  // nothing to escape
        ("quote", "a\"b", #""a\"b""#),  // quote gets a backslash
        ("backslash", "a\\b", #""a\\b""#),  // backslash doubled
        ("short escapes", "\u{8}\u{C}\n\r\t", #""\b\f\n\r\t""#),  // named control escapes
        ("other control", "\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#),  // \u00XX for the rest
        ("non-ASCII kept", "\u{E9}\u{1D11E}", "\"\u{E9}\u{1D11E}\""),  // UTF-8 copied unchanged
        ("slash and DEL kept", "/\u{7F}", "\"/\u{7F}\""),  // no escape needed
        ("long run", String(repeating: "x", count: 40) + "\"", "\"" + String(repeating: "x", count: 40) + "\\\"\""),  // bulk copy then escape
        ("empty", "", #""""#),  // empty string
    ])
    func writerEscapes(_ row: (String, String, String)) {
        var w = JSONWriter()
        w.string(row.1)
        #expect(w.text == row.2, "\(row.0)")
    }

    /// Strings of every length up to 24 with one character needing an escape at every place, and
    /// none: escaped as a byte-by-byte reference escapes them (a string is tested a word at a
    /// time, then copied whole when nothing needs an escape).
    @Test func writerEscapesAtEveryPlace() {
        func reference(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\u{8}": out += "\\b"
                case "\u{C}": out += "\\f"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where u.value < 0x20:
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(u)
                }
            }
            return out + "\""
        }
        for n in 0...24 {
            let plain = String((0..<n).map { Character(UnicodeScalar(UInt8(0x61 + $0 % 26))) })
            var cases = [plain, plain + "\u{E9}", "\u{7F}" + plain + "~ "]
            for j in 0..<n {
                for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}", "\u{0}"] {
                    var chars = Array(plain)
                    chars[j] = Character(special)
                    cases.append(String(chars))
                }
            }
            for text in cases {
                var w = JSONWriter(capacity: 16)
                w.string(text)
                #expect(w.text == reference(text), "\(Array(text.utf8))")
            }
        }
    }

    @Test(
        arguments: [
            (30.0, "30"),  // integral without .0
            (278.0, "278"),
            (398.5, "398.5"),
            (-120.5, "-120.5"),
            (0.7, "0.7"),
            (0.1 + 0.2, "0.30000000000000004"),  // shortest round trip
            (-0.0, "-0"),  // sign of zero kept
            (0.0, "0"),
            (1e22, "1e+22"),  // exponent form is valid JSON
            (1e-5, "1e-05"),
            (.leastNonzeroMagnitude, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (123456789012345.0, "123456789012345"),  // integer fast path
            (9007199254740992.0, "9007199254740992"),  // ".0" stripped from printed form
            (0.25, "0.25"),  // short decimal: integer arithmetic, no float printing
            (0.618502133, "0.618502133"),  // 9 decimals (a server time in ns): still the short path
            (0.6335699180000001, "0.6335699180000001"),  // more than 9 decimals: the general printer
            (0.0001, "0.0001"),  // smallest magnitude of the short path, still decimal notation
            (0.00009, "9e-05"),  // below it Swift prints an exponent: the general printer
            (1_048_575.5, "1048575.5"),  // just under 2^20, the short path's bound
            (1_048_576.5, "1048576.5"),  // at 2^20 and over: the general printer
            (-0.05, "-0.05"),  // sign, then a zero-padded fraction
            (Double.nan, "null"),  // non-finite → null (callers must not pass them)
            (Double.infinity, "null"),
            (-Double.infinity, "null"),
        ] as [(Double, String)])
    func writerNumbers(_ row: (Double, String)) {
        var w = JSONWriter()
        w.number(row.0)
        #expect(w.text == row.1)
    }

    /// The short-decimal path must print exactly what the standard library prints (the
    /// shortest round-trip digits), for values on and off it: short decimals of every scale,
    /// values around its bounds, and random doubles.
    @Test func numbersPrintAsTheStandardLibraryDoes() {
        func reference(_ x: Double) -> String {
            if x.magnitude < 1e15, Double(Int(x)) == x { return x == 0 && x.sign == .minus ? "-0" : String(Int(x)) }
            var text = x.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            return text
        }
        var values: [Double] = [
            1e-4, 1e-4.nextUp, 1e-4.nextDown, 1_048_576, 1_048_576.nextDown, 0.1, 0.2, 0.3, 0.1 + 0.2,
        ]
        var rng = SplitMix64(seed: 7)
        for _ in 0..<1_000_000 {
            let r = rng.next()
            let sign: Double = r & 1 == 0 ? 1 : -1
            switch (r >> 1) % 4 {
            case 0:  // n / 10^k: short decimals of 0–12 decimals, n of 1–13 digits
                let k = Int((r >> 8) % 13)
                var scale = 1.0
                for _ in 0..<k { scale *= 10 }
                var limit: UInt64 = 10
                for _ in 0..<((r >> 12) % 13) { limit *= 10 }
                values.append(sign * Double((r >> 20) % limit) / scale)
            case 1:  // uniform over the short path's range and a little beyond
                values.append(sign * Double(r >> 11) / Double(1 << 53) * 2_000_000)
            case 2:  // small magnitudes around 1e-4
                values.append(sign * Double(r >> 11) / Double(1 << 53) * 0.001)
            default:  // any finite double
                let x = Double(bitPattern: r)
                if x.isFinite { values.append(x) }
            }
        }
        var w = JSONWriter(capacity: 64)
        var mismatches = 0
        for x in values {
            w.reset()
            w.number(x)
            if w.text != reference(x) {
                mismatches += 1
                if mismatches <= 5 {
                    Issue.record("\(x.bitPattern): wrote \(w.text), the standard library \(reference(x))")
                }
            }
        }
        #expect(mismatches == 0)
    }

    /// The writer copies 8 bytes at a time when nothing needs escaping: check every
    /// special character at every position against a one-character-at-a-time escaper.
    @Test func writerEscapingMatchesReferenceEverywhere() throws {
        func reference(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\u{8}": out += "\\b"
                case "\u{C}": out += "\\f"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where u.value < 0x20: out += "\\u00" + (u.value < 0x10 ? "0" : "") + String(u.value, radix: 16)
                default: out.unicodeScalars.append(u)
                }
            }
            return out + "\""
        }
        let specials: [String] = ["\"", "\\", "\n", "\u{0}", "\u{1F}", " ", "\u{7F}", "\u{E9}", "\u{1D11E}", "~"]
        for length in 1..<26 {
            for pos in 0..<length {
                for sp in specials {
                    let s = String(repeating: "a", count: pos) + sp + String(repeating: "z", count: length - pos - 1)
                    var w = JSONWriter(capacity: 16)
                    w.string(s)
                    #expect(w.text == reference(s), "len \(length) pos \(pos)")
                    #expect(try JSONReader.parse(w.bytes) == .string(s))
                }
            }
        }
    }

    @Test func writerIntegers() {
        for (n, text) in [
            (0, "0"), (7, "7"), (-7, "-7"), (10, "10"), (Int.max, "9223372036854775807"),
            (Int.min, "-9223372036854775808"),
        ] {
            var w = JSONWriter()
            w.integer(n)
            #expect(w.text == text)
        }
    }

    @Test func writerReplySchema() throws {
        let expected =
            #"{"phase":"ended","state":"animating","detent":"expanded","constant":278,"dimmerAlpha":0.7,"progress":0.68,"snap":{"detent":"expanded","constant":30,"dismiss":false,"reason":"constant 278 < 211.0"},"animation":{"id":3,"curve":"easeIn","duration":0.25,"from":278,"to":30,"fromAlpha":0.7,"toAlpha":0.7,"alphaRule":"interpolate","startTime":12.25},"list":[1,[],{},[null,true]]}"#
        let keyDetent: StaticString = "detent"
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("phase")
        w.string("ended")
        w.key("state")
        w.string("animating")
        w.key(keyDetent)
        w.string("expanded")
        w.key("constant")
        w.number(278)
        w.key("dimmerAlpha")
        w.number(0.7)
        w.key("progress")
        w.number(0.68)
        w.key("snap")
        w.beginObject()
        w.key(keyDetent)
        w.string("expanded")
        w.key("constant")
        w.number(30)
        w.key("dismiss")
        w.bool(false)
        w.key("reason")
        w.string("constant 278 < 211.0")
        w.endObject()
        w.key("animation")
        w.beginObject()
        w.key("id")
        w.integer(3)
        w.key("curve")
        w.string("easeIn" as StaticString)
        w.key("duration")
        w.number(0.25)
        w.key("from")
        w.number(278)
        w.key("to")
        w.number(30)
        w.key("fromAlpha")
        w.number(0.7)
        w.key("toAlpha")
        w.number(0.7)
        w.key("alphaRule")
        w.string("interpolate")
        w.key("startTime")
        w.number(12.25)
        w.endObject()
        w.key("list")
        w.beginArray()
        w.integer(1)
        w.beginArray()
        w.endArray()
        w.beginObject()
        w.endObject()
        w.beginArray()
        w.null()
        w.bool(true)
        w.endArray()
        w.endArray()
        w.endObject()
        #expect(w.text == expected)
        _ = try JSONReader.parse(w.bytes)

        w.reset()
        w.beginArray()
        w.integer(1)
        w.endArray()
        #expect(w.text == "[1]")
    }

    @Test func writerOutputParsesBackToValue() throws {
        let values: [JSONValue] = [
            nil, true, false, 0, -0.5, "s", [], [:],
            ["a": [1, 2, ["b": nil]], "c\"\n": "é\u{1}", "": [[], [[:]]]],
            try JSONReader.parse(rfcImage), try JSONReader.parse(rfcCities), try JSONReader.parse(panBody),
        ]
        for v in values {
            let bytes = v.jsonBytes()
            #expect(try JSONReader.parse(bytes) == v)
            var w = JSONWriter()
            write(v, into: &w)
            #expect(w.bytes == bytes)
        }
        for c in acceptCases {  // everything the reader accepts survives a write/read cycle
            let v = try JSONReader.parse(c.bytes)
            #expect(try JSONReader.parse(v.jsonBytes(), maxDepth: 64) == v, "\(c.name)")
        }
    }

    /// The string scanner skips 8 bytes at a time; put each kind of special
    /// byte at every position of strings of many lengths (word boundaries, tails).
    @Test func stringScannerFindsSpecialBytesAtEveryPosition() throws {
        for length in 1..<26 {
            for pos in 0..<length {
                func text(_ special: [UInt8]) -> [UInt8] {
                    [0x22] + [UInt8](repeating: 0x61, count: pos) + special
                        + [UInt8](repeating: 0x62, count: length - pos - 1) + [0x22]
                }
                let plain = String(repeating: "a", count: pos)
                let tail = String(repeating: "b", count: length - pos - 1)
                // Raw control characters are rejected exactly where they are (0x1F is the last one).
                for c: UInt8 in [0x00, 0x0A, 0x1F] {
                    let e = parseError(text([c]))
                    #expect(e?.kind == .controlCharacterInString && e?.offset == 1 + pos, "len \(length) pos \(pos)")
                }
                // Space, DEL and '~' are plain.
                for c: UInt8 in [0x20, 0x7F, 0x7E, 0x21, 0x23, 0x5B, 0x5D] {
                    let v = try JSONReader.parse(text([c]))
                    #expect(v == .string(plain + String(UnicodeScalar(c)) + tail))
                }
                #expect(try JSONReader.parse(text([0x5C, 0x22])) == .string(plain + "\"" + tail))  // \"
                #expect(try JSONReader.parse(text([0x5C, 0x5C])) == .string(plain + "\\" + tail))  // \\
                #expect(try JSONReader.parse(text([0xC3, 0xA9])) == .string(plain + "\u{E9}" + tail))  // é
                #expect(try JSONReader.parse(text([0xF0, 0x9D, 0x84, 0x9E])) == .string(plain + "\u{1D11E}" + tail))
                let bad = parseError(text([0xFF]))
                #expect(bad?.kind == .invalidUTF8 && bad?.offset == 1 + pos)
                // A raw quote ends the string early: the rest is trailing garbage.
                #expect(parseError(text([0x22]))?.kind == .trailingCharacters)
            }
        }
    }

    /// Lookups compare keys by code units, like duplicate detection.
    @Test func objectLookupUsesCodeUnits() throws {
        let o = try JSONReader.parse("{\"\u{E9}\":1,\"e\u{301}\":2,\"\u{212A}\":3}").object!
        #expect(o["\u{E9}"] == 1)
        #expect(o["e\u{301}"] == 2)
        #expect(o["K"] == nil)  // KELVIN SIGN is canonically equivalent to K, but a different key
        #expect(o["\u{212A}"] == 3)
        let ascii = try JSONReader.parse(#"{"K":1,"velocity":2}"#).object!
        #expect(ascii["\u{212A}"] == nil)
        #expect(ascii["velocity"] == 2)
        #expect(ascii["velocit"] == nil)

        var built = JSONObject()
        built["a"] = 1
        built["b"] = 2
        built["a"] = 3  // replaces in place
        built.append(key: "\u{E9}", value: nil)
        #expect(built.keys == ["a", "b", "\u{E9}"])
        #expect(built["a"] == 3 && built["\u{E9}"] == .null && built["e\u{301}"] == nil)
        built["b"] = nil  // removes
        #expect(built.keys == ["a", "\u{E9}"])
        #expect(Array(built).map(\.key) == ["a", "\u{E9}"])
    }

    @Test func writerRawMembersAndTakeBytes() throws {
        var inner = JSONWriter()
        inner.beginObject()
        inner.key("preset")
        inner.string("facebook")
        inner.key("n")
        inner.integer(2)
        inner.endObject()
        let members = Array(inner.bytes.dropFirst().dropLast())

        var w = JSONWriter(capacity: 4)  // grows as needed
        w.beginObject()
        w.rawMembers(members)  // first: no comma
        w.key("id")
        w.string("x")
        w.rawMembers([])  // empty: nothing
        w.endObject()
        #expect(w.text == #"{"preset":"facebook","n":2,"id":"x"}"#)

        var v = JSONWriter()
        v.beginObject()
        v.key("id")
        v.string("x")
        v.rawMembers(members)  // after a member: comma
        v.endObject()
        #expect(v.count == v.bytes.count)
        let taken = v.takeBytes()
        #expect(String(decoding: taken, as: UTF8.self) == #"{"id":"x","preset":"facebook","n":2}"#)
        #expect(v.count == 0)
        v.integer(5)  // usable again after takeBytes
        #expect(v.text == "5")
    }

    /// takeBuffer hands over the writer's own bytes; a copy of the writer never changes them.
    @Test func writerTakeBufferKeepsWhatWasWritten() throws {
        var w = JSONWriter(capacity: 4)  // grows as needed
        w.beginObject()
        w.key("phase")
        w.string("changed")
        w.endObject()
        let expected = #"{"phase":"changed"}"#
        // A copy shares the buffer until one of them writes or is taken.
        var copy = w
        let taken = w.takeBuffer()
        #expect(taken.count == expected.utf8.count)
        #expect(String(decoding: taken.bytes, as: UTF8.self) == expected)
        // Emptied and taken, the copy's count must not become the first buffer's.
        copy.reset()
        let second = copy.takeBuffer()
        #expect(second.count == 0)
        #expect(String(decoding: taken.bytes, as: UTF8.self) == expected)
        // Writing to a copy after a take leaves the taken bytes alone.
        var third = JSONWriter(capacity: 64)
        third.beginArray()
        third.integer(12)
        var fourth = third
        let twelve = third.takeBuffer()
        fourth.integer(34)
        fourth.endArray()
        // Writing on with the writer a buffer was taken from copies it first.
        third.integer(56)
        #expect(String(decoding: twelve.bytes, as: UTF8.self) == "[12")
        #expect(fourth.text == "[12,34]")
        #expect(third.text == "[12,56")
    }

    /// Numbers of 1e-4 to 2^20 at full precision (a progress, an alpha, a dragged constant) print
    /// exactly as the standard library prints them: random significands at every binary exponent
    /// of the range, their neighbours, powers of two, and decimals of every length.
    @Test func longDecimalsPrintAsTheStandardLibraryDoes() {
        func reference(_ x: Double) -> String {
            var text = x.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            return text
        }
        var values: [Double] = [0.1 + 0.2, 1e-4.nextUp, 1_048_576.nextDown, 0.5195567144719687, 2.9999999999999996]
        for exponent in -15...20 {
            let power = Double(sign: .plus, exponent: exponent, significand: 1)
            values += [power, power.nextUp, power.nextDown, power.nextUp.nextUp, power.nextDown.nextDown]
        }
        var rng = SplitMix64(seed: 11)
        for _ in 0..<1_000_000 {
            let r = rng.next()
            let exponent = Int(r % 35) - 15
            let x =
                Double(sign: r & (1 << 40) == 0 ? .plus : .minus, exponent: exponent, significand: 1)
                * (1 + Double(rng.next() >> 12) / Double(1 << 52))
            values.append(x)
            // Decimals of 10 to 17 significant digits, as a client's numbers come.
            let digits = 10 + Int(r >> 50) % 8
            let decimal = Double(rng.next() % 100_000_000_000_000_000) / pow10(digits)
            values.append(decimal)
        }
        var failures: [String] = []
        for x in values where x.isFinite {
            var w = JSONWriter()
            w.number(x)
            if w.text != reference(x), failures.count < 10 {
                failures.append("\(x.bitPattern): \(w.text) ≠ \(reference(x))")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    private func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { r, _ in r * 10 } }

    /// A reply's fixed pieces are exactly what its members write one by one, and a piece takes
    /// a comma as a member does.
    @Test func replyPiecesAreTheMembersTheyStandFor() {
        var members = JSONWriter()
        members.beginObject()
        members.member("state", SheetState.dragging.rawValue)
        members.member("detent", nil as String?)
        members.member("constant", 1.5)
        members.memberNull("snap")
        members.memberNull("animation")
        members.endObject()
        var pieces = JSONWriter()
        pieces.beginObject()
        pieces.rawMembers(ReplyJSON.draggingMembers)  // first: no comma
        pieces.member("constant", 1.5)
        pieces.rawMembers(ReplyJSON.nothingStartedMembers)  // after a member: a comma
        pieces.endObject()
        #expect(pieces.text == members.text)
        #expect(members.text == #"{"state":"dragging","detent":null,"constant":1.5,"snap":null,"animation":null}"#)
    }

    /// Each fused member writes what its name and value written apart do.
    @Test func membersWriteWhatKeyAndValueWrite() {
        var fused = JSONWriter(capacity: 16)  // grows on the way
        var apart = JSONWriter(capacity: 16)
        fused.beginObject()
        apart.beginObject()
        for x in [0.0, -0.0, 0.7, -120.5, 1e22, 0.1 + 0.2, 1_048_575.5, Double.nan] {
            fused.member("n", x)
            apart.key("n")
            apart.number(x)
        }
        for n in [0, -7, Int.max, Int.min] {
            fused.member("i", integer: n)
            apart.key("i")
            apart.integer(n)
        }
        for b in [true, false] {
            fused.member("b", b)
            apart.key("b")
            apart.bool(b)
        }
        for text in ["", "plain", "a\"b\\c\n\u{1}", "\u{E9}\u{1D11E}", String(repeating: "x", count: 100)] as [String?]
            + [nil]
        {
            fused.member("s", text)
            apart.key("s")
            if let text { apart.string(text) } else { apart.null() }
        }
        fused.memberNull("z")
        apart.key("z")
        apart.null()
        fused.endObject()
        apart.endObject()
        #expect(fused.text == apart.text)
    }

    @Test func writerDeepNestingPast64Levels() throws {
        var v: JSONValue = [1, 2]
        for k in 0..<100 { v = k % 2 == 0 ? [1, v, "s"] : ["x": v, "y": 3] }
        let bytes = v.jsonBytes()
        #expect(try JSONReader.parse(bytes, maxDepth: 200) == v)
    }
}
