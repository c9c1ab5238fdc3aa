import CMicroHTTPD

// How a DeferredResponse drives a libmicrohttpd connection (docs/MICROHTTP.md §2.6): the access
// handler's last call, given a deferred response, suspends the connection under the handle's lock
// unless the answer is there already; the answer, given on any thread, resumes it under the same
// lock; libmicrohttpd then calls the access handler again, which takes the answer and queues it.

/// What became of binding a handle to the request's connection.
enum DeferredBinding {
    /// Suspended: the answer resumes the connection.
    case suspended
    /// The answer is there already: queue it now.
    case answered
    /// The handle served a request before.
    case reused
}

extension DeferredResponse.State {
    /// Resumes the connection if it waits (the lock held): once, and never one not suspended.
    mutating func resumeSuspended() {
        guard let connection = suspended else { return }
        suspended = nil
        MHD_resume_connection(connection.pointer)
    }
}

extension DeferredResponse {
    /// Ties the handle to the request on `connection` and, unless it is answered already,
    /// suspends the connection. On libmicrohttpd's thread, in the access handler.
    func suspend(_ connection: OpaquePointer) -> DeferredBinding {
        state.withLock { state in
            guard !state.bound else { return .reused }
            state.bound = true
            if state.answered { return .answered }
            state.suspended = ConnectionHandle(pointer: connection)
            MHD_suspend_connection(connection)
            return .suspended
        }
    }

    /// The answer given, taken out (on the connection's thread, once it is resumed).
    func takeAnswer() -> Answer? {
        state.withLock { $0.answer.take() }
    }

    /// The request is over without its answer having been taken (the server closed the
    /// connection): later answers are refused, and nothing touches the connection again.
    func abandon() {
        state.withLock { state in
            state.answered = true
            state.answer = nil
            state.suspended = nil
        }
    }
}

/// The deferred answers a server's requests await, so that stopping can answer them (a connection
/// left suspended makes MHD_stop_daemon abort the process in libmicrohttpd 0.9.75).
struct DeferredRegistry {
    /// Set once by `ServerCore.endDeferred()`; from then on a new deferral is refused at once.
    var stopping = false
    var open: [ObjectIdentifier: DeferredResponse] = [:]
}

extension ServerCore {
    /// Records a deferred answer a request is about to wait for; false when the server is stopping
    /// (then the request is answered with the `.serverStopping` refusal instead).
    func register(_ deferred: DeferredResponse) -> Bool {
        deferredAnswers.withLock { registry in
            if registry.stopping { return false }
            registry.open[ObjectIdentifier(deferred)] = deferred
            return true
        }
    }

    /// Forgets a deferred answer whose request took it, or is over.
    func unregister(_ deferred: DeferredResponse) {
        _ = deferredAnswers.withLock { $0.open.removeValue(forKey: ObjectIdentifier(deferred)) }
    }

    /// Answers every deferred answer still awaited with the `.serverStopping` refusal, which
    /// resumes its connection; how many there were.
    @discardableResult
    func endDeferred() -> Int {
        let awaited: [DeferredResponse] = deferredAnswers.withLock { registry in
            registry.stopping = true
            return Array(registry.open.values)
        }
        for deferred in awaited {
            _ = deferred.give(
                .refusal(HTTPRefusal(.serverStopping, "The server stopped before the answer was ready; send it again."))
            )
        }
        return awaited.count
    }
}
