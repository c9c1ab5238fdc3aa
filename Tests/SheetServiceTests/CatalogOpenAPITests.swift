// openapi.yaml agrees with the preset catalog (each preset's own file in SheetPhysics/Presets):
// its enums, its one configuration, options and snapshot schema per preset, the options' types and
// defaults, every example of a snapshot (laws included) and of GET /presets, and its discriminators
// (each selected schema requires the discriminating property, which generators need). In process:
// no server, the service's own decoder and writer.

import Foundation
import SheetPhysics
import Testing
import Yams

@testable import SheetService

/// openapi.yaml at the project root (a link to Sources/SheetService/Resources/openapi.yaml).
private let specURL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("openapi.yaml")

/// A JSON value compared the way JSON means it: objects by key, whatever their order.
private indirect enum Canonical: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([Canonical])
    case object([String: Canonical])

    /// From the service's parsed JSON.
    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case let .bool(b): self = .bool(b)
        case let .number(x): self = .number(x)
        case let .string(s): self = .string(s)
        case let .array(items): self = .array(items.map(Canonical.init))
        case let .object(o):
            self = .object(Dictionary(o.members.map { ($0.key, Canonical($0.value)) }, uniquingKeysWith: { a, _ in a }))
        }
    }

    /// From a value Yams loaded; nil for anything JSON has no form for.
    init?(yaml value: Any?) {
        switch value {
        case nil, is NSNull: self = .null
        case let b as Bool: self = .bool(b)
        case let i as Int: self = .number(Double(i))
        case let x as Double: self = .number(x)
        case let s as String: self = .string(s)
        case let items as [Any]:
            var out: [Canonical] = []
            for item in items {
                guard let c = Canonical(yaml: item) else { return nil }
                out.append(c)
            }
            self = .array(out)
        case let members as [String: Any]:
            var out: [String: Canonical] = [:]
            for (k, v) in members {
                guard let c = Canonical(yaml: v) else { return nil }
                out[k] = c
            }
            self = .object(out)
        default: return nil
        }
    }

    /// From an option's value, as the service writes it (in GET /presets and every snapshot).
    init(_ value: OptionValue) throws {
        var w = JSONWriter(capacity: 64)
        w.option(value)
        self.init(try JSONReader.parse(w.takeBytes()))
    }

    subscript(key: String) -> Canonical? {
        if case let .object(o) = self { return o[key] }
        return nil
    }

    /// JSON text, keys sorted (for messages that show what the spec should hold).
    var description: String {
        switch self {
        case .null: "null"
        case let .bool(b): "\(b)"
        case let .number(x): x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : "\(x)"
        case let .string(s): "\"\(s)\""
        case let .array(items): "[\(items.map(\.description).joined(separator: ", "))]"
        case let .object(o): "{\(o.keys.sorted().map { "\($0): \(o[$0]!)" }.joined(separator: ", "))}"
        }
    }
}

/// The spec, loaded (anchors resolved) and composed (mappings in document order).
private struct Spec {
    let document: [String: Any]
    let node: Node

