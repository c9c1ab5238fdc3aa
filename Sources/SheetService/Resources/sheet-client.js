// sheet-client.js: a small client for sheetd, as an ES module with no dependencies.
//
//   import { SheetClient } from "http://127.0.0.1:8080/sheet-client.js";
//   const sheets = new SheetClient();                 // talks to the server it was loaded from
//   const sheet = await sheets.createSession({ preset: "fluid", clock: "client" }, "my-card");
//   sheet.frames({ onFrame: (f) => draw(f.constant, f.dimmerAlpha) });
//   await sheet.began();  await sheet.changed(-120);  const r = await sheet.ended();
//   console.log(r.snap.detent, r.snap.reason);
//
// Mutating requests of one session are sent one at a time, in order (a client-clock session
// refuses a time that goes backwards, and `changed` must follow `began`); `changed` events that
// queue up behind a request in flight are coalesced into the latest one. Times default to this
// page's monotonic clock, `performance.now() / 1000` seconds, and never decrease.

/**
 * @typedef {"facebook" | "twitter" | "glide" | "transition" | "swipeCell" | "fluid"} PresetName
 * @typedef {"top" | "bottom" | "frameY" | "offset"} Constraint
 * @typedef {"hidden" | "resting" | "dragging" | "animating"} SheetState
 * @typedef {"began" | "changed" | "ended" | "cancelled"} PanPhase
 *
 * @typedef {object} Geometry  The container, in points.
 * @property {number} [height]          default 844
 * @property {number} [safeAreaTop]     default 47
 * @property {number} [safeAreaBottom]  default 34
 *
 * @typedef {object} SessionConfig  Body of PUT /sessions/{id}; every field optional.
 * @property {PresetName} [preset]        default "facebook"
 * @property {Geometry} [geometry]
 * @property {Record<string, any>} [options]  the preset's own options (GET /presets lists them)
 * @property {string} [initialDetent]     start resting there instead of hidden
 * @property {"server" | "client"} [clock]  "client": every mutating request carries `time`
 *
 * @typedef {object} Animation  An animation in closed form.
 * @property {number} id            strictly increasing within the session; frame ids are `id:index`
 * @property {"linear" | "easeIn" | "easeOut" | "easeInOut" | "durationSpring" | "spring"} curve
 * @property {number} duration      seconds
 * @property {number} from
 * @property {number} to
 * @property {number} fromAlpha
 * @property {number} toAlpha
 * @property {"interpolate" | "position"} alphaRule
 * @property {number} startTime     session-clock seconds
 * @property {string} detent        the target detent
 * @property {boolean} dismiss
 * @property {number} [dampingRatio]
 * @property {number} [initialVelocity]
 * @property {number} [response]
 * @property {number} [velocity]
 * @property {number} [stiffness]
 * @property {number} [damping]
 * @property {number} [mass]
 *
 * @typedef {object} Snapshot  The state of a session at `time`.
 * @property {string} [id]
 * @property {PresetName} preset
 * @property {Constraint} constraint
 * @property {Required<Geometry>} geometry
 * @property {Record<string, any>} options  effective options, defaults filled in
 * @property {"server" | "client"} clock
 * @property {Record<string, number>} detents  detent name → constant
 * @property {SheetState} state
 * @property {string | null} detent
 * @property {number} constant
 * @property {number} dimmerAlpha
 * @property {number} progress
 * @property {Animation | null} animation
 * @property {number} time
 *
 * @typedef {object} Snap  Where a release (or show/dismiss) sends the card, and why.
 * @property {string} detent
 * @property {number} constant
 * @property {boolean} dismiss
 * @property {string} reason
 * @property {number} [projected]  fluid only
 *
 * @typedef {object} Result  The outcome of a pan, show or dismiss.
 * @property {PanPhase} [phase]
 * @property {SheetState} state
 * @property {string | null} detent
 * @property {number} constant
 * @property {number} dimmerAlpha
 * @property {number} progress
 * @property {Snap | null} snap
 * @property {Animation | null} animation
 * @property {number} [velocity]
 * @property {"client" | "estimated"} [velocitySource]
 * @property {"sheet" | "scroll"} [consumer]
 * @property {number} time
 *
 * @typedef {object} Frame  The data of an `event: frame`.
 * @property {number} animation
 * @property {number} index
 * @property {number} t          seconds since the animation's start
 * @property {number} constant
 * @property {number} dimmerAlpha
 * @property {number} progress
 * @property {number} velocity   points per second
 *
 * @typedef {object} PanOptions
 * @property {number} [time]          seconds on the client clock (default: now)
 * @property {number} [velocity]      pt/s, down positive; leave it out on `ended` to let sheetd estimate it
 * @property {number} [scrollOffset]  fluid only, on `changed`
 *
 * @typedef {object} FrameHandlers
 * @property {(frame: Frame, event: MessageEvent) => void} [onFrame]
 * @property {(snapshot: Snapshot) => void} [onSettled]
 * @property {(snapshot: Snapshot) => void} [onInterrupted]
 * @property {(snapshot: Snapshot) => void} [onSnapshot]   after a resume the server no longer knew
 * @property {() => void} [onClosed]                        the session ended; the stream is closed
 * @property {(info: {resumedFrom: string | null}) => void} [onOpen]
 * @property {(event: Event) => void} [onError]             the browser is reconnecting (or gave up)
 *
 * @typedef {object} SimEvent
 * @property {"pan" | "show" | "dismiss"} [type]  default "pan"
 * @property {number} time
 * @property {PanPhase} [phase]
 * @property {number} [translation]
 * @property {number} [velocity]
 * @property {number} [scrollOffset]
 * @property {string} [detent]
 *
 * @typedef {object} SimulateResponse
 * @property {Result[]} results
 * @property {Animation | null} animation
 * @property {Frame[]} frames
 * @property {Snapshot} final
 *
 * @typedef {object} PresetInfo
 * @property {PresetName} name
 * @property {Constraint} constraint
 * @property {Record<string, number>} detents   for the default geometry
 * @property {string} showDefault
 * @property {string} dismissTarget
 * @property {Record<string, {type: string, default: any, description: string}>} options
 */

