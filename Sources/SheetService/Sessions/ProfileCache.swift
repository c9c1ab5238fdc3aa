import SheetPhysics
import Synchronization

/// Sessions created with the same configuration share one immutable profile (model, detents,
/// pre-rendered JSON), so a million sessions of a few configurations cost a few profiles, not a
/// million. Keyed by the configuration as sheetd renders it again (its members, compact, in the
/// order sent), which is also what the profile keeps for the store: the key and the profile share
/// one buffer (keyed by the body's own bytes, a 16-detent configuration cost ≈ 1 KB more a
/// session), and bodies that differ only in spacing share a profile. Bounded, and simply emptied
/// when full.
final class ProfileCache: Sendable {
    private let entries = Mutex<[[UInt8]: (SessionProfile, SheetSession)]>([:])
    /// Distinct configurations kept at most.
    static let capacity = 1024

    /// The profile and the initial session for a configuration body, built once per distinct
    /// configuration (the body is parsed every time: creations are rare next to events).
    func configuration(_ body: [UInt8]) throws(Problem) -> (SessionProfile, SheetSession) {
        let json = try Decode.json(body)
        var members = JSONWriter(capacity: body.count + 16)
        if let json { members.value(json) }
        // "{…}" → "…": the members, so the store can write them inside its own braces.
        let rendered = members.takeBytes()
        let key = rendered.count >= 2 ? Array(rendered.dropFirst().dropLast()) : []
        if let hit = entries.withLock({ $0[key] }) { return hit }
        var (profile, session) = try Decode.configuration(json)
        profile = SessionProfile(
            model: profile.model, clock: profile.clock, parent: profile.parent, configurationMembers: key)
        let decoded = (profile, session)
        entries.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[key] = decoded
        }
        return decoded
    }
}