    static func load() throws -> Spec {
        let text = try String(contentsOf: specURL, encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let node = try #require(try Yams.compose(yaml: text))
        return Spec(document: document, node: node)
    }

    /// components.schemas.`name`.
    func schema(_ name: String) -> [String: Any]? {
        ((document["components"] as? [String: Any])?["schemas"] as? [String: Any])?[name] as? [String: Any]
    }

    /// The keys of components.schemas.`name`.properties, in document order.
    func propertyOrder(_ name: String) -> [String] {
        guard let properties = node["components"]?["schemas"]?[name]?["properties"]?.mapping else { return [] }
        return properties.keys.compactMap(\.string)
    }
}

/// `swipeCell` → `SwipeCell`: how the spec names a preset's schemas.
private func schemaStem(_ preset: PresetName) -> String {
    preset.rawValue.prefix(1).uppercased() + preset.rawValue.dropFirst()
}

private func ref(_ name: String) -> String { "#/components/schemas/\(name)" }

/// The JSON types a schema allows (`type` as one name or a list, or the union over `oneOf`).
private func types(_ schema: [String: Any]) -> Set<String> {
    if let one = schema["type"] as? String { return [one] }
    if let many = schema["type"] as? [String] { return Set(many) }
    if let choices = schema["oneOf"] as? [[String: Any]] { return choices.reduce(into: []) { $0.formUnion(types($1)) } }
    return []
}

/// The service's JSON for a YAML value (through JSONSerialization: Yams gives plain Foundation values).
private func json(_ value: Any) throws -> JSONValue {
    let data = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
    return try JSONReader.parse([UInt8](data))
}

/// A parsed JSON value as the plain Swift values Yams gives.
private func native(_ value: JSONValue) -> Any {
    switch value {
    case .null: NSNull()
    case let .bool(b): b
    case let .number(x): x
    case let .string(s): s
    case let .array(items): items.map(native)
    case let .object(o): Dictionary(o.members.map { ($0.key, native($0.value)) }, uniquingKeysWith: { a, _ in a })
    }
}

/// Every value in the document, with its path; strings are searched too for SSE `data:` lines.
private func walk(_ value: Any, _ path: String, _ visit: (Any, String) -> Void) {
    visit(value, path)
    if let members = value as? [String: Any] {
        for (k, v) in members { walk(v, "\(path).\(k)", visit) }
    } else if let items = value as? [Any] {
        for (i, v) in items.enumerated() { walk(v, "\(path)[\(i)]", visit) }
    }
}

/// The members of a snapshot fixed by its configuration: what the engine gives for the snapshot's
/// preset, geometry and options.
private let configuredMembers = ["preset", "constraint", "geometry", "options", "detents", "dragLaw", "releaseLaw"]

/// The snapshot members the service renders for `example`'s configuration.
private func rendered(_ example: [String: Any]) throws -> Canonical {
    var config: [String: Any] = [:]
    for key in ["preset", "geometry", "options"] { config[key] = example[key] }
    let (profile, _) = try Decode.configuration(try json(config))
    return Canonical(
        try JSONReader.parse(
            Array("{".utf8) + profile.staticMembers + Array(",".utf8) + profile.lawMembers + Array("}".utf8)))
}

/// A preset of GET /presets as openapi.yaml's Presets example writes it: a member a line, each
/// value as JSON (which YAML reads as it is), an option a line.
private func exampleLines(_ preset: JSONValue) -> String {
    func text(_ value: JSONValue) -> String {
        var w = JSONWriter(capacity: 256)
        w.value(value)
        return String(decoding: w.takeBytes(), as: UTF8.self)
    }
    guard case let .object(members) = preset else { return text(preset) }
    var lines: [String] = []
    for (i, member) in members.members.enumerated() {
        let lead = i == 0 ? "          - " : "            "
        if member.key == "options", case let .object(options) = member.value, !options.isEmpty {
            lines.append(lead + "options:")
            lines += options.members.map { "              \($0.key): \(text($0.value))" }
        } else {
            lines.append("\(lead)\(member.key): \(text(member.value))")
        }
    }
    return lines.joined(separator: "\n")
}

@Suite struct CatalogOpenAPITests {

    /// `Preset` and `PresetCapability` list the catalog's names, in its order.
    @Test func enumsAreTheCatalogs() throws {
        let spec = try Spec.load()
        #expect(spec.schema("Preset")?["enum"] as? [String] == PresetName.allCases.map(\.rawValue))
        #expect(spec.schema("PresetCapability")?["enum"] as? [String] == PresetCapability.allCases.map(\.rawValue))
        #expect(spec.schema("Constraint")?["enum"] as? [String] == ConstraintKind.allCases.map(\.rawValue))
    }

    /// `SessionConfig` and `Snapshot` select one schema per preset, in catalog order, by `preset`.
    @Test(arguments: ["Config", "Snapshot"])
    func oneSchemaPerPreset(_ suffix: String) throws {
        let spec = try Spec.load()
        let name = suffix == "Config" ? "SessionConfig" : "Snapshot"
        let found = spec.schema(name)
        let union = try #require(found, "openapi.yaml has no \(name)")
        let expected = PresetName.allCases.map { ref(schemaStem($0) + suffix) }
        #expect((union["oneOf"] as? [[String: String]])?.compactMap { $0["$ref"] } == expected)
        let discriminator = try #require(union["discriminator"] as? [String: Any])
        #expect(discriminator["propertyName"] as? String == "preset")
        #expect(
            discriminator["mapping"] as? [String: String]
                == Dictionary(
                    uniqueKeysWithValues: PresetName.allCases.map { ($0.rawValue, ref(schemaStem($0) + suffix)) }))
    }

    /// Each preset's configuration schema: `preset` is its name (and required: the discriminator),
    /// `options` its options schema.
    @Test(arguments: PresetName.allCases)
    func configSchema(_ preset: PresetName) throws {
        let spec = try Spec.load()
        let found = spec.schema(schemaStem(preset) + "Config")
        let config = try #require(found, "openapi.yaml has no \(schemaStem(preset))Config")
        let properties = try #require(config["properties"] as? [String: Any])
        #expect((properties["preset"] as? [String: Any])?["enum"] as? [String] == [preset.rawValue])
        #expect((config["required"] as? [String])?.contains("preset") == true)
        #expect((properties["options"] as? [String: Any])?["$ref"] as? String == ref(schemaStem(preset) + "Options"))
    }

