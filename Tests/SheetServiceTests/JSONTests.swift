// Tests for the JSON layer: JSONReader (strict RFC 8259), JSONWriter, JSONValue.
// Row names follow JSONTestSuite (y_ = must accept, n_ = must reject) where a
// classic case exists; the trailing comment on each row names the rule.

import MicroHTTP
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - Fixtures

private func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }

private func parse(_ bytes: [UInt8], maxDepth: Int = 32) -> Result<JSONValue, JSONError> {
    do throws(JSONError) {
        return .success(try JSONReader.parse(bytes, maxDepth: maxDepth))
    } catch {
        return .failure(error)
    }
}

private func parseError(_ bytes: [UInt8], maxDepth: Int = 32) -> JSONError? {
    if case .failure(let e) = parse(bytes, maxDepth: maxDepth) { return e }
    return nil
}

private func nested(_ depth: Int, open: String = "[", close: String = "]", inner: String = "") -> String {
    String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
}

struct JSONAcceptCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let expected: JSONValue
    init(_ name: String, _ text: String, _ expected: JSONValue) {
        self.init(name, utf8(text), expected)
    }
    init(_ name: String, _ bytes: [UInt8], _ expected: JSONValue) {
        self.name = name
        self.bytes = bytes
        self.expected = expected
    }
    var testDescription: String { name }
}

struct JSONRejectCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let kind: JSONError.Kind
    init(_ name: String, _ text: String, _ kind: JSONError.Kind) {
        self.init(name, utf8(text), kind)
    }
    init(_ name: String, _ bytes: [UInt8], _ kind: JSONError.Kind) {
        self.name = name
        self.bytes = bytes
        self.kind = kind
    }
    var testDescription: String { name }
}

private let panBody = #"{"phase":"changed","translation":-120.5,"velocity":-800,"time":12.25}"#

private let rfcImage = """
    {
      "Image": {
        "Width":  800,
        "Height": 600,
        "Title":  "View from 15th Floor",
        "Thumbnail": {
          "Url":    "http://www.example.com/image/481989943",
          "Height": 125,
          "Width":  100
        },
        "Animated" : false,
        "IDs": [116, 943, 234, 38793]
      }
    }
    """

private let rfcCities = """
    [
      {
         "precision": "zip",
         "Latitude":  37.7668,
         "Longitude": -122.3959,
         "Address":   "",
         "City":      "SAN FRANCISCO",
         "State":     "CA",
         "Zip":       "94107",
         "Country":   "US"
      },
      {
         "precision": "zip",
         "Latitude":  37.371991,
         "Longitude": -122.026020,
         "Address":   "",
         "City":      "SUNNYVALE",
         "State":     "CA",
         "Zip":       "94085",
         "Country":   "US"
      }
    ]
    """

