/// A response body's bytes in an object of their own, which libmicrohttpd sends straight from that
/// memory: the response holds the object until libmicrohttpd has sent the last byte and freed the
/// response, so nothing is copied. (A `.bytes` array is copied once, into libmicrohttpd's memory:
/// for a 250-byte reply, an allocation, a copy and a free, ≈ 500 instructions of ≈ 20,000.)
///
/// Copies share the bytes. Its maker fills it through `start` while it is uniquely referenced and
/// sets `count`, then puts it in a response and writes to it no more: from then on it is only
/// read, on libmicrohttpd's thread (hence `@unchecked Sendable`).
public struct ResponseBuffer: @unchecked Sendable {
    /// The count of body bytes (the header) and the bytes, in one allocation.
    @usableFromInline final class Storage: ManagedBuffer<Int, UInt8> {}

    // Inlinable, as is what reads it: a JSON writer checks and writes through it for every value
    // it writes, and a call across the module boundary for each was measured at ≈ 600
    // instructions per reply.
    @usableFromInline var storage: Storage

    /// Room for at least `capacity` bytes, none of them the body yet.
    public init(capacity: Int) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: capacity) { _ in 0 }, to: Storage.self)
    }

    /// The first byte (stable: the bytes live inside the object, which does not move).
    @inlinable public var start: UnsafeMutablePointer<UInt8> { storage.withUnsafeMutablePointerToElements { $0 } }

    /// How many bytes, from `start`, are the body.
    @inlinable public var count: Int {
        // Through the header's pointer: `storage.header` is a class property, checked for
        // exclusive access at run time on each use.
        get { storage.withUnsafeMutablePointerToHeader { $0.pointee } }
        nonmutating set { storage.withUnsafeMutablePointerToHeader { $0.pointee = newValue } }
    }

    /// Whether no other copy shares the bytes (then writing to them is safe).
    @inlinable public mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// A copy of the body's bytes.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: start, count: count)) }
}
