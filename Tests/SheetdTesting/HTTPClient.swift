// What a test sends requests through: a real socket (`HTTPConnection`) or a service answered in
// the test's own process (the service suite's `InProcessService`). A test written against it
// reads the same on either; only what it is given to talk to differs.

/// Sends requests and gives back their responses.
public protocol HTTPClient {
    /// Sends `method target` with the test's `headers` and `body` and returns the response. The
    /// fields every request gets besides (Host, and Content-Type and Content-Length for a body) are
    /// `HTTPConnection.fields`.
    func execute(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]?) throws -> Response
}

extension HTTPClient {
    /// Sends a request and returns its response.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil)
        throws -> Response
    {
        try execute(method, target, headers: headers, body: body)
    }

    /// A request whose body is JSON text.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], json: String) throws
        -> Response
    {
        try execute(method, target, headers: headers, body: Array(json.utf8))
    }

    /// GET `path`.
    public func get(_ path: String) throws -> Response { try execute("GET", path, headers: [], body: nil) }
}
