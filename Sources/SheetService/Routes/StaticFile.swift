import CZlib
import MicroHTTP

/// A file sheetd serves as a web server serves one: its bytes and their gzip, both made once at
/// start-up (not per request), a strong entity tag for each (RFC 9110 §8.8.3: the two encodings
/// are different representations, so their tags differ), and a cache lifetime of its own.
struct StaticFile: Sendable {
    /// How long a cache may use the file without asking again.
    enum Lifetime: Sendable {
        /// `no-cache`: stored, but revalidated on every use (a 304 when unchanged). For the pages
        /// and the catalog: what a designer reloads must be what the server has now.
        case revalidate
        /// `max-age=N` seconds, then revalidated. For the modules and the contract, which change
        /// only with a new sheetd: a page load within N s asks nothing.
        case seconds(Int)

        var cacheControl: String {
            switch self {
            case .revalidate: "no-cache"
            case .seconds(let n): "max-age=\(n)"
            }
        }
    }

    let type: String
    let identity: [UInt8]
    /// The gzip member of `identity` (RFC 1952), nil when it would not be smaller.
    let gzip: [UInt8]?
    let identityTag: String
    let gzipTag: String
    let cacheControl: String

    /// `bytes` served as `type`, compressed now.
    init(_ type: String, _ bytes: [UInt8], _ lifetime: Lifetime) {
        self.type = type
        identity = bytes
        let compressed = Gzip.compress(bytes)
        gzip = compressed.flatMap { $0.count < bytes.count ? $0 : nil }
        let hash = Self.fingerprint(bytes)
        identityTag = "\"\(hash)\""
        gzipTag = "\"\(hash)-gz\""
        cacheControl = lifetime.cacheControl
    }

    /// The answer to a GET or HEAD of this file: 304 when `If-None-Match` holds the tag of the
    /// representation it would get, else 200 with the gzip when `Accept-Encoding` takes it.
    /// Every answer carries the tag, the lifetime and `Vary: Accept-Encoding` (a shared cache
    /// must not hand the gzip to a client that did not ask for it).
    func answer(_ request: HTTPRequest) -> HTTPResponse {
        let zipped = gzip != nil && request.headers.acceptsContentCoding("gzip")
        let tag = zipped ? gzipTag : identityTag
        var headers = HTTPHeaders()
        headers.append(name: "ETag", value: tag)
        headers.append(name: "Cache-Control", value: cacheControl)
        headers.append(name: "Vary", value: "Accept-Encoding")
        if request.headers.ifNoneMatchHolds(tag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.append(name: "Content-Type", value: type)
        if zipped { headers.append(name: "Content-Encoding", value: "gzip") }
        return HTTPResponse(status: 200, headers: headers, body: zipped ? gzip! : identity)
    }

    /// 64 bits of FNV-1a over the bytes, with their count, as hex: the same bytes always give the
    /// same tag (across restarts and instances behind one balancer), other bytes a different one
    /// but for a 2⁻⁶⁴ chance.
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "-" + String(bytes.count, radix: 16)
    }
}

/// gzip (RFC 1952) through zlib, at its best compression: run once per file at start-up, where
/// the time (≈ 10 ms for the 160 KB contract) is paid once and every answer is the smaller.
enum Gzip {
    /// The gzip member of `bytes`; nil if zlib fails (the file is then served as it is).
    static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's; memLevel 9: zlib's most.
        guard
            deflateInit2_(
                &stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))))
        var input = bytes
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeLast(output.count - Int(stream.total_out))
        return output
    }
}
