// Layout changes predicted by sheet-client.js against sheetd's own answers, in the browser that
// runs the demo (IntegrationTests/browser_test.py loads this file into a page and calls it; it runs
// under Node too: `layoutLawCheck(api, module)`).
//
// Each scenario is a table row: a fluid configuration, where the card starts, and steps (pan
// events and layout changes on the client clock, each at its own time, sent without waiting, so
// that they leave in batches and a layout change keeps its place among the pan events). The
// client predicts every layout change from the layout law before its answer: `stats.layouts`
// counts them, `stats.layoutMismatches` the answers that differ (detents, unreachable, laws, the
// move, the drag's new segment); the drag and release predictions keep their own counters. The
// expectations of a row are checked on what the client drew at the instant of the change and once
// the card is at rest, and against `GET /sessions/{id}` at the end. No timing is involved.

/* exported layoutLawCheck */

const KEYBOARD = 291; // an iPhone's keyboard, points
const EASE = { curve: "easeOut", duration: 0.25 }; // the keyboard's own curve
const PORTRAIT = { height: 844, safeAreaTop: 47, safeAreaBottom: 34 };
const LANDSCAPE = { height: 390, safeAreaTop: 0, safeAreaBottom: 21 };
const FIT = { full: { fromTop: 18 }, fit: { content: 54 }, half: { fraction: 0.5 }, tip: { height: 69 } };

