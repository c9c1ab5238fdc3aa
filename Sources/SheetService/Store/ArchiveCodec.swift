import Foundation
import RedisClient
import SheetPhysics
import Synchronization

/// A session in the store's format: a small JSON document with its configuration (as sent),
/// its token, the engine's state (`SheetArchive`), its recent animations and the clocks of the
/// process that wrote it, so a reader on another clock can re-base it.
///
///     {"v":1,"version":7,"config":{…},"token":null,"origin":60.9,"sheet":{…},"recent":[{…}],
///      "wall":1795.2e6,"server":61.5}
enum ArchiveCodec {
    static let formatVersion = 1

    /// The encoding of `box` as it is now (the caller holds the session's lock: `record`).
    static func encode(
        _ box: SessionBox, _ record: SessionRecord, version: Int, serverNow: Double, wallNow: Double
    ) -> [UInt8] {
        let model = record.profile.model
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.member("v", integer: formatVersion)
        w.member("version", integer: version)
        w.member("config")
        w.beginObject()
        w.rawMembers(record.profile.configurationMembers)
        w.endObject()
        w.member("token", box.token)
        w.member("origin", record.origin)
        w.member("sheet")
        sheet(record.sheet.archive, into: &w)
        w.member("recent")
        w.beginArray()
        for a in record.recent { animation(a.archive(in: model), into: &w) }
        w.endArray()
        // The last `seq` applied and its answer: another instance answers its retry the same.
        if record.lastSeq > 0 {
            w.member("seq", integer: record.lastSeq)
            if let reply = record.lastReply { w.member("reply", String(decoding: reply, as: UTF8.self)) }
        }
        // The writer's clocks, last: two encodings of one state at one version differ only here,
        // and the store's write script compares records without this tail (a tie is then the
        // same write again, not another copy's).
        w.member("wall", wallNow)
        w.member("server", serverNow)
        w.endObject()
        return w.takeBytes()
    }

    private static func sheet(_ s: SheetArchive, into w: inout JSONWriter) {
        w.beginObject()
        w.member("phase")
        switch s.phase {
        case .hidden: w.string("hidden")
        case let .resting(i):
            w.string("resting")
            w.member("detent", integer: i)
        case let .dragging(d):
            w.string("dragging")
            w.member("drag")
            w.beginObject()
            w.member("start", d.start)
            w.member("base", d.base)
            w.member("origin", integer: d.origin)
            w.member("constant", d.constant)
            w.member("lastTranslation", d.lastTranslation)
            w.member("canScroll", d.canScroll)
            w.member("consumer", d.consumer.rawValue)
            w.endObject()
        case let .animating(a):
            w.string("animating")
            w.member("animation")
            animation(a, into: &w)
        }
        w.member("samples")
        w.beginArray()
        for sample in s.samples {
            w.number(sample.time)
            w.number(sample.translation)
        }
        w.endArray()
        w.member("animationCount", integer: s.animationCount)
        w.member("lastTime")
        // −∞ (no event yet) has no JSON number.
        if s.lastTime.isFinite { w.number(s.lastTime) } else { w.null() }
        w.member("finishedDrag", s.finishedDrag)
        // Since layout events: absent in records written before them (read as 0 and none).
        w.member("layoutRevision", integer: s.layoutRevision)
        w.member("keyboardReturn", s.keyboardReturn)
        w.endObject()
    }

    private static func animation(_ a: AnimationArchive, into w: inout JSONWriter) {
        w.beginObject()
        w.member("id", integer: a.id)
        w.member("curve")
        w.beginObject()
        switch a.curve {
        case let .timed(c):
            w.member("kind", "timed")
            w.member("name", c.name.rawValue)
        case let .durationSpring(zeta, v):
            w.member("kind", "durationSpring")
            w.member("dampingRatio", zeta)
            w.member("initialVelocity", v)
        case let .spring(response, zeta, v):
            w.member("kind", "spring")
            w.member("response", response)
            w.member("dampingRatio", zeta)
            w.member("velocity", v)
        }
        w.endObject()
        w.member("from", a.from)
        w.member("to", a.to)
        w.member("duration", a.duration)
        w.member("fromAlpha", a.fromAlpha)
        w.member("toAlpha", a.toAlpha)
        w.member("startTime", a.startTime)
        // Only where it is not the model's (a layout move's); absent before layout events.
        if let rule = a.alphaRule { w.member("alphaRule", rule.rawValue) }
        w.member("detent", integer: a.detent)
        w.endObject()
    }

