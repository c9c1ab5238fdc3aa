// A direct JSON writer for fixed reply schemas. Pure Swift, no Foundation.
// It writes into a `JSONBuffer`, which a reply can take and send without a copy.
//
//     var w = JSONWriter(capacity: 256)
//     w.beginObject()
//     w.key("phase"); w.string("ended")
//     w.key("constant"); w.number(278)
//     w.endObject()
//     send(w.bytes)          // {"phase":"ended","constant":278}
//
// Commas and colons are written automatically: one bit per nesting level
// (in a UInt64, spilling to an array only past 64 levels) records whether the
// current container already has an element. The writer does not check that
// calls are balanced or that objects alternate key/value; reply code is fixed,
// so tests catch misuse (debug builds assert on the obvious cases).
//
// Numbers: `number(_:)` writes the shortest text that reads back to the same
// Double (the standard library's printing), integral values without ".0"
// (30, not 30.0; -0.0 as -0), large/small magnitudes in exponent form (1e+22,
// 5e-324), all valid JSON. Non-finite values have no JSON form: callers must
// not pass them (the engine guarantees finite numbers); if one slips through,
// `null` is written so the output stays valid JSON.

package struct JSONWriter {
    /// Output buffer: memory written through a pointer, one capacity and
    /// uniqueness check per call (instead of per byte, as `[UInt8].append` does).
    /// Copying a writer shares it until either copy writes (copy on write), and
    /// so does a buffer taken by `takeBuffer()`.
    private var buffer: JSONBuffer
    private var length = 0
    /// The buffer's capacity in bytes, kept here so that the fast path reads no class property
    /// (each read of one is a dynamic exclusivity check).
    private var capacity: Int

    /// Bit d is set when the container at depth d (1-based) already holds an element.
    private var hasElements: UInt64 = 0
    /// The same flags for depths ≥ 64 (empty unless nesting is that deep).
    private var deepHasElements: [Bool] = []
    private var depth = 0
    /// True right after `key(_:)`: the next value needs no comma.
    private var afterKey = false

    package init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        buffer = JSONBuffer(capacity: self.capacity)
    }

    /// A writer into `buffer` when nothing else holds it any more and it has room for `capacity`
    /// bytes (a reply buffer kept from the last reply, which has been sent: no allocation), else
    /// into a new buffer.
    package init(reusing buffer: consuming JSONBuffer?, capacity: Int) {
        // Moved out of the optional: a copy bound from it would share it with the optional.
        if var kept = buffer.take(), kept.isUniquelyReferenced(), case let room = kept.capacity, room >= capacity {
            self.capacity = room
            self.buffer = kept
        } else {
            self.capacity = max(capacity, 16)
            self.buffer = JSONBuffer(capacity: self.capacity)
        }
    }

    /// The JSON text written so far (a fresh array each time you ask).
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: buffer.start, count: length)) }

    /// The JSON text written so far; the writer is left empty for reuse, keeping its buffer.
    package mutating func takeBytes() -> [UInt8] {
        let result = bytes
        reset()
        return result
    }

    /// The JSON text written so far, in the writer's own buffer (no copy): for a reply,
    /// `HTTPResponse(status:headers:body: .buffer(…))`. Writing on afterwards copies the buffer first.
    /// (Mutating, not consuming: a consuming method copied the writer to check uniqueness, so
    /// the check always failed and the bytes were copied after all.)
    package mutating func takeBuffer() -> JSONBuffer {
        // A buffer shared with a copy of this writer (or a reply taken from one) gets its own
        // bytes first: setting the count must not change what another holder sees.
        if !buffer.isUniquelyReferenced() { makeRoom(for: 0) }
        buffer.count = length
        return buffer
    }

    /// Reads the JSON text written so far in place, without making an array.
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: buffer.start, count: length))
    }

    /// The number of bytes written so far.
    package var count: Int { length }

    /// The JSON text as a String.
    package var text: String {
        String(decoding: UnsafeBufferPointer(start: buffer.start, count: length), as: UTF8.self)
    }

    /// Empties the writer, keeping its buffer, for reuse.
    package mutating func reset() {
        length = 0
        hasElements = 0
        deepHasElements.removeAll()
        depth = 0
        afterKey = false
    }

    // MARK: Structure

    package mutating func beginObject() {
        let comma = separator()
        write(comma, 0x7B)  // {
        push()
    }

    package mutating func endObject() {
        assert(!afterKey, "JSONWriter: key without a value")
        pop()
        write(false, 0x7D)  // }
    }

    package mutating func beginArray() {
        let comma = separator()
        write(comma, 0x5B)  // [
        push()
    }

    package mutating func endArray() {
        pop()
        write(false, 0x5D)  // ]
    }

    /// A member name known at compile time. It is written as is, so it must not
    /// need escaping (no '"', '\\' or control characters; debug builds check).
    /// Note: Swift resolves a bare literal, `key("phase")`, to the `String`
    /// overload (String is the default literal type); pass a `StaticString`
    /// constant (`static let phase: StaticString = "phase"`) to take this path.
    package mutating func key(_ name: StaticString) {
        assert(depth > 0 && !afterKey, "JSONWriter: key outside an object or after a key")
        let comma = separator()
        afterKey = true
        let p = reserve(name.utf8CodeUnitCount + 4)
        length &+= Self.writeKey(name, comma: comma, at: p)
    }

    /// A member name computed at run time; escaped as needed.
    package mutating func key(_ name: String) {
        assert(depth > 0 && !afterKey, "JSONWriter: key outside an object or after a key")
        let comma = separator()
        afterKey = true
        var name = name
        name.withUTF8 { utf8 in
            let p = reserve(Self.quotedRoom(utf8.count))
            length &+= Self.writeQuoted(utf8, comma: comma, colon: true, at: p)
        }
    }

    // MARK: Scalars

    /// A string, escaped per RFC 8259: '"' and '\\' get a backslash; \b \f \n \r \t
    /// use their short escapes; other control characters become \u00XX; all
    /// other characters (non-ASCII included) are copied as UTF-8.
    package mutating func string(_ s: String) {
        let comma = separator()
        Self.withUTF8(of: s) { utf8 in
            let p = reserve(Self.quotedRoom(utf8.count))
            length &+= Self.writeQuoted(utf8, comma: comma, colon: false, at: p)
        }
    }

    /// A string known at compile time (enum raw values and the like); escaped as needed.
    package mutating func string(_ s: StaticString) {
        let comma = separator()
        s.withUTF8Buffer { utf8 in
            let p = reserve(Self.quotedRoom(utf8.count))
            length &+= Self.writeQuoted(utf8, comma: comma, colon: false, at: p)
        }
    }

    /// A Double in its shortest round-trip form; integral values without ".0".
    /// Must be finite: a NaN or infinity is written as `null` (see file comment).
    package mutating func number(_ x: Double) {
        let comma = separator()
        let p = reserve(1 + Self.numberRoom)
        var k = 0
        if comma {
            p[0] = 0x2C
            k = 1
        }
        length &+= k + Self.writeNumber(x, at: p + k)
    }

    package mutating func integer(_ x: Int) {
        let comma = separator()
        let p = reserve(1 + 20)
        var k = 0
        if comma {
            p[0] = 0x2C
            k = 1
        }
        length &+= k + Self.writeInteger(x, at: p + k)
    }

    package mutating func bool(_ b: Bool) {
        let comma = separator()
        if b { writeLiteral("true", comma: comma) } else { writeLiteral("false", comma: comma) }
    }

    package mutating func null() {
        let comma = separator()
        writeLiteral("null", comma: comma)
    }

    /// Any JSON value, recursively (object members in their stored order).
    package mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let x): number(x)
        case .string(let s): string(s)
        case .array(let elements):
            beginArray()
            for e in elements { value(e) }
            endArray()
        case .object(let object):
            beginObject()
            for m in object.members {
                key(m.key)
                value(m.value)
            }
            endObject()
        }
    }

    /// Members pre-rendered elsewhere (`"a":1,"b":2`, no braces), written into the current
    /// object as they are: for the parts of a reply that never change.
    package mutating func rawMembers(_ members: [UInt8]) {
        assert(depth > 0 && !afterKey, "JSONWriter: rawMembers outside an object or after a key")
        guard !members.isEmpty else { return }
        let comma = separator()
        let p = reserve(members.count + 1)
        var k = 0
        if comma {
            p[0] = 0x2C
            k = 1
        }
        members.withUnsafeBufferPointer { src in (p + k).update(from: src.baseAddress!, count: src.count) }
        length &+= k + members.count
    }

    /// Members known at compile time (`"a":null,"b":true`, no braces), written into the current
    /// object as they are, in one copy: for a run of members that is the same in most replies.
    package mutating func rawMembers(_ members: StaticString) {
        assert(depth > 0 && !afterKey, "JSONWriter: rawMembers outside an object or after a key")
        let n = members.utf8CodeUnitCount
        let comma = separator()
        let p = reserve(n + 1)
        var k = 0
        if comma {
            p[0] = 0x2C
            k = 1
        }
        (p + k).update(from: members.utf8Start, count: n)
        length &+= k + n
    }

    // MARK: Members

    // A member's name and value written in one reservation of room (one capacity and uniqueness
    // check instead of two: a reply is mostly members, ≈ 40 in an `ended` answer).

    /// A member name known at compile time, its value written next (the parameter type makes
    /// literals StaticStrings).
    @inline(__always)
    package mutating func member(_ name: StaticString) { key(name) }

    /// `"name":` at room for `valueRoom` more bytes: the caller writes the value there and adds
    /// its length to `length`.
    @inline(__always)
    private mutating func memberName(_ name: StaticString, valueRoom: Int) -> UnsafeMutablePointer<UInt8> {
        assert(depth > 0 && !afterKey, "JSONWriter: member outside an object or after a key")
        let comma = separator()
        let p = reserve(name.utf8CodeUnitCount + 4 + valueRoom)
        let k = Self.writeKey(name, comma: comma, at: p)
        length &+= k
        return p + k
    }

    /// A number member.
    @inline(__always)
    package mutating func member(_ name: StaticString, _ x: Double) {
        let p = memberName(name, valueRoom: Self.numberRoom)
        length &+= Self.writeNumber(x, at: p)
    }

    /// An integer member.
    @inline(__always)
    package mutating func member(_ name: StaticString, integer n: Int) {
        let p = memberName(name, valueRoom: 20)
        length &+= Self.writeInteger(n, at: p)
    }

    /// A boolean member.
    @inline(__always)
    package mutating func member(_ name: StaticString, _ b: Bool) {
        let p = memberName(name, valueRoom: 5)
        length &+= b ? Self.writeLiteral("true", at: p) : Self.writeLiteral("false", at: p)
    }

    /// A string member.
    @inline(__always)
    package mutating func member(_ name: StaticString, _ s: String) {
        Self.withUTF8(of: s) { utf8 in
            let p = memberName(name, valueRoom: Self.quotedRoom(utf8.count))
            length &+= Self.writeQuoted(utf8, comma: false, colon: false, at: p)
        }
    }

    /// A string-or-null member.
    @inline(__always)
    package mutating func member(_ name: StaticString, _ s: String?) {
        guard let s else { return memberNull(name) }
        member(name, s)
    }

    /// A null member.
    @inline(__always)
    package mutating func memberNull(_ name: StaticString) {
        let p = memberName(name, valueRoom: 4)
        length &+= Self.writeLiteral("null", at: p)
    }

    // MARK: Internals

    /// Records a new element at the current level; true if a comma must precede it.
    @inline(__always)
    private mutating func separator() -> Bool {
        if afterKey {
            afterKey = false
            return false
        }
        if depth == 0 { return false }
        if depth < 64 {
            let bit: UInt64 = 1 << UInt64(depth)
            defer { hasElements |= bit }
            return hasElements & bit != 0
        }
        defer { deepHasElements[depth - 64] = true }
        return deepHasElements[depth - 64]
    }

    @inline(__always)
    private mutating func push() {
        depth += 1
        if depth < 64 {
            hasElements &= ~(1 << UInt64(depth))
        } else {
            deepHasElements.append(false)
        }
    }

    @inline(__always)
    private mutating func pop() {
        assert(depth > 0, "JSONWriter: end without begin")
        if depth >= 64 { deepHasElements.removeLast() }
        depth -= 1
        afterKey = false
    }

    /// Room for `n` more bytes at the end of the output; the caller writes there,
    /// then adds what it wrote to `length`. The buffer is uniquely ours and stays
    /// alive (held by `self`) until then.
    @inline(__always)
    private mutating func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(length + n > capacity || !buffer.isUniquelyReferenced()) {
            makeRoom(for: n)
        }
        return buffer.start + length
    }

    /// Grows the buffer to fit `n` more bytes and/or unshares it from a copied writer.
    @inline(never)
    private mutating func makeRoom(for n: Int) {
        let needed = length + n
        if needed > capacity { capacity = max(needed, capacity * 2) }
        let fresh = JSONBuffer(capacity: capacity)
        fresh.start.update(from: buffer.start, count: length)
        buffer = fresh
    }

    @inline(__always)
    private mutating func write(_ comma: Bool, _ byte: UInt8) {
        let p = reserve(2)
        if comma {
            p[0] = 0x2C
            p[1] = byte
            length &+= 2
        } else {
            p[0] = byte
            length &+= 1
        }
    }

    @inline(__always)
    private mutating func writeLiteral(_ s: StaticString, comma: Bool) {
        let p = reserve(s.utf8CodeUnitCount + 1)
        var k = 0
        if comma {
            p[0] = 0x2C
            k = 1
        }
        length &+= k + Self.writeLiteral(s, at: p + k)
    }

    /// Bytes a number's text takes at most: the standard library prints a Double in at most 24.
    static let numberRoom = 32

    /// Writes the text of `x` at `p` (at most `numberRoom` bytes); returns how many bytes.
    @inline(__always)
    static func writeNumber(_ x: Double, at p: UnsafeMutablePointer<UInt8>) -> Int {
        // Integral values of moderate size: exact integer digits, no float printing.
        if x.magnitude < 1e15, case let n = Int(x), Double(n) == x {  // Int(_:) truncates; no libm call
            if n == 0 && x.sign == .minus {
                p[0] = 0x2D  // -0
                p[1] = 0x30
                return 2
            }
            return writeInteger(n, at: p)
        }
        guard x.isFinite else { return writeLiteral("null", at: p) }
        let short = writeShortDecimal(x, at: p)
        if short > 0 { return short }
        let long = writeLongDecimal(x, at: p)
        if long > 0 { return long }
        return writeShortestDigits(x, at: p)
    }

    /// Writes `x` at `p` when 1e-4 ≤ |x| < 2^20 and its significand is not a power of two (an
    /// alpha, a progress or a constant at full precision: the numbers of a reply the short decimal
    /// path leaves), exactly as the standard library prints it, from integer arithmetic (its
    /// general printer costs ≈ 600 instructions a number, with its stream). Returns how many
    /// bytes, 0 when `x` is not such a number.
    ///
    /// What the standard library prints is the decimal with the fewest significant digits that
    /// reads back as `x`, and of those the closest to `x` (an exact tie rounds the last digit
    /// even). Here `x` = f·2^e exactly (f the 53-bit significand) and everything is scaled by
    /// 10^s (s chosen so that ⌊|x|·10^s⌋ has 17 or 18 digits) and by 2^(1−e), where it is an
    /// integer: `a` = 2f·10^s is |x|, and 10^s is half the gap to each neighbour of `x` (the gaps
    /// are equal, as f is not a power of two), so a decimal c·10^−s reads back as `x` exactly when
    /// |c·2^(1−e) − a| < 10^s (equality is impossible: it would make the neighbours' midpoint a
    /// decimal of at most 18 significant digits, and below 2^20 it has 34 or more). Rounding |x| to
    /// 17 or 18 digits always reads back; each digit fewer is the nearest decimal of that many
    /// digits, which reads back if any does (the gaps are symmetric), and once one does not, no
    /// shorter one does. So the digits are those of the last rounding that reads back, dropping
    /// digits one at a time. All of it fits 128 bits: a < 2^54·10^21 < 2^124, c·2^(1−e) < 2^127.
    /// Swift prints decimal notation in this range ("0.00012345678901234567", "1048575.1234567891").
    /// JSONWriterTests compares this with `description` over a million values of the range.
    @inline(never)
    private static func writeLongDecimal(_ x: Double, at p: UnsafeMutablePointer<UInt8>) -> Int {
        let m = x.magnitude
        guard m >= 1e-4, m < 1_048_576, m.significandBitPattern != 0 else { return 0 }
        let f = UInt128(m.significandBitPattern | (1 << 52))
        let binaryExponent = Int(m.exponentBitPattern) &- 1023  // -14 … 19
        let shift = 1 &- (binaryExponent &- 52)  // 1 − e: 34 … 67
        // ⌊log10 |x|⌋ or one less (-5 … 5), so that ⌊|x|·10^s⌋ has 17 or 18 digits.
        let decimalExponent = (binaryExponent &* 78_913) &>> 18  // ⌊binaryExponent·log10(2)⌋
        let s = 16 &- decimalExponent  // 11 … 21
        let tenToS = UInt128(powersOfTen[s &- 2]) &* 100
        let a = (f &<< 1) &* tenToS
        let q = UInt64(truncatingIfNeeded: a &>> shift)  // ⌊|x|·10^s⌋
        let unit = UInt128(1) &<< shift
        let fraction = a & (unit &- 1)  // |x|·10^s − q, times 2^(1−e)
        // Half the gap in units of q: a whole part and a fraction (times 2^(1−e)), so that the
        // tests below compare words, not shifted 128-bit products.
        let gapUnits = UInt64(truncatingIfNeeded: tenToS &>> shift)
        let gapFraction = tenToS & (unit &- 1)
        // Whether the integer c reads back: |c − |x|·10^s| < half the gap.
        @inline(__always) func readsBack(_ c: UInt64) -> Bool {
            if c <= q {
                // |x|·10^s − c = (q − c) + fraction
                let d = q &- c
                return d < gapUnits || (d == gapUnits && fraction < gapFraction)
            }
            // c − |x|·10^s = (c − q) − fraction
            let d = c &- q
            if d <= gapUnits { return d < gapUnits || gapFraction != 0 || fraction != 0 }
            return d == gapUnits &+ 1 && fraction &+ gapFraction > unit
        }
        // Rounded to all of q's digits (ties to even): reads back.
        let halfUnit = unit &>> 1
        var best = q &+ (fraction > halfUnit || (fraction == halfUnit && q & 1 == 1) ? 1 : 0)
        var dropped = 0
        var power: UInt64 = 1
        while dropped < 18 {
            power &*= 10
            // |x|·10^s rounded to a multiple of `power` (ties to even): q's last digits and the
            // fraction against half of `power`.
            let d = q / power
            let r = q &- d &* power
            let half = power &>> 1
            let up = r > half || (r == half && (fraction != 0 || d & 1 == 1))
            let rounded = d &+ (up ? 1 : 0)
            guard readsBack(rounded &* power) else { break }
            best = rounded
            dropped &+= 1
        }
        // best·10^(dropped − s): drop its trailing zeros; what is left after the point is not
        // empty (|x| is not within half a gap of an integer: it is not one, and below 2^20 its
        // gap is far below 1).
        var decimals = s &- dropped
        while best % 10 == 0 {
            best /= 10
            decimals &-= 1
        }
        guard decimals >= 1 else { return 0 }
        // best's 24 digits, zero-padded (best < 10^18), 8 at a time; the text takes its last ones.
        var digits = (
            eightDigits(best / 10_000_000_000_000_000), eightDigits(best / 100_000_000 % 100_000_000),
            eightDigits(best % 100_000_000)
        )
        return withUnsafeBytes(of: &digits) { digits in
            let text = digits.baseAddress!
            // The first digit that is not a leading zero (best > 0: one of them).
            let zeros = 0x3030_3030_3030_3030 as UInt64
            var first = 0
            while first < 16, text.load(fromByteOffset: first, as: UInt64.self) == zeros { first &+= 8 }
            first &+=
                (UInt64(littleEndian: text.load(fromByteOffset: first, as: UInt64.self)) ^ zeros).trailingZeroBitCount
                &>> 3
            let count = 24 &- first
            var k = 0
            if x < 0 {
                p[0] = 0x2D
                k = 1
            }
            let whole: Int
            if count > decimals {
                // "123.456": the whole part (1 to 7 digits, as |x| < 2^20), the point, the rest.
                whole = count &- decimals
                UnsafeMutableRawPointer(p + k).copyMemory(from: text + first, byteCount: whole)
            } else {
                // "0.000123": zeros after the point up to the digits (the padding's).
                whole = 1
                p[k] = 0x30
            }
            p[k &+ whole] = 0x2E
            UnsafeMutableRawPointer(p + (k &+ whole &+ 1)).copyMemory(
                from: text + (24 &- decimals), byteCount: decimals)
            return k &+ whole &+ 1 &+ decimals
        }
    }

    /// The 8 decimal digits of `n` < 10^8 as ASCII, the first in the lowest byte (stored, they
    /// read in order): split in lanes of one word, 4 + 4 digits, then 2 + 2 in each half, then
    /// 1 + 1 in each quarter, by multiplications that divide every lane at once (x·10486 >> 20 is
    /// x / 100 for x < 10^4, x·103 >> 10 is x / 10 for x < 100; no lane spills into the next).
    @inline(__always)
    private static func eightDigits(_ n: UInt64) -> UInt64 {
        let high = n / 10_000
        var x = high | ((n &- high &* 10_000) << 32)
        let hundreds = ((x &* 10_486) >> 20) & 0x0000_007F_0000_007F
        x = hundreds | ((x &- hundreds &* 100) << 16)
        let tens = ((x &* 103) >> 10) & 0x000F_000F_000F_000F
        x = tens | ((x &- tens &* 10) << 8)
        return UInt64(littleEndian: x | 0x3030_3030_3030_3030)
    }

    /// 10^0 … 10^19.
    private static let powersOfTen: [UInt64] = (0...19).map { n in (0..<n).reduce(1) { r, _ in r * 10 } }

    /// The standard library's shortest round-trip digits, printed straight into `p`
    /// (TextOutputStream's ASCII hook, no String).
    @inline(never)
    private static func writeShortestDigits(_ x: Double, at p: UnsafeMutablePointer<UInt8>) -> Int {
        var sink = PointerSink(start: p)
        x.write(to: &sink)
        // Integral values ≥ 1e15 print as "1234567890123456.0": drop ".0".
        if sink.count >= 2 && p[sink.count - 1] == 0x30 && p[sink.count - 2] == 0x2E {
            sink.count -= 2
        }
        return sink.count
    }

    /// Writes `x` at `p` when it has at most 9 decimals and 1e-4 ≤ |x| < 2^20 (alphas, constants in
    /// points, durations, server times in ns: most numbers of a reply), exactly as the standard
    /// library would print it, but from integer arithmetic (the general shortest-digits printer
    /// costs ≈ 600 instructions a number; an `ended` reply has 13). Returns how many bytes, 0 when
    /// `x` is not such a number (the caller prints it the general way). `x` is not integral.
    ///
    /// Why the digits are the shortest: n = round(|x|·10⁹) and n/10⁹ (correctly rounded) == |x|
    /// means the decimal n·10⁻⁹ reads back as x. Below 2^20, 10⁹·ulp(x) ≤ 0.24, so no other
    /// decimal with ≤ 9 decimals reads back as x, and n is the scaled one even after the
    /// product's rounding; the shortest round-trip digits, when they have ≤ 9 decimals, are
    /// therefore n's with trailing zeros dropped, and when they have more, the check fails.
    /// Swift prints decimal notation (no exponent) for 1e-4 ≤ |x| < 2^53. JSONTests compares
    /// this with `description` over a million values.
    @inline(__always)
    private static func writeShortDecimal(_ x: Double, at p: UnsafeMutablePointer<UInt8>) -> Int {
        let m = x.magnitude
        guard m >= 1e-4, m < 1_048_576 else { return 0 }
        // round(m·10⁹), half away from zero, as `rounded()` does, without its libm call: the
        // product is below 2^53, so its integer part converts exactly and the fraction left is
        // exact too.
        let product = m * 1e9
        var n = UInt64(product)
        if product - Double(n) >= 0.5 { n &+= 1 }
        guard Double(n) / 1e9 == m else { return 0 }
        let whole = n / 1_000_000_000
        var fraction = n &- whole &* 1_000_000_000
        // Integral values took the integer path: the fraction is not zero, and has 0 to 8
        // trailing zeros. Drop them 4, 2 and 1 at a time (one at a time cost ≈ 10 instructions
        // each: an alpha of 0.7 has 8).
        var decimals = 9
        if fraction % 100_000_000 == 0 {
            fraction /= 100_000_000
            decimals = 1
        } else {
            if fraction % 10_000 == 0 {
                fraction /= 10_000
                decimals = 5
            }
            if fraction % 100 == 0 {
                fraction /= 100
                decimals &-= 2
            }
            if fraction % 10 == 0 {
                fraction /= 10
                decimals &-= 1
            }
        }
        var k = 0
        if x < 0 {
            p[0] = 0x2D
            k = 1
        }
        k += writeDigits(whole, at: p + k)
        p[k] = 0x2E
        k += 1
        writeDigits(fraction, count: decimals, at: p + k)
        return k + decimals
    }

    /// Writes `x`'s decimal digits at `p`, after a minus sign if negative; returns how many bytes.
    @inline(__always)
    private static func writeInteger(_ x: Int, at p: UnsafeMutablePointer<UInt8>) -> Int {
        if x < 0 {
            p[0] = 0x2D
            return 1 + writeDigits(UInt64(x.magnitude), at: p + 1)
        }
        return writeDigits(UInt64(x), at: p)
    }

    /// Writes the decimal digits of `u` at `p`; returns how many.
    @inline(__always)
    private static func writeDigits(_ u: UInt64, at p: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 1
        var t = u
        while t >= 100 {
            t /= 100
            count &+= 2
        }
        if t >= 10 { count &+= 1 }
        writeDigits(u, count: count, at: p)
        return count
    }

    /// Writes the last `count` decimal digits of `u` at `p` (zero-padded on the left), two at a
    /// time from a table of the pairs 00…99.
    @inline(__always)
    private static func writeDigits(_ u: UInt64, count: Int, at p: UnsafeMutablePointer<UInt8>) {
        let pairs = digitPairs.utf8Start
        var u = u
        var i = count
        while i >= 2 {
            let pair = Int(truncatingIfNeeded: u % 100) &* 2
            u /= 100
            i &-= 2
            p[i] = pairs[pair]
            p[i &+ 1] = pairs[pair &+ 1]
        }
        if i == 1 { p[0] = 0x30 &+ UInt8(truncatingIfNeeded: u % 10) }
    }

    /// "00", "01", … "99", one after the other.
    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748\
        49505152535455565758596061626364656667686970717273747576777879808182838485868788899091929394959697\
        9899
        """

    /// Writes `literal` (ASCII, no escapes needed) at `p`; returns how many bytes.
    @inline(__always)
    private static func writeLiteral(_ literal: StaticString, at p: UnsafeMutablePointer<UInt8>) -> Int {
        let n = literal.utf8CodeUnitCount
        let src = literal.utf8Start
        for m in 0..<n { p[m] = src[m] }
        return n
    }

    /// Writes `"name":` at `p`, after a comma when `comma`; returns how many bytes (at most the
    /// name's length + 4). `name` must not need escaping (no '"', '\\' or control characters;
    /// debug builds check).
    @inline(__always)
    static func writeKey(_ name: StaticString, comma: Bool, at p: UnsafeMutablePointer<UInt8>) -> Int {
        assert(name.hasPointerRepresentation, "JSONWriter: key must be a string literal")
        let n = name.utf8CodeUnitCount
        let src = name.utf8Start
        assert(
            !UnsafeBufferPointer(start: src, count: n).contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C },
            "JSONWriter: static key needs escaping")
        var k = 0
        if comma {
            p[0] = 0x2C
            k = 1
        }
        p[k] = 0x22
        (p + k + 1).update(from: src, count: n)
        p[k + 1 + n] = 0x22
        p[k + 2 + n] = 0x3A  // :
        return k + 3 + n
    }

    /// Whether any of the `count` (at least 4) bytes at `src` needs an escape in a JSON string:
    /// '"', '\\' or a control character. Tested a word at a time, the last word overlapping the
    /// one before it (words of 4 bytes below 8), all within the bytes; per byte lane, a byte b
    /// is flagged when b − c borrows for c = 0x20, or b ^ '"' or b ^ '\\' is zero (exact as a
    /// whole: the test is nonzero exactly when some byte is flagged).
    @inline(__always)
    private static func needsEscaping(_ src: UnsafeRawPointer, count n: Int) -> Bool {
        @inline(__always) func flagged64(_ w: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let q = w ^ (ones &* 0x22)
            let b = w ^ (ones &* 0x5C)
            return ((q &- ones) & ~q | (b &- ones) & ~b | (w &- ones &* 0x20) & ~w) & (ones &* 0x80) != 0
        }
        @inline(__always) func flagged32(_ w: UInt32) -> Bool {
            let ones: UInt32 = 0x0101_0101
            let q = w ^ (ones &* 0x22)
            let b = w ^ (ones &* 0x5C)
            return ((q &- ones) & ~q | (b &- ones) & ~b | (w &- ones &* 0x20) & ~w) & (ones &* 0x80) != 0
        }
        guard n >= 8 else {
            return flagged32(src.loadUnaligned(as: UInt32.self))
                || flagged32(src.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self))
        }
        var i = 0
        while i &+ 8 < n {
            if flagged64(src.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return true }
            i &+= 8
        }
        return flagged64(src.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self))
    }

    /// Calls `body` with the UTF-8 of `s` where it lies (no copy of the string: `var s = s` for
    /// `withUTF8` retained and released it, ≈ 40 instructions a string).
    @inline(__always)
    private static func withUTF8(of s: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if s.utf8.withContiguousStorageIfAvailable(body) != nil { return }
        var s = s  // a bridged or otherwise non-contiguous string: made native first
        s.withUTF8(body)
    }

    /// Room `writeQuoted` may need for `count` bytes: every byte escaped as \u00XX, a comma,
    /// the quotes and a colon.
    @inline(__always)
    static func quotedRoom(_ count: Int) -> Int { 6 * count + 4 }

    /// Writes `utf8` in double quotes at `p` (after a comma, before a colon if asked), escaping
    /// as JSON requires; returns how many bytes (at most `quotedRoom(utf8.count)`).
    static func writeQuoted(
        _ utf8: UnsafeBufferPointer<UInt8>, comma: Bool, colon: Bool, at p: UnsafeMutablePointer<UInt8>
    ) -> Int {
        let n = utf8.count
        var k = 0
        if comma {
            p[0] = 0x2C
            k = 1
        }
        p[k] = 0x22
        k += 1
        var i = 0
        let src = UnsafeRawPointer(utf8.baseAddress ?? UnsafePointer(p))  // n == 0: never read
        if n >= 4, !needsEscaping(src, count: n) {
            // Most strings (names, detents, reasons): one test of all their bytes and one copy (a
            // byte at a time, a short name's tail cost ≈ 20 instructions a byte).
            UnsafeMutableRawPointer(p + k).copyMemory(from: src, byteCount: n)
            i = n
            k &+= n
        }
        while i < n {
            // Copy 8 bytes at a time while none needs escaping (SWAR test for
            // '"', '\\' and < 0x20; the lowest flagged byte is exact).
            while i &+ 8 <= n {
                let w = src.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let ones: UInt64 = 0x0101_0101_0101_0101
                let q = w ^ (ones &* 0x22)
                let b = w ^ (ones &* 0x5C)
                let special = ((q &- ones) & ~q | (b &- ones) & ~b | (w &- ones &* 0x20) & ~w) & (ones &* 0x80)
                if special != 0 { break }
                UnsafeMutableRawPointer(p + k).storeBytes(of: w, as: UInt64.self)
                i &+= 8
                k &+= 8
            }
            if i == n { break }
            let c = utf8[i]
            i &+= 1
            if c >= 0x20 && c != 0x22 && c != 0x5C {
                p[k] = c
                k &+= 1
                continue
            }
            p[k] = 0x5C  // backslash
            switch c {
            case 0x22: p[k + 1] = 0x22  // \"
            case 0x5C: p[k + 1] = 0x5C  // \\
            case 0x08: p[k + 1] = 0x62  // \b
            case 0x0C: p[k + 1] = 0x66  // \f
            case 0x0A: p[k + 1] = 0x6E  // \n
            case 0x0D: p[k + 1] = 0x72  // \r
            case 0x09: p[k + 1] = 0x74  // \t
            default:  // \u00XX
                let hexDigits: StaticString = "0123456789abcdef"
                p[k + 1] = 0x75
                p[k + 2] = 0x30
                p[k + 3] = 0x30
                p[k + 4] = hexDigits.utf8Start[Int(c >> 4)]
                p[k + 5] = hexDigits.utf8Start[Int(c & 0xF)]
                k &+= 4
            }
            k &+= 2
        }
        p[k] = 0x22
        k += 1
        if colon {
            p[k] = 0x3A
            k += 1
        }
        return k
    }
}

/// Receives `Double.write(to:)` output straight into the writer's buffer. The
/// standard library hands its formatted ASCII to `_writeASCII` without building
/// a String; `write(_:)` is the fallback should it ever not. Callers reserve
/// 32 bytes; a Double never prints longer than 24.
private struct PointerSink: TextOutputStream {
    let start: UnsafeMutablePointer<UInt8>
    var count = 0

    init(start: UnsafeMutablePointer<UInt8>) { self.start = start }

    @inline(__always)
    mutating func put(_ b: UInt8) {
        start[count] = b
        count += 1
    }

    mutating func write(_ string: String) {
        for b in string.utf8 where count < 32 { put(b) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        // One copy of the digits (a number prints in one piece): a loop of byte stores, each
        // checking the room, cost ≈ 10 instructions a byte, ≈ 200 for a `progress`.
        let n = Swift.min(buffer.count, 32 - count)
        guard n > 0, let base = buffer.baseAddress else { return }
        (start + count).update(from: base, count: n)
        count += n
    }
}

/// Writes `value` into `writer` (same as `writer.value(value)`).
package func write(_ value: JSONValue, into writer: inout JSONWriter) {
    writer.value(value)
}

extension JSONValue {
    /// This value as JSON text bytes (convenience; hot paths reuse a writer).
    package func jsonBytes(capacity: Int = 256) -> [UInt8] {
        var w = JSONWriter(capacity: capacity)
        w.value(self)
        return w.takeBytes()
    }
}
