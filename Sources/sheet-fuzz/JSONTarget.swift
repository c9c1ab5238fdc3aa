import SheetService

/// Mode "J": the JSON reader on raw bytes, the parser every request body goes through first.
///
/// Whatever it accepts must survive a round trip through the service's writer (write, read
/// again, compare: the writer's numbers are shortest round-trip text, so equality is exact), and
/// reading the same bytes as a Swift String must agree with reading them as bytes.
enum JSONTarget {
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        let parsed: JSONValue
        do {
            parsed = try JSONReader.parse(bytes)
        } catch {
            // The message is what a 400 carries: build it, so its formatting runs too.
            check(!error.message.isEmpty, "JSON error without a message at offset \(error.offset)")
            check(
                error.offset >= 0 && error.offset <= bytes.count,
                "JSON error offset \(error.offset) outside the \(bytes.count)-byte input")
            return
        }
        let written = parsed.jsonBytes()
        let reread: JSONValue
        do {
            reread = try JSONReader.parse(written)
        } catch {
            fail("the writer's output does not parse again: \(error) in \(String(decoding: written, as: UTF8.self))")
        }
        check(reread == parsed, "JSON round trip changed the value: \(String(decoding: written, as: UTF8.self))")
        // Valid UTF-8 throughout (the reader accepted it), so the String path must agree.
        if let text = String(validating: bytes, as: UTF8.self) {
            let viaString = try? JSONReader.parse(text)
            check(viaString == parsed, "the String and byte readers disagree on \(text)")
        }
    }
}