private let acceptCases: [JSONAcceptCase] = [
    // Top-level scalars are JSON texts (RFC 8259 §2).
    JSONAcceptCase("y_structure_lonely_int", "42", 42),  // top-level number
    JSONAcceptCase("y_structure_lonely_negative_real", "-0.1", -0.1),  // top-level negative fraction
    JSONAcceptCase("y_structure_lonely_string", #""asd""#, "asd"),  // top-level string
    JSONAcceptCase("y_structure_lonely_true", "true", true),  // literal true
    JSONAcceptCase("y_structure_lonely_false", "false", false),  // literal false
    JSONAcceptCase("y_structure_lonely_null", "null", nil),  // literal null
    JSONAcceptCase("y_structure_whitespace_array", " \t\n\r[]\r\n\t ", []),  // the four whitespace bytes around a value
    JSONAcceptCase("y_object_empty", "{}", [:]),  // empty object
    JSONAcceptCase("y_array_empty", "[]", []),  // empty array
    JSONAcceptCase("y_array_heterogeneous", #"[null, 1, "1", {}]"#, [nil, 1, "1", [:]]),  // mixed element types
    JSONAcceptCase("y_array_with_several_null", "[1,null,null,null,2]", [1, nil, nil, nil, 2]),  // nulls as elements
    JSONAcceptCase("y_object_basic", #"{"asd":"sdf"}"#, ["asd": "sdf"]),  // one member
    JSONAcceptCase(
        "y_object_long_strings", #"{"x":[{"id": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}], "id": "x"}"#,
        ["x": [["id": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]], "id": "x"]),  // same key in different objects is fine
    JSONAcceptCase("y_object_escaped_distinct_keys", #"{"a":1,"\u0062":2}"#, ["a": 1, "b": 2]),  // escaped key that differs after unescaping
    JSONAcceptCase(
        "y_object_canonically_equivalent_keys", "{\"\u{E9}\":1,\"e\u{301}\":2}",
        .object(JSONObject([(key: "\u{E9}", value: 1), (key: "e\u{301}", value: 2)]))),  // keys differ in code units: not duplicates
    JSONAcceptCase(
        "y_pan_body", panBody,
        ["phase": "changed", "translation": -120.5, "velocity": -800, "time": 12.25]),  // the service's typical request
    JSONAcceptCase("y_number_0e1", "[0e1]", [0]),  // zero with exponent
    JSONAcceptCase("y_number_0e+1", "[0e+1]", [0]),  // explicit + in exponent
    JSONAcceptCase("y_number_int_with_exp", "[20e1]", [200]),  // integer with exponent
    JSONAcceptCase("y_number_real_capital_e", "[1E22]", [1e22]),  // capital E
    JSONAcceptCase("y_number_real_capital_e_neg_exp", "[1E-2]", [0.01]),  // negative exponent
    JSONAcceptCase("y_number_real_exponent", "[123e45]", [123e45]),  // exponent without fraction
    JSONAcceptCase("y_number_real_fraction_exponent", "[123.456e78]", [123.456e78]),  // fraction and exponent
    JSONAcceptCase("y_number_simple_real", "[123.456789]", [123.456789]),  // plain decimal
    JSONAcceptCase("y_number_negative_int", "[-123]", [-123]),  // negative integer
    JSONAcceptCase("y_number_max_double", "1.7976931348623157e308", .number(1.7976931348623157e308)),  // largest finite double
    JSONAcceptCase("y_number_min_subnormal", "5e-324", .number(.leastNonzeroMagnitude)),  // smallest subnormal
    JSONAcceptCase("y_number_underflow_to_zero", "[1e-400]", [0]),  // underflow rounds to 0 (only overflow is an error)
    JSONAcceptCase("y_number_zero_huge_exponent", "[0e99999]", [0]),  // 0 times anything is 0, not out of range
    JSONAcceptCase("y_number_many_digits", "3.14159265358979323846264338327950288", .number(Double.pi)),  // more digits than a double holds
    JSONAcceptCase("y_string_allowed_escapes", #"["\"\\\/\b\f\n\r\t"]"#, ["\"\\/\u{8}\u{C}\n\r\t"]),  // every short escape
    JSONAcceptCase("y_string_escaped_control_character", #"["\u0012"]"#, ["\u{12}"]),  // control char via \u
    JSONAcceptCase("y_string_null_escape", #"["\u0000"]"#, ["\u{0}"]),  // NUL via \u is allowed
    JSONAcceptCase("y_string_unicode_escaped_double_quote", #"["\u0022"]"#, ["\""]),  // \u0022 is a quote, not a terminator
    JSONAcceptCase("y_string_surrogates_U+1D11E_MUSICAL_SYMBOL_G_CLEF", #"["\uD834\uDd1e"]"#, ["\u{1D11E}"]),  // surrogate pair, mixed-case hex
    JSONAcceptCase("y_string_accepted_surrogate_pair", #"["\ud83d\ude39\ud83d\udc8d"]"#, ["\u{1F639}\u{1F48D}"]),  // two pairs in a row
    JSONAcceptCase("y_string_last_surrogates_1_and_2", #"["\uDBFF\uDFFF"]"#, ["\u{10FFFF}"]),  // highest code point via escapes
    JSONAcceptCase("y_string_escaped_noncharacter", #"["\uFFFF"]"#, ["\u{FFFF}"]),  // noncharacters are valid
    JSONAcceptCase("y_string_utf8", "[\"\u{20AC}\u{1D11E}\"]", ["\u{20AC}\u{1D11E}"]),  // raw 3- and 4-byte UTF-8
    JSONAcceptCase("y_string_nonCharacterInUTF-8_U+FFFF", [0x5B, 0x22, 0xEF, 0xBF, 0xBF, 0x22, 0x5D], ["\u{FFFF}"]),  // raw U+FFFF
    JSONAcceptCase("y_string_utf8_U+10FFFF", [0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22], "\u{10FFFF}"),  // raw highest code point
    JSONAcceptCase("y_string_escape_then_utf8", #"["a\nb é \u00e9"]"#, ["a\nb \u{E9} \u{E9}"]),  // escapes mixed with raw UTF-8
    JSONAcceptCase("y_string_del_unescaped", "[\"\u{7F}\"]", ["\u{7F}"]),  // DEL (0x7F) is not a control char for JSON
    JSONAcceptCase(
        "y_rfc8259_image", rfcImage,
        [
            "Image": [
                "Width": 800, "Height": 600, "Title": "View from 15th Floor",
                "Thumbnail": ["Url": "http://www.example.com/image/481989943", "Height": 125, "Width": 100],
                "Animated": false, "IDs": [116, 943, 234, 38793],
            ]
        ]),  // RFC 8259 §13 first example
    JSONAcceptCase(
        "y_rfc8259_cities", rfcCities,
        [
            [
                "precision": "zip", "Latitude": 37.7668, "Longitude": -122.3959, "Address": "", "City": "SAN FRANCISCO",
                "State": "CA", "Zip": "94107", "Country": "US",
            ],
            [
                "precision": "zip", "Latitude": 37.371991, "Longitude": -122.026020, "Address": "", "City": "SUNNYVALE",
                "State": "CA", "Zip": "94085", "Country": "US",
            ],
        ]),  // RFC 8259 §13 second example
    JSONAcceptCase(
        "y_depth_exactly_32", nested(32),
        {
            var v: JSONValue = []
            for _ in 1..<32 { v = [v] }
            return v
        }()),  // nesting equal to maxDepth is allowed
]

private let rejectCases: [JSONRejectCase] = [
    JSONRejectCase("n_structure_no_data", "", .emptyInput),  // empty input
    JSONRejectCase("n_structure_whitespace_only", " \n\t ", .emptyInput),  // whitespace is not a value
    JSONRejectCase("n_structure_UTF8_BOM_no_data", [0xEF, 0xBB, 0xBF], .byteOrderMark),  // BOM alone
    JSONRejectCase("n_structure_UTF8_BOM_before_array", [0xEF, 0xBB, 0xBF, 0x5B, 0x5D], .byteOrderMark),  // BOM before a value: rejected by choice
    JSONRejectCase("n_structure_trailing_garbage", "[1]x", .trailingCharacters),  // garbage after the value
    JSONRejectCase("n_structure_double_array", "[][]", .trailingCharacters),  // two top-level values
    JSONRejectCase("n_structure_number_with_trailing_garbage", "2@", .trailingCharacters),  // garbage after a scalar
    JSONRejectCase("n_structure_null_byte_outside_string", [0x5B, 0x00, 0x5D], .unexpectedCharacter),  // NUL is not whitespace
    JSONRejectCase("n_structure_angle_bracket", "<.>", .unexpectedCharacter),  // not a value
    JSONRejectCase("n_structure_capitalized_True", "[True]", .unexpectedCharacter),  // literals are lower case
    JSONRejectCase("n_incomplete_true", "[tru]", .unexpectedCharacter),  // truncated literal
    JSONRejectCase("n_incomplete_null_at_end", "nul", .unexpectedEnd),  // literal cut by end of input
    JSONRejectCase("n_structure_unclosed_array", "[1", .unexpectedEnd),  // missing ]
    JSONRejectCase("n_structure_unclosed_object", #"{"a":1"#, .unexpectedEnd),  // missing }
    JSONRejectCase("n_string_unterminated", #""abc"#, .unexpectedEnd),  // missing closing quote
    JSONRejectCase("n_array_extra_comma", "[1,]", .trailingComma),  // trailing comma in array
    JSONRejectCase("n_array_number_and_several_commas", "[1,,]", .unexpectedCharacter),  // empty element
    JSONRejectCase("n_array_double_comma", "[1,,2]", .unexpectedCharacter),  // empty element
    JSONRejectCase("n_array_leading_comma", "[,1]", .unexpectedCharacter),  // empty first element
    JSONRejectCase("n_array_missing_comma", "[1 2]", .unexpectedCharacter),  // elements need a comma
    JSONRejectCase("n_object_trailing_comma", #"{"id":0,}"#, .trailingComma),  // trailing comma in object
    JSONRejectCase("n_object_trailing_comment", #"{"a":"b"}/**/"#, .comment),  // block comment after value
    JSONRejectCase("n_structure_comment_in_array", "[1 // one\n]", .comment),  // line comment
    JSONRejectCase("n_object_single_quote", "{'a':0}", .singleQuote),  // single-quoted key
    JSONRejectCase("n_string_single_quote", "['single quote']", .singleQuote),  // single-quoted string
    JSONRejectCase("n_object_unquoted_key", "{a: 1}", .unexpectedCharacter),  // keys must be strings
    JSONRejectCase("n_object_non_string_key", "{1:1}", .unexpectedCharacter),  // number as key
    JSONRejectCase("n_object_missing_colon", #"{"a" b}"#, .unexpectedCharacter),  // colon required
    JSONRejectCase("n_object_missing_value", #"{"a":}"#, .unexpectedCharacter),  // value required
    JSONRejectCase("n_object_comma_instead_of_colon", #"{"x", null}"#, .unexpectedCharacter),  // wrong separator
    JSONRejectCase("n_object_duplicate_key", #"{"a":1,"a":2}"#, .duplicateKey),  // duplicate key
    JSONRejectCase("n_object_duplicate_key_after_unescape", #"{"a":1,"\u0061":2}"#, .duplicateKey),  // same key once unescaped
    JSONRejectCase("n_object_duplicate_key_same_value", #"{"velocity":1,"phase":"x","velocity":1}"#, .duplicateKey),  // duplicates even with equal values
    JSONRejectCase("n_number_leading_zero", "[01]", .invalidNumber),  // leading zero
    JSONRejectCase("n_number_neg_int_starting_with_zero", "[-012]", .invalidNumber),  // leading zero after minus
    JSONRejectCase("n_number_+1", "[+1]", .invalidNumber),  // plus sign
    JSONRejectCase("n_number_starting_with_dot", "[.5]", .invalidNumber),  // no integer part
    JSONRejectCase("n_number_real_without_fractional_part", "[1.]", .invalidNumber),  // no digits after '.'
    JSONRejectCase("n_number_0.e1", "[0.e1]", .invalidNumber),  // no digits after '.'
    JSONRejectCase("n_number_1.0e", "[1.0e]", .invalidNumber),  // empty exponent
    JSONRejectCase("n_number_1.0e+", "[1.0e+]", .invalidNumber),  // signed empty exponent
    JSONRejectCase("n_number_minus_space_1", "[- 1]", .invalidNumber),  // space after minus
    JSONRejectCase("n_number_minus_sign_only_at_end", "-", .unexpectedEnd),  // lone minus
    JSONRejectCase("n_number_hex", "[0x1]", .unexpectedCharacter),  // hex is not JSON
    JSONRejectCase("n_number_with_alpha", "[1.2a-3]", .unexpectedCharacter),  // letters after a number
    JSONRejectCase("n_number_NaN", "[NaN]", .unexpectedCharacter),  // NaN
    JSONRejectCase("n_number_infinity", "[Infinity]", .unexpectedCharacter),  // Infinity
    JSONRejectCase("n_number_minus_infinity", "[-Infinity]", .unexpectedCharacter),  // -Infinity
    JSONRejectCase("n_number_overflow_1e999", "[1e999]", .numberOutOfRange),  // rounds to +inf
    JSONRejectCase("n_number_overflow_negative", "[-1e400]", .numberOutOfRange),  // rounds to -inf
    JSONRejectCase("n_number_overflow_just_above_max", "1.8e308", .numberOutOfRange),  // just beyond the largest double
    JSONRejectCase("n_number_overflow_long_integer", String(repeating: "9", count: 310), .numberOutOfRange),  // 310-digit integer
    JSONRejectCase(
        "n_string_unescaped_ctrl_char", [0x5B, 0x22, 0x61, 0x00, 0x61, 0x22, 0x5D], .controlCharacterInString),  // raw NUL in string
    JSONRejectCase("n_string_unescaped_newline", "[\"new\nline\"]", .controlCharacterInString),  // raw LF in string
    JSONRejectCase("n_string_unescaped_tab", "[\"\t\"]", .controlCharacterInString),  // raw tab in string
    JSONRejectCase("n_string_control_after_escape", "[\"\\n\u{1F}\"]", .controlCharacterInString),  // raw 0x1F in the slow (escaped) path
    JSONRejectCase("n_string_escape_x", #"["\x00"]"#, .invalidEscape),  // \x is not an escape
    JSONRejectCase("n_string_invalid_backslash_esc", #"["\a"]"#, .invalidEscape),  // \a is not an escape
    JSONRejectCase("n_string_escaped_emoji", "[\"\\\u{1F300}\"]", .invalidEscape),  // backslash before a non-ASCII character
    JSONRejectCase("n_string_incomplete_escaped_character", #"["\u00A"]"#, .invalidEscape),  // \u needs 4 hex digits
    JSONRejectCase("n_string_invalid_unicode_escape", #"["\uqqqq"]"#, .invalidEscape),  // non-hex digits
    JSONRejectCase("n_string_incomplete_surrogate", #"["\uD834\uDd"]"#, .invalidEscape),  // short low surrogate escape
    JSONRejectCase("n_string_1_surrogate_then_escape", #"["\uD800\""]"#, .invalidSurrogate),  // high surrogate then \"
    JSONRejectCase("n_string_incomplete_surrogate_escape_invalid", #"["\uD800\uD800\x"]"#, .invalidSurrogate),  // high then high
    JSONRejectCase("n_string_lone_high_surrogate", #"["\uD800abc"]"#, .invalidSurrogate),  // high surrogate then plain text
    JSONRejectCase("n_string_lone_low_surrogate", #"["\uDC00"]"#, .invalidSurrogate),  // low surrogate first
    JSONRejectCase("n_string_invalid_utf8_after_escape", [0x5B, 0x22, 0x5C, 0xE5, 0x22, 0x5D], .invalidUTF8),  // bad UTF-8 right after '\'
    JSONRejectCase("n_string_invalid-utf-8-in-escape", [0x5B, 0x22, 0x5C, 0x75, 0xE5, 0x22, 0x5D], .invalidUTF8),  // bad UTF-8 inside \u
    JSONRejectCase("n_string_overlong_2_byte", [0x22, 0xC0, 0xAF, 0x22], .invalidUTF8),  // overlong '/'
    JSONRejectCase("n_string_overlong_3_byte", [0x22, 0xE0, 0x80, 0xAF, 0x22], .invalidUTF8),  // overlong 3-byte form
    JSONRejectCase("n_string_overlong_4_byte", [0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22], .invalidUTF8),  // overlong 4-byte form
    JSONRejectCase("n_string_UTF-16_surrogate_in_UTF-8", [0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8),  // U+D800 encoded as UTF-8
    JSONRejectCase("n_string_beyond_U+10FFFF", [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8),  // U+110000
    JSONRejectCase("n_string_F5_lead_byte", [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], .invalidUTF8),  // byte never used by UTF-8
    JSONRejectCase("n_string_truncated_utf8", [0x22, 0xE2, 0x82, 0x22], .invalidUTF8),  // 3-byte sequence cut by the quote
    JSONRejectCase("n_string_truncated_utf8_at_end", [0x22, 0xE2, 0x82], .invalidUTF8),  // sequence cut by end of input
    JSONRejectCase("n_string_lone_continuation_byte", [0x22, 0x80, 0x22], .invalidUTF8),  // stray continuation byte
    JSONRejectCase("n_string_invalid_utf8_in_key", [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], .invalidUTF8),  // bad UTF-8 in a key
    JSONRejectCase("n_structure_invalid_utf8_outside_string", [0x5B, 0xFF, 0x5D], .invalidUTF8),  // bad UTF-8 where a value should be
    JSONRejectCase("n_structure_utf8_letter_outside_string", "[\u{E9}]", .unexpectedCharacter),  // valid UTF-8 but not a value
    JSONRejectCase("n_structure_open_array_33", nested(33), .tooDeep),  // one level past maxDepth
    JSONRejectCase("n_structure_open_object_33", nested(33, open: #"{"a":"#, close: "}", inner: "1"), .tooDeep),  // objects count too
]

// MARK: - Reader: accept / reject tables

@Suite("JSON")
struct JSONTests {
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
        let e = parseError(utf8(text))
        #expect(e?.kind == .duplicateKey)
        #expect(e?.offset == 35)  // the second "velocity"'s opening quote
        #expect(e?.message == #"duplicate key "velocity" at byte 35"#)
    }

    @Test func trailingCommaOffset() {
        let e = parseError(utf8("[1,2,]"))
        #expect(e?.offset == 4)
        #expect(e?.message.hasPrefix("trailing comma at byte 4") == true)
    }

    @Test func depthErrorOffset() {
        let e = parseError(utf8(nested(33)))
        #expect(e?.kind == .tooDeep)
        #expect(e?.offset == 32)  // the 33rd '['
        #expect(e?.message == "nesting deeper than 32 at byte 32")
    }

    @Test func numberOutOfRangeMessage() {
        let e = parseError(utf8(#"{"t":1e999}"#))
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
        let e = parseError(utf8(#"{"velocity":NaN}"#))
        #expect(e?.offset == 12)
        #expect(e?.message.hasPrefix("unexpected character 'N' at byte 12") == true)
    }

    @Test func controlCharacterOffset() {
        let e = parseError(utf8("{\"a\":\"x\ty\"}"))
        #expect(e?.kind == .controlCharacterInString)
        #expect(e?.offset == 7)
    }

    @Test func unexpectedEndOffsetIsInputLength() {
        let e = parseError(utf8(#"{"a":[1,2"#))
        #expect(e?.kind == .unexpectedEnd)
        #expect(e?.offset == 9)
    }

    @Test func surrogateErrorPointsAtEscape() {
        let e = parseError(utf8(#"["ab\uDC00"]"#))
        #expect(e?.kind == .invalidSurrogate)
        #expect(e?.offset == 4)
    }

    // MARK: Depth

    @Test func depthBoundaryForArraysAndObjects() {
        #expect(parseError(utf8(nested(32))) == nil)
        #expect(parseError(utf8(nested(33)))?.kind == .tooDeep)
        let objects32 = nested(32, open: #"{"k":"#, close: "}", inner: "true")
        #expect(parseError(utf8(objects32)) == nil)
        let mixed33 = nested(16, open: #"{"k":["#, close: "]}", inner: "[]")
        #expect(parseError(utf8(mixed33))?.kind == .tooDeep)
    }

    @Test func customMaxDepth() {
        #expect(parseError(utf8("[[1]]"), maxDepth: 2) == nil)
        #expect(parseError(utf8("[[[1]]]"), maxDepth: 2)?.message == "nesting deeper than 2 at byte 2")
        #expect(parseError(utf8("7"), maxDepth: 0) == nil)  // scalars have depth 0
        #expect(parseError(utf8("[]"), maxDepth: 0)?.kind == .tooDeep)
    }

    // MARK: Duplicate keys in large objects (hash path)

    @Test func duplicateKeysInLargeObject() {
        let members = (0..<100).map { #""k\#($0)":\#($0)"# }
        #expect(parseError(utf8("{" + members.joined(separator: ",") + "}")) == nil)
        let dup = members + [#""k\u0037":1"#]  // "k7" spelled with an escape, after the switch to hashing
        let e = parseError(utf8("{" + dup.joined(separator: ",") + "}"))
        #expect(e?.kind == .duplicateKey)
        #expect(e?.message.hasPrefix(#"duplicate key "k7""#) == true)
    }

    // MARK: Entry points

    @Test func entryPointsAgree() throws {
        let bytes = utf8(panBody)
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

    // MARK: Writer

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

    @Test func writerDeepNestingPast64Levels() throws {
        var v: JSONValue = [1, 2]
        for k in 0..<100 { v = k % 2 == 0 ? [1, v, "s"] : ["x": v, "y": 3] }
        let bytes = v.jsonBytes()
        #expect(try JSONReader.parse(bytes, maxDepth: 200) == v)
    }
}
