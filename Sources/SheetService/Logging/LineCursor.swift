#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a line's bytes into memory reserved for them beforehand (`[UInt8].append(atMost:_:)`),
/// with no check per piece: whoever reserves counts the most that will be written. About 20
/// separate appends to the sink's array, each checking that the array is unique and has room,
/// cost ≈ 500 instructions of an access line (callgrind).
struct LineCursor {
    /// Where the next byte goes.
    private(set) var next: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) { next = start }

    @inline(__always) mutating func put(_ byte: UInt8) {
        next.initialize(to: byte)
        next += 1
    }

    @inline(__always) mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        next.initialize(from: base, count: bytes.count)
        next += bytes.count
    }

    /// Fixed text, in one copy.
    @inline(__always) mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string's UTF-8 as it is.
    @inline(__always) mutating func put(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    /// Text for a text-format line: control bytes (C0 and DEL) written as `\xNN`, so that no value
    /// can end the line or forge another (at most `LineLogHandler.escapedCount` bytes: 4 for each
    /// control byte, where the bound counts 6).
    mutating func putEscapingControls(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return put(bytes) }
        for byte in bytes {
            if byte < 0x20 || byte == 0x7F {
                put(UInt8(ascii: "\\"))
                put(UInt8(ascii: "x"))
                put(Self.hexDigit(byte >> 4))
                put(Self.hexDigit(byte & 0xF))
            } else {
                put(byte)
            }
        }
    }

    /// A JSON string (at most `LineLogHandler.escapedCount` bytes): quotes, backslashes and
    /// control characters escaped (RFC 8259 §7); other bytes, UTF-8 included, as they are (copied
    /// whole when nothing needs escaping, the usual case).
    mutating func putJSONString(_ text: String) {
        var text = text
        text.withUTF8 { putJSONString($0) }
    }

    /// UTF-8 `bytes` as a JSON string (`putJSONString(_: String)`).
    mutating func putJSONString(_ bytes: UnsafeBufferPointer<UInt8>) {
        put(UInt8(ascii: "\""))
        guard bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            put(bytes)
            return put(UInt8(ascii: "\""))
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): put(#"\""#)
            case UInt8(ascii: "\\"): put(#"\\"#)
            case UInt8(ascii: "\n"): put(#"\n"#)
            case UInt8(ascii: "\r"): put(#"\r"#)
            case UInt8(ascii: "\t"): put(#"\t"#)
            case 0..<0x20:
                put(#"\u00"#)
                put(Self.hexDigit(byte >> 4))
                put(Self.hexDigit(byte & 15))
            default: put(byte)
            }
        }
        put(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The most bytes `putDecimal` writes with up to 20 digits: a sign and 20 digits.
    static let decimalBound = 21

    /// `value` in decimal, at least `digits` (at most 20) digits, zero-padded, without making a
    /// String: the digits counted, then written from the last.
    mutating func putDecimal(_ value: Int, digits: Int = 1) {
        if value < 0 { put(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var count = 1
        var power: UInt = 10
        while count < 20, magnitude >= power {
            count += 1
            power &*= 10
        }
        count = max(count, digits)
        var at = next + count
        next = at
        repeat {
            at -= 1
            at.initialize(to: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while at > next - count
    }
}

extension [UInt8] {
    /// Appends what `write` writes through a cursor, at most `bound` bytes, reserved at once.
    @inline(__always) mutating func append(atMost bound: Int, _ write: (inout LineCursor) -> Void) {
        append(addingCapacity: bound) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in
                let start = buffer.baseAddress! + count
                var cursor = LineCursor(start)
                write(&cursor)
                count += cursor.next - start
                assert(count <= buffer.count, "a line overran the bytes reserved for it")
            }
        }
    }
}
