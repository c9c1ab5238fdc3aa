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
            guard let key = plainString() else { return nil }
            skipWhitespace()
            guard take(Byte.colon) else { return nil }
            skipWhitespace()
            // A key seen twice is a duplicate (or an unknown field): the general path's error.
            if matches(key, "phase") {
                guard phase == nil, let name = plainString(), let p = phaseNamed(name) else { return nil }
                phase = p
            } else if matches(key, "translation") {
                guard translation == nil, let x = number(limit: 1e6) else { return nil }
                translation = x
            } else if matches(key, "velocity") {
                guard velocity == nil, let x = number(limit: 1e6) else { return nil }
                velocity = x
            } else if matches(key, "time") {
                guard time == nil, let x = number(limit: 1e9) else { return nil }
                time = x
            } else if matches(key, "scrollOffset") {
                // Known to a preset with scroll hand-off only; elsewhere an unknown field.
                guard preset.has(.scrollHandOff), scrollOffset == nil, let x = number(limit: 1e6) else { return nil }
                scrollOffset = x
            } else {
                return nil
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
            guard c == Byte.space || c == Byte.lf || c == Byte.cr || c == Byte.tab else { return }
            i &+= 1
        }
    }

    @inline(__always)
    mutating func take(_ c: UInt8) -> Bool {
        guard i < bytes.count, bytes[i] == c else { return false }
        i &+= 1
        return true
    }

    /// The contents of a string of printable ASCII without escapes; nil for anything else.
    mutating func plainString() -> Range<Int>? {
        guard take(Byte.quote) else { return nil }
        let start = i
        while i < bytes.count {
            let c = bytes[i]
            if c == Byte.quote {
                i &+= 1
                return start..<(i &- 1)
            }
            // A backslash, a control character or a non-ASCII byte: the general path's business.
            guard c >= 0x20, c < 0x80, c != Byte.backslash else { return nil }
            i &+= 1
        }
        return nil
    }

    func matches(_ range: Range<Int>, _ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard range.count == n else { return false }
        let w = word.utf8Start
        for k in 0..<n where bytes[range.lowerBound &+ k] != w[k] { return false }
        return true
    }

    func phaseNamed(_ name: Range<Int>) -> PanPhase? {
        if matches(name, "changed") { return .changed }
        if matches(name, "began") { return .began }
        if matches(name, "ended") { return .ended }
        if matches(name, "cancelled") { return .cancelled }
        return nil
    }

    /// A number with |x| ≤ `limit`, read by JSONReader's own number parser.
    mutating func number(limit: Double) -> Double? {
        guard i < bytes.count else { return nil }
        let c = bytes[i]
        guard c == Byte.minus || (c >= Byte.zero && c <= Byte.nine) else { return nil }
        guard let read = JSONReader.number(in: bytes, at: i), read.value.isFinite, abs(read.value) <= limit else {
            return nil
        }
        i = read.end
        return read.value
    }
}

private enum Byte {
    static let quote: UInt8 = 0x22  // "
    static let backslash: UInt8 = 0x5C  // \
    static let comma: UInt8 = 0x2C  // ,
    static let colon: UInt8 = 0x3A  // :
    static let openBrace: UInt8 = 0x7B  // {
    static let closeBrace: UInt8 = 0x7D  // }
    static let minus: UInt8 = 0x2D  // -
    static let zero: UInt8 = 0x30  // 0
    static let nine: UInt8 = 0x39  // 9
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
}
