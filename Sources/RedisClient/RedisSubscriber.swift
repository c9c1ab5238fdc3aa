import Foundation

/// Listens to Redis channels (SUBSCRIBE) on one background thread with a hiredis connection of its
/// own, and calls `onMessage` for every message, in the order Redis sent them, on that thread.
///
/// The subscription survives Redis restarts and broken connections: on any failure the thread
/// connects again with backoff (50 ms doubling to 2 s, back to 50 ms once subscribed) and
/// subscribes again. Pub/sub has no memory: **messages published while the subscriber is not
/// subscribed (Redis down, reconnecting, or not yet subscribed after `init`) are lost**, and
/// PUBLISH counts no receiver for them. A connection lost without notice (the Redis host vanished,
/// no FIN or RST) is noticed by TCP keep-alive, about 30 s later with hiredis's settings; messages
/// in that window are lost too. Use `isSubscribed` and `reconnections` to tell when that happened
/// (e.g. to drop cached state that may have missed an invalidation).
///
/// `close()` (or deinit) ends the thread: at once while it waits for messages or between retries
/// (a wake-up pipe interrupts the wait), within about `timeout` when it is connecting or waiting
/// for Redis to confirm the subscription. No callback starts after `close()` returns; a message
/// that had arrived but not been delivered is dropped.
public final class RedisSubscriber: Sendable {
    /// The server subscribed to.
    public let endpoint: RedisEndpoint
    /// The channels subscribed to (exact names, no patterns).
    public let channels: [String]
    private let loop: SubscriptionLoop

    /// Starts the subscriber thread, which connects to `endpoint` and subscribes to `channels`,
    /// then calls `onMessage` with each message's channel and payload (any bytes). Returns at once:
    /// wait for `isSubscribed` before counting on messages. `timeout` (at least 0.001) bounds
    /// connecting, the wait for Redis to confirm the subscription, and reading the rest of a
    /// message whose first bytes arrived; there is no limit on the wait between messages.
    ///
    /// `onMessage` runs on the subscriber thread, one message at a time: a slow callback holds up
    /// later messages (Redis buffers them, and drops the connection once its client output buffer
    /// limit for pub/sub is exceeded). It may call `close()`.
    ///
    /// Precondition: at least one channel, and a finite timeout of at least 0.001 s.
    ///
    /// With a Sentinel endpoint it subscribes on the primary the Sentinels name, and moves to the
    /// new one when they announce a switch (`+switch-master`), as after a failure (`reconnections`).
    public convenience init(
        endpoint: RedisEndpoint, channels: [String], timeout: Double = 1.0,
        onMessage: @escaping @Sendable (_ channel: String, _ message: [UInt8]) -> Void
    ) {
        self.init(
            endpoint: endpoint, channels: channels, timeout: timeout, threadName: "redis-subscribe",
            onMessage: onMessage)
    }

    /// `init(endpoint:channels:timeout:onMessage:)` with a thread named `threadName` (at most 15
    /// characters, or Linux refuses it).
    init(
        endpoint: RedisEndpoint, channels: [String], timeout: Double, threadName: String,
        onMessage: @escaping @Sendable (_ channel: String, _ message: [UInt8]) -> Void
    ) {
        precondition(!channels.isEmpty, "RedisSubscriber needs at least one channel")
        precondition(timeout.isFinite && timeout >= 0.001, "RedisSubscriber's timeout must be at least 0.001 s")
        self.endpoint = endpoint
        self.channels = channels
        loop = SubscriptionLoop(endpoint: endpoint, channels: channels, timeout: timeout, onMessage: onMessage)
        let loop = self.loop
        // The thread holds the loop (not the subscriber, so deinit can run) until it ends. Its name
        // is set on the thread itself: on Linux, Foundation does not apply a name set before
        // start().
        let thread = Thread {
            Thread.current.name = threadName
            loop.run()
        }
        loop.start(thread)
    }

    /// Closes the subscriber (see `close()`) if that was not done.
    deinit { loop.close() }