/** An error answer of sheetd (application/problem+json). */
export class SheetError extends Error {
    /** @param {number} status @param {{code?: string, detail?: string, title?: string, field?: string}} problem */
    constructor(status, problem) {
        super(problem.detail || problem.title || `HTTP ${status}`);
        this.name = "SheetError";
        /** HTTP status. */
        this.status = status;
        /** A stable slug, e.g. "unknown-option", "session-not-found", "clock-backwards". */
        this.code = problem.code ?? "http-" + status;
        /** The offending field, where there is one. */
        this.field = problem.field;
        this.problem = problem;
    }
}

/** The client clock: seconds on this page's monotonic clock (the same base as `event.timeStamp`). */
export const clientTime = () => performance.now() / 1000;

/** A sheetd server. */
export class SheetClient {
    /**
     * @param {string | URL} [baseURL]  the server; default: where this module was loaded from, so
     *   `import … from "http://host:8080/sheet-client.js"` then `new SheetClient()` just works.
     */
    constructor(baseURL = new URL(".", import.meta.url)) {
        const base = new URL(baseURL, typeof location === "undefined" ? undefined : location.href);
        if (!base.pathname.endsWith("/")) base.pathname += "/";
        /** @type {URL} */
        this.baseURL = base;
    }

    /** @param {string} path */
    url(path) {
        return new URL(path.replace(/^\//, ""), this.baseURL);
    }

    /**
     * One JSON request; throws a SheetError for a problem answer.
     * @param {string} method @param {string} path @param {any} [body] @param {AbortSignal} [signal]
     * @returns {Promise<any>}
     */
    async request(method, path, body, signal) {
        /** @type {RequestInit} */
        const init = { method, signal, headers: {} };
        if (body !== undefined) {
            init.body = JSON.stringify(body);
            init.headers = { "Content-Type": "application/json" };
        }
        const response = await fetch(this.url(path), init);
        const text = await response.text();
        let json = null;
        if (text) {
            try {
                json = JSON.parse(text);
            } catch {
                json = { detail: text };
            }
        }
        if (!response.ok) throw new SheetError(response.status, json ?? {});
        return json;
    }

    /** Every preset, its options (with defaults) and detents for the default geometry. @returns {Promise<PresetInfo[]>} */
    async presets() {
        return (await this.request("GET", "presets")).presets;
    }

    /**
     * Runs a configuration and events statelessly (always on the client clock).
     * @param {{config?: SessionConfig, events: SimEvent[], fps?: number}} request
     * @param {AbortSignal} [signal]
     * @returns {Promise<SimulateResponse>}
     */
    simulate(request, signal) {
        return this.request("POST", "simulate", request, signal);
    }

    /**
     * Creates a session: `PUT /sessions/{id}` with your id (creating or replacing it), else
     * `POST /sessions` with a generated one.
     * @param {SessionConfig} [config] @param {string} [id]
     * @returns {Promise<SheetSession>}
     */
    async createSession(config = {}, id) {
        const snapshot = id
            ? await this.request("PUT", `sessions/${encodeURIComponent(id)}`, config)
            : await this.request("POST", "sessions", config);
        return new SheetSession(this, snapshot);
    }

    /** A handle on an existing session (call `get()` to load its snapshot). @param {string} id */
    session(id) {
        return new SheetSession(this, /** @type {any} */ ({ id }));
    }
}

/** One card. Mutating calls are serialized; each resolves with sheetd's Result. */
export class SheetSession {
    /** @param {SheetClient} client @param {Snapshot} snapshot */
    constructor(client, snapshot) {
        this.client = client;
        /** @type {string} */
        this.id = /** @type {string} */ (snapshot.id);
        /** The last snapshot seen (from create, replace, get or a settled/interrupted frame event). @type {Snapshot} */
        this.snapshot = snapshot;
        /** @type {Promise<any>} */
        this._tail = Promise.resolve();
        /** @type {any} */
        this._queued = null; // the last queued job not yet sent
        this._lastTime = -Infinity;
    }

    get path() {
        return `sessions/${encodeURIComponent(this.id)}`;
    }

    get clientClock() {
        return this.snapshot.clock === "client";
    }

    /** Re-creates this session with a new configuration (same id); its open streams get `closed`. @param {SessionConfig} config */
    async replace(config) {
        const snapshot = await this._enqueue("PUT", this.path, config, false, false);
        this._lastTime = -Infinity;
        return (this.snapshot = snapshot);
    }

    /** The snapshot now. @returns {Promise<Snapshot>} */
    async get() {
        return (this.snapshot = await this.client.request("GET", this.path));
    }

    /** Ends the session. */
    delete() {
        return this._enqueue("DELETE", this.path, undefined, false, false);
    }

    /**
     * One pan event.
     * @param {PanPhase} phase @param {number} [translation] @param {PanOptions} [options]
     * @returns {Promise<Result>}
     */
    pan(phase, translation, options = {}) {
        /** @type {Record<string, any>} */
        const event = { phase, time: options.time ?? clientTime() };
        if (translation !== undefined) event.translation = translation;
        if (options.velocity !== undefined) event.velocity = options.velocity;
        if (options.scrollOffset !== undefined) event.scrollOffset = options.scrollOffset;
        return this._enqueue("POST", `${this.path}/pan`, event, phase === "changed", true);
    }

    /** The finger touches the card. @param {PanOptions} [options] */
    began(options) {
        return this.pan("began", undefined, options);
    }
    /** The finger moved: `translation` is the total since `began`, points, down positive. @param {number} translation @param {PanOptions} [options] */
    changed(translation, options) {
        return this.pan("changed", translation, options);
    }
    /** The finger lifted. Without `velocity`, sheetd estimates it from the recent `changed` events. @param {number} [translation] @param {PanOptions} [options] */
    ended(translation, options) {
        return this.pan("ended", translation, options);
    }
    /** The gesture was cancelled (pointercancel): back to the detent it began at. @param {PanOptions} [options] */
    cancelled(options) {
        return this.pan("cancelled", undefined, options);
    }

    /** Presents the card, or moves it to `detent`. @param {string} [detent] @param {{time?: number}} [options] @returns {Promise<Result>} */
    show(detent, options = {}) {
        /** @type {Record<string, any>} */
        const body = {};
        if (detent) body.detent = detent;
        if (options.time !== undefined || this.clientClock) body.time = options.time ?? clientTime();
        return this._enqueue("POST", `${this.path}/show`, body, false, true);
    }

    /** The tap on the dimmer. @param {{time?: number}} [options] @returns {Promise<Result>} */
    dismiss(options = {}) {
        /** @type {Record<string, any>} */
        const body = {};
        if (options.time !== undefined || this.clientClock) body.time = options.time ?? clientTime();
        return this._enqueue("POST", `${this.path}/dismiss`, body, false, true);
    }

    /**
     * Subscribes to the frames of every animation of this session (one EventSource). A dropped
     * connection reconnects by itself and resumes after the last frame (`Last-Event-ID`).
     * @param {FrameHandlers} handlers @param {{fps?: number, pace?: "realtime" | "instant"}} [options]
     */
    frames(handlers, options = {}) {
        const url = this.client.url(`${this.path}/frames`);
        url.searchParams.set("fps", String(options.fps ?? 60));
        if (options.pace) url.searchParams.set("pace", options.pace);
        const source = new EventSource(url);
        const stream = {
            /** The underlying EventSource. */
            source,
            /** The id (`animation:index`) of the last frame received; a reconnect resumes after it. @type {string | null} */
            lastEventId: /** @type {string | null} */ (null),
            /** Frames received so far. */
            frameCount: 0,
            close: () => source.close(),
        };
        /** @param {MessageEvent} e */
        const snapshotOf = (e) => {
            const s = JSON.parse(e.data);
            if (s && s.preset) this.snapshot = { ...s, id: this.id };
            return this.snapshot;
        };
        source.addEventListener("open", () => handlers.onOpen?.({ resumedFrom: stream.lastEventId }));
        source.addEventListener("frame", (e) => {
            stream.lastEventId = e.lastEventId;
            stream.frameCount += 1;
            handlers.onFrame?.(JSON.parse(e.data), e);
        });
        source.addEventListener("settled", (e) => handlers.onSettled?.(snapshotOf(e)));
        source.addEventListener("interrupted", (e) => handlers.onInterrupted?.(snapshotOf(e)));
        source.addEventListener("snapshot", (e) => handlers.onSnapshot?.(snapshotOf(e)));
        source.addEventListener("closed", () => {
            source.close();
            handlers.onClosed?.();
        });
        source.addEventListener("error", (e) => handlers.onError?.(e));
        return stream;
    }

    /**
     * @param {string} method @param {string} path @param {any} body
     * @param {boolean} coalesce  replace the last queued, unsent job of the same kind
     * @param {boolean} timed     the body carries a client-clock `time`
     */
    _enqueue(method, path, body, coalesce, timed) {
        const last = this._queued;
        if (coalesce && last && last.coalesce && !last.sent) {
            last.body = body;
            return last.promise;
        }
        const job = { method, path, body, coalesce, sent: false, promise: /** @type {Promise<any>} */ (Promise.resolve()) };
        job.promise = this._tail.then(() => {
            job.sent = true;
            if (this._queued === job) this._queued = null;
            if (timed && job.body && typeof job.body.time === "number") {
                // microseconds are plenty; never before the previous request's time
                job.body.time = Math.max(Math.round(job.body.time * 1e6) / 1e6, this._lastTime);
                this._lastTime = job.body.time;
            }
            return this.client.request(method, path, job.body);
        });
        this._tail = job.promise.catch(() => {});
        this._queued = job;
        return job.promise;
    }
}
