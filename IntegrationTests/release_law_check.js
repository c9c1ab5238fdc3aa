// The release law evaluated by sheet-client.js against sheetd's own answers, in the browser that
// runs the demo (IntegrationTests/browser_test.py loads this file into a page and calls it).
//
// For every preset and the configurations below, random drags on the client clock: the client
// side (releaseVelocity, evaluateReleaseLaw, releaseAnimation, sampleAnimation, exported by
// sheet-client.js) must give the snap and the animation sheetd answers, and every frame sheetd
// sends with the answer (`?frames=120`) to 1e-9. No timing is involved: every event carries its
// own time.

/* exported releaseLawCheck */

// One row per rule the law must carry; the comment names it.
const CONFIGS = [
    { preset: "facebook" }, // velocity > 1500 dismisses; else by position against 0.25·H and S − 70
    { preset: "facebook", options: { expandedOffset: 120 }, geometry: { height: 667, safeAreaTop: 20, safeAreaBottom: 0 } }, // thresholds follow H and S
    { preset: "twitter" }, // truncated constant, slow downward release near open, durationSpring / easeInOut
    { preset: "twitter", options: { cardHeightRatio: 0.5 } }, // dismiss spring to a nearer hidden
    { preset: "glide" }, // segmented: threshold K and S, moving up or down
    { preset: "glide", options: { segmented: false, concreteDimension: { custom: 500 } } }, // two states, velocity in distances/s
    { preset: "transition" }, // past half of the way, or the finish threshold during the drag
    { preset: "transition", options: { finishThreshold: 0.3 } }, // a drag finishes at 30 % of the way: the finish's animation
    { preset: "transition", options: { finishThreshold: null, completionSpeed: 1.5, miniHeight: 120 } }, // no finish; remaining-fraction duration
    { preset: "swipeCell" }, // the sign of the velocity; at rest the nearer detent, ties to initial
    { preset: "swipeCell", options: { swipeDistance: 200 } },
    { preset: "fluid" }, // removal velocity, momentum projection clamped to the neighbours, critical spring
    { preset: "fluid", options: { skipDetents: true, dampingRatio: 0.6 } }, // projection unclamped, underdamped spring
    { preset: "fluid", options: { hideable: false, dampingRatio: 1.4, decelerationRate: 0.99 } }, // no hidden, overdamped
    { preset: "fluid", options: { thresholds: { expand: 0.25, collapse: 0.5, dismiss: 0.75 }, dismissFrom: "lowest" } }, // thresholds per transition (projectedFraction), removal from the lowest only
    { preset: "fluid", options: { momentumHandOff: true, dampingRatio: 0.5 } }, // a spring crossing full hands its momentum to the content (scrollFling)
    { preset: "fluid", options: { momentumHandOff: true, contentScrollsAt: "everywhere", dragFirst: "sheet" } }, // critical: a hand-off for fast upward releases only
];
const GESTURES_PER_CONFIG = 40;
const FPS = 120;

/**
 * The constants at which a release law's rules change their answer.
 * @param {any} law
 * @returns {number[]}
 */
function boundaries(law) {
    const out = [];
    for (const rule of law.rules) {
        for (const w of rule.when) {
            if (w.quantity === "constant" || w.quantity === "truncatedConstant") out.push(w.value);
            if (w.quantity === "fraction") out.push(w.from + (w.toward - w.from) * w.value);
        }
    }
    return out;
}

/**
 * @param {string} api  sheetd's base URL, ending in "/"
 * @returns {Promise<{releases: number, finishes: number, cancels: number, frames: number, handOffs?: number, mismatches: string[], maxFrameError: number, byPreset: Record<string, number>}>}
 */
