import SheetPhysics
import Synchronization

/// Sessions created with the same configuration share one immutable profile (model, detents,
/// pre-rendered JSON), so a million sessions of a few configurations cost a few profiles, not a
/// million. Keyed by the request body's exact bytes; bounded, and simply emptied when full.
final class ProfileCache: Sendable {
    private let entries = Mutex<[[UInt8]: (SessionProfile, SheetSession)]>([:])
    /// Distinct configurations kept at most.
    static let capacity = 1024

    /// The profile and the initial session for a configuration body, decoded once per distinct body.
    func configuration(_ body: [UInt8]) throws(Problem) -> (SessionProfile, SheetSession) {
        if let hit = entries.withLock({ $0[body] }) { return hit }
        let json = try Decode.json(body)
        var (profile, session) = try Decode.configuration(json)
        var members = JSONWriter(capacity: body.count + 16)
        if let json { members.value(json) }
        // "{…}" → "…": the members, so the store can write them inside its own braces.
        let rendered = members.takeBytes()
        profile = SessionProfile(
            model: profile.model, clock: profile.clock, parent: profile.parent,
            configurationMembers: rendered.count >= 2 ? Array(rendered.dropFirst().dropLast()) : [])
        let decoded = (profile, session)
        entries.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[body] = decoded
        }
        return decoded
    }
}
