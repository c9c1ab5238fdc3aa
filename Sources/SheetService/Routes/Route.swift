/// The service's routes, as metric labels and for dispatch.
enum Route: Int, CaseIterable, Sendable {
    case root, clientModule, sessions, session, pan, show, dismiss, frames, simulate, presets
    case healthz, livez, readyz, metrics, openapi, unmatched

    /// The route's path template, as openapi.yaml names it.
    var template: String { path.description }

    /// The same, as fixed text (the access log copies it without making a String).
    var path: StaticString {
        switch self {
        case .root: "/"
        case .clientModule: "/sheet-client.js"
        case .sessions: "/sessions"
        case .session: "/sessions/{id}"
        case .pan: "/sessions/{id}/pan"
        case .show: "/sessions/{id}/show"
        case .dismiss: "/sessions/{id}/dismiss"
        case .frames: "/sessions/{id}/frames"
        case .simulate: "/simulate"
        case .presets: "/presets"
        case .healthz: "/healthz"
        case .livez: "/livez"
        case .readyz: "/readyz"
        case .metrics: "/metrics"
        case .openapi: "/openapi.yaml"
        case .unmatched: "unmatched"
        }
    }
}
