import MicroHTTP

/// A request's target as a log line shows it: the raw path, and the query with the value of each
/// credential parameter replaced by `[redacted]`. `/frames` takes a session token or the API key as
/// `access_token` (EventSource cannot send headers), and RFC 6750 §5.3 warns that URLs end up in
/// logs: no credential may reach a log line, at any level.
enum LoggedTarget {
    /// The query parameters that carry credentials, by their raw (undecoded) name.
    static let credentialParameters: Set<Substring> = ["access_token"]

    static func of(_ head: borrowing HTTPRequestHead) -> String {
        guard let query = head.query else { return head.path }
        let parameters = query.split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            let name = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return credentialParameters.contains(name) || credentialParameters.contains(Substring(name.lowercased()))
                ? "\(name)=[redacted]" : String(parameter)
        }
        return head.path + "?" + parameters.joined(separator: "&")
    }
}
