import SheetPhysics

// The hot request's body, `POST /sessions/{id}/pan`, read straight from its bytes: no JSONValue
// tree, no String, no FieldReader. It only ever agrees with the general path
// (`Decode.pan(Decode.json(body), …)`) or declines: anything it does not handle simply is left to
// the general path, which gives the answer or the exact error.

extension Decode {
    /// The pan event of `body` read straight from its bytes, when the body is a flat object of the
    /// shape the fast path knows; nil means "not decided here": the caller then runs
    /// `Decode.pan(Decode.json(body), …)`, which gives the answer or the exact error.
    ///
    /// Decided: one object, JSON whitespace between tokens, each known key at most once and without
    /// escapes, `phase` one of the four names as a plain string, every other member a number (read
    /// by `JSONReader.number`, so bit-identical to the reader's) within the general path's limits,
    /// the required members present. Whenever the general path accepts a body with no backslash in
    /// it, this decides it too (PanDecoderTests checks both directions).
    static func panDirect(_ body: [UInt8], preset: PresetName, clock: SessionClock) -> (PanEvent, Double?)? {
        body.withUnsafeBufferPointer { bytes in
            var scanner = PanScanner(bytes: bytes)
            return scanner.pan(preset: preset, clock: clock)
        }
    }
}

/// `Decode.panDirect` and the general path it stands in for, for the package's other targets
/// (sheet-bench, sheet-fuzz), which cannot see the internal `Decode`.
package enum PanDecoder {
    /// `Decode.panDirect`.
    package static func direct(_ body: [UInt8], preset: PresetName, clock: SessionClock) -> (PanEvent, Double?)? {
        Decode.panDirect(body, preset: preset, clock: clock)
    }

    /// `Decode.pan(Decode.json(body), …)`, nil where it throws.
    package static func general(_ body: [UInt8], preset: PresetName, clock: SessionClock) -> (PanEvent, Double?)? {
        try? Decode.pan(Decode.json(body), preset: preset, clock: clock)
    }
}

