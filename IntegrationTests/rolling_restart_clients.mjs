// The sheet-client.js users of IntegrationTests/rolling-restart: sheet-client.js itself (the file
// sheetd serves, imported by rolling_restart.py from a copy with the .mjs extension), driven
// through its public API in Node against the proxy, while rolling_restart.py restarts and kills
// the instances behind it. Half the users number their events (sheet-client.js's default), half
// opted out (`new SheetClient(url, {numbering: false})`): the same client either way.
//
//   node rolling_restart_clients.mjs --module OUT/sheet-client.mjs --base http://127.0.0.1:PORT/ --users N
//
// Each user keeps one client-clock session busy (the card shown when hidden; `began`, 8-16
// `changed` at 60 Hz, `ended` with a velocity or without, a pause while the animation runs),
// every event with its own time (strictly increasing), so that the time of a session's snapshot
// names the last of its events the session has.
//
// Commands on stdin, one JSON object a line; answers on stdout, likewise:
//   {"cmd": "hold"}     each user has three more events acknowledged, then stops before its next
//                       one; {"event": "held"} once all have (rolling_restart.py holds Redis's
//                       writes first, so those events exist only in the instances' memory)
//   {"cmd": "killed"}   (an instance was killed) each user reads its session (GET, which no client
//                       resends anything with) and counts its acknowledged events the session lacks
//                       (times after the snapshot's), then goes on; {"event": "measured"} once all
//                       have. A numbering user's next event must then bring them back: its
//                       acknowledgement is followed by a GET at that event's time, and the client
//                       counts as many requests sent again as were lacking.
//   {"cmd": "stop"}     each user ends its gesture; a numbering user asks the session for its last
//                       applied seq (a request with a gap, which changes nothing: the 409 names it),
//                       which must be the last one the client saw acknowledged; the session is
//                       deleted. Then {"event": "report", "users": [...]} and the process ends.

import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";

