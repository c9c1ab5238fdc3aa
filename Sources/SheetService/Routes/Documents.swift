import Foundation
import MicroHTTP

/// The files sheetd serves as they are: the demo page, the client module and the element built on
/// it, the examples, the contract and the preset catalog, read (or written) and compressed once at
/// start-up, and answered as a web server answers (`StaticFile`: a strong ETag, 304 for a
/// revalidation, gzip when accepted, a cache lifetime each).
struct Documents: Sendable {
    /// One document.
    enum Name {
        /// `GET /`: the demo page.
        case page
        /// `GET /sheet-client.js`: the client module the page (and any prototype) imports.
        case clientModule
        /// `GET /sheet-view.js`: the `<sheet-view>` custom element, built on the client module.
        case elementModule
        /// `GET /openapi.yaml`: the HTTP contract.
        case contract
        /// `GET /presets`: every preset with its options and detents (`ReplyJSON.presets()`).
        case presets
        /// `GET /layout.html`: the demo of layout changes (keyboard, content height, rotation).
        case layoutPage
        /// `GET /edges.html`: the demo of sheets from every edge (a left drawer, a top sheet).
        case edgesPage
        /// `GET /stacks.html`: the demo of stacks (two bottom sheets over a receding page, two left drawers).
        case stacksPage
    }

    private let page: StaticFile
    private let clientModule: StaticFile
    private let elementModule: StaticFile
    private let contract: StaticFile
    private let presets: StaticFile
    private let layoutPage: StaticFile
    private let edgesPage: StaticFile
    private let stacksPage: StaticFile
    /// The examples (`GET /examples/{name}`), by file name ("map.html").
    private let examples: [String: StaticFile]

    /// Lifetime of the modules and the contract, seconds: they change only with a new sheetd, so
    /// a page loaded again within 5 minutes asks nothing for them; after that, a 304.
    static let moduleLifetime = 300

    /// Reads the files of the module's Resources folder and writes the preset catalog.
    init() throws {
        let js = "text/javascript; charset=utf-8"
        let html = "text/html; charset=utf-8"
        page = StaticFile(html, try Self.resource("index", "html"), .revalidate)
        clientModule = StaticFile(js, try Self.resource("sheet-client", "js"), .seconds(Self.moduleLifetime))
        elementModule = StaticFile(js, try Self.resource("sheet-view", "js"), .seconds(Self.moduleLifetime))
        contract = StaticFile("application/yaml", try Self.resource("openapi", "yaml"), .seconds(Self.moduleLifetime))
        presets = StaticFile("application/json", ReplyJSON.presets(), .revalidate)
        layoutPage = StaticFile(html, try Self.resource("layout", "html"), .revalidate)
        edgesPage = StaticFile(html, try Self.resource("edges", "html"), .revalidate)
        stacksPage = StaticFile(html, try Self.resource("stacks", "html"), .revalidate)
        var examples: [String: StaticFile] = [:]
        if let folder = Bundle.module.url(forResource: "examples", withExtension: nil, subdirectory: "Resources") {
            for url in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            where url.pathExtension == "html" {
                examples[url.lastPathComponent] = StaticFile(html, try [UInt8](Data(contentsOf: url)), .revalidate)
            }
        }
        self.examples = examples
    }

    /// The document.
    func file(_ name: Name) -> StaticFile {
        switch name {
        case .page: page
        case .clientModule: clientModule
        case .elementModule: elementModule
        case .contract: contract
        case .presets: presets
        case .layoutPage: layoutPage
        case .edgesPage: edgesPage
        case .stacksPage: stacksPage
        }
    }

    /// The example of that file name, if there is one.
    func example(_ name: String) -> StaticFile? { examples[name] }

    /// The examples' file names, sorted.
    var exampleNames: [String] { examples.keys.sorted() }

    /// A file shipped in the module's Resources folder.
    static func resource(_ name: String, _ ext: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Resources") else {
            throw Problem(
                status: 500, code: "missing-resource", detail: "Resources/\(name).\(ext) is not in the bundle")
        }
        return try [UInt8](Data(contentsOf: url))
    }
}

extension SheetResponder {
    /// `GET` (and `HEAD`) of a document.
    func document(_ name: Documents.Name, _ request: HTTPRequest) -> HTTPResponse {
        documents.file(name).answer(request)
    }

    /// `GET /examples/{name}`: an example page, or 404.
    func example(_ name: String, _ request: HTTPRequest) throws -> HTTPResponse {
        guard let file = documents.example(name) else {
            throw Problem(
                status: 404, code: "not-found",
                detail: "no example \(name); the examples are \(documents.exampleNames.joined(separator: ", "))")
        }
        return file.answer(request)
    }
}