    /// True while subscribed to every channel: Redis confirmed the subscription and the connection
    /// has not failed since.
    public var isSubscribed: Bool { loop.status.isSubscribed }

    /// How many times the subscription was made again after being lost (the first one does not
    /// count). Each one may have missed messages.
    public var reconnections: Int { loop.status.reconnections }

    /// Why the last connection or subscription failed, or nil once subscribed again (for health
    /// checks).
    public var lastError: RedisError? { loop.status.lastError }

    /// Ends the thread and closes its connection, waiting for it (see the type's summary for how
    /// long): no callback starts after this returns. Called from `onMessage`, it returns at once and
    /// the thread ends after the callback. Idempotent.
    public func close() {
        loop.close()
    }
}

/// The state shared by the subscriber thread and the callers, and the thread's loop.
final class SubscriptionLoop: @unchecked Sendable {
    // @unchecked: the vars below are only touched with `condition` locked; the lets are Sendable.
    private let condition = NSCondition()
    private let endpoint: RedisEndpoint
    private let timeout: Double
    private let onMessage: @Sendable (_ channel: String, _ message: [UInt8]) -> Void
    private let wakeup = Wakeup()
    /// SUBSCRIBE and every channel; also names the command in errors about later replies.
    private let subscribe: RedisCommand
    private let channelCount: Int
    /// The longest wait for a message or between retries: none with the wake-up pipe; `timeout`
    /// without it (none could be made), so that `close()` is still noticed; 0.1 s with a Sentinel
    /// endpoint, so that a switch of the primary is noticed within that.
    private let longestWait: Double?
    /// The announced switches of the primary, for a Sentinel endpoint.
    private let switches: PrimarySwitches?

    private var thread: Thread?
    private var closing = false
    private var finished = false
    private var subscribed = false
    private var subscriptions = 0
    private var lastError: RedisError?