// Steps: ["layout", change] · ["began"] · ["changed", translation] · ["ended", velocity?] · ["wait", s]
// · ["expect", name, (sheet, at) => boolean] (at: where the client draws the card now).
const SCENARIOS = [
    // lift: the resting detent rides up by the inset, keeps its name; back on blur
    {
        name: "lift: half rides up by the inset and back", detent: "half",
        steps: [["layout", { keyboardInset: KEYBOARD, motion: EASE }], ["wait", 0.3], ["expect", "half − inset", (s, at) => at.constant === 398.5 - KEYBOARD],
            ["layout", { keyboardInset: 0, motion: EASE }], ["wait", 0.3], ["expect", "half again", (s, at) => at.constant === 398.5]],
    },
    // lift with the release law's spring (the session's layoutMotion)
    {
        name: "lift: the release spring", detent: "tip",
        steps: [["layout", { keyboardInset: KEYBOARD }], ["wait", 1], ["expect", "tip − inset", (s, at) => at.constant === 728 - KEYBOARD],
            ["layout", { keyboardInset: 0 }], ["wait", 1]],
    },
    // lift is bounded by the top-most detent
    {
        name: "lift: bounded by the top-most", detent: "full",
        steps: [["layout", { keyboardInset: KEYBOARD, motion: EASE }], ["wait", 0.3], ["expect", "full stays", (s, at) => at.constant === 18]],
    },
    // extend: to the top-most while the keyboard is up, back to the detent it left
    {
        name: "extend: to the top and back", detent: "half", options: { keyboard: "extend" },
        steps: [["layout", { keyboardInset: KEYBOARD, motion: EASE }], ["wait", 0.3], ["expect", "full", (s, at) => at.constant === 18],
            ["layout", { keyboardInset: 0, motion: EASE }], ["wait", 0.3], ["expect", "half again", (s, at) => at.constant === 398.5]],
    },
    // none: the keyboard moves nothing
    {
        name: "keyboard none", detent: "half", options: { keyboard: "none" },
        steps: [["layout", { keyboardInset: KEYBOARD }], ["wait", 0.5], ["expect", "half stays", (s, at) => at.constant === 398.5]],
    },
    // motion none: a jump
    {
        name: "motion none jumps", detent: "half",
        steps: [["layout", { keyboardInset: KEYBOARD, motion: "none" }], ["expect", "at once", (s, at) => at.constant === 398.5 - KEYBOARD]],
    },
    // content-fit: the fit detent follows the content's height (H − (contentHeight + 54))
    {
        name: "content-fit follows the content", detent: "fit", contentHeight: 200, options: { detents: FIT },
        steps: [["layout", { contentHeight: 300 }], ["wait", 1], ["expect", "fit at H − 354", (s, at) => at.constant === 797 - 354],
            ["layout", { contentHeight: 120 }], ["wait", 1], ["expect", "fit at H − 174", (s, at) => at.constant === 797 - 174],
            ["layout", { contentHeight: 2000 }], ["wait", 1], ["expect", "fit clamped to the top-most", (s, at) => at.constant === 18]],
    },
    // a detent above the content's fit is unreachable: the card goes to the nearest by progress
    {
        name: "a vanished detent: nearest by progress", detent: "half", contentHeight: 500, options: { detents: FIT },
        steps: [["layout", { contentHeight: 200, motion: EASE }], ["wait", 0.3], ["expect", "half gone", (s) => (s.snapshot.unreachable ?? []).includes("half")]],
    },
    // the content height while the keyboard is up (lift on content detents)
    {
        name: "content and keyboard together", detent: "fit", contentHeight: 200, options: { detents: FIT },
        steps: [["layout", { keyboardInset: KEYBOARD, motion: EASE }], ["wait", 0.1], ["layout", { contentHeight: 260 }], ["wait", 1],
            ["layout", { keyboardInset: 0, contentHeight: 150, motion: EASE }], ["wait", 0.5]],
    },
    // rotation at rest: half is H/2 of the new screen
    {
        name: "rotation at rest", detent: "half",
        steps: [["layout", { geometry: LANDSCAPE }], ["wait", 1], ["expect", "half of 390", (s, at) => at.constant === 195],
            ["layout", { geometry: PORTRAIT }], ["wait", 1], ["expect", "half of 797", (s, at) => at.constant === 398.5]],
    },
    // rotation mid-drag: the card stays under the finger, the drag goes on and releases
    {
        name: "rotation mid-drag", detent: "half",
        steps: [["began"], ["changed", -20], ["changed", -60], ["changed", -100], ["layout", { geometry: LANDSCAPE }], ["changed", -110], ["changed", -130],
            ["layout", { geometry: PORTRAIT }], ["changed", -120], ["ended"], ["wait", 1.5]],
    },
    // the keyboard mid-drag (lift): under the finger, then released
    {
        name: "keyboard mid-drag", detent: "tip",
        steps: [["began"], ["changed", -50], ["changed", -150], ["layout", { keyboardInset: KEYBOARD, motion: EASE }], ["changed", -160], ["ended", -300], ["wait", 1.5],
            ["layout", { keyboardInset: 0, motion: EASE }], ["wait", 1.5]],
    },
    // extend mid-drag: the detent the drag began at is where the keyboard returns
    {
        name: "extend mid-drag", detent: "tip", options: { keyboard: "extend" },
        steps: [["began"], ["changed", -30], ["layout", { keyboardInset: KEYBOARD }], ["changed", -40], ["ended", 0], ["wait", 1.5],
            ["layout", { keyboardInset: 0 }], ["wait", 1.5]],
    },
    // an animating card is retargeted from its position and velocity
    {
        name: "mid-animation retarget", detent: "half",
        steps: [["began"], ["changed", -40], ["ended", -1500], ["wait", 0.05], ["layout", { keyboardInset: KEYBOARD }], ["wait", 0.05],
            ["layout", { keyboardInset: 0, motion: EASE }], ["wait", 1.5]],
    },
    // past the rubber band's bound when the layout changes: re-based through its inverse
    {
        name: "over-drag then rotation", detent: "full",
        steps: [["began"], ["changed", -80], ["layout", { geometry: LANDSCAPE }], ["changed", -90], ["layout", { geometry: PORTRAIT }], ["ended", 0], ["wait", 1.5]],
    },
    // a hidden card stays hidden
    {
        name: "hidden stays hidden", detent: "half",
        steps: [["began"], ["changed", 100], ["ended", 4000], ["wait", 1.5], ["layout", { keyboardInset: KEYBOARD }], ["layout", { geometry: LANDSCAPE }], ["wait", 0.5],
            ["expect", "hidden", (s, at) => at.motion === "rest" && at.constant === 390]],
    },
];
const RANDOM_SESSIONS = 8;
const RANDOM_STEPS = 120;

/**
 * @param {string} api  sheetd's base URL (ending in /)
 * @param {any} [module]  sheet-client.js, where already loaded (Node)
 */
