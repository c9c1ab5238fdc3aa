// Threads for blocking tests, and state shared with them. Blocking socket I/O does not belong on
// Swift concurrency's pool (a test that blocks every pool thread stalls every other test).

import Foundation
import Synchronization

/// Runs `body` on a new thread; `wait()` on the result joins it.
public final class Background: Sendable {
    private let done = DispatchSemaphore(value: 0)

    public init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        Thread.detachNewThread {
            body()
            done.signal()
        }
    }

    /// Waits for the thread to finish; false if it did not within `seconds`.
    @discardableResult
    public func wait(seconds: Double = 30) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }
}

/// Runs `body` on a new thread without waiting for it (the result can join it).
@discardableResult
public func onThread(_ body: @escaping @Sendable () -> Void) -> Background {
    Background(body)
}

/// Runs `body(i)` for i in 0..<count, each on its own thread, and waits for all of them.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    for i in 0..<count {
        let thread = Thread {
            body(i)
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { done.wait() }
}

/// A value shared between threads and escaping closures (a `Mutex` cannot be captured by one).
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var storage: Value

    public init(_ value: Value) { storage = value }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }

    /// The value now (a copy); setting it replaces it.
    public var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }
}

/// A set-once flag readable from any thread.
public final class Flag: Sendable {
    private let value = Mutex(false)
    public init() {}
    public func set() { value.withLock { $0 = true } }
    public var isSet: Bool { value.withLock { $0 } }
}
