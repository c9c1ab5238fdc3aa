import Synchronization

/// The `+switch-master` announcements of one Sentinel group, counted, and whether a failover of it
/// is under way: a `RedisSubscriber` on each of its Sentinels (any one of them reachable is
/// enough; each announces a switch it learns of, so one failover counts once per Sentinel).
/// Connections to a Sentinel endpoint remember the count when they connect and connect again, to
/// the primary the last announcement named, once it has changed: a demoted primary keeps taking
/// writes until Sentinel reconfigures it, ≈ 10 s after a failover with the default timings, and a
/// client that waited for that would write there meanwhile.
///
/// Between the leader's `+try-failover` and the end of that failover (`+switch-master`, an abort,
/// `+failover-end`, or `failoverHold` seconds without either) calls send nothing: the replica is
/// promoted in that time while the old primary still answers as one, and what it takes then is
/// lost when it becomes a replica (measured: ≈ 1 s of writes, with Sentinel's default timings).
///
/// One per group per process (`shared(for:timeout:)`), kept while a connection or subscriber of
/// the group holds it; its subscribers are closed with it.
final class PrimarySwitches: Sendable {
    private let state: State
    private let subscribers: [RedisSubscriber]

    /// Seconds calls wait for a failover that began to end, at most: an end missed (a Sentinel's
    /// connection lost) must not hold them longer.
    static let failoverHold = 10.0

    /// What the Sentinels announced, shared with the subscribers' callbacks (which must not hold
    /// the watch itself: its deinit closes them).
    private final class State: Sendable {
        /// The switches announced, and when each Sentinel that is running a failover began it
        /// (by its index: in an election several may try, and the ones not elected abort while the
        /// leader goes on).
        let value = Mutex(
            (switches: 0, primary: PrimaryAddress?.none, failoverSince: [Int: ContinuousClock.Instant]()))
    }

    /// The channels of the events that begin and end a failover; `+switch-master` ends it and
    /// counts a switch.
    private static let begins: Set<String> = ["+try-failover"]
    private static let ends: Set<String> = [
        "+failover-end", "+failover-end-for-timeout", "-failover-abort-not-elected", "-failover-abort-no-good-slave",
        "-failover-abort-slave-timeout", "-failover-abort-race",
    ]

    private init(_ sentinel: RedisEndpoint.Sentinel, timeout: Double) {
        let state = State()
        self.state = state
        let name = sentinel.name
        subscribers = sentinel.sentinels.enumerated().map { index, endpoint in
            RedisSubscriber(
                endpoint: endpoint, channels: ["+switch-master"] + Self.begins.sorted() + Self.ends.sorted(),
                timeout: timeout, threadName: "redis-sentinel"
            ) { channel, message in
                // "+switch-master": "<name> <old ip> <old port> <new ip> <new port>"; the others:
                // "master <name> <ip> <port>".
                let words = String(decoding: message, as: UTF8.self).split(separator: " ")
                let group = channel == "+switch-master" ? words.first : words.dropFirst().first
                guard group == Substring(name) else { return }
                state.value.withLock { state in
                    if channel == "+switch-master" {
                        state.switches += 1
                        state.failoverSince = [:]
                        if words.count == 5 {
                            state.primary =
                                PrimaryAddress(host: Array(words[3].utf8), port: Array(words[4].utf8)) ?? state.primary
                        }
                    } else if Self.begins.contains(channel) {
                        state.failoverSince[index] = .now
                    } else {
                        state.failoverSince[index] = nil
                    }
                }
            }
        }
    }

    deinit {
        for subscriber in subscribers { subscriber.close() }
    }

    /// How many switches of the group's primary were announced so far.
    var announced: Int { state.value.withLock { $0.switches } }

    /// How many switches were announced so far, and the primary the last one named (nil before
    /// the first): a connection made after a switch goes there, not to whichever primary the
    /// first Sentinel it asks still names (one that has not heard of the switch names the old one).
    var announcement: (count: Int, primary: PrimaryAddress?) {
        state.value.withLock { ($0.switches, $0.primary) }
    }

    /// Whether a Sentinel began a failover of the group that has not ended (for at most
    /// `failoverHold` s).
    var isFailingOver: Bool {
        let now = ContinuousClock.now
        return state.value.withLock { state in
            state.failoverSince.values.contains { $0.duration(to: now) < .seconds(Self.failoverHold) }
        }
    }

    /// Whether a subscriber listens to at least one Sentinel now (switches are not missed).
    var isListening: Bool { subscribers.contains { $0.isSubscribed } }

    /// The groups' watches that are held somewhere, by group.
    private static let watches = Mutex<[RedisEndpoint.Sentinel: WeakReference]>([:])

    /// A reference that does not keep the watch alive.
    private struct WeakReference: @unchecked Sendable {
        // @unchecked: only read and written with `watches` locked.
        weak var watch: PrimarySwitches?
    }

    /// The watch of `sentinel`'s group, started (subscribers connecting with `timeout`) unless one
    /// is held already.
    static func shared(for sentinel: RedisEndpoint.Sentinel, timeout: Double) -> PrimarySwitches {
        watches.withLock { watches in
            if let watch = watches[sentinel]?.watch { return watch }
            let watch = PrimarySwitches(sentinel, timeout: timeout)
            watches[sentinel] = WeakReference(watch: watch)
            return watch
        }
    }
}