async function layoutLawCheck(api, module) {
    const m = module ?? (await import(api + "sheet-client.js"));
    const client = new m.SheetClient(api);
    const out = { scenarios: 0, layouts: 0, layoutMismatches: 0, mismatches: 0, releaseMismatches: 0, unpredicted: 0, predictions: 0, releases: 0, underFinger: 0, maxFingerError: 0, failures: /** @type {string[]} */ ([]) };
    const fail = (/** @type {string} */ msg) => { if (out.failures.length < 30) out.failures.push(msg); };

    /** Runs one row: returns nothing, records into `out`. */
    async function run(row, steps) {
        const config = { preset: "fluid", clock: "client", initialDetent: row.detent, options: { ...(row.options ?? {}) } };
        if (row.contentHeight !== undefined) config.contentHeight = row.contentHeight;
        const sheet = await client.createSession(config);
        sheet.playbackFps = 60;
        let t = 100;
        let translation = 0, skip = false;
        const pending = [];
        for (const step of steps) {
            const [kind, arg, check] = step;
            if (kind === "wait") {
                t += arg;
                continue;
            }
            t += 0.008;
            if (kind === "expect") {
                await Promise.allSettled(pending);
                if (!check(sheet, sheet.at(t))) fail(`${row.name}: expected ${arg}, the client draws ${JSON.stringify(sheet.at(t))}`);
                continue;
            }
            if (kind === "layout") {
                const before = sheet.at(t);
                const dragging = before.motion === "drag";
                pending.push(sheet.layout({ ...arg, time: t }));
                const after = sheet.at(t);
                if (dragging && sheet.stats.layouts > 0) {
                    // the card stays under the finger
                    const error = Math.abs(after.constant - before.constant);
                    out.underFinger += 1;
                    out.maxFingerError = Math.max(out.maxFingerError, error);
                    if (error > 1e-9) fail(`${row.name}: the layout change moved a dragged card by ${error}`);
                }
                continue;
            }
            if (kind === "began") {
                // a hidden card cannot be grabbed (409, and its batch with it): no drag then
                const at = sheet.at(t);
                skip = at.motion === "rest" && at.constant === sheet.snapshot.detents.hidden;
                if (skip) continue;
                translation = 0;
                pending.push(sheet.began({ time: t }));
            } else if (skip) {
                continue;
            } else if (kind === "changed") {
                translation = arg;
                pending.push(sheet.changed(arg, { time: t }));
            } else if (kind === "ended") {
                pending.push(sheet.ended(translation, arg === undefined ? { time: t } : { time: t, velocity: arg }));
            }
        }
        const results = await Promise.allSettled(pending);
        for (const r of results) if (r.status === "rejected") fail(`${row.name}: a request failed: ${r.reason}`);
        // where the client will leave the card, and where sheetd has it
        const end = sheet.at(t + 30);
        const server = await client.request("GET", sheet.path);
        const constant = server.animation ? server.animation.to : server.constant;
        if (Math.abs(end.constant - constant) > 1e-9) fail(`${row.name}: the client ends at ${end.constant}, sheetd at ${constant} (${server.state} ${server.detent})`);
        const s = sheet.stats;
        out.scenarios += 1;
        out.layouts += s.layouts;
        out.layoutMismatches += s.layoutMismatches;
        out.mismatches += s.mismatches;
        out.releaseMismatches += s.releaseMismatches;
        out.unpredicted += s.layoutsUnpredicted;
        out.predictions += s.predictions;
        out.releases += s.releases;
        if (s.layoutMismatches || s.mismatches || s.releaseMismatches) fail(`${row.name}: ${JSON.stringify(s)}`);
        await client.request("DELETE", sheet.path).catch(() => {});
    }

    for (const row of SCENARIOS) await run(row, row.steps);

    // Random sequences: drags, releases, keyboard, content and rotation in any order.
    let seed = 27;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = (/** @type {any[]} */ xs) => xs[Math.floor(random() * xs.length)];
    for (let n = 0; n < RANDOM_SESSIONS; n++) {
        const options = pick([{}, { keyboard: "extend" }, { detents: FIT }, { detents: FIT, keyboard: "extend" }, { dampingRatio: 0.7 }, { layoutMotion: "none" }]);
        const steps = [];
        let dragging = false, keyboard = false, landscape = false, x = 0;
        for (let i = 0; i < RANDOM_STEPS; i++) {
            const r = random();
            if (r < 0.25) {
                const change = pick(["keyboard", "content", "rotate"]);
                const motion = pick([undefined, undefined, EASE, "none", "release"]);
                if (change === "keyboard") { keyboard = !keyboard; steps.push(["layout", { keyboardInset: keyboard ? (landscape ? 160 : KEYBOARD) : 0, ...(motion ? { motion } : {}) }]); }
                else if (change === "content") steps.push(["layout", { contentHeight: Math.round(random() * 900) }]);
                else { landscape = !landscape; steps.push(["layout", { geometry: landscape ? LANDSCAPE : PORTRAIT, ...(keyboard ? { keyboardInset: landscape ? 160 : KEYBOARD } : {}) }]); }
            } else if (!dragging && r < 0.45) {
                dragging = true;
                x = 0;
                steps.push(["began"]);
            } else if (dragging && r < 0.85) {
                x += Math.round((random() - 0.5) * 120);
                steps.push(["changed", x]);
            } else if (dragging) {
                dragging = false;
                steps.push(["ended", pick([undefined, 0, Math.round((random() - 0.5) * 4000)])]);
            } else {
                steps.push(["wait", pick([0.02, 0.1, 0.3, 1])]);
            }
        }
        if (dragging) steps.push(["ended", 0]);
        steps.push(["wait", 2]);
        // a fit detent needs the content's height from the start
        await run({ name: `random ${n} ${JSON.stringify(options)}`, detent: options.detents ? "fit" : "half", options, contentHeight: 300 }, steps);
    }
    return out;
}

if (typeof module !== "undefined") module.exports = { layoutLawCheck };
