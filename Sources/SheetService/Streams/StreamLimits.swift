import MicroHTTP
import Synchronization

/// How many frame streams one session, one client and the whole server may hold. A stream holds a
/// connection for as long as its client wants; without these, one client's 1,020 streams took
/// every connection libmicrohttpd had, and every other client's requests waited (issue 29).
/// The total leaves a reserve of connections that streams never take, so the REST routes and the
/// probes are always answered.
final class StreamLimits: Sendable {
    let perSession: Int
    let perClient: Int
    let total: Int
    /// Peers whose X-Forwarded-For is believed (deploy/'s proxies): the client is then the last
    /// address they appended, not the proxy.
    let trustedProxies: Set<String>
    private let byClient = Mutex<[String: Int]>([:])
    private let open = Atomic<Int>(0)

    init(configuration c: ServiceConfiguration) {
        perSession = c.maxStreamsPerSession
        perClient = c.maxStreamsPerClient
        // libmicrohttpd's own limit when none is set: FD_SETSIZE − 4.
        let connections = c.connectionLimit ?? 1020
        total = max(1, connections - max(16, connections / 4))
        trustedProxies = Set(c.trustedProxies)
    }

    /// Who a request comes from, for the per-client limit: the peer, or behind a trusted proxy the
    /// address that proxy put last in X-Forwarded-For.
    func client(of head: borrowing HTTPRequestHead) -> String {
        let peer = head.client?.host ?? "unknown"
        guard trustedProxies.contains(peer), let forwarded = head.headers["x-forwarded-for"],
            let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        else { return peer }
        return last
    }

    /// Takes a place for one more stream of `client` (whose session already holds
    /// `sessionStreams`), or the problem that refuses it: 429 for a session or a client over its
    /// share, 503 when streams hold every connection they may. Each place is given back by
    /// `release`.
    func admit(client: String, sessionStreams: Int) -> Problem? {
        if sessionStreams >= perSession {
            return Self.refusal(429, "this session has \(perSession) open frame streams, its most; close one first")
        }
        let admitted = byClient.withLock { counts in
            guard counts[client, default: 0] < perClient else { return false }
            counts[client, default: 0] += 1
            return true
        }
        guard admitted else {
            return Self.refusal(429, "this client has \(perClient) open frame streams, its most; close one first")
        }
        guard open.wrappingAdd(1, ordering: .relaxed).newValue <= total else {
            open.wrappingSubtract(1, ordering: .relaxed)
            releaseClient(client)
            return Self.refusal(
                503, "the server holds \(total) frame streams, its most (the other connections are kept for requests)")
        }
        return nil
    }

    /// Gives back the place of a stream that ended.
    func release(client: String) {
        open.wrappingSubtract(1, ordering: .relaxed)
        releaseClient(client)
    }

    private func releaseClient(_ client: String) {
        byClient.withLock { counts in
            let left = counts[client, default: 1] - 1
            counts[client] = left > 0 ? left : nil
        }
    }

    private static func refusal(_ status: Int, _ detail: String) -> Problem {
        Problem(
            status: status, code: status == 429 ? "too-many-streams" : "stream-limit", detail: detail,
            headers: [("Retry-After", "1")])
    }
}
