import MicroHTTP

/// A path of the route table, by its index in `RoutePath.all`, or none (`unmatched`): what the
/// matcher finds, what access control, dispatch, the metrics and the access log key on.
struct Route: Equatable, Sendable {
    /// The index in `RoutePath.all`; `RoutePath.all.count` for `unmatched`.
    let index: Int

    /// A request whose path is not in the table (its answer is a 404, counted under this label).
    static let unmatched = Route(index: RoutePath.all.count)

    /// Every path of the table, then `unmatched`: the metrics keep one series each.
    static let allCases: [Route] = (0...RoutePath.all.count).map(Route.init(index:))

    /// The table's path, nil for `unmatched`.
    var path: RoutePath? { index < RoutePath.all.count ? RoutePath.all[index] : nil }

    /// The route's label: its path template as openapi.yaml names it, or `unmatched`; fixed text,
    /// so the access log copies it without making a String.
    var label: StaticString { path?.template ?? "unmatched" }

    /// The same, as a String (metrics labels, problem details).
    var template: String { label.description }
}

/// One path template of the route table, with what the rows that name it give: its methods and
/// their handlers, and who may call it. Derived once from `SheetResponder.routeTable`.
struct RoutePath: Sendable {
    let template: StaticString
    /// The template's segments: a literal, or nil for `{id}`. "/" is one empty literal.
    let segments: [String?]
    let access: RouteRow.Access
    /// The methods the path answers, as `Allow` lists them: the table's, HEAD after GET.
    let methods: [String]
    /// The handler of each method (HEAD's is GET's: MicroHTTP sends a HEAD answer without its body).
    let handlers: [(method: String, handler: RouteRow.Handler)]

    /// Every path of the route table, in the order of their first row.
    static let all: [RoutePath] = {
        var paths: [RoutePath] = []
        for row in SheetResponder.routeTable {
            let handlers = [(row.method.rawValue, row.handler)] + (row.method == .get ? [("HEAD", row.handler)] : [])
            if let i = paths.firstIndex(where: { $0.template.description == row.template.description }) {
                let p = paths[i]
                precondition(p.access == row.access, "\(row.template): every method of a path has the same access")
                paths[i] = RoutePath(
                    template: p.template, segments: p.segments, access: p.access,
                    methods: p.methods + handlers.map(\.0), handlers: p.handlers + handlers)
            } else {
                paths.append(
                    RoutePath(
                        template: row.template, segments: segments(row.template), access: row.access,
                        methods: handlers.map(\.0), handlers: handlers))
            }
        }
        return paths
    }()

    /// "/a/{id}/b" → ["a", nil, "b"]; the matcher takes "/name", "/name/{id}" and "/name/{id}/name".
    private static func segments(_ template: StaticString) -> [String?] {
        let parts = template.description.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        let segments: [String?] = parts.map { $0 == "{id}" ? nil : String($0) }
        let shapeIsKnown =
            switch segments.count {
            case 1: segments[0] != nil
            case 2: segments[0] != nil && segments[1] == nil
            case 3: segments[0] != nil && segments[1] == nil && segments[2] != nil
            default: false
            }
        precondition(shapeIsKnown, "\(template): the matcher takes /name, /name/{id} and /name/{id}/name")
        return segments
    }
}
