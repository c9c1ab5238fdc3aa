import SheetPhysics
import Synchronization

/// One shard of the store: a dictionary behind its own lock.
private final class Shard: Sendable {
    let table = Mutex<[String: SessionBox]>([:])

    @inline(__always) func withLock<R>(_ body: (inout [String: SessionBox]) -> R) -> R {
        table.withLock { body(&$0) }
    }
}

/// Every live session, sharded so that different sessions rarely meet on a lock: a lookup holds
/// one of 64 shard locks for a dictionary probe, then only the session's own lock.
final class SessionTable: Sendable {
    private static let shardCount = 64
    private let shards: [Shard]
    private let live = Atomic<Int>(0)
    /// Sessions at most.
    let capacity: Int
    /// Which session is stacked on which, kept as sessions come and go.
    let stacks = StackIndex()

    init(capacity: Int) {
        self.capacity = capacity
        self.shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// The shard of `id`, by FNV-1a over its bytes: ids spread as evenly as with `hashValue`, at a
    /// fraction of a seeded SipHash (the shard's dictionary hashes the id again, with its seed, so
    /// ids chosen to collide only share a lock, never a probe chain).
    @inline(__always) private func shard(_ id: String) -> Shard {
        var hash: UInt32 = 2_166_136_261
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return shards[Int(hash % UInt32(Self.shardCount))]
    }

    /// Live sessions now.
    var count: Int { live.load(ordering: .relaxed) }

    /// The session `id`, if it lives.
    func get(_ id: String) -> SessionBox? {
        shard(id).withLock { $0[id] }
    }

    /// The outcome of `put`.
    enum PutResult {
        case created
        case replaced(SessionBox)
        case full
    }

    /// Stores `box` under its id, replacing any session of that id; refuses a new id when the
    /// store is at capacity.
    func put(_ box: SessionBox) -> PutResult {
        let result = shard(box.id).withLock { table -> PutResult in
            if let old = table[box.id] {
                table[box.id] = box
                return .replaced(old)
            }
            guard reservePlace() else { return .full }
            table[box.id] = box
            return .created
        }
        if case let .replaced(old) = result { left(old, replacedBy: box) }
        if case .full = result {} else { arrived(box) }
        return result
    }

    /// Stores `box` in place of `expected`, atomically: only if the session of its id is still
    /// `expected` (nil: only if there is none). nil when another request put or removed one first
    /// (a `PUT` authorised against `expected` must not overwrite what it was not authorised for).
    func put(_ box: SessionBox, replacing expected: SessionBox?) -> PutResult? {
        let result = shard(box.id).withLock { table -> PutResult? in
            let old = table[box.id]
            guard old === expected else { return nil }
            if let old {
                table[box.id] = box
                return .replaced(old)
            }
            guard reservePlace() else { return .full }
            table[box.id] = box
            return .created
        }
        if case let .replaced(old)? = result { left(old, replacedBy: box) }
        switch result {
        case .created?, .replaced?: arrived(box)
        case .full?, nil: break
        }
        return result
    }

    /// Stores `box` only if no session has its id yet (POST /sessions with a generated id).
    func insertNew(_ box: SessionBox) -> Bool? {
        let inserted = shard(box.id).withLock { table -> Bool? in
            if table[box.id] != nil { return false }
            guard reservePlace() else { return nil }
            table[box.id] = box
            return true
        }
        if inserted == true { arrived(box) }
        return inserted
    }

    /// `box` is the session of its id now: a child is linked to its parent (which learns it may
    /// be covered), and a box in place of a parent learns it is one.
    private func arrived(_ box: SessionBox) {
        if let parent = box.parent {
            stacks.link(parent: parent, child: box.id)
            get(parent)?.mayBeCovered.store(true, ordering: .relaxed)
        }
        if stacks.hasChild(box.id) { box.mayBeCovered.store(true, ordering: .relaxed) }
    }

    /// `box` is no longer the session of its id (`replacement`, if any, is): a child is unlinked
    /// unless its replacement names the same parent.
    private func left(_ box: SessionBox) { left(box, replacedBy: nil) }

    private func left(_ box: SessionBox, replacedBy replacement: SessionBox?) {
        guard let parent = box.parent, replacement?.parent != parent else { return }
        stacks.unlink(parent: parent, child: box.id)
    }

    /// Counts one more live session unless that would pass the cap. Reserving before inserting
    /// means concurrent creators never overshoot it.
    private func reservePlace() -> Bool {
        if live.wrappingAdd(1, ordering: .relaxed).newValue > capacity {
            live.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Removes and returns the session `id`.
    func remove(_ id: String) -> SessionBox? {
        let removed = shard(id).withLock { table -> SessionBox? in
            guard let box = table.removeValue(forKey: id) else { return nil }
            live.wrappingSubtract(1, ordering: .relaxed)
            return box
        }
        if let removed { left(removed) }
        return removed
    }

    /// Removes `box` if it is still the session under its id (not one that replaced it since).
    func remove(_ box: SessionBox) -> Bool {
        let removed = shard(box.id).withLock { table in
            guard table[box.id] === box else { return false }
            table.removeValue(forKey: box.id)
            live.wrappingSubtract(1, ordering: .relaxed)
            return true
        }
        if removed { left(box) }
        return removed
    }

    /// Removes every session last used before `cutoff` (server seconds) and returns them.
    func evict(idleBefore cutoff: Double) -> [SessionBox] {
        var evicted: [SessionBox] = []
        for shard in shards {
            shard.withLock { table in
                // Collect first: removing while iterating a dictionary is not allowed.
                let stale = table.values.filter {
                    $0.lastTouched < cutoff && $0.openStreams.load(ordering: .relaxed) == 0
                }
                for box in stale {
                    table.removeValue(forKey: box.id)
                    live.wrappingSubtract(1, ordering: .relaxed)
                    evicted.append(box)
                }
            }
        }
        for box in evicted { left(box) }
        return evicted
    }

    /// Every live session (for draining its streams).
    func all() -> [SessionBox] {
        shards.flatMap { shard in shard.withLock { Array($0.values) } }
    }
}