const args = Object.fromEntries(
    process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith("--") ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const { SheetClient, SheetError } = await import(pathToFileURL(args.module).href);
const USERS = Number(args.users ?? 6);
const PRESETS = ["facebook", "twitter", "fluid", "glide"];
/** Events each user has acknowledged while the store's writes are held, before it stops for the kill. */
const HOLD_EVENTS = 3;

const say = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rand = (a, b) => a + Math.random() * (b - a);

/** What the driver asked, shared by the users. */
const control = {
    holding: false,
    /** @type {() => void} */
    release: () => {},
    released: Promise.resolve(),
    measuring: 0,
    stopping: false,
};

class User {
    constructor(k) {
        this.k = k;
        this.numbering = k % 2 === 0;
        this.client = new SheetClient(args.base, { numbering: this.numbering });
        this.id = `rj-${this.numbering ? "n" : "p"}-${randomUUID().slice(0, 18)}`;
        /** Times of the events the session acknowledged, in order. */
        this.acked = [];
        this.t = 0;
        this.gestures = 0;
        this.errors = {};
        this.errorSamples = [];
        this.hidden = true;
        this.holdMark = -1;
        this.frozen = false;
        this.measured = 0;
        /** Per kill the user saw held: acknowledged events the session lacked, and (numbering) what brought them back. */
        this.kills = [];
        /** After a measured kill: the check to make at the next acknowledgement. */
        this.pending = null;
    }

    /** The next event's time: the page's monotonic clock, strictly increasing (unique per event), in
     * whole microseconds as sheet-client.js sends it (so that a snapshot's time names the event). */
    now() {
        this.t = Math.max(Math.round(performance.now() * 1000) / 1e6, Math.round((this.t + 0.001) * 1e6) / 1e6);
        return this.t;
    }

    error(e, what) {
        const key = e instanceof SheetError ? `${e.status} ${e.code}` : `transport ${e?.cause?.code ?? e?.name ?? e}`;
        this.errors[key] = (this.errors[key] ?? 0) + 1;
        if (this.errorSamples.length < 5) this.errorSamples.push(`${what}: ${key}: ${String(e?.message ?? e).slice(0, 200)}`);
    }

    /** Before each event: a hold stops the user once it acknowledged an event since; a kill is measured. */
    async boundary() {
        if (control.holding && this.acked.length >= this.holdMark + HOLD_EVENTS && !this.frozen) {
            this.frozen = true;
            if (users.every((u) => u.frozen)) say({ event: "held" });
            await control.released;
            this.frozen = false;
            await this.measure();
        }
    }

    /** The session read after a kill: its acknowledged events it lacks (their times after its own). */
    async measure() {
        try {
            const snapshot = await this.client.request("GET", `sessions/${encodeURIComponent(this.id)}`);
            const lacking = this.acked.filter((t) => t > snapshot.time).length;
            const kill = { lacking, resent: null, state: null };
            this.kills.push(kill);
            if (this.numbering) this.pending = { kill, resentBefore: this.sheet.stats.resent };
        } catch (e) {
            this.error(e, "GET after a kill");
        }
        control.measuring -= 1;
        if (control.measuring === 0) say({ event: "measured" });
    }

    /** One event through sheet-client.js: null if it was refused or failed (counted). */
    async event(what, send) {
        await this.boundary();
        const time = this.now();
        try {
            const r = await send(time);
            this.acked.push(time);
            if (this.pending) await this.recovered(time);
            return r;
        } catch (e) {
            this.error(e, what);
            return null;
        }
    }

    /** The first acknowledgement after a measured kill: the session has it, and the client sent the lacking ones again. */
    async recovered(time) {
        const { kill, resentBefore } = this.pending;
        this.pending = null;
        kill.resent = this.sheet.stats.resent - resentBefore;
        try {
            const snapshot = await this.client.request("GET", `sessions/${encodeURIComponent(this.id)}`);
            kill.state = snapshot.time === time;
        } catch (e) {
            this.error(e, "GET after the recovery");
            kill.state = false;
        }
    }

    async settle(result) {
        await sleep(((result?.animation?.duration ?? 0) + rand(0.1, 0.3)) * 1000);
    }

    async gesture() {
        const sheet = this.sheet;
        if (this.hidden) {
            const shown = await this.event("show", (time) => sheet.show(undefined, { time }));
            if (!shown) return false;
            this.hidden = false;
            await this.settle(shown);
        }
        const began = await this.event("began", (time) => sheet.began({ time }));
        if (!began) return false;
        const detents = Object.values(sheet.snapshot.detents ?? { x: began.constant });
        const target = detents[Math.floor(Math.random() * detents.length)] + rand(-30, 30) - began.constant;
        const n = 8 + Math.floor(Math.random() * 9);
        let translation = 0;
        for (let k = 1; k <= n; k++) {
            await sleep(1000 / 60);
            translation = Math.round((target * (k / n) ** 0.8 + rand(-1.5, 1.5)) * 100) / 100;
            if (!(await this.event("changed", (time) => sheet.changed(translation, { time })))) return false;
        }
        await sleep(1000 / 60);
        // Half the releases leave the velocity to sheetd's estimate from the `changed` samples.
        const velocity = Math.random() < 0.5 ? Math.round(rand(-1500, 1500)) : undefined;
        const ended = await this.event("ended", (time) => sheet.ended(translation, velocity === undefined ? { time } : { time, velocity }));
        if (!ended) return false;
        this.gestures += 1;
        this.hidden = !!ended.snap?.dismiss;
        await this.settle(ended);
        return true;
    }

    async run() {
        this.sheet = await this.client.createSession({ preset: PRESETS[this.k % PRESETS.length], clock: "client" }, this.id);
        this.sheet.predicting = this.k % 4 < 2; // half predict (?frames= answers), half follow the answers
        ready += 1;
        if (ready === USERS) say({ event: "ready" });
        while (!control.stopping) {
            if (await this.gesture()) continue;
            // Refused or failed: start afresh from what the session says, with a show (a client-clock
            // snapshot is at the session's last event, where a card on its way out is still animating).
            await sleep(300);
            try {
                await this.sheet.get();
            } catch (e) {
                this.error(e, "GET to start afresh");
            }
            this.hidden = true;
        }
        return this.finish();
    }

    /** The end: the session's last applied seq (numbering users), then it is deleted. */
    async finish() {
        const stats = this.sheet.stats;
        const report = {
            id: this.id, numbering: this.numbering, gestures: this.gestures, acknowledged: this.acked.length,
            kills: this.kills, errors: this.errors, errorSamples: this.errorSamples,
            stats: { requestsSent: stats.requestsSent, retried: stats.retried, replays: stats.replays, resent: stats.resent,
                acknowledgedLost: stats.acknowledgedLost, renumbered: stats.renumbered },
        };
        if (this.numbering) {
            const acknowledgedSeq = this.sheet._acknowledged;
            try {
                await this.client.request("POST", `sessions/${encodeURIComponent(this.id)}/dismiss`,
                    { time: this.now(), seq: acknowledgedSeq + 2 });
                report.lastSeq = { acknowledged: acknowledgedSeq, session: "applied (no gap)" };
            } catch (e) {
                report.lastSeq = { acknowledged: acknowledgedSeq, session: e instanceof SheetError ? e.problem.lastSeq ?? e.code : String(e) };
            }
        }
        try {
            await this.client.request("DELETE", `sessions/${encodeURIComponent(this.id)}`);
            report.deleted = true;
        } catch (e) {
            report.deleted = false;
            this.error(e, "DELETE");
        }
        return report;
    }
}

let ready = 0;
const users = Array.from({ length: USERS }, (_, k) => new User(k));

createInterface({ input: process.stdin }).on("line", (line) => {
    const { cmd } = JSON.parse(line);
    if (cmd === "hold") {
        for (const u of users) u.holdMark = u.acked.length;
        control.released = new Promise((resolve) => (control.release = resolve));
        control.holding = true;
    } else if (cmd === "killed") {
        control.holding = false;
        control.measuring = users.filter((u) => u.frozen).length;
        if (control.measuring === 0) say({ event: "measured" });
        control.release();
    } else if (cmd === "stop") {
        control.stopping = true;
    }
});

const reports = await Promise.all(users.map(async (u, k) => {
    await sleep(k * 50);
    try {
        return await u.run();
    } catch (e) {
        return { id: u.id, numbering: u.numbering, failed: String(e?.stack ?? e).slice(0, 500) };
    }
}));
say({ event: "report", users: reports });
process.exit(0);
