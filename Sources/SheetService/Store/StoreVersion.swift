/// A session's version in the store: an integer that only increases for that session, whichever
/// process writes it, so that the store keeps the newest by comparing (`RedisSessionStore`'s write
/// script refuses a write whose version is not above the stored one: a stale writer loses and is
/// told). It counts writes, not time: instances' clocks need not agree.
///
/// Its high part counts **takes**, its low 24 bits the writes since the last take. A take starts
/// the next block above every version the session had (`take(after:)`): loading a session from the
/// store (another instance had it, or this one restarted), creating, replacing or deleting one.
/// Each further write of the same copy adds one (`next(after:)`). So a copy taken later outranks
/// every write of a copy taken before it, however many events that older copy goes on accepting
/// (two instances both hold a session while it moves, until the notice `taken` reaches the old
/// one); two copies taken from the same version tie on their first write, and the store keeps the
/// one it got first. 2^24 writes (77 hours of 60 Hz events without a take) would carry into the
/// take count, which only raises the version. The stored versions stay below 2^53 (exact in JSON
/// readers and in Redis's Lua) for 2^29 takes.
///
/// Records written before versions counted writes carry microseconds of wall time (≈ 1.8e15, take
/// ≈ 1.07e8): the next take lands above them, and versions go on from there.
enum StoreVersion {
    /// The writes one take spans.
    static let stride = 1 << 24
    /// The largest version read back (and written): 2^53, the last integer every JSON reader and
    /// Redis's Lua hold exactly.
    static let max = 1 << 53

    /// The version of the next write of a copy whose last was `version`.
    static func next(after version: Int) -> Int { version + 1 }

    /// The first version of the take after `version`: above every write of every copy taken at or
    /// before it.
    static func take(after version: Int) -> Int { (version / stride + 1) * stride }
}
