/// A complete response body in memory that an object owns, sent straight from that memory:
/// the response holds `owner` until libmicrohttpd has sent the last byte and freed the response,
/// so nothing is copied. (A `.bytes` array is copied once, into libmicrohttpd's memory.)
///
/// The maker has finished writing the bytes before it puts them in a response and writes to them
/// no more: from then on they are only read, on libmicrohttpd's thread (hence
/// `@unchecked Sendable`). `owner` keeps the bytes alive and in place for as long as it lives.
public struct ResponseBuffer: @unchecked Sendable {
    /// The object whose lifetime keeps the bytes valid.
    public let owner: AnyObject
    /// The first byte.
    public let start: UnsafeRawPointer
    /// How many bytes, from `start`, are the body.
    public let count: Int

    /// The `count` bytes at `start`, which `owner` keeps alive and unchanged.
    public init(owner: AnyObject, start: UnsafeRawPointer, count: Int) {
        self.owner = owner
        self.start = start
        self.count = count
    }

    /// A copy of the body's bytes.
    public var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: start, count: count)) }
}