async function releaseLawCheck(api) {
    const m = await import(api + "sheet-client.js");
    let seed = 20261125;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const us = (/** @type {number} */ t) => Math.round(t * 1e6) / 1e6;
    /** @param {string} method @param {string} path @param {any} body */
    const call = async (method, path, body) => {
        const r = await fetch(api + path, { method, body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
        return { status: r.status, json: await r.json() };
    };
    const out = { releases: 0, finishes: 0, cancels: 0, frames: 0, mismatches: /** @type {string[]} */ ([]), maxFrameError: 0, byPreset: /** @type {Record<string, number>} */ ({}) };
    const close = (/** @type {number} */ a, /** @type {number} */ b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    const KEYS = ["detent", "curve", "from", "to", "duration", "startTime", "fromAlpha", "toAlpha", "alphaRule", "dismiss", "dampingRatio", "initialVelocity", "response", "velocity"];
    for (const [ci, config] of CONFIGS.entries()) {
        const id = `release-law-${ci}`;
        const created = await call("PUT", `sessions/${id}`, { ...config, clock: "client" });
        if (created.status !== 201 && created.status !== 200) {
            out.mismatches.push(`${config.preset} #${ci}: PUT answered ${created.status}`);
            continue;
        }
        const snap = created.json;
        const visible = Object.keys(snap.detents).filter((n) => n !== "hidden");
        let t = 1;
        for (let g = 0; g < GESTURES_PER_CONFIG; g++) {
            const label = `${config.preset} #${ci} gesture ${g}`;
            // From rest at a random detent: show it, and let the animation end.
            t = us(t + 2);
            await call("POST", `sessions/${id}/show`, { detent: visible[Math.floor(random() * visible.length)], time: t });
            t = us(t + 70); // past any spring's 60 s cap
            const began = await call("POST", `sessions/${id}/pan`, { phase: "began", time: t });
            const segment = began.json.drag;
            // 2–40 samples at about 120 Hz: a steady speed up to ±3000 pt/s, with jitter; some
            // releases after a pause (velocity from few or no samples), some with their own velocity.
            const n = 2 + Math.floor(random() * 39);
            const speed = (random() - 0.5) * 6000;
            const jitter = random() * 20;
            const samples = [];
            let x = 0;
            for (let i = 0; i < n; i++) {
                t = us(t + 1 / FPS + random() * 0.003);
                x = Math.round((x + speed / FPS + (random() - 0.5) * jitter) * 1000) / 1000;
                samples.push({ t, x });
            }
            // A third of the drags end at a threshold of the law (a constant, a truncated constant
            // or a fraction of the way), exactly or 0.3 / 0.6 pt either side, arriving at `speed`:
            // the comparisons' edges (< against ≤, truncation toward zero) decide these.
            const edges = boundaries(snap.releaseLaw);
            if (edges.length > 0 && random() < 0.35) {
                const target = edges[Math.floor(random() * edges.length)] + [-0.6, -0.3, 0, 0.3, 0.6][Math.floor(random() * 5)];
                const last = samples[samples.length - 1].t;
                for (const sample of samples) sample.x = target - segment.start - speed * (last - sample.t);
            }
            const kind = random();
            t = us(t + (kind < 0.15 ? 0.05 + random() * 0.1 : random() * 0.01));
            const end = kind > 0.9 ? { phase: "cancelled", time: t }
                : kind > 0.8 ? { phase: "ended", time: t, velocity: Math.round((random() - 0.5) * 8000) }
                : { phase: "ended", time: t };
            const events = [...samples.map((s) => ({ phase: "changed", translation: s.x, time: s.t })), end];
            const answer = await call("POST", `sessions/${id}/pan?frames=${FPS}`, { events });
            if (answer.status !== 200) {
                out.mismatches.push(`${label}: pan answered ${answer.status} ${JSON.stringify(answer.json)}`);
                continue;
            }
            const r = answer.json;
            // The client's side: the drag law until a finish, then the release law.
            let constant = segment.start, finish = null;
            for (const s of samples) {
                const p = m.evaluateDragLaw(snap.dragLaw, segment, s.x);
                constant = p.constant;
                if (p.finishes) {
                    finish = s;
                    break;
                }
            }
            let local, answered;
            if (finish) {
                local = m.releaseAnimation(snap.releaseLaw, snap.dragLaw, snap.detents, { from: constant, to: segment.finish.detent, velocity: 0, startTime: finish.t });
                const i = samples.indexOf(finish);
                answered = r.batch.settles.find((/** @type {any} */ s) => s.index === i)?.animation;
                out.finishes += 1;
            } else if (end.phase === "cancelled") {
                local = m.releaseAnimation(snap.releaseLaw, snap.dragLaw, snap.detents, { from: constant, to: segment.origin, velocity: 0, startTime: t });
                answered = r.animation;
                out.cancels += 1;
            } else {
                const v = end.velocity ?? m.releaseVelocity(samples, t, snap.releaseLaw.velocityWindow);
                const chosen = m.evaluateReleaseLaw(snap.releaseLaw, snap.detents, constant, v, segment.origin);
                if (chosen?.detent !== r.snap?.detent) {
                    out.mismatches.push(`${label}: the law chose ${chosen?.detent}, sheetd ${r.snap?.detent} (${r.snap?.reason})`);
                    continue;
                }
                if ((chosen.projected ?? null) !== (r.snap.projected ?? null) && !close(chosen.projected, r.snap.projected)) {
                    out.mismatches.push(`${label}: projected ${chosen.projected}, sheetd ${r.snap.projected}`);
                }
                local = m.releaseAnimation(snap.releaseLaw, snap.dragLaw, snap.detents, { from: constant, to: chosen.detent, velocity: v, startTime: t, release: true });
                answered = r.animation;
                out.releases += 1;
                // The hand-off to the content (step 5): predicted exactly when sheetd answers one.
                const handed = r.scrollFling ?? null, mine = local?.scrollFling ?? null;
                if (!handed !== !mine || (handed && mine && !(close(handed.time, mine.time) && close(handed.velocity, mine.velocity)))) {
                    out.mismatches.push(`${label}: scrollFling ${JSON.stringify(mine)}, sheetd ${JSON.stringify(handed)}`);
                    continue;
                }
                if (handed) out.handOffs = (out.handOffs ?? 0) + 1;
            }
            if (!local || !answered) {
                out.mismatches.push(`${label}: ${local ? "" : "no local animation "}${answered ? "" : "no animation answered"}`);
                continue;
            }
            const differ = KEYS.filter((k) => answered[k] !== undefined && (typeof answered[k] === "number" ? !close(answered[k], local[k]) : answered[k] !== local[k]));
            if (differ.length) {
                out.mismatches.push(`${label}: ${differ.map((k) => `${k} ${local[k]} ≠ sheetd ${answered[k]}`).join(", ")}`);
                continue;
            }
            // The frames sent with the answer are the running animation's (the finish's, too).
            for (const f of r.frames ?? []) {
                const l = m.sampleAnimation(local, f.t);
                const error = Math.max(
                    Math.abs(l.constant - f.constant), Math.abs(l.dimmerAlpha - f.dimmerAlpha), Math.abs(l.progress - f.progress),
                    Math.abs(l.velocity - f.velocity) / Math.max(1, Math.abs(f.velocity)));
                out.maxFrameError = Math.max(out.maxFrameError, error);
                out.frames += 1;
                if (error > 1e-9) {
                    out.mismatches.push(`${label}: frame ${f.index} differs by ${error}`);
                    break;
                }
            }
            out.byPreset[config.preset] = (out.byPreset[config.preset] ?? 0) + 1;
        }
        await fetch(api + `sessions/${id}`, { method: "DELETE" });
    }
    return out;
}
