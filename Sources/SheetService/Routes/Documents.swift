import Foundation
import MicroHTTP

/// The files sheetd serves as they are: the demo page, its client module, the contract and the
/// preset catalog, read (or written) once at start-up.
struct Documents: Sendable {
    /// One document.
    enum Name {
        /// `GET /`: the demo page.
        case page
        /// `GET /sheet-client.js`: the client module the page (and any prototype) imports.
        case clientModule
        /// `GET /openapi.yaml`: the HTTP contract.
        case contract
        /// `GET /presets`: every preset with its options and detents (`ReplyJSON.presets()`).
        case presets
        /// `GET /layout.html`: the demo of layout changes (keyboard, content height, rotation).
        case layoutPage
        /// `GET /edges.html`: the demo of sheets from every edge (a left drawer, a top sheet).
        case edgesPage
    }

    private let page: [UInt8]
    private let clientModule: [UInt8]
    private let contract: [UInt8]
    private let presets: [UInt8]
    private let layoutPage: [UInt8]
    private let edgesPage: [UInt8]

    /// Reads the files of the module's Resources folder and writes the preset catalog.
    init() throws {
        page = try Self.resource("index", "html")
        clientModule = try Self.resource("sheet-client", "js")
        contract = try Self.resource("openapi", "yaml")
        presets = ReplyJSON.presets()
        layoutPage = try Self.resource("layout", "html")
        edgesPage = try Self.resource("edges", "html")
    }

    /// The document's media type and bytes.
    func body(_ name: Name) -> (type: String, bytes: [UInt8]) {
        switch name {
        case .page: ("text/html; charset=utf-8", page)
        case .clientModule: ("text/javascript; charset=utf-8", clientModule)
        case .contract: ("application/yaml", contract)
        case .presets: ("application/json", presets)
        case .layoutPage: ("text/html; charset=utf-8", layoutPage)
        case .edgesPage: ("text/html; charset=utf-8", edgesPage)
        }
    }

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
    /// `GET` of a document.
    func document(_ name: Documents.Name) -> HTTPResponse {
        let (type, bytes) = documents.body(name)
        return Self.bytes(200, type, bytes)
    }
}