    /// A decoded archive: a session box ready for the store (nil: the session was deleted), and
    /// its version.
    struct Restored {
        let box: SessionBox?
        let version: Int
    }

    /// What a deleted session leaves in the store for the idle TTL: a newer version than any
    /// copy another process still holds, so that copy is dropped instead of written back.
    static func tombstone(version: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 64)
        w.beginObject()
        w.member("v", integer: formatVersion)
        w.member("version", integer: version)
        w.member("deleted", true)
        w.endObject()
        return w.takeBytes()
    }

    /// The session `bytes` describe, re-based onto this process's clocks (`serverNow` seconds on
    /// the server clock at `wallNow` seconds since 1970). Anything malformed or not fitting its
    /// configuration is an error: a stored session is input like any other.
    static func decode(
        _ bytes: [UInt8], id: String, profiles: ProfileCache, serverNow: Double, wallNow: Double
    ) throws -> Restored {
        let json: JSONValue
        do { json = try JSONReader.parse(bytes) } catch { throw ArchiveMismatch(reason: "not JSON: \(error)") }
        guard json["v"]?.double == Double(formatVersion) else {
            throw ArchiveMismatch(reason: "format \(json["v"].map { "\($0)" } ?? "missing"), not \(formatVersion)")
        }
        let version = try integer(json["version"], "version")
        // Read back, not trusted: a version the store's write script could not compare is refused.
        guard (0...StoreVersion.max).contains(version) else {
            throw ArchiveMismatch(reason: "version \(version) is not from 0 to 2^53")
        }
        if json["deleted"]?.bool == true { return Restored(box: nil, version: version) }
        guard let config = json["config"], config.object != nil else { throw ArchiveMismatch(reason: "no config") }
        var configBytes = JSONWriter(capacity: 256)
        configBytes.value(config)
        let (profile, _) = try profiles.configuration(configBytes.takeBytes())
        let model = profile.model
        // Server-clock times move by the difference between the writer's and our clock offsets
        // (wall − server); client-clock sessions keep theirs, only `origin` is ours.
        let delta = (try number(json["wall"], "wall") - number(json["server"], "server")) - (wallNow - serverNow)
        var sheetArchive = try sheet(json["sheet"])
        if profile.clock == .server { sheetArchive = sheetArchive.shifted(by: delta) }
        let sheet = try SheetSession(model: model, archive: sheetArchive)
        let shift = profile.clock == .server ? delta : 0
        // A session a layout event changed keeps its revision: its configuration is the model's.
        let current =
            sheet.layoutRevision == 0
            ? profile
            : SessionProfile(
                model: model, clock: profile.clock, parent: profile.parent,
                configurationMembers: profile.configurationMembers, revision: sheet.layoutRevision)
        var record = SessionRecord(sheet: sheet, profile: current)
        guard let recent = json["recent"]?.array, recent.count <= SessionRecord.recentLimit else {
            throw ArchiveMismatch(reason: "recent must be an array of at most \(SessionRecord.recentLimit)")
        }
        let running = sheet.lastAnimation
        for item in recent {
            var a = try animation(item)
            a.startTime += shift
            // The running animation is the same object as the one in `recent`, as in a live record.
            if let running, running.id == a.id {
                record.recent.append(running)
            } else {
                record.recent.append(try Animation(archive: a, model: model))
            }
        }
        record.origin = try number(json["origin"], "origin") + delta
        if let seq = json["seq"] {
            record.lastSeq = try integer(seq, "seq")
            guard record.lastSeq >= 0 else { throw ArchiveMismatch(reason: "a negative seq") }
            if let reply = json["reply"] {
                guard let text = reply.string, text.utf8.count <= 1 << 20 else {
                    throw ArchiveMismatch(reason: "reply is not the text of an answer")
                }
                record.lastReply = Array(text.utf8)
            }
        }
        record.version = version
        let token = json["token"]?.string
        let box = SessionBox(id: id, record: record, now: serverNow, token: token)
        return Restored(box: box, version: version)
    }

    private static func sheet(_ value: JSONValue?) throws -> SheetArchive {
        guard let value, value.object != nil else { throw ArchiveMismatch(reason: "no sheet") }
        let phase: SheetArchive.Phase
        switch value["phase"]?.string {
        case "hidden": phase = .hidden
        case "resting": phase = .resting(detent: try integer(value["detent"], "detent"))
        case "dragging":
            let d = value["drag"]
            guard let consumer = d?["consumer"]?.string.flatMap(Consumer.init(rawValue:)),
                let canScroll = d?["canScroll"]?.bool
            else { throw ArchiveMismatch(reason: "a drag without its consumer") }
            phase = .dragging(
                DragArchive(
                    start: try number(d?["start"], "start"), base: try number(d?["base"], "base"),
                    origin: try integer(d?["origin"], "origin"), constant: try number(d?["constant"], "constant"),
                    lastTranslation: try number(d?["lastTranslation"], "lastTranslation"), canScroll: canScroll,
                    consumer: consumer))
        case "animating": phase = .animating(try animation(value["animation"]))
        default: throw ArchiveMismatch(reason: "unknown phase")
        }
        guard let flat = value["samples"]?.array, flat.count % 2 == 0, flat.count <= 2 * 4096 else {
            throw ArchiveMismatch(reason: "samples must be time, translation pairs")
        }
        var samples: [VelocitySample] = []
        samples.reserveCapacity(flat.count / 2)
        for i in stride(from: 0, to: flat.count, by: 2) {
            samples.append(
                VelocitySample(time: try number(flat[i], "samples"), translation: try number(flat[i + 1], "samples")))
        }
        let lastTime = value["lastTime"]?.isNull == true ? -Double.infinity : try number(value["lastTime"], "lastTime")
        guard let finished = value["finishedDrag"]?.bool else { throw ArchiveMismatch(reason: "no finishedDrag") }
        var archive = SheetArchive(
            phase: phase, samples: samples, animationCount: try integer(value["animationCount"], "animationCount"),
            lastTime: lastTime, finishedDrag: finished)
        if let revision = value["layoutRevision"] { archive.layoutRevision = try integer(revision, "layoutRevision") }
        if let back = value["keyboardReturn"], !back.isNull {
            guard let name = back.string else { throw ArchiveMismatch(reason: "keyboardReturn is not a name") }
            archive.keyboardReturn = name
        }
        return archive
    }

    private static func animation(_ value: JSONValue?) throws -> AnimationArchive {
        guard let value, let c = value["curve"] else { throw ArchiveMismatch(reason: "an animation without a curve") }
        let curve: AnimationCurve
        switch c["kind"]?.string {
        case "timed":
            guard let name = c["name"]?.string.flatMap(TimingCurve.Name.init(rawValue:)) else {
                throw ArchiveMismatch(reason: "unknown timing curve")
            }
            curve = .timed(TimingCurve(named: name))
        case "durationSpring":
            curve = .durationSpring(
                dampingRatio: try number(c["dampingRatio"], "dampingRatio"),
                initialVelocity: try number(c["initialVelocity"], "initialVelocity"))
        case "spring":
            curve = .spring(
                response: try number(c["response"], "response"),
                dampingRatio: try number(c["dampingRatio"], "dampingRatio"),
                velocity: try number(c["velocity"], "velocity"))
        default: throw ArchiveMismatch(reason: "unknown curve kind")
        }
        var archive = AnimationArchive(
            id: try integer(value["id"], "id"), curve: curve, from: try number(value["from"], "from"),
            to: try number(value["to"], "to"), duration: try number(value["duration"], "duration"),
            fromAlpha: try number(value["fromAlpha"], "fromAlpha"), toAlpha: try number(value["toAlpha"], "toAlpha"),
            startTime: try number(value["startTime"], "startTime"), detent: try integer(value["detent"], "detent"))
        if let rule = value["alphaRule"] {
            guard let name = rule.string, let r = AlphaRule(rawValue: name) else {
                throw ArchiveMismatch(reason: "unknown alphaRule")
            }
            archive.alphaRule = r
        }
        return archive
    }

    /// A stored number, read as a request's would be: finite, and within `limit` (times,
    /// positions and velocities never come near 10^12; a record that says otherwise was not
    /// written by sheetd, and its 1e300 used to reach a Double-to-Int conversion and trap).
    private static func number(_ value: JSONValue?, _ name: String, limit: Double = 1e12) throws -> Double {
        guard let x = value?.double, x.isFinite, x.magnitude <= limit else {
            throw ArchiveMismatch(reason: "\(name) is not a finite number of magnitude ≤ \(limit)")
        }
        return x
    }

    private static func integer(_ value: JSONValue?, _ name: String) throws -> Int {
        let x = try number(value, name, limit: 9_007_199_254_740_992)
        guard x == x.rounded(), x.magnitude <= 9_007_199_254_740_992 else {
            throw ArchiveMismatch(reason: "\(name) is not an integer")
        }
        return Int(x)
    }
}
