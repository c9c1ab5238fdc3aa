/// JSON text in an object of its own, which a reply sends straight from that memory
/// (`MicroHTTP.ResponseBuffer` holds the object until the last byte is sent), so nothing is copied.
/// (A `.bytes` array is copied once, into libmicrohttpd's memory: for a 250-byte reply, an
/// allocation, a copy and a free, ≈ 500 instructions of ≈ 20,000.)
///
/// Copies share the bytes. `JSONWriter` fills it through `start` while it is uniquely referenced and
/// sets `count`, then hands it to a reply and writes to it no more: from then on it is only read,
/// on libmicrohttpd's thread (hence `@unchecked Sendable`).
package struct JSONBuffer: @unchecked Sendable {
    /// The count of body bytes (the header) and the bytes, in one allocation.
    package final class Storage: ManagedBuffer<Int, UInt8> {}

    /// The object whose memory holds the bytes (what a reply keeps alive while sending them).
    package private(set) var storage: Storage

    /// Room for at least `capacity` bytes, none of them the body yet.
    package init(capacity: Int) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: capacity) { _ in 0 }, to: Storage.self)
    }

    /// The first byte (stable: the bytes live inside the object, which does not move).
    package var start: UnsafeMutablePointer<UInt8> { storage.withUnsafeMutablePointerToElements { $0 } }

    /// How many bytes, from `start`, are the body.
    package var count: Int {
        // Through the header's pointer: `storage.header` is a class property, checked for
        // exclusive access at run time on each use.
        get { storage.withUnsafeMutablePointerToHeader { $0.pointee } }
        nonmutating set { storage.withUnsafeMutablePointerToHeader { $0.pointee = newValue } }
    }

    /// How many bytes fit.
    package var capacity: Int { storage.capacity }

    /// Whether no other copy shares the bytes (then writing to them is safe).
    package mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// A copy of the body's bytes.
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: start, count: count)) }
}