    /// Each preset's options schema: the catalog's options in its order, each with its JSON types,
    /// and its default where the catalog's is fixed (none where it follows the geometry or other
    /// options); every example is a configuration the engine accepts.
    @Test(arguments: PresetName.allCases)
    func optionsSchema(_ preset: PresetName) throws {
        let spec = try Spec.load()
        let name = schemaStem(preset) + "Options"
        let found = spec.schema(name)
        let schema = try #require(found, "openapi.yaml has no \(name)")
        #expect(spec.propertyOrder(name) == preset.optionNames)
        let properties = schema["properties"] as? [String: Any] ?? [:]
        for info in preset.optionCatalog {
            let option = try #require(properties[info.name] as? [String: Any], "\(name).\(info.name)")
            #expect(types(option) == Set(info.type.split(separator: "|").map(String.init)), "\(name).\(info.name) type")
            if info.hasFixedDefault {
                let catalog = try Canonical(info.defaultValue)
                #expect(
                    option["default"] != nil && Canonical(yaml: option["default"]) == catalog,
                    "\(name).\(info.name): default should be \(catalog)")

            } else {
                #expect(option["default"] == nil, "\(name).\(info.name): its default follows the geometry or options")
            }
        }
        for example in schema["examples"] as? [Any] ?? [] {
            let config = try json(["preset": preset.rawValue, "options": example])
            #expect(throws: Never.self, "\(name) example \(example)") { try Decode.configuration(config) }
        }
    }

    /// Every snapshot in the spec's examples (SSE `data:` lines included) has the preset,
    /// constraint, effective options, detents and laws the engine gives for its configuration.
    @Test func snapshotExamplesAreTheEngines() throws {
        let spec = try Spec.load()
        var seen = 0
        var problems: [String] = []
        func check(_ example: [String: Any], _ path: String) {
            guard example["preset"] is String, configuredMembers.allSatisfy({ example[$0] != nil }) else { return }
            seen += 1
            do {
                let engine = try rendered(example)
                for key in configuredMembers where Canonical(yaml: example[key]) != engine[key] {
                    problems.append("\(path).\(key) should be \(engine[key]?.description ?? "absent")")
                }
            } catch {
                problems.append("\(path): \(error)")
            }
        }
        walk(
            spec.document, "",
            { value, path in
                if let example = value as? [String: Any] {
                    check(example, path)
                } else if let text = value as? String, text.contains("data: {") {
                    for line in text.split(separator: "\n") where line.hasPrefix("data: {") {
                        // Read by the service's reader: Foundation's gives NSNumbers, which cast to Bool.
                        if let parsed = try? JSONReader.parse(String(line.dropFirst("data: ".count))),
                            let example = native(parsed) as? [String: Any]
                        {
                            check(example, path + " (data line)")
                        }
                    }
                }
            })
        #expect(seen >= 5, "found only \(seen) snapshot examples (openapi.yaml has 7)")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// The example of GET /presets is the service's answer, exactly; a failure prints the entry
    /// to paste.
    @Test func presetsExampleIsTheAnswer() throws {
        let spec = try Spec.load()
        let examples = (spec.document["components"] as? [String: Any])?["examples"] as? [String: Any]
        let example = try #require((examples?["Presets"] as? [String: Any])?["value"])
        let answer = try JSONReader.parse(ReplyJSON.presets())
        guard case let .array(served)? = answer.object?["presets"],
            case let .array(listed)? = Canonical(yaml: example)?["presets"]
        else {
            Issue.record("the example has no presets array")
            return
        }
        #expect(listed.count == served.count)
        for (i, preset) in served.enumerated() {
            #expect(
                i < listed.count && listed[i] == Canonical(preset),
                "components.examples.Presets.value.presets[\(i)] should be:\n\(exampleLines(preset))")
        }
    }

    /// Every discriminator's property is required in each schema it selects (else generators
    /// such as openapi-generator warn and may not tell the schemas apart).
    @Test func discriminatorsAreRequired() throws {
        let spec = try Spec.load()
        let schemas = (spec.document["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        /// `required` of a schema, through `allOf` and `$ref`s.
        func required(_ schema: [String: Any]) -> Set<String> {
            var out = Set(schema["required"] as? [String] ?? [])
            if let target = schema["$ref"] as? String,
                let s = schemas[String(target.split(separator: "/").last!)] as? [String: Any]
            {
                out.formUnion(required(s))
            }
            for part in schema["allOf"] as? [[String: Any]] ?? [] { out.formUnion(required(part)) }
            return out
        }
        var discriminators = 0
        for (name, schema) in schemas {
            guard let discriminator = (schema as? [String: Any])?["discriminator"] as? [String: Any],
                let property = discriminator["propertyName"] as? String
            else { continue }
            discriminators += 1
            for (value, target) in discriminator["mapping"] as? [String: String] ?? [:] {
                #expect(
                    required(["$ref": target]).contains(property),
                    "\(name): \(target) (\(value)) does not require \(property)")
            }
        }
        #expect(discriminators >= 3)
    }
}
