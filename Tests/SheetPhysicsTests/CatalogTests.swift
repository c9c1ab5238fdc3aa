import Testing

@testable import SheetPhysics

// The catalog (each preset's own file) agrees with what the preset's configurations do: a preset
// declares its summary, initial detent, capabilities and option defaults once, and these rules
// hold for every preset, so a new one is checked without a row of its own.

/// A geometry other than the standard one: a small phone without a bottom inset.
private let small = try! Geometry(height: 667, safeAreaTop: 20, safeAreaBottom: 0)

@Suite struct CatalogTests {
    /// The summary is one short line (the demo's preset picker shows it as is).
    @Test(arguments: PresetName.allCases)
    func summaryIsOneLine(_ preset: PresetName) {
        #expect(!preset.summary.isEmpty)
        #expect(!preset.summary.contains("\n"))
        #expect(preset.summary.count <= 60)
    }

    /// A new session that names no detent rests at the catalog's initial detent, which is a
    /// detent of the default configuration; without one it starts hidden.
    @Test(arguments: PresetName.allCases)
    func initialDetentIsWhereANewSessionRests(_ preset: PresetName) throws {
        let model = try SheetModel(preset: preset)
        let snapshot = try SheetSession(model: model).snapshot(at: 0)
        if let name = preset.initialDetent {
            #expect(model.detent(named: name) != nil, "\(name) is not a detent of \(preset)")
            #expect(snapshot.state == .resting)
            #expect(snapshot.detent?.name == name)
        } else {
            #expect(snapshot.state == .hidden)
        }
    }

    /// scrollHandOff: the model hands movement to content exactly when the catalog says so.
    @Test(arguments: PresetName.allCases)
    func scrollHandOffIsTheCatalogs(_ preset: PresetName) throws {
        #expect(try SheetModel(preset: preset).scrollHandOff == preset.has(.scrollHandOff))
    }

    /// dragFinish: the default configuration's drag law finishes a drag exactly when the catalog
    /// says the preset can; a preset without it never does, on any geometry.
    @Test(arguments: PresetName.allCases)
    func dragFinishIsTheCatalogs(_ preset: PresetName) throws {
        for geometry in [Geometry.standard, small] {
            let law = try SheetModel(preset: preset, geometry: geometry).dragLaw
            #expect((law.finishThreshold != nil) == preset.has(.dragFinish), "\(preset) on \(geometry)")
        }
    }

    /// capabilities lists each capability once, in `PresetCapability`'s order.
    @Test(arguments: PresetName.allCases)
    func capabilitiesAreOrdered(_ preset: PresetName) {
        let listed = preset.capabilities
        #expect(listed == PresetCapability.allCases.filter(listed.contains))
    }

    /// The catalog's options are the options a configuration takes, in the same order, with the
    /// defaults it applies (on the standard geometry).
    @Test(arguments: PresetName.allCases)
    func optionDefaultsAreTheConfigurations(_ preset: PresetName) throws {
        let effective = try SheetModel(preset: preset).effectiveOptions
        #expect(effective.map(\.key) == preset.optionNames)
        for (info, applied) in zip(preset.optionCatalog, effective) {
            #expect(info.defaultValue == applied.value, "\(preset).\(info.name)")
        }
    }

    /// A default marked fixed is the same on another geometry (one that follows the geometry or
    /// other options is marked so, and openapi.yaml states it in words).
    @Test(arguments: PresetName.allCases)
    func fixedDefaultsDoNotFollowTheGeometry(_ preset: PresetName) throws {
        let effective = try SheetModel(preset: preset, geometry: small).effectiveOptions
        for (info, applied) in zip(preset.optionCatalog, effective) where info.hasFixedDefault {
            #expect(info.defaultValue == applied.value, "\(preset).\(info.name) on \(small)")
        }
    }
}
