/// What a request's fields say about the representations it takes: the content codings it
/// accepts (`Accept-Encoding`, RFC 9110 §12.5.3) and the entity tags it already holds
/// (`If-None-Match`, RFC 9110 §13.1.2). For a server that keeps each file in a few encodings
/// and answers a revalidation with 304.
extension HTTPHeaders {
    /// Whether the request accepts the content coding `coding` (e.g. "gzip"): named with a
    /// q-value above 0, or covered by `*` above 0 and not named with `q=0`. "identity" is always
    /// acceptable unless refused the same way; "x-gzip" counts as "gzip" (RFC 9110 §8.4.1.3).
    public func acceptsContentCoding(_ coding: String) -> Bool {
        let wanted = coding.lowercased()
        var named: Bool?
        var wildcard: Bool?
        for value in values(for: "Accept-Encoding") {
            for member in value.split(separator: ",") {
                let parts = member.split(separator: ";")
                guard let first = parts.first else { continue }
                var name = first.trimmingASCIISpaces().lowercased()
                if name == "x-gzip" { name = "gzip" }
                var quality = 1.0
                for parameter in parts.dropFirst() {
                    let pair = parameter.split(separator: "=", maxSplits: 1)
                    if pair.count == 2, pair[0].trimmingASCIISpaces().lowercased() == "q" {
                        // An unreadable q-value counts as 1 (the default), not as a refusal.
                        quality = Double(pair[1].trimmingASCIISpaces()) ?? 1
                    }
                }
                if name == wanted { named = quality > 0 } else if name == "*" { wildcard = quality > 0 }
            }
        }
        if let named { return named }
        if let wildcard { return wildcard }
        return wanted == "identity"
    }

    /// Whether `If-None-Match` holds `tag` (a quoted entity tag such as `"abc"`), compared weakly
    /// as RFC 9110 §13.1.2 requires (a `W/` prefix on either side is ignored), or is `*`.
    public func ifNoneMatchHolds(_ tag: String) -> Bool {
        let opaque = Self.opaqueTag(Substring(tag))
        for value in values(for: "If-None-Match") {
            // Entity tags cannot hold a comma (etagc excludes it): splitting on commas is exact.
            for member in value.split(separator: ",") {
                let candidate = member.trimmingASCIISpaces()
                if candidate == "*" || Self.opaqueTag(candidate) == opaque { return true }
            }
        }
        return false
    }

    /// An entity tag without its weakness indicator.
    private static func opaqueTag(_ tag: Substring) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs (optional whitespace, RFC 9110 §5.6.3).
    fileprivate func trimmingASCIISpaces() -> Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }
}
