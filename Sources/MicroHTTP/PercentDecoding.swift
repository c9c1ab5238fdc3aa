/// Percent-decoding of URL components (RFC 3986 §2.1), without Foundation.
enum PercentDecoding {
    /// Decodes "%HH" escapes; nil on a malformed escape or invalid UTF-8 (for path segments,
    /// where a bad escape must be refused, not guessed at).
    static func strict(_ raw: some Collection<UInt8>) -> String? {
        // Fast path: nothing to decode, and the bytes came from a String, so they are valid UTF-8.
        if !raw.contains(UInt8(ascii: "%")) {
            return String(decoding: raw, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            if byte == UInt8(ascii: "%") {
                let first = raw.index(after: index)
                guard first != raw.endIndex else { return nil }
                let second = raw.index(after: first)
                guard second != raw.endIndex, let high = hexValue(raw[first]), let low = hexValue(raw[second]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
                index = raw.index(after: second)
            } else {
                bytes.append(byte)
                index = raw.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Form decoding ("+" is a space, bad escapes kept literally, invalid UTF-8 replaced), as the
    /// WHATWG URL standard's urlencoded parser does for query strings.
    static func lenientForm(_ raw: some Collection<UInt8>) -> String {
        if !raw.contains(UInt8(ascii: "%")) && !raw.contains(UInt8(ascii: "+")) {
            return String(decoding: raw, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                let first = raw.index(after: index)
                if first != raw.endIndex {
                    let second = raw.index(after: first)
                    if second != raw.endIndex, let high = hexValue(raw[first]), let low = hexValue(raw[second]) {
                        bytes.append(high << 4 | low)
                        index = raw.index(after: second)
                        continue
                    }
                }
                bytes.append(byte)
            } else {
                bytes.append(byte)
            }
            index = raw.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of one hex digit, or nil.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
