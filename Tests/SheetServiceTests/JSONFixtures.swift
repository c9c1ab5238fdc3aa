// The JSON layer's test fixtures (JSONReader, strict RFC 8259; JSONWriter; JSONValue): the accept
// and reject tables JSONReaderTests replays. Row names follow JSONTestSuite (y_ = must accept,
// n_ = must reject) where a classic case exists; the trailing comment on each row names the rule.

import MicroHTTP
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - Fixtures

func parse(_ bytes: [UInt8], maxDepth: Int = 32) -> Result<JSONValue, JSONError> {
    do throws(JSONError) {
        return .success(try JSONReader.parse(bytes, maxDepth: maxDepth))
    } catch {
        return .failure(error)
    }
}

func parseError(_ bytes: [UInt8], maxDepth: Int = 32) -> JSONError? {
    if case .failure(let e) = parse(bytes, maxDepth: maxDepth) { return e }
    return nil
}

func nested(_ depth: Int, open: String = "[", close: String = "]", inner: String = "") -> String {
    String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
}

struct JSONAcceptCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let expected: JSONValue
    init(_ name: String, _ text: String, _ expected: JSONValue) {
        self.init(name, Array(text.utf8), expected)
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
        self.init(name, Array(text.utf8), kind)
    }
    init(_ name: String, _ bytes: [UInt8], _ kind: JSONError.Kind) {
        self.name = name
        self.bytes = bytes
        self.kind = kind
    }
    var testDescription: String { name }
}

let panBody = #"{"phase":"changed","translation":-120.5,"velocity":-800,"time":12.25}"#

let rfcImage = """
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

let rfcCities = """
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

let acceptCases: [JSONAcceptCase] = [
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

let rejectCases: [JSONRejectCase] = [
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
