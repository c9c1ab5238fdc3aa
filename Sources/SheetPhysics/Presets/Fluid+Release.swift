// fluid's release rules: removal by velocity, then either the nearest detent to the momentum
// projection, or (`thresholds`) a step to the next detent once the projection passed a fraction of
// the way there, a fraction per transition. `dismissFrom: lowest` keeps removal to the lowest
// visible detent, so a release never skips a detent on the way out.

/// The fractions of the way to the next detent a release's projection must pass (`thresholds`).
struct ReleaseThresholds: Sendable {
    /// Toward the detent above.
    let expand: Double
    /// Toward the visible detent below.
    let collapse: Double
    /// Toward hidden.
    let dismiss: Double

    /// The option's value: absent or null, none; else an object of the three, each in (0, 1]
    /// (default 0.5).
    init?(_ value: OptionValue?) throws(ConfigurationError) {
        guard let value, value != .null else { return nil }
        guard case let .object(members) = value else {
            throw .invalidOption(
                field: "options.thresholds",
                reason: "expected {\"expand\": f, \"collapse\": f, \"dismiss\": f} or null, got \(value.typeName)")
        }
        var reader = OptionReader(members, prefix: "options.thresholds", preset: .fluid)
        expand = try reader.number("expand", default: 0.5, in: 0...1, open: true)
        collapse = try reader.number("collapse", default: 0.5, in: 0...1, open: true)
        dismiss = try reader.number("dismiss", default: 0.5, in: 0...1, open: true)
        try reader.finish()
    }

    var option: OptionValue {
        .object([("expand", .number(expand)), ("collapse", .number(collapse)), ("dismiss", .number(dismiss))])
    }
}

extension Fluid {
    /// The release rules, in order, for the visible detents (top-down) and `hidden` (nil: not
    /// hideable).
    static func releaseRules(
        visible: [Detent], hidden: Detent?, removal: Double, skip: Bool, sequential: Bool,
        thresholds: ReleaseThresholds?
    ) -> [ReleaseRule] {
        var rules: [ReleaseRule] = []
        let lowest = visible[visible.count - 1]
        // Removal by velocity relative to the distance left to hidden (v / (H − c), per second);
        // with `dismissFrom: lowest`, from the lowest visible detent only.
        if let hidden {
            let from: [ReleaseCondition] = sequential ? [.origin(lowest.name)] : []
            rules.append(
                ReleaseRule(
                    from + [
                        .compare(.velocity, .greater, 0),
                        .compare(.velocityPerDistance(to: hidden.constant), .greaterOrEqual, removal),
                    ], .detent(hidden)
                ) {
                    "removal: velocity/distance \(Format.number($0.velocity / max(hidden.constant - $0.constant, 1))) ≥ \(Format.number(removal))"
                })
        }
        if let t = thresholds {
            // From each visible detent: up once the projection passed `expand` of the way to the
            // next one up, down once it passed `collapse` (`dismiss` toward hidden), else stay.
            for (i, d) in visible.enumerated() {
                if i > 0 {
                    let up = visible[i - 1]
                    rules.append(
                        ReleaseRule(
                            [
                                .origin(d.name),
                                .compare(
                                    .projectedFraction(from: d.constant, toward: up.constant), .greaterOrEqual, t.expand
                                ),
                            ], .detent(up)
                        ) { _ in "projected past \(Format.number(t.expand)) of the way from \(d.name) to \(up.name)" })
                }
                let down = i + 1 < visible.count ? visible[i + 1] : (d.name == lowest.name ? hidden : nil)
                if let down, !(down.isHidden && sequential && d.name != lowest.name) {
                    let threshold = down.isHidden ? t.dismiss : t.collapse
                    rules.append(
                        ReleaseRule(
                            [
                                .origin(d.name),
                                .compare(
                                    .projectedFraction(from: d.constant, toward: down.constant), .greaterOrEqual,
                                    threshold),
                            ], .detent(down)
                        ) { _ in "projected past \(Format.number(threshold)) of the way from \(d.name) to \(down.name)"
                        })
                }
                rules.append(
                    ReleaseRule([.origin(d.name)], .detent(d)) { _ in "short of every threshold: stays at \(d.name)" })
            }
        }
        // The nearest detent to the momentum projection (clamped unless skipDetents); a tie goes
        // to the upper one. With `dismissFrom: lowest`, hidden is a candidate from the lowest only.
        let all = visible + (hidden.map { [$0] } ?? [])
        if sequential, hidden != nil {
            rules.append(
                ReleaseRule(
                    [.origin(lowest.name)], .nearest(candidates: all, toProjection: true, clampToNeighbours: !skip)
                ) {
                    f in
                    let note = f.beyond.map { " beyond \($0.name)" } ?? ""
                    return "projected \(Format.number(f.projected ?? f.constant, decimals: 1))\(note)"
                })
        }
        rules.append(
            ReleaseRule(
                [], .nearest(candidates: sequential ? visible : all, toProjection: true, clampToNeighbours: !skip)
            ) { f in
                let note = f.beyond.map { " beyond \($0.name)" } ?? ""
                return "projected \(Format.number(f.projected ?? f.constant, decimals: 1))\(note)"
            })
        return rules
    }
}
