// Tests for Decode.panDirect, the pan body read straight from its bytes. The contract: whenever it
// decides, its result is the general path's (Decode.json then Decode.pan) field for field and bit
// for bit; wherever the general path throws, it declines (nil). The trailing comment on each row
// names the rule.

import SheetPhysics
import SheetdTesting
import Testing

@testable import SheetService

// MARK: - Fixtures

/// Where a body is decoded: the session's preset and clock. The clock is chosen per session (the
/// configuration's `clock`, default server), independently of the preset; `scrollOffset` is known
/// to the fluid preset only.
struct PanContext: Sendable, CustomStringConvertible {
    let preset: PresetName
    let clock: SessionClock
    var description: String { "\(preset.rawValue)/\(clock.rawValue)" }
}

private let facebookServer = PanContext(preset: .facebook, clock: .server)
private let fluidServer = PanContext(preset: .fluid, clock: .server)
private let twitterClient = PanContext(preset: .twitter, clock: .client)
private let fluidClient = PanContext(preset: .fluid, clock: .client)
/// The four that matter: a non-fluid and the fluid preset, on each clock.
private let everywhere = [facebookServer, fluidServer, twitterClient, fluidClient]
/// Bodies without `time` decide only on the server clock.
private let serverClock = [facebookServer, fluidServer]
private let fluid = [fluidServer, fluidClient]
private let nonFluid = [facebookServer, twitterClient]
/// Every preset on both clocks.
private let allContexts = PresetName.allCases.flatMap { preset in
    [SessionClock.server, .client].map { PanContext(preset: preset, clock: $0) }
}

private typealias Pan = (event: PanEvent, time: Double?)

private func general(_ body: [UInt8], _ c: PanContext) -> Result<Pan, Problem> {
    do throws(Problem) {
        return .success(try Decode.pan(try Decode.json(body), preset: c.preset, clock: c.clock))
    } catch {
        return .failure(error)
    }
}

/// The general path's result from an already parsed body (the generator parses once per body).
private func general(_ json: Result<JSONValue?, Problem>, _ c: PanContext) -> Pan? {
    guard case .success(let value) = json else { return nil }
    return try? Decode.pan(value, preset: c.preset, clock: c.clock)
}

private func direct(_ body: [UInt8], _ c: PanContext) -> Pan? {
    Decode.panDirect(body, preset: c.preset, clock: c.clock).map { (event: $0.0, time: $0.1) }
}

/// Field by field, Doubles by bit pattern (so -0 and 0 differ) and nil-ness.
private func identical(_ a: Pan, _ b: Pan) -> Bool {
    a.event.phase == b.event.phase && a.event.translation?.bitPattern == b.event.translation?.bitPattern
        && a.event.velocity?.bitPattern == b.event.velocity?.bitPattern
        && a.event.scrollOffset?.bitPattern == b.event.scrollOffset?.bitPattern
        && a.time?.bitPattern == b.time?.bitPattern
}

private func describe(_ p: Pan?) -> String {
    guard let p else { return "nil" }
    func d(_ x: Double?) -> String { x.map { "\($0) (0x\(String($0.bitPattern, radix: 16)))" } ?? "nil" }
    return "\(p.event.phase) translation \(d(p.event.translation)) velocity \(d(p.event.velocity)) "
        + "scrollOffset \(d(p.event.scrollOffset)) time \(d(p.time))"
}

private func text(_ body: [UInt8]) -> String { String(decoding: body, as: UTF8.self).debugDescription }

/// A body the fast path must decide, in each of `contexts`, exactly as the general path does.
struct PanDecidedCase: Sendable, CustomTestStringConvertible {
    let name: String
    let body: [UInt8]
    let contexts: [PanContext]
    init(_ name: String, _ body: String, _ contexts: [PanContext]) {
        self.name = name
        self.body = bytes(body)
        self.contexts = contexts
    }
    var testDescription: String { name }
}