/// A forward scan over one pan body; every method returns nil (or false) where the fast path
/// declines.
private struct PanScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func pan(preset: PresetName, clock: SessionClock) -> (PanEvent, Double?)? {
        var phase: PanPhase?
        var translation: Double?
        var velocity: Double?
        var scrollOffset: Double?
        var time: Double?
        skipWhitespace()
        guard take(Byte.openBrace) else { return nil }
        // An empty object has no phase: the general path's error.
        while true {
            skipWhitespace()
            guard take(Byte.quote), let key = knownKey() else { return nil }
            skipWhitespace()
            guard take(Byte.colon) else { return nil }
            skipWhitespace()
            // A key seen twice is a duplicate (or an unknown field): the general path's error.
            switch key {
            case .phase:
                guard phase == nil, take(Byte.quote), let p = knownPhase() else { return nil }
                phase = p
            case .translation:
                guard translation == nil, let x = number(limit: 1e6) else { return nil }
                translation = x
            case .velocity:
                guard velocity == nil, let x = number(limit: 1e6) else { return nil }
                velocity = x
            case .time:
                guard time == nil, let x = number(limit: 1e9) else { return nil }
                time = x
            case .scrollOffset:
                // Known to a preset with scroll hand-off only; elsewhere an unknown field.
                guard preset.has(.scrollHandOff), scrollOffset == nil, let x = number(limit: 1e6) else { return nil }
                scrollOffset = x
            }
            skipWhitespace()
            if take(Byte.comma) { continue }
            guard take(Byte.closeBrace) else { return nil }
            break
        }
        skipWhitespace()
        guard i == bytes.count, let phase else { return nil }
        if phase == .changed, translation == nil { return nil }
        if clock == .client, time == nil { return nil }
        // As Decode.pan builds it: velocity only on ended.
        let event = PanEvent(
            phase: phase, translation: translation, velocity: phase == .ended ? velocity : nil,
            scrollOffset: scrollOffset)
        return (event, time)
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while i < bytes.count {
            let c = bytes[i]
            // Bodies are mostly written without whitespace: one comparison decides.
            guard c <= Byte.space, c == Byte.space || c == Byte.lf || c == Byte.cr || c == Byte.tab else { return }
            i &+= 1
        }
    }

    @inline(__always)
    mutating func take(_ c: UInt8) -> Bool {
        guard i < bytes.count, bytes[i] == c else { return false }
        i &+= 1
        return true
    }

    /// The members a pan body may have.
    enum Key {
        case phase, translation, velocity, time, scrollOffset
    }

    /// The key whose opening quote was just taken, when the bytes from here are one of the known
    /// names and its closing quote (then taken too); nil for anything else. A name written with
    /// an escape, or any other name, is not one of these bytes: the general path's business, as
    /// an unknown field or a duplicate is.
    mutating func knownKey() -> Key? {
        guard i < bytes.count else { return nil }
        switch bytes[i] {
        case UInt8(ascii: "p"): return take(word: "phase\"") ? .phase : nil
        case UInt8(ascii: "t"): return take(word: "translation\"") ? .translation : take(word: "time\"") ? .time : nil
        case UInt8(ascii: "v"): return take(word: "velocity\"") ? .velocity : nil
        case UInt8(ascii: "s"): return take(word: "scrollOffset\"") ? .scrollOffset : nil
        default: return nil
        }
    }

    /// The phase whose opening quote was just taken, as `knownKey` reads a key.
    mutating func knownPhase() -> PanPhase? {
        guard i < bytes.count else { return nil }
        switch bytes[i] {
        case UInt8(ascii: "c"): return take(word: "changed\"") ? .changed : take(word: "cancelled\"") ? .cancelled : nil
        case UInt8(ascii: "b"): return take(word: "began\"") ? .began : nil
        case UInt8(ascii: "e"): return take(word: "ended\"") ? .ended : nil
        default: return nil
        }
    }

    /// Whether the bytes from `i` are `word` (4 to 16 bytes); if so, moves past them. Compared as
    /// two overlapping words of 8 (or 4) bytes from each side, all within the body and the word
    /// (a byte loop with a check per byte cost ≈ 5 instructions a byte).
    @inline(__always)
    mutating func take(word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        assert(n >= 4 && n <= 16, "PanScanner: words of 4 to 16 bytes")
        guard bytes.count &- i >= n, let base = bytes.baseAddress else { return false }
        let here = UnsafeRawPointer(base + i)
        let wanted = UnsafeRawPointer(word.utf8Start)
        let same: Bool
        if n >= 8 {
            same =
                here.loadUnaligned(as: UInt64.self) == wanted.loadUnaligned(as: UInt64.self)
                && here.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
                    == wanted.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
        } else {
            same =
                here.loadUnaligned(as: UInt32.self) == wanted.loadUnaligned(as: UInt32.self)
                && here.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
                    == wanted.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
        }
        if same { i &+= n }
        return same
    }

    /// A number with |x| ≤ `limit`, as JSONReader's own number parser reads it.
    mutating func number(limit: Double) -> Double? {
        guard i < bytes.count else { return nil }
        let c = bytes[i]
        guard c == Byte.minus || (c >= Byte.zero && c <= Byte.nine) else { return nil }
        let value: Double
        if let plain = plainNumber() {
            value = plain
        } else {
            guard let read = JSONReader.number(in: bytes, at: i) else { return nil }
            value = read.value
            i = read.end
        }
        guard value.isFinite, abs(value) <= limit else { return nil }
        return value
    }

    /// The number at `i` when it is written plainly, -?(0|[1-9][0-9]*)(.[0-9]+)? with at most 15
    /// digits and no exponent (how clients write a translation or a velocity), read here: its
    /// digits as an integer below 2^53, divided by an exact power of ten up to 10^15, is one
    /// correctly rounded operation on exact operands, which is what the reader's own fast path
    /// computes for it. nil (and `i` left as it was) for anything else, the reader's to read.
    private mutating func plainNumber() -> Double? {
        var j = i
        let negative = bytes[j] == Byte.minus
        if negative { j &+= 1 }
        let start = j
        var digits: UInt64 = 0
        while j < bytes.count, case let d = bytes[j] &- Byte.zero, d <= 9 {
            digits = digits &* 10 &+ UInt64(d)
            j &+= 1
        }
        let whole = j &- start
        // No digit, or a leading zero: the reader's error.
        guard whole > 0, whole == 1 || bytes[start] != Byte.zero else { return nil }
        var decimals = 0
        if j < bytes.count, bytes[j] == Byte.dot {
            j &+= 1
            let first = j
            while j < bytes.count, case let d = bytes[j] &- Byte.zero, d <= 9 {
                digits = digits &* 10 &+ UInt64(d)
                j &+= 1
            }
            decimals = j &- first
            guard decimals > 0 else { return nil }
        }
        guard whole &+ decimals <= 15, j == bytes.count || bytes[j] | 0x20 != UInt8(ascii: "e") else { return nil }
        i = j
        let magnitude = Double(digits) / Self.powersOfTen[decimals]
        return negative ? -magnitude : magnitude
    }

    /// 10^0 … 10^15, exact.
    private static let powersOfTen: [Double] = (0...15).map { n in (0..<n).reduce(1.0) { r, _ in r * 10 } }
}

private enum Byte {
    static let quote: UInt8 = 0x22  // "
    static let comma: UInt8 = 0x2C  // ,
    static let colon: UInt8 = 0x3A  // :
    static let openBrace: UInt8 = 0x7B  // {
    static let closeBrace: UInt8 = 0x7D  // }
    static let minus: UInt8 = 0x2D  // -
    static let dot: UInt8 = 0x2E  // .
    static let zero: UInt8 = 0x30  // 0
    static let nine: UInt8 = 0x39  // 9
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
}
