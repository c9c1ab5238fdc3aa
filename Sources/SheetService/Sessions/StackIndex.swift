import Synchronization

/// Which session is stacked on which, here: parent id → the id of the child stacked on it last.
/// The child names its parent in its configuration (so the store keeps the link with the
/// child); this index is the way down, rebuilt as children are created or loaded. A parent whose
/// child lives on another instance does not see it (docs/HTTP.md, "Stacks": the router keeps a
/// stack on one instance).
final class StackIndex: Sendable {
    private let children = Mutex<[String: String]>([:])

    /// The child stacked on `parent` last, if one was created or loaded here and not removed.
    func child(of parent: String) -> String? { children.withLock { $0[parent] } }

    /// Whether any session here has a child (a box put in place of a parent learns it is one).
    func hasChild(_ id: String) -> Bool { children.withLock { $0[id] != nil } }

    /// `child` is stacked on `parent` from now on.
    func link(parent: String, child: String) { children.withLock { $0[parent] = child } }

    /// `child` is gone: its parent has no child here unless another was stacked on it since.
    func unlink(parent: String, child: String) {
        children.withLock { table in
            if table[parent] == child { table.removeValue(forKey: parent) }
        }
    }
}