    init(
        endpoint: RedisEndpoint, channels: [String], timeout: Double,
        onMessage: @escaping @Sendable (_ channel: String, _ message: [UInt8]) -> Void
    ) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.onMessage = onMessage
        subscribe = RedisCommand.text(["SUBSCRIBE"] + channels)
        channelCount = channels.count
        lastError = wakeup.failure
        switches = endpoint.sentinel.map { PrimarySwitches.shared(for: $0, timeout: timeout) }
        longestWait = switches != nil ? min(timeout, 0.1) : wakeup.failure == nil ? nil : timeout
    }

    /// Remembers `thread` (so `close()` can tell when it is called on it) and starts it.
    func start(_ thread: Thread) {
        condition.lock()
        self.thread = thread
        condition.unlock()
        thread.start()
    }

    var status: (isSubscribed: Bool, reconnections: Int, lastError: RedisError?) {
        condition.lock()
        defer { condition.unlock() }
        return (subscribed, max(0, subscriptions - 1), lastError)
    }

    func close() {
        condition.lock()
        defer { condition.unlock() }
        if !closing {
            closing = true
            wakeup.signal()
        }
        // On the subscriber thread (from onMessage, or the last reference dropped there), waiting
        // would never end: the thread stops after the callback returns.
        if let thread, Thread.current === thread { return }
        while !finished { condition.wait() }
    }

    private var isClosing: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closing
    }

    /// The thread's loop: connect, subscribe, listen until the connection fails or `close()`;
    /// after a failure, wait (backoff) and start over.
    func run() {
        var failures = 0
        while !isClosing {
            do throws(RedisError) {
                // Read before connecting: a switch announced meanwhile moves it again.
                let announcement = switches?.announcement
                // Freed (its socket closed, so Redis drops the subscription) at the end of the block.
                let context = try HiredisContext.connect(
                    to: endpoint, timeout: timeout, announced: announcement?.primary)
                try subscribe(on: context)
                failures = 0
                try listen(on: context, switchesAnnounced: announcement?.count)
            } catch {
                condition.lock()
                subscribed = false
                lastError = error
                condition.unlock()
                failures += 1
                pause(seconds: min(0.05 * Double(1 << min(failures - 1, 6)), 2.0))
            }
        }
        condition.lock()
        subscribed = false
        // The thread holds this loop through its closure: forgetting it breaks the cycle.
        thread = nil
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Sends SUBSCRIBE and reads one confirmation per channel, each within `timeout` (hiredis's
    /// blocking read); a message on a channel confirmed first is delivered. The command is written
    /// by the first `reply(to:)`, through `chiredis_get_reply`: a connection Redis closed meanwhile
    /// fails it with EPIPE instead of raising SIGPIPE, and nothing is written after it.
    private func subscribe(on context: HiredisContext) throws(RedisError) {
        try context.append(subscribe)
        var confirmed = 0
        while confirmed < channelCount {
            if try handle(context.reply(to: subscribe)) { confirmed += 1 }
        }
        condition.lock()
        subscribed = true
        subscriptions += 1
        lastError = nil
        condition.unlock()
    }

    /// Delivers messages until the connection fails (thrown) or `close()` (returns).
    ///
    /// The wait between messages is poll(2) on the socket and the wake-up pipe, not a blocking read
    /// with a socket timeout: in hiredis 0.14 a read that times out marks the context as failed for
    /// good (`redisBufferRead` sets REDIS_ERR_IO on EAGAIN in a blocking context), so waking up to
    /// check for `close()` would cost a reconnection, and messages published meanwhile. hiredis
    /// only reads once poll reports data (or the end of the connection); the rest of a message
    /// that has begun to arrive is a blocking read bounded by the socket timeout. Replies hiredis
    /// already buffered (several messages in one read) are taken first: poll cannot see them.
    ///
    /// With a Sentinel endpoint, a switch of the primary announced since `switchesAnnounced` ends it
    /// (thrown, to subscribe again on the new primary).
    private func listen(on context: HiredisContext, switchesAnnounced: Int?) throws(RedisError) {
        while !isClosing {
            if let switches, switches.announced != switchesAnnounced {
                throw RedisError(
                    .unavailable, function: subscribe.name,
                    reason: "the Sentinels announced a new primary for \(endpoint.address)", code: "FAILOVER")
            }
            if let reply = try context.bufferedReply(to: subscribe) {
                _ = try handle(reply)
                continue
            }
            switch wakeup.wait(seconds: longestWait, orReadable: context.socket) {
            case .readable: _ = try handle(context.reply(to: subscribe))
            case .signalled, .timedOut: continue
            }
        }
    }

    /// Delivers a message (unless closing) and returns false, returns true for a subscription
    /// confirmation, and throws for anything else (Redis refused SUBSCRIBE, or sent something a
    /// subscribed connection does not get).
    private func handle(_ reply: RedisReply) throws(RedisError) -> Bool {
        if case .array(let parts) = reply, parts.count == 3, case .bulk(let kind) = parts[0],
            case .bulk(let channel) = parts[1]
        {
            switch (kind, parts[2]) {
            case (Self.message, .bulk(let message)):
                // Checked per message, so that none is delivered once `close()` has begun.
                if !isClosing { onMessage(String(decoding: channel, as: UTF8.self), message) }
                return false
            case (Self.confirmation, .integer):
                return true
            default:
                break
            }
        }
        if case .error(let message) = reply { throw .replied(message, to: subscribe.name, by: endpoint) }
        throw RedisError(
            .unexpectedReply, function: subscribe.name,
            reason: "\(endpoint.address) sent \(reply.summary) to a subscribed connection")
    }

    /// The first element of a message, and of a subscription confirmation.
    private static let message = Array("message".utf8)
    private static let confirmation = Array("subscribe".utf8)

    /// Waits `seconds` before the next attempt, or less if `close()` is called.
    private func pause(seconds: Double) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !isClosing {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return }
            let (whole, fraction) = left.components
            let seconds = Double(whole) + Double(fraction) * 1e-18
            _ = wakeup.wait(seconds: min(seconds, longestWait ?? seconds), orReadable: nil)
        }
    }
}