/// A body the general path rejects with `code` in each of `contexts`: the fast path must decline.
struct PanRejectedCase: Sendable, CustomTestStringConvertible {
    let name: String
    let body: [UInt8]
    let code: String
    let contexts: [PanContext]
    init(_ name: String, _ body: String, _ code: String, _ contexts: [PanContext] = everywhere) {
        self.init(name, bytes(body), code, contexts)
    }
    init(_ name: String, _ body: [UInt8], _ code: String, _ contexts: [PanContext] = everywhere) {
        self.name = name
        self.body = body
        self.code = code
        self.contexts = contexts
    }
    var testDescription: String { name }
}

private let typical = #"{"phase":"changed","translation":-120.5,"velocity":-800}"#

private let decidedCases: [PanDecidedCase] = [
    PanDecidedCase("typical changed", typical, serverClock),  // the hot request: velocity dropped (not ended)
    PanDecidedCase(
        "typical changed with time", #"{"phase":"changed","translation":-120.5,"velocity":-800,"time":12.25}"#,
        everywhere),  // time returned on either clock
    PanDecidedCase("began alone", #"{"phase":"began"}"#, serverClock),  // translation optional on began
    PanDecidedCase("began with translation", #"{"phase":"began","translation":0,"time":0}"#, everywhere),  // taken as sent
    PanDecidedCase(
        "ended with velocity", #"{"phase":"ended","translation":35,"velocity":1200.75,"time":3}"#, everywhere),  // velocity kept on ended
    PanDecidedCase("ended without velocity", #"{"phase":"ended","translation":35,"time":3}"#, everywhere),  // nil velocity: estimate it
    PanDecidedCase("ended without translation", #"{"phase":"ended"}"#, serverClock),  // translation optional on ended
    PanDecidedCase("cancelled", #"{"phase":"cancelled","velocity":5,"time":1e1}"#, everywhere),  // velocity dropped on cancelled
    PanDecidedCase(
        "keys in reverse order", #"{"time":12.25,"velocity":-800,"translation":-120.5,"phase":"changed"}"#, everywhere),  // member order is free
    PanDecidedCase(
        "pretty-printed", "\r\n {\n\t\"phase\" :\t\"changed\" ,\r\n  \"translation\"\n:\n-1 ,\"time\":2\t}\n\r ",
        everywhere),  // the four JSON whitespace bytes between every token
    PanDecidedCase("negative zero", #"{"phase":"changed","translation":-0,"time":-0.0}"#, everywhere),  // -0 keeps its sign bit
    PanDecidedCase("zero forms", #"{"phase":"changed","translation":0e5,"velocity":-0E-3,"time":0.000}"#, everywhere),  // zeros with exponents and fractions
    PanDecidedCase(
        "exponent forms", #"{"phase":"ended","translation":1E+2,"velocity":-12.5e-1,"time":25e-2}"#, everywhere),  // E, e, explicit signs
    PanDecidedCase(
        "correctly rounded decimals", #"{"phase":"changed","translation":0.1,"velocity":0.3,"time":4.35}"#, everywhere),  // the reader's exact fast path
    PanDecidedCase(
        "long mantissa", #"{"phase":"changed","translation":3.14159265358979323846264338327950288,"time":1}"#,
        everywhere),  // > 19 digits: the reader's slow path
    PanDecidedCase(
        "mantissa past 2^53", #"{"phase":"changed","translation":9007199254740993e-10,"time":1}"#, everywhere),  // not the exact fast path
    PanDecidedCase(
        "tiny", #"{"phase":"changed","translation":5e-324,"velocity":2.2250738585072014e-308,"time":1e-400}"#,
        everywhere),  // subnormal, smallest normal, underflow to 0
    PanDecidedCase(
        "magnitude limits exactly", #"{"phase":"ended","translation":1e6,"velocity":-1000000,"time":1000000000}"#,
        everywhere),  // |x| ≤ limit is inclusive
    PanDecidedCase(
        "rounds down to the limit", #"{"phase":"changed","translation":1000000.00000000001,"time":-1e9}"#, everywhere),  // compared after rounding, as the general path does
    PanDecidedCase("fluid scrollOffset", #"{"phase":"changed","translation":-4,"scrollOffset":3,"time":0.5}"#, fluid),  // known to fluid
    PanDecidedCase("fluid scrollOffset, server clock", #"{"scrollOffset":0,"phase":"began"}"#, [fluidServer]),  // no time needed on the server clock
    PanDecidedCase("cancelled alone", #"{"phase":"cancelled"}"#, serverClock),  // nothing but the phase
]

private let rejectedCases: [PanRejectedCase] = [
    // Not JSON (the reader's rules).
    PanRejectedCase("empty body", "", "invalid-value"),  // a pan event needs a body
    PanRejectedCase("whitespace only", " \n", "invalid-json"),  // empty JSON text
    PanRejectedCase("byte order mark", [0xEF, 0xBB, 0xBF] + bytes(#"{"phase":"began","time":1}"#), "invalid-json"),  // BOM rejected
    PanRejectedCase("trailing comma", #"{"phase":"began","time":1,}"#, "invalid-json"),  // no trailing commas
    PanRejectedCase("leading comma", #"{,"phase":"began","time":1}"#, "invalid-json"),  // no empty members
    PanRejectedCase("trailing characters", #"{"phase":"began","time":1}x"#, "invalid-json"),  // only whitespace after the value
    PanRejectedCase("second value", #"{"phase":"began","time":1}{}"#, "invalid-json"),  // one JSON text
    PanRejectedCase("unclosed object", #"{"phase":"began","time":1"#, "invalid-json"),  // truncated
    PanRejectedCase("unclosed string", #"{"phase":"began","time":1,"x"#, "invalid-json"),  // truncated key
    PanRejectedCase("missing colon", #"{"phase" "began","time":1}"#, "invalid-json"),  // key: value
    PanRejectedCase("missing comma", #"{"phase":"began" "time":1}"#, "invalid-json"),  // members separated by ','
    PanRejectedCase("comment", #"{"phase":"began", /* c */ "time":1}"#, "invalid-json"),  // no comments
    PanRejectedCase("single quotes", #"{'phase':'began',"time":1}"#, "invalid-json"),  // double quotes only
    PanRejectedCase("unquoted key", #"{phase:"began","time":1}"#, "invalid-json"),  // keys are strings
    PanRejectedCase("form feed is not whitespace", "{\u{0C}\"phase\":\"began\",\"time\":1}", "invalid-json"),  // JSON whitespace is 4 bytes
    PanRejectedCase("no-break space is not whitespace", "{\u{A0}\"phase\":\"began\",\"time\":1}", "invalid-json"),  // nor U+00A0
    PanRejectedCase("duplicate phase", #"{"phase":"began","phase":"began","time":1}"#, "invalid-json"),  // duplicate keys, same value
    PanRejectedCase(
        "duplicate translation", #"{"phase":"changed","translation":1,"time":1,"translation":2}"#, "invalid-json"),  // duplicate number key
    PanRejectedCase("duplicate time", #"{"phase":"began","time":1,"time":1}"#, "invalid-json"),  // duplicate time
    PanRejectedCase(
        "duplicate scrollOffset", #"{"phase":"began","scrollOffset":1,"time":1,"scrollOffset":1}"#, "invalid-json",
        fluid),  // duplicate on fluid
    PanRejectedCase("duplicate through an escape", #"{"phase":"began","\u0070hase":"ended","time":1}"#, "invalid-json"),  // keys compared after unescaping
    PanRejectedCase("invalid UTF-8 in a key", [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], "invalid-json"),  // truncated 2-byte sequence
    PanRejectedCase(
        "invalid UTF-8 in the phase", bytes(#"{"time":1,"phase":""#) + [0xED, 0xA0, 0x80] + bytes(#""}"#),
        "invalid-json"),  // encoded surrogate
    PanRejectedCase("control character in the phase", "{\"time\":1,\"phase\":\"began\t\"}", "invalid-json"),  // raw tab in a string
    PanRejectedCase("invalid escape", #"{"time":1,"phase":"b\egan"}"#, "invalid-json"),  // \e is no escape
    PanRejectedCase("unpaired surrogate escape", #"{"time":1,"phase":"\ud800"}"#, "invalid-json"),  // lone high surrogate
    PanRejectedCase(
        "too deep",
        #"{"phase":"began","time":1,"x":"# + String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
            + "}", "invalid-json"),  // depth 33 > 32
    // Numbers outside RFC 8259 §6 or the Double range.
    PanRejectedCase("leading zero", #"{"phase":"changed","translation":01,"time":1}"#, "invalid-json"),  // 01
    PanRejectedCase("plus sign", #"{"phase":"changed","translation":+1,"time":1}"#, "invalid-json"),  // +1
    PanRejectedCase("bare fraction", #"{"phase":"changed","translation":.5,"time":1}"#, "invalid-json"),  // .5
    PanRejectedCase("dot without digits", #"{"phase":"changed","translation":1.,"time":1}"#, "invalid-json"),  // 1.
    PanRejectedCase("empty exponent", #"{"phase":"changed","translation":1e,"time":1}"#, "invalid-json"),  // 1e
    PanRejectedCase("signed empty exponent", #"{"phase":"changed","translation":1e-,"time":1}"#, "invalid-json"),  // 1e-
    PanRejectedCase("lone minus", #"{"phase":"changed","translation":-,"time":1}"#, "invalid-json"),  // -
    PanRejectedCase("double minus", #"{"phase":"changed","translation":--1,"time":1}"#, "invalid-json"),  // --1
    PanRejectedCase("NaN", #"{"phase":"changed","translation":NaN,"time":1}"#, "invalid-json"),  // not a JSON number
    PanRejectedCase("-Infinity", #"{"phase":"changed","translation":-Infinity,"time":1}"#, "invalid-json"),  // not a JSON number
    PanRejectedCase("hexadecimal", #"{"phase":"changed","translation":0x10,"time":1}"#, "invalid-json"),  // 0x10
    PanRejectedCase("two numbers", #"{"phase":"changed","translation":1 2,"time":1}"#, "invalid-json"),  // one value per member
    PanRejectedCase("overflow", #"{"phase":"changed","translation":1e999,"time":1}"#, "invalid-json"),  // rounds to infinity
    PanRejectedCase("negative overflow", #"{"phase":"changed","translation":1,"time":-1.8e308}"#, "invalid-json"),  // past the largest finite
    // The pan event's own rules.
    PanRejectedCase("array body", #"[{"phase":"began","time":1}]"#, "invalid-value"),  // the body must be an object
    PanRejectedCase("null body", "null", "invalid-value"),  // null is not an absence
    PanRejectedCase("number body", "1", "invalid-value"),  // scalar body
    PanRejectedCase("empty object", "{}", "invalid-value"),  // phase required
    PanRejectedCase("phase missing", #"{"translation":1,"time":1}"#, "invalid-value"),  // phase required
    PanRejectedCase("unknown phase", #"{"phase":"moved","time":1}"#, "invalid-value"),  // began, changed, ended or cancelled
    PanRejectedCase("phase in capitals", #"{"phase":"Began","time":1}"#, "invalid-value"),  // names are case-sensitive
    PanRejectedCase("phase with a space", #"{"phase":"began ","time":1}"#, "invalid-value"),  // exact names only
    PanRejectedCase("empty phase", #"{"phase":"","time":1}"#, "invalid-value"),  // exact names only
    PanRejectedCase("phase a number", #"{"phase":1,"time":1}"#, "invalid-value"),  // phase is a string
    PanRejectedCase("phase null", #"{"phase":null,"time":1}"#, "invalid-value"),  // null is the wrong type
    PanRejectedCase("phase an array", #"{"phase":["began"],"time":1}"#, "invalid-value"),  // nested value
    PanRejectedCase("translation a string", #"{"phase":"changed","translation":"1","time":1}"#, "invalid-value"),  // numbers are numbers
    PanRejectedCase("translation null", #"{"phase":"began","translation":null,"time":1}"#, "invalid-value"),  // null is no absence
    PanRejectedCase("velocity a boolean", #"{"phase":"ended","velocity":true,"time":1}"#, "invalid-value"),  // wrong type
    PanRejectedCase("velocity an object", #"{"phase":"ended","velocity":{"y":1},"time":1}"#, "invalid-value"),  // nested value
    PanRejectedCase("time a string", #"{"phase":"began","time":"1"}"#, "invalid-value"),  // wrong type
    PanRejectedCase("scrollOffset an array", #"{"phase":"began","scrollOffset":[1],"time":1}"#, "invalid-value", fluid),  // wrong type on fluid
    PanRejectedCase(
        "translation past 1e6", #"{"phase":"changed","translation":1000000.0000000002,"time":1}"#, "invalid-value"),  // the next Double past the limit
    PanRejectedCase("velocity past -1e6", #"{"phase":"ended","velocity":-2e6,"time":1}"#, "invalid-value"),  // magnitude limit
    PanRejectedCase(
        "scrollOffset past 1e6", #"{"phase":"changed","translation":1,"scrollOffset":1e7,"time":1}"#, "invalid-value",
        fluid),  // magnitude limit
    PanRejectedCase("time past 1e9", #"{"phase":"began","time":1000000001}"#, "invalid-value"),  // time's own limit
    PanRejectedCase("time past -1e9", #"{"phase":"began","time":-1.5e9}"#, "invalid-value"),  // time's own limit
    PanRejectedCase("huge translation", #"{"phase":"changed","translation":1e308,"time":1}"#, "invalid-value"),  // finite but past the limit
    PanRejectedCase("changed without translation", #"{"phase":"changed","velocity":1,"time":1}"#, "invalid-value"),  // translation required for changed
    PanRejectedCase("time missing on the client clock", typical, "invalid-value", [twitterClient, fluidClient]),  // time required there
    PanRejectedCase(
        "began without time, client clock", #"{"phase":"began"}"#, "invalid-value", [twitterClient, fluidClient]),  // time required there
    PanRejectedCase(
        "scrollOffset off fluid", #"{"phase":"changed","translation":1,"scrollOffset":3,"time":1}"#, "unknown-field",
        nonFluid),  // known to fluid only
    PanRejectedCase("unknown field", #"{"phase":"began","time":1,"x":1}"#, "unknown-field"),  // strict fields
    PanRejectedCase("unknown field in capitals", #"{"Phase":"began","phase":"began","time":1}"#, "unknown-field"),  // keys are case-sensitive
    PanRejectedCase("unknown key prefix", #"{"phase":"began","time":1,"translatio":1}"#, "unknown-field"),  // exact keys only
    PanRejectedCase("unknown key, escaped", #"{"phase":"began","time":1,"ti\u006De2":1}"#, "unknown-field"),  // escapes in an unknown key
    PanRejectedCase("empty key", #"{"phase":"began","time":1,"":1}"#, "unknown-field"),  // "" is a key like any other
    PanRejectedCase("null member", #"{"phase":"began","time":1,"x":null}"#, "unknown-field"),  // unknown even when null
]

// MARK: - Tests

@Suite("PanDecoder")
struct PanDecoderTests {
    @Test("decides plain bodies as the general path does", arguments: decidedCases)
    func decides(_ c: PanDecidedCase) {
        #expect(!c.contexts.isEmpty)
        for context in c.contexts {
            let fast = direct(c.body, context)
            switch general(c.body, context) {
            case .failure(let p):
                Issue.record("\(c.name) in \(context): the general path rejects it: \(p.code) \(p.detail)")
            case .success(let slow):
                guard let fast else {
                    Issue.record("\(c.name) in \(context): not decided by the fast path")
                    continue
                }
                #expect(identical(fast, slow), "\(c.name) in \(context): \(describe(fast)) ≠ \(describe(slow))")
            }
        }
    }

    @Test("declines whatever the general path rejects", arguments: rejectedCases)
    func declines(_ c: PanRejectedCase) {
        #expect(!c.contexts.isEmpty)
        for context in c.contexts {
            switch general(c.body, context) {
            case .success(let slow):
                Issue.record("\(c.name) in \(context): the general path accepts it as \(describe(slow))")
            case .failure(let p):
                #expect(p.code == c.code, "\(c.name) in \(context): \(p.code) \(p.detail)")
            }
            let fast = direct(c.body, context)
            #expect(fast == nil, "\(c.name) in \(context): decided as \(describe(fast))")
        }
    }

    @Test func tableSizes() {
        #expect(decidedCases.count >= 20)
        #expect(rejectedCases.count >= 70)
    }

    /// The decided results themselves, so that an agreement on a wrong answer cannot pass.
    @Test func typicalBodyFields() throws {
        let pan = try #require(direct(bytes(typical), facebookServer))
        #expect(pan.event == PanEvent(phase: .changed, translation: -120.5))
        #expect(pan.time == nil)
        let ended = try #require(
            direct(bytes(#"{"phase":"ended","velocity":-800,"scrollOffset":-0,"time":12.25}"#), fluidClient))
        #expect(ended.event == PanEvent(phase: .ended, velocity: -800, scrollOffset: 0))
        #expect(ended.event.scrollOffset?.sign == .minus)
        #expect(ended.time == 12.25)
    }

    /// The package entry for sheet-bench agrees with both paths.
    @Test func packageEntryPoints() throws {
        let body = bytes(#"{"phase":"changed","translation":-120.5,"velocity":-800,"time":12.25}"#)
        let d = try #require(PanDecoder.direct(body, preset: .facebook, clock: .server))
        let g = try #require(PanDecoder.general(body, preset: .facebook, clock: .server))
        #expect(identical((d.0, d.1), (g.0, g.1)))
        #expect(PanDecoder.general(bytes("{}"), preset: .facebook, clock: .server) == nil)
    }

    /// JSONReader.number reads exactly what the reader reads: where a bracketed number parses, the
    /// entry gives the same bits and stops at its end; where it does not, the entry fails or stops
    /// earlier (the reader then fails on what follows).
    @Test func readerNumberEntryMatchesParse() throws {
        var rng = SplitMix64(seed: 0xC0FFEE)
        var parsed = 0
        for _ in 0..<20_000 {
            let number = PanBodyGenerator.number(&rng)
            let whole = try? JSONReader.parse("[" + number + "]")
            let bytes = bytes(number + ",")
            let read = bytes.withUnsafeBufferPointer { JSONReader.number(in: $0, at: 0) }
            if let whole {
                parsed += 1
                let x = try #require(whole.array?.first?.double)
                #expect(read?.value.bitPattern == x.bitPattern, "\(number)")
                #expect(read?.end == bytes.count - 1, "\(number)")
            } else if let read {
                #expect(read.end < bytes.count - 1, "\(number) read whole as \(read.value)")
            }
        }
        #expect(parsed > 10_000)
        // Positions: a number inside a buffer, and starts outside it.
        let bytes = bytes(#"{"t":-12.5e1}"#)
        bytes.withUnsafeBufferPointer { b in
            #expect(JSONReader.number(in: b, at: 5)?.value == -125)
            #expect(JSONReader.number(in: b, at: 5)?.end == 12)
            #expect(JSONReader.number(in: b, at: 4) == nil)  // ':' starts no number
            #expect(JSONReader.number(in: b, at: b.count) == nil)
            #expect(JSONReader.number(in: b, at: -1) == nil)
        }
    }

    /// Generated bodies of every kind, in every context: the fast path either declines or agrees
    /// with the general path bit for bit, never decides a body the general path rejects, and
    /// decides every body the general path accepts that has no backslash in it.
    @Test func agreesWithGeneralPathOnGeneratedBodies() {
        var rng = SplitMix64(seed: 0x9A11_B0D1)
        var decided = 0
        var declinedValid = 0
        var rejected = 0
        var failures = 0
        for _ in 0..<20_000 {
            let body = PanBodyGenerator.body(&rng)
            let json: Result<JSONValue?, Problem>
            do throws(Problem) {
                json = .success(try Decode.json(body))
            } catch {
                json = .failure(error)
            }
            let escapes = body.contains(0x5C)
            for context in allContexts {
                let slow = general(json, context)
                let fast = direct(body, context)
                if let fast {
                    decided += 1
                    guard let slow else {
                        failures += 1
                        Issue.record(
                            "\(text(body)) in \(context): decided as \(describe(fast)), the general path throws")
                        continue
                    }
                    if !identical(fast, slow) {
                        failures += 1
                        Issue.record("\(text(body)) in \(context): \(describe(fast)) ≠ \(describe(slow))")
                    }
                } else if slow != nil {
                    declinedValid += 1
                    if !escapes {
                        failures += 1
                        Issue.record("\(text(body)) in \(context): the fast path declines a plain valid body")
                    }
                } else {
                    rejected += 1
                }
                if failures > 20 { return }
            }
        }
        // Every kind of outcome occurs, so the checks above are not vacuous.
        #expect(decided > 20_000, "decided \(decided)")
        #expect(declinedValid > 100, "declined valid \(declinedValid)")
        #expect(rejected > 20_000, "rejected \(rejected)")
    }
}

// MARK: - Generator

/// Pan-like bodies: random key order and whitespace, duplicate and unknown keys, numbers of many
/// shapes, strings with escapes, nested values, and byte-level damage.
private enum PanBodyGenerator {
    static let phases = ["began", "changed", "ended", "cancelled"]
    static let numberKeys = ["translation", "velocity", "time", "scrollOffset"]
    static let oddKeys = [
        "Phase", "phases", "x", "", "translatio", "Time", "velocity ", "t\u{0131}me", #"\u0070hase"#, #"ti\u006De"#,
        #"scroll\u004Fffset"#, #"phase\u0000"#, "\u{1F600}",
    ]
    static let oddPhases = [
        #""Began""#, #""moved""#, #""ended ""#, #""""#, #""b\u0065gan""#, #""chang\u0065d""#, #""cancel\led""#,
        #""b\egan""#, "\"b\u{E9}gan\"", #""\ud83d\ude00""#, "1", "null", "true", #"["began"]"#, #"{"phase":"began"}"#,
    ]
    static let oddValues = [
        #""1""#, "null", "true", "false", "[]", "[1,2]", "{}", #"{"a":[1,{"b":"\n"}]}"#, #""\u0031""#,
    ]
    static let specialNumbers = [
        "0", "-0", "0.0", "-0.0", "0e5", "-0E-3", "0e99999", "1000000", "-1000000", "1e6", "1000000.00000000001",
        "1000000.0000000002", "999999.99999999999", "1e9", "1000000000", "1000000001", "-1e9", "1.0000001e6",
        "1e308", "1.7976931348623157e308", "1e309", "-1e400", "123456789012345678901234567890", "5e-324",
        "1e-400", "2.2250738585072014e-308", "-1e-320", "9007199254740993", "0.1", "12.25", "-120.5", "-800",
        "01", "+1", ".5", "1.", "1e", "1e+", "-", "--1", "1.e3", "NaN", "Infinity", "-Infinity", "0x10", "1_0",
        "1 2", "1..2", "00", "-01", "1e1.5", "\u{0661}",
    ]
    static let whitespace = [" ", "\t", "\n", "\r"]

    static func pick<T>(_ items: [T], _ rng: inout SplitMix64) -> T { items[Int(rng.next() % UInt64(items.count))] }
    static func chance(_ percent: UInt64, _ rng: inout SplitMix64) -> Bool { rng.next() % 100 < percent }

    static func digits(_ n: Int, leading: Bool, _ rng: inout SplitMix64) -> String {
        var s = ""
        for k in 0..<n { s += String(k == 0 && leading ? rng.next() % 9 + 1 : rng.next() % 10) }
        return s
    }

    /// A number text: mostly valid grammar, from small integers to 25-digit mantissas with exponents.
    static func number(_ rng: inout SplitMix64) -> String {
        switch rng.next() % 10 {
        case 0, 1: return pick(specialNumbers, &rng)
        case 2: return String(Int(rng.next() % 2001) - 1000)
        default:
            let intDigits = Int(rng.next() % 8)
            var s = intDigits == 0 ? "0" : digits(intDigits, leading: true, &rng)
            if chance(60, &rng) { s += "." + digits(Int(rng.next() % 18) + 1, leading: false, &rng) }
            if chance(30, &rng) {
                let bound: UInt64 = chance(80, &rng) ? 12 : 400
                s += pick(["e", "E"], &rng) + pick(["", "+", "-"], &rng) + String(rng.next() % bound)
            }
            if chance(40, &rng) { s = "-" + s }
            return s
        }
    }

    static func ws(_ rng: inout SplitMix64) -> String {
        if chance(2, &rng) { return pick(["\u{0C}", "\u{A0}", "\u{0B}"], &rng) }  // not JSON whitespace
        if chance(60, &rng) { return "" }
        var s = ""
        for _ in 0...(rng.next() % 3) { s += pick(whitespace, &rng) }
        return s
    }

    static func value(for key: String, _ rng: inout SplitMix64) -> String {
        if key == "phase" {
            return chance(85, &rng) ? "\"" + pick(phases, &rng) + "\"" : pick(oddPhases, &rng)
        }
        return chance(90, &rng) ? number(&rng) : pick(oddValues, &rng)
    }

    static func body(_ rng: inout SplitMix64) -> [UInt8] {
        var members: [(String, String)] = []
        if chance(92, &rng) { members.append(("phase", value(for: "phase", &rng))) }
        for key in numberKeys where chance(key == "scrollOffset" ? 25 : 60, &rng) {
            members.append((key, value(for: key, &rng)))
        }
        if chance(8, &rng) {
            let key = pick(oddKeys, &rng)
            members.append((key, value(for: key, &rng)))
        }
        if chance(6, &rng), let twin = members.randomElement(using: &rng) {
            members.append(chance(50, &rng) ? twin : (twin.0, value(for: twin.0, &rng)))  // a duplicate key
        }
        members.shuffle(using: &rng)
        var s = ws(&rng) + "{" + ws(&rng)
        for (k, (key, value)) in members.enumerated() {
            if k > 0 { s += "," + ws(&rng) }
            s += "\"" + key + "\"" + ws(&rng) + ":" + ws(&rng) + value + ws(&rng)
        }
        s += "}" + ws(&rng)
        var bytes = Array(s.utf8)
        if chance(12, &rng) { damage(&bytes, &rng) }
        return bytes
    }

    /// One byte-level change: truncation, deletion, insertion, replacement, wrapping, a BOM, a trailing comma.
    static func damage(_ bytes: inout [UInt8], _ rng: inout SplitMix64) {
        let at = Int(rng.next() % UInt64(bytes.count + 1))
        let noise: [UInt8] = [0x22, 0x2C, 0x7D, 0x7B, 0x5C, 0xFF, 0xC3, 0x30, 0x20, 0x2D, 0x65, 0x2E, 0x3A, 0x00]
        switch rng.next() % 7 {
        case 0: bytes.removeSubrange(at...)
        case 1: if at < bytes.count { bytes.remove(at: at) }
        case 2: bytes.insert(pick(noise, &rng), at: at)
        case 3: if at < bytes.count { bytes[at] = pick(noise, &rng) }
        case 4: bytes = Array("[".utf8) + bytes + Array("]".utf8)
        case 5: bytes = [0xEF, 0xBB, 0xBF] + bytes
        default:
            if let close = bytes.lastIndex(of: 0x7D) { bytes.insert(0x2C, at: close) }
        }
    }
}
