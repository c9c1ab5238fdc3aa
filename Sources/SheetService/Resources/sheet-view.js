// sheet-view.js: <sheet-view>, a bottom sheet as one HTML element, on sheetd's physics.
//
//   <script type="module" src="http://127.0.0.1:8080/sheet-view.js"></script>
//   <sheet-view preset="fluid" detent="half"><h2>Places</h2><ul>…</ul></sheet-view>
//
// No framework, no build step: a custom element in an ES module that sheetd serves beside
// sheet-client.js, which it imports for everything physical. sheetd publishes each session's drag
// and release laws and sheet-client.js evaluates them (the card is drawn on the pointer event that
// moved it, and the release animation starts on the frame of the release, confirmed by sheetd's
// answer); this file only draws what the client says and turns pointers, keys and the viewport
// into the client's calls. It decides nothing about where a card goes.
//
// Attributes (and properties of the same name):
//   preset      a preset of GET /presets (default: sheetd's default)
//   detent      where the sheet opens (initialDetent); without it, hidden until show()
//   open        open at the preset's showDefault when no detent is given
//   label       the dialog's accessible name (default: the content's first heading)
//   fit         fluid: one detent, the height of the content (the `detents` option, measured)
//   server      sheetd's address (default: where this module was loaded from)
//   any option of the preset, in kebab-case (`card-height-ratio="0.6"`, `hideable="false"`,
//   `detents='{"a": {"height": 300}}'`): read from the catalog (`GET /presets`: names, types),
//   never from a list kept here; as properties too, in camelCase, once the catalog is read.
//   contained   placed in its container (the nearest positioned ancestor) instead of the viewport:
//               the session's geometry is the element's box, not the viewport's; the backdrop dims
//               the container only, and focus is not held (the page around it stays usable)
//   latency     a simulated round trip added to the element's requests, ms (as `latency` property)
// Events: `snap` (detail: detent, reason, dismiss, constant), `settle` (detail: state, detent),
// `dismiss` (the sheet came to rest hidden), `ready` (the session exists), `frame` (detail:
// constant, dimmerAlpha, progress, motion, time: each position drawn), `result` (detail: request,
// result: every answer of sheetd, the session's PUT included), `problem` (detail: code, message:
// sheetd refused a configuration or an action).
// Methods: show(detent?), dismiss(), step(direction: -1 up | +1 down). Properties besides the
// attributes: session, presetInfo, ready, state, options, stats, parentView (the sheet this one is
// stacked on), covered (an open sheet is stacked on this one), geometry (a geometry of its own
// instead of the viewport's or the container's, points), scale (screen px per point: measured from
// the element's box, e.g. inside a scaled device frame, unless set), predicting (draw from the
// drag law and the release law, default true; false: the card waits for each answer), latency.
// Styling: CSS custom properties (--sheet-background, --sheet-radius, --sheet-shadow,
// --sheet-backdrop, --sheet-handle-color, --sheet-max-width, --sheet-padding) and ::part(card),
// ::part(handle), ::part(grabber), ::part(content), ::part(backdrop).
//
// Stacks: a <sheet-view> placed inside another's content is stacked on it (sheetd's stacks: its
// session names the other's as `parent`). While it is open the sheet beneath is covered: drawn by
// the child's published recede law at the child's drawn constant (scaled, lifted, its corners and a
// shade, on the same frame as the child), it takes no drag, key or tap (sheetd would refuse them:
// 409 `covered`), Escape closes the top-most sheet only, and dismiss() on it closes the stack
// (`cascade`, one instant). Nesting, not an attribute naming another sheet: the markup says which
// sheet opens from which (the child's content is part of its parent's), nothing has to be looked
// up by id or ordered, and a stack lives in one subtree, so it is moved or removed whole. The
// nested element is shown in the top layer (a manual popover), so the parent's transform and
// scrolling content do not hold it.
//
// Accessibility: role=dialog on the element, aria-modal while the backdrop dims the page (a detent
// the preset leaves undimmed is non-modal: the page stays usable), named by `label` or the first
// heading; focus moves to the handle on open, stays inside while modal and returns on close;
// Escape dismisses; the handle is a button (Enter, Space, arrows, Home, End step between detents)
// whose moves are announced in a polite live region; prefers-reduced-motion draws the end of each
// animation at once.
//
// Layout: the session's geometry is the viewport's (innerHeight, env(safe-area-inset-*)), sent
// again on resize and rotation. Where sheet-client.js has layout events (`session.layout`), the
// keyboard (visualViewport) and the content's height go there; without them the sheet keeps its
// geometry (feature-detected, nothing faked).

import { SheetClient, clientTime } from "./sheet-client.js";

/**
 * @typedef {import("./sheet-client.js").SheetSession} SheetSession
 * @typedef {import("./sheet-client.js").Snapshot} Snapshot
 * @typedef {import("./sheet-client.js").Result} Result
 * @typedef {import("./sheet-client.js").PresetInfo} PresetInfo
 * @typedef {import("./sheet-client.js").CardState} CardState
 * @typedef {import("./sheet-client.js").SessionConfig} SessionConfig
 *
 * @typedef {object} SnapDetail  The detail of a `snap` event.
 * @property {string} detent
 * @property {string} reason
 * @property {boolean} dismiss
 * @property {number} constant
 *
 * @typedef {object} SettleDetail  The detail of a `settle` event.
 * @property {string} state
 * @property {string | null} detent
 *
 * @typedef {object} FrameDetail  The detail of a `frame` event: a position drawn.
 * @property {number} constant
 * @property {number} dimmerAlpha
 * @property {number} progress
 * @property {string} motion  the client's motion (`rest`, `drag`, `hold`, `coast`, `animation`; `jump`: reduced motion)
 * @property {number} time  on the client clock, seconds
 *
 * @typedef {object} ResultDetail  The detail of a `result` event: one answer of sheetd.
 * @property {string} request  e.g. `POST …/pan ended`, `PUT /sessions/ID`
 * @property {Result | Snapshot} result
 *
 * @typedef {object} ProblemDetail  The detail of a `problem` event.
 * @property {string} code  sheetd's problem code (`unknown-option`, …)
 * @property {string} message
 */

/** Attributes the element reads itself; every other one may be an option of the preset. */
const OWN = ["preset", "detent", "open", "label", "fit", "server", "latency", "contained", "popover", "class", "style", "id", "role",
    "aria-modal", "aria-label", "aria-labelledby", "hidden", "slot", "data-state", "data-detent", "inert", "tabindex"];

/** Catalogs, one per server, read once per page (`GET /presets`). @type {Map<string, Promise<PresetInfo[]>>} */
const catalogs = new Map();

/** Elements a keyboard can reach (the focus trap's candidates). */
const FOCUSABLE = "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), "
    + "textarea:not([disabled]), [tabindex]:not([tabindex='-1']), [contenteditable=''], [contenteditable=true], summary";

/**
 * `a-b-c` → `aBC`.
 * @param {string} s
 */
const camel = (s) => s.replace(/-([a-z])/g, (/** @type {string} */ _, /** @type {string} */ c) => c.toUpperCase());
/**
 * `aBC` → `a-b-c`.
 * @param {string} s
 */
const kebab = (s) => s.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());

const STYLE = `
:host { position: fixed; inset: 0; z-index: var(--sheet-z, 10); pointer-events: none; display: block;
  contain: strict; --sheet-background: Canvas; width: auto; height: auto; margin: 0; border: 0; padding: 0;
  background: none; overflow: visible; }
:host([contained]) { position: absolute; }
:host(:not([data-state])) .card, :host([data-closed]) .card { visibility: hidden; }
.backdrop { position: absolute; inset: 0; background: var(--sheet-backdrop, #000); opacity: 0; pointer-events: none;
  -webkit-tap-highlight-color: transparent; }
.backdrop.on { pointer-events: auto; }
.card { position: absolute; left: 0; right: 0; top: 0; margin: 0 auto; max-width: var(--sheet-max-width, 640px);
  display: flex; flex-direction: column; pointer-events: auto; will-change: translate, transform; box-sizing: border-box;
  background: var(--sheet-background); color: var(--sheet-color, CanvasText);
  border-radius: var(--sheet-radius, 14px) var(--sheet-radius, 14px) 0 0;
  box-shadow: var(--sheet-shadow, 0 -2px 18px rgb(0 0 0 / 0.18)); overscroll-behavior: contain; }
.handle { flex: none; display: flex; align-items: center; justify-content: center; width: 100%; height: 28px;
  margin: 0; padding: 0; border: 0; background: transparent; color: inherit; cursor: grab; touch-action: none;
  border-radius: inherit; font: inherit; }
.handle:focus-visible { outline: 2px solid var(--sheet-focus, Highlight); outline-offset: -4px; }
.grabber { width: 36px; height: 5px; border-radius: 3px; background: var(--sheet-handle-color, #8e8e93); }
.content { flex: 1 1 auto; min-height: 0; overflow-y: auto; overscroll-behavior: contain;
  padding: var(--sheet-padding, 0 16px calc(16px + var(--sab, 0px))); box-sizing: border-box; touch-action: none; }
.content.native { touch-action: pan-y; }
.content:focus-visible { outline: 2px solid var(--sheet-focus, Highlight); outline-offset: -2px; }
.shade { position: absolute; inset: 0; background: var(--sheet-shade, #000); opacity: 0; pointer-events: none;
  border-radius: inherit; }
.live { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.probe { position: absolute; visibility: hidden; padding: env(safe-area-inset-top) 0 env(safe-area-inset-bottom); }
`;

/** The `<sheet-view>` element. */
export class SheetView extends HTMLElement {
    static get observedAttributes() { return ["preset", "detent", "open", "label", "fit", "server", "latency", "contained"]; }

    constructor() {
        super();
        const root = this.attachShadow({ mode: "open" });
        root.innerHTML = `<style>${STYLE}</style><div class="backdrop" part="backdrop"></div>`
            + `<div class="card" part="card"><button class="handle" part="handle" type="button"><span class="grabber" part="grabber"></span></button>`
            + `<div class="content" part="content"><slot></slot></div><div class="shade" part="shade"></div></div><div class="live" aria-live="polite"></div><div class="probe"></div>`;
        const $ = (/** @type {string} */ selector) => /** @type {HTMLElement} */ (root.querySelector(selector));
        this._backdrop = $(".backdrop");
        this._card = $(".card");
        this._handle = /** @type {HTMLButtonElement} */ ($(".handle"));
        this._content = $(".content");
        this._live = $(".live");
        this._shade = $(".shade");
        // The sheet this one is stacked on (set while connected inside another's content), and those stacked on this one.
        /** @type {SheetView | null} */
        this._parentView = null;
        /** @type {Set<SheetView>} */
        this._stacked = new Set();
        /** The card's own top corner radius, px (read before a recession draws over it). @type {number | null} */
        this._radius = null;
        this._probe = $(".probe");
        /** @type {SheetClient | null} */
        this._client = null;
        /**
         * The session (null until `ready`).
         * @type {SheetSession | null}
         */
        this.session = null;
        /** The preset's catalog entry. @type {PresetInfo | null} */
        this.presetInfo = null;
        /** Resolves once the session exists and its stream is open. @type {Promise<void>} */
        /** @type {(() => void) | undefined} */
        this._resolveReady = undefined;
        /** Resolves once the session exists and its stream is open. @type {Promise<void>} */
        this.ready = new Promise((/** @type {(value: void) => void} */ resolve) => { this._resolveReady = () => resolve(); });
        /** @type {{close: () => void} | null} */
        this._stream = null;
        /** Where the card rests or is heading. @type {string | null} */
        this._target = null;
        /** @type {{pointerId: number, startY: number, translation: number, moved: boolean, scroller: boolean, scrollTop: number, lastY: number, handOff: boolean, scale?: number} | null} */
        this._drag = null;
        this._lastDragEnd = -Infinity;
        this._frame = 0;
        /** @type {Snapshot | null} a `settled` waiting for the local animation to end */
        this._pendingSettled = null;
        /** @type {Element | null} what had focus before the sheet opened */
        this._returnFocus = null;
        this._modal = false;
        this._open = false;
        this._generation = 0;
        this._settledCount = 0;
        /** @type {{constant: number, alpha: number} | null} reduced motion: the end of the running animation */
        this._jumpTo = null;
        /** @type {Record<string, any>} options set as properties before the catalog was read */
        this._pendingOptions = {};
        /** Scroll hand-off answers that disagreed with what the element drew. */
        this.handOffMismatches = 0;
        /** The geometry set as a property (null: the viewport's, or the container's). @type {import("./sheet-client.js").Geometry | null} */
        this._geometryOverride = null;
        /** Screen px per point set as a property (null: measured). @type {number | null} */
        this._scale = null;
        this._predicting = true;
        /** A reconfiguration is reading the attributes: a `detent` set meanwhile is where the new session opens. */
        this._reconfiguring = false;
        /** @type {string | null} */
        this._wantedDetent = null;
        this._reducedMotion = matchMedia("(prefers-reduced-motion: reduce)");
        this._bind();
    }

    // ------------------------------------------------------------ public surface

    /** The preset's name. */
    get preset() { return this.getAttribute("preset") ?? this.session?.snapshot.preset ?? ""; }
    set preset(name) { this.setAttribute("preset", name); }

    /** The detent the card rests at or is heading to (setting it moves the card there). */
    get detent() { return this._target ?? this.getAttribute("detent"); }
    set detent(name) { if (name) this.show(name); }

    /** The session's state (`hidden`, `resting`, `dragging`, `animating`), or "" before `ready`. */
    get state() { return this.session?.snapshot.state ?? ""; }

    /** The effective options (defaults filled in) of the session; setting some replaces the session with them. */
    get options() { return { ...(this.session?.snapshot.options ?? {}) }; }
    set options(values) {
        Object.assign(this._pendingOptions, values);
        this._reconfigure();
    }

    /** The client's prediction counters (`sheet.stats` of sheet-client.js). */
    get stats() { return this.session?.stats ?? null; }

    /** The <sheet-view> this one is stacked on (the one whose content holds it), or null. */
    get parentView() { return this._parentView; }

    /**
     * Whether an open sheet is stacked on this one: it is drawn by that sheet's recede law and
     * takes no drag, key or tap (sheetd refuses them: 409 `covered`); dismiss() closes the stack.
     */
    get covered() {
        if (this.session?.coveredAt()) return true;
        for (const view of this._stacked) if (view._open) return true;
        return false;
    }

    /**
     * The session's geometry, points: set, it replaces the viewport's (or the container's) and the
     * session is re-created with it at the detent it is at (a device frame drawn in a page); null
     * gives the viewport's back. Read, the geometry the session has.
     * @returns {import("./sheet-client.js").Geometry | null}
     */
    get geometry() { return this._geometryOverride ?? this.session?.snapshot.geometry ?? null; }
    set geometry(value) {
        this._geometryOverride = value ? { ...value } : null;
        this._reconfigure();
    }

    /**
     * Screen px per point: pointer movements are divided by it. Unless set, measured from the
     * element's box (1 but inside a scaled ancestor, such as a device frame drawn smaller).
     * @returns {number}
     */
    get scale() {
        if (this._scale) return this._scale;
        const height = this.offsetHeight;
        const measured = height > 0 ? this.getBoundingClientRect().height / height : 1;
        return measured > 0 && Number.isFinite(measured) ? measured : 1;
    }
    /** @param {number} value */
    set scale(value) { this._scale = value > 0 ? Number(value) : null; }

    /** Whether the element is placed in its container (the `contained` attribute) rather than the viewport. */
    get contained() { return this.hasAttribute("contained"); }
    set contained(on) { this.toggleAttribute("contained", !!on); }

    /**
     * Predict (default): the card is drawn on the pointer event from the drag law, and a release
     * starts the release law's animation at once. false: the card waits for each answer of sheetd.
     */
    get predicting() { return this._predicting; }
    set predicting(on) {
        this._predicting = !!on;
        if (this.session) this.session.predicting = this._predicting;
    }

    /** A simulated round trip added to the element's requests, ms (half before, half after; the `latency` attribute). */
    get latency() { return Number(this.getAttribute("latency")) || 0; }
    set latency(ms) { this.setAttribute("latency", String(Number(ms) || 0)); }

    /**
     * Presents the sheet, or moves it to `detent`.
     * @param {string} [detent]
     * @returns {Promise<Result | null>}
     */
    async show(detent) {
        await this.ready;
        const session = /** @type {SheetSession} */ (this.session);
        if (this.covered) return null; // sheetd would refuse it (409 `covered`): the sheet above it is open
        if (session.snapshot.state === "hidden" && !this._open) {
            this._rememberFocus();
            this._opened(true); // shown (off-screen, at the hidden constant) and focused as it comes in
        }
        const result = await this._act(() => session.show(detent, { time: clientTime() }), `POST …/show${detent ? ` {"detent":"${detent}"}` : ""}`);
        return result;
    }

    /**
     * Dismisses the sheet (where the preset sends a dismissal: its dismissTarget); a covered sheet
     * closes with the open sheets stacked on it, at one instant (sheetd's `cascade`).
     * @returns {Promise<Result | null>}
     */
    async dismiss() {
        await this.ready;
        const session = /** @type {SheetSession} */ (this.session);
        const cascade = this.covered;
        return this._act(() => session.dismiss({ time: clientTime(), cascade }), "POST …/dismiss");
    }

    /**
     * Moves the card one detent up (-1) or down (+1) from where it rests or heads; down from the
     * lowest visible detent dismisses where the preset can hide.
     * @param {number} direction
     * @returns {Promise<Result | null>}
     */
    async step(direction) {
        await this.ready;
        if (this.covered) return null; // the sheet above it is open
        const snapshot = /** @type {SheetSession} */ (this.session).snapshot;
        const list = Object.entries(snapshot.detents).sort((a, b) => a[1] - b[1]);
        const here = snapshot.detents[this._target ?? ""] ?? this._drawn.constant;
        const candidates = direction < 0 ? list.filter(([, c]) => c < here - 0.01).reverse() : list.filter(([, c]) => c > here + 0.01);
        const next = candidates[0]?.[0];
        if (!next) return null;
        return next === "hidden" ? this.dismiss() : this.show(next);
    }

    // ------------------------------------------------------------ lifecycle

    connectedCallback() {
        if (!this.hasAttribute("role")) this.setAttribute("role", "dialog");
        this._upgradeProperties();
        // Nested in another <sheet-view>'s content: stacked on it, drawn in the top layer (a manual
        // popover), where neither the parent's transform nor its scrolling content holds it.
        const parent = this.parentElement?.closest("sheet-view");
        this._parentView = parent instanceof SheetView ? parent : null;
        if (this._parentView) {
            this._parentView._stacked.add(this);
            this._parentView.addEventListener("ready", this._onParentReady);
            const popover = /** @type {{showPopover?: () => void}} */ (/** @type {unknown} */ (this));
            if (typeof popover.showPopover === "function") {
                if (!this.hasAttribute("popover")) this.setAttribute("popover", "manual");
                try { popover.showPopover(); } catch { /* already shown */ }
            }
        }
        this._start();
        addEventListener("resize", this._onResize);
        visualViewport?.addEventListener("resize", this._onResize);
        document.addEventListener("keydown", this._onDocumentKey);
        document.addEventListener("focusin", this._onFocusIn);
    }

    disconnectedCallback() {
        const parent = this._parentView;
        if (parent) {
            parent._stacked.delete(this);
            parent.removeEventListener("ready", this._onParentReady);
            parent._unrecede();
            this._parentView = null;
        }
        removeEventListener("resize", this._onResize);
        visualViewport?.removeEventListener("resize", this._onResize);
        document.removeEventListener("keydown", this._onDocumentKey);
        document.removeEventListener("focusin", this._onFocusIn);
        this._contentObserver?.disconnect();
        this._stream?.close();
        this._stream = null;
        const session = this.session;
        this.session = null;
        this._generation += 1;
        session?.delete().catch(() => {});
    }

    /** @param {string} name @param {string | null} old @param {string | null} value */
    attributeChangedCallback(name, old, value) {
        if (old === value || !this.session) return;
        if (name === "preset" || name === "fit" || name === "server") this._reconfigure();
        else if (name === "detent" && value && this._reconfiguring) this._wantedDetent = value; // the new session opens there
        else if (name === "detent" && value && value !== this._target) this.show(value);
        else if (name === "label") this._label();
        else if (name === "latency") this._clientFor().addedLatency = Number(value) || 0;
        else if (name === "contained") this._reconfigure();
    }

    // ------------------------------------------------------------ the session

    /**
     * The client for `server` (default: the sheetd this module came from).
     * @returns {SheetClient}
     */
    _clientFor() {
        // A stacked sheet shares its parent's client: one clock, and the client finds a stack's
        // cards by each other (the parent's covering child, the cards a cascade closes).
        if (this._parentView) return this._parentView._clientFor();
        const server = this.getAttribute("server");
        const base = server ? new URL(server, location.href) : new URL(".", import.meta.url);
        if (!this._client || this._client.baseURL.href !== new URL(".", base).href) {
            this._client = new SheetClient(base, { addedLatency: Number(this.getAttribute("latency")) || 0 });
        }
        return this._client;
    }

    /** The catalog of the client's server, read once per page. */
    _catalog() {
        const client = this._clientFor();
        const key = client.baseURL.href;
        if (!catalogs.has(key)) catalogs.set(key, client.presets());
        return /** @type {Promise<PresetInfo[]>} */ (catalogs.get(key));
    }

    /**
     * The session's geometry, points (CSS px): the one set as a property; contained, the element's
     * box; else the viewport's height and the device's safe areas.
     * @returns {import("./sheet-client.js").Geometry}
     */
    _geometry() {
        if (this._geometryOverride) return { ...this._geometryOverride };
        if (this.contained) return { height: Math.round(this.offsetHeight || innerHeight), safeAreaTop: 0, safeAreaBottom: 0 };
        const style = getComputedStyle(this._probe);
        return {
            height: Math.round(innerHeight),
            safeAreaTop: Math.round(parseFloat(style.paddingTop) || 0),
            safeAreaBottom: Math.round(parseFloat(style.paddingBottom) || 0),
        };
    }

    /**
     * The preset's options named by attributes (kebab-case, parsed by the catalog's type) and
     * properties, and `fit`'s measured detent.
     * @param {PresetInfo} info
     */
    _optionsFor(info) {
        /** @type {Record<string, any>} */
        const options = {};
        for (const attr of Array.from(this.attributes)) {
            if (OWN.includes(attr.name) || attr.name.startsWith("aria-") || attr.name.startsWith("data-")) continue;
            const name = camel(attr.name);
            const spec = info.options[name];
            if (!spec) {
                console.warn(`<sheet-view>: ${info.name} has no option ${name} (GET /presets lists ${Object.keys(info.options).join(", ")})`);
                continue;
            }
            options[name] = parseOption(spec.type, attr.value);
        }
        for (const [name, value] of Object.entries(this._pendingOptions)) if (name in info.options) options[name] = value;
        if (this.hasAttribute("fit")) {
            if ("detents" in info.options) options.detents = { content: { height: this._contentHeight() } };
            else console.warn(`<sheet-view fit>: ${info.name} has no detents option; the sheet keeps the preset's detents`);
        }
        return options;
    }

    /** The content's natural height with the handle, points (what `fit` asks as a detent). */
    _contentHeight() {
        const slot = /** @type {HTMLSlotElement} */ (this._content.querySelector("slot"));
        let height = 0;
        for (const node of slot.assignedElements()) {
            if (node instanceof SheetView) continue; // a sheet stacked on this one is drawn on its own
            const r = node.getBoundingClientRect();
            const style = getComputedStyle(node);
            height += r.height + (parseFloat(style.marginTop) || 0) + (parseFloat(style.marginBottom) || 0);
        }
        const pad = getComputedStyle(this._content);
        return Math.ceil(height + this._handle.offsetHeight + (parseFloat(pad.paddingTop) || 0) + (parseFloat(pad.paddingBottom) || 0));
    }

    /**
     * The configuration of a new session at `detent` (or the attributes' start).
     * @param {PresetInfo} info @param {string | null | undefined} detent
     * @returns {SessionConfig}
     */
    _config(info, detent) {
        /** @type {SessionConfig} */
        const config = { preset: info.name, geometry: this._geometry(), clock: "client" };
        const options = this._optionsFor(info);
        if (Object.keys(options).length) config.options = options;
        if (detent) config.initialDetent = detent;
        const parent = this._parentView?.session;
        if (parent) config.parent = parent.id;
        return config;
    }

    async _start() {
        const generation = ++this._generation;
        try {
            // Stacked: created once the parent's session exists (its id is this one's `parent`).
            const parentView = this._parentView;
            if (parentView) {
                await parentView.ready;
                if (generation !== this._generation) return;
                this._stream?.close();
                const old = this.session;
                if (old && old.snapshot.parent !== parentView.session?.id) {
                    this.session = null;
                    old.delete().catch(() => {});
                }
            }
            const catalog = await this._catalog();
            const name = this.getAttribute("preset");
            const info = name ? catalog.find((p) => p.name === name) : catalog[0];
            if (!info) throw new Error(`no preset ${name} (GET /presets lists ${catalog.map((p) => p.name).join(", ")})`);
            this.presetInfo = info;
            this._defineOptionProperties(catalog);
            if (info.constraint === "offset") console.warn(`<sheet-view>: ${info.name} moves a cell, not a sheet; it is drawn as a sheet`);
            const open = this.getAttribute("detent") ?? (this.hasAttribute("open") ? info.showDefault : null);
            const suffix = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(36).padStart(2, "0")).join("");
            // A stacked sheet's id is its parent's, `~`, its own: deploy/'s routers hash an id up to
            // its first `~`, so a stack lives on one instance (docs/HTTP.md, "Stacks").
            /** @type {SheetSession | null | undefined} */
            const parentSession = parentView?.session;
            /** @type {string} */
            const id = parentSession ? `${parentSession.id}~${suffix}` : "view-" + suffix;
            /** @type {SheetSession} */
            const session = await this._clientFor().createSession(this._config(info, open), id);
            if (generation !== this._generation) { session.delete().catch(() => {}); return; }
            this.session = session;
            session.predicting = this._predicting;
            // What a 409 `covered` says: nothing moved (the client predicted nothing); the card is
            // drawn where it is, and the refusal is announced, not thrown at the page.
            session.onCovered = () => {
                this._announce("Covered by the sheet above it");
                if (!this._drag) this._animate();
            };
            if (parentView && parentSession) {
                session.recedeInto({ parent: { element: parentView._card, shade: parentView._shade, radius: parentView._ownRadius() } });
            }
            this._adopt(session.snapshot);
            this._emitResult(`PUT /sessions/${session.id}`, session.snapshot);
            this._openStream(generation);
            this._observeContent();
            if (session.snapshot.state !== "hidden") this._opened(false);
            else this._closed();
            this._resolveReady?.();
            this.dispatchEvent(new CustomEvent("ready"));
        } catch (error) {
            console.error("<sheet-view>:", error);
            this.setAttribute("data-error", String(/** @type {Error} */ (error).message ?? error));
            this._problem(error);
        }
    }

    /**
     * A `problem` event: sheetd (or the element) refused something; the detail has sheetd's code.
     * @param {unknown} error
     */
    _problem(error) {
        const e = /** @type {{code?: string, message?: string}} */ (error ?? {});
        /** @type {ProblemDetail} */
        const detail = { code: e.code ?? "error", message: String(e.message ?? error) };
        this.dispatchEvent(new CustomEvent("problem", { detail }));
    }

    /**
     * A `result` event: an answer of sheetd (a snapshot for the session's PUT).
     * @param {string} request @param {Result | Snapshot} result
     */
    _emitResult(request, result) {
        /** @type {ResultDetail} */
        const detail = { request, result };
        this.dispatchEvent(new CustomEvent("result", { detail }));
    }

    /** The session again with the attributes now (PUT, same id), at the detent it is at. */
    async _reconfigure() {
        const session = this.session;
        if (!session) return;
        const generation = ++this._generation;
        this._reconfiguring = true;
        const catalog = await this._catalog().finally(() => { this._reconfiguring = false; });
        const wanted = this._wantedDetent; // cleared by the reconfiguration that is not superseded
        const info = catalog.find((p) => p.name === (this.getAttribute("preset") ?? session.snapshot.preset)) ?? catalog[0];
        this.presetInfo = info;
        // The detent it is at; another preset's detents have other names: where the attributes open it.
        const opening = this.getAttribute("detent") ?? (this.hasAttribute("open") ? info.showDefault : null);
        const keep = wanted ?? (session.snapshot.state === "hidden" ? null
            : info.name === session.snapshot.preset || (this._target ?? "") in info.detents ? this._target : opening ?? info.showDefault);
        let snapshot;
        try {
            try {
                snapshot = await session.replace(this._config(info, keep));
            } catch (error) {
                if (/** @type {any} */ (error).code !== "unknown-detent") throw error;
                snapshot = await session.replace(this._config(info, info.showDefault));
            }
        } catch (error) {
            if (generation === this._generation) this._problem(error); // the session goes on as it was
            return;
        }
        if (generation !== this._generation) return;
        this._wantedDetent = null;
        this._adopt(snapshot);
        this._emitResult(`PUT /sessions/${session.id}`, snapshot);
        this._openStream(generation);
        if (snapshot.state !== "hidden" && !this._open) this._opened(false);
        else if (snapshot.state === "hidden" && this._open) this._closed();
    }

    /** @param {number} generation */
    _openStream(generation) {
        this._stream?.close();
        const session = /** @type {SheetSession} */ (this.session);
        this._stream = session.frames({
            onSettled: (s) => { if (generation === this._generation) this._settled(s); },
            onSnapshot: (s) => { if (generation === this._generation && !this._drag) this._adopt(s); },
            onClosed: () => { if (generation === this._generation) this._start(); },
        }, { fps: 60 });
    }

    /** Geometry, layout: the viewport changed (rotation, resize, the keyboard). */
    _viewportChanged() {
        const session = this.session;
        if (!session || this._drag) return;
        const geometry = this._geometry();
        const g = session.snapshot.geometry;
        const layout = /** @type {any} */ (session).layout;
        if (typeof layout === "function" && session.snapshot.layoutLaw) {
            // sheet-client.js with layout events: the keyboard and the content height go to sheetd.
            // The page's keyboard covers the viewport, not a geometry of the element's own.
            const vv = this._geometryOverride || this.contained ? null : visualViewport;
            const keyboardInset = vv ? Math.max(0, Math.round(innerHeight - vv.height - vv.offsetTop)) : 0;
            layout.call(session, { keyboardInset, contentHeight: this._contentHeight(), geometry }).catch(() => {});
            return;
        }
        if (geometry.height !== g.height || geometry.safeAreaTop !== g.safeAreaTop || geometry.safeAreaBottom !== g.safeAreaBottom) {
            this._reconfigure();
        }
    }

    _observeContent() {
        if (this._contentObserver) return;
        let last = 0;
        this._contentObserver = new ResizeObserver(() => {
            const height = this._contentHeight();
            if (Math.abs(height - last) < 1) return;
            const first = last === 0;
            last = height;
            this._contentMode();
            if (first) return;
            if (this.hasAttribute("fit")) this._reconfigure();
            else if (typeof (/** @type {any} */ (this.session))?.layout === "function" && this.session?.snapshot.layoutLaw) this._viewportChanged();
        });
        const slot = /** @type {HTMLSlotElement} */ (this._content.querySelector("slot"));
        for (const node of slot.assignedElements()) if (!(node instanceof SheetView)) this._contentObserver.observe(node);
    }

    /** @type {ResizeObserver | undefined} */
    _contentObserver;

    // ------------------------------------------------------------ drawing

    /** @type {{constant: number, alpha: number}} */
    _drawn = { constant: 0, alpha: 0 };
    _backdropOpacity = 1;

    /**
     * The card's top edge in the viewport for a constant, by the preset's constraint, px.
     * @param {Snapshot} s @param {number} c
     */
    _top(s, c) {
        switch (s.constraint) {
            case "top": return s.geometry.safeAreaTop + c; // card top to the safe area's top
            case "bottom": return s.geometry.height + c - this._height(s); // card bottom to the view's bottom
            default: return c; // frameY: the card's origin; offset: drawn the same way
        }
    }

    /**
     * The card's height for the session's detents, px.
     * @param {Snapshot} s
     */
    _height(s) {
        const values = Object.values(s.detents);
        switch (s.constraint) {
            case "bottom": return s.detents.hidden ?? Math.max(...values); // C = h·cardHeightRatio; hidden = C
            case "top": return s.geometry.height - s.geometry.safeAreaTop - Math.min(...values);
            default: return s.geometry.height;
        }
    }

    /**
     * @param {number} constant @param {number} alpha
     * @param {number} [progress] @param {string} [motion] @param {number} [time] (what `frame` reports)
     */
    _draw(constant, alpha, progress, motion = "rest", time = clientTime()) {
        const session = /** @type {SheetSession} */ (this.session);
        const s = session.snapshot;
        this._drawn = { constant, alpha };
        // Where the card is: `translate`, so that `transform` stays free for what a sheet stacked
        // on this one draws (its recession composes after the position, about the card's own box).
        this._card.style.setProperty("translate", `0 ${this._top(s, constant)}px`);
        // Stacked: the parent drawn by this card's recede law at the constant drawn here, on the same frame.
        if (s.parent && session.recedeTargets.parent) session.drawRecession(constant);
        this._backdrop.style.opacity = String(alpha * this._backdropOpacity);
        this._backdrop.classList.toggle("on", alpha > 0.01);
        /** @type {FrameDetail} */
        const detail = { constant, dimmerAlpha: alpha, progress: progress ?? progressOf(s, constant), motion, time };
        this.dispatchEvent(new CustomEvent("frame", { detail }));
    }

    /**
     * Lays the card out for a snapshot and draws it where it is.
     * @param {Snapshot} s
     */
    _adopt(s) {
        const session = /** @type {SheetSession} */ (this.session);
        if (s !== session.snapshot) session.snapshot = { ...session.snapshot, ...s };
        const snapshot = session.snapshot;
        this._card.style.height = `${this._height(snapshot) + 60}px`; // 60 px below: room for a rubber band up
        this._card.style.paddingBottom = "60px";
        this._card.style.setProperty("--sab", `${snapshot.geometry.safeAreaBottom}px`);
        // read once a layout, not every frame: --sheet-backdrop-opacity scales the engine's dimmer alpha
        this._backdropOpacity = Number(getComputedStyle(this).getPropertyValue("--sheet-backdrop-opacity")) || 1;
        this._target = snapshot.state === "hidden" ? "hidden" : snapshot.detent;
        this._draw(snapshot.constant, snapshot.dimmerAlpha, snapshot.progress);
        this._state(snapshot.state, snapshot.detent, snapshot.dimmerAlpha);
        this._label();
    }

    /** Draws the client's timeline every frame while the card moves. */
    _animate() {
        if (this._frame) return;
        const tick = (/** @type {number} */ ts) => {
            this._frame = 0;
            const session = this.session;
            if (!session) return;
            const c = session.at(ts / 1000);
            if (!this._reducedMotion.matches || c.motion === "drag" || c.motion === "rest") this._draw(c.constant, c.dimmerAlpha, c.progress, c.motion, ts / 1000);
            else if (this._jumpTo) this._draw(this._jumpTo.constant, this._jumpTo.alpha, undefined, "jump", ts / 1000);
            if (session.moving || this._drag) {
                this.setAttribute("data-moving", "");
                this._frame = requestAnimationFrame(tick);
            } else {
                this.removeAttribute("data-moving");
                this._jumpTo = null;
                const pending = this._pendingSettled;
                this._pendingSettled = null;
                if (pending) this._settled(pending);
            }
        };
        this._frame = requestAnimationFrame(tick);
    }

    /**
     * The state attributes, the modality, the handle's words.
     * @param {string} state @param {string | null} detent @param {number} alpha
     */
    _state(state, detent, alpha) {
        this.setAttribute("data-state", state);
        if (detent) this.setAttribute("data-detent", detent); else this.removeAttribute("data-detent");
        this._setModal(state !== "hidden" && alpha > 0.01);
        this._contentMode();
        const where = state === "hidden" ? "hidden" : this._target ?? detent ?? state;
        this._handle.setAttribute("aria-label", `Sheet: ${where}. Press to move it, arrows step between detents`);
    }

    /** @param {boolean} modal */
    _setModal(modal) {
        // Contained: modal in its container (the backdrop takes its taps); the page around stays usable.
        modal = modal && !this.contained;
        this._modal = modal;
        if (modal) this.setAttribute("aria-modal", "true"); else this.removeAttribute("aria-modal");
    }

    /** The dialog's name: `label`, or the content's first heading. */
    _label() {
        const label = this.getAttribute("label");
        if (label) {
            this.setAttribute("aria-label", label);
            this.removeAttribute("aria-labelledby");
            return;
        }
        const heading = Array.from(this.querySelectorAll("h1, h2, h3, h4, h5, h6, [role=heading]")).find((h) => h.closest("sheet-view") === this);
        if (heading) {
            if (!heading.id) heading.id = `sheet-label-${Math.random().toString(36).slice(2, 8)}`;
            this.setAttribute("aria-labelledby", heading.id);
        } else if (!this.hasAttribute("aria-label")) {
            this.setAttribute("aria-label", "Sheet");
        }
    }

    /** The card's own top corner radius, px, as styled (before a recession draws over it). */
    _ownRadius() {
        if (this._radius === null) {
            const inline = this._card.style.borderTopLeftRadius;
            this._card.style.borderTopLeftRadius = "";
            this._radius = parseFloat(getComputedStyle(this._card).borderTopLeftRadius) || 0;
            this._card.style.borderTopLeftRadius = inline;
        }
        return this._radius;
    }

    /** No sheet stacked on this one draws it any more: its own transform, corners and shade. */
    _unrecede() {
        const style = this._card.style;
        style.transform = "";
        style.transformOrigin = "";
        style.borderTopLeftRadius = "";
        style.borderTopRightRadius = "";
        this._shade.style.opacity = "0";
    }

    /** @type {() => void} the parent has a session (again): a stacked sheet is created on it */
    _onParentReady = () => {
        const parent = this._parentView?.session;
        if (parent && this.session && this.session.snapshot.parent !== parent.id) this._start();
    };

    /**
     * A cascade (this sheet's dismiss closed the open sheets stacked above it, sheetd's answer
     * lists them): each of those plays the dismiss sheetd started for it (sheet-client.js follows
     * it, from the same instant); here they are drawn.
     * @param {string[]} ids
     */
    _cascaded(ids) {
        for (const view of Array.from(this.querySelectorAll("sheet-view"))) {
            if (view instanceof SheetView && view.session && ids.includes(view.session.id)) {
                view._target = "hidden";
                view._animate();
            }
        }
    }

    /** @param {string} text */
    _announce(text) {
        this._live.textContent = text;
    }

    // ------------------------------------------------------------ results and settles

    /**
     * Runs a call; a session that expired is created afresh.
     * @param {() => Promise<Result>} call @param {string} request what `result` names it
     */
    async _act(call, request) {
        this._animate();
        try {
            const result = await call();
            this._result(result, request);
            return result;
        } catch (error) {
            const e = /** @type {any} */ (error);
            if (e.code === "session-not-found") this._start();
            else if (e.code !== "conflict" && e.code !== "covered") { console.error("<sheet-view>:", e); this._problem(e); } // covered: onCovered said so
            return null;
        }
    }

    /** @param {Result} r @param {string} request */
    _result(r, request) {
        this._emitResult(request, r);
        if (r.cascade?.length) this._cascaded(r.cascade);
        if (r.animation) {
            this._target = r.animation.detent;
            this._jumpTo = { constant: r.animation.to, alpha: r.animation.toAlpha };
            this._state(r.state, r.detent, r.animation.toAlpha);
            if (!r.animation.dismiss && !this._open) this._opened(true);
        }
        if (r.snap) {
            /** @type {SnapDetail} */
            const detail = { detent: r.snap.detent, reason: r.snap.reason, dismiss: r.snap.dismiss, constant: r.snap.constant };
            this.dispatchEvent(new CustomEvent("snap", { detail }));
        }
        this._animate();
    }

    /** @param {Snapshot} s */
    _settled(s) {
        const session = this.session;
        if (!session) return;
        if (this._drag) return; // the grab superseded it
        if (session.moving) {
            this._pendingSettled = s; // the card still plays here: it rests on this clock first
            this._animate();
            return;
        }
        this._settledCount += 1;
        this.setAttribute("data-settled", String(this._settledCount));
        this._target = s.state === "hidden" ? "hidden" : s.detent;
        this._draw(s.constant, s.dimmerAlpha, s.progress);
        this._state(s.state, s.detent, s.dimmerAlpha);
        this._announce(s.state === "hidden" ? "Sheet closed" : `Sheet at ${s.detent}`);
        /** @type {SettleDetail} */
        const detail = { state: s.state, detent: s.detent };
        this.dispatchEvent(new CustomEvent("settle", { detail }));
        if (s.state === "hidden") {
            this._closed();
            this.dispatchEvent(new CustomEvent("dismiss"));
        } else if (!this._open) {
            this._opened(true);
        }
    }

    // ------------------------------------------------------------ focus

    _rememberFocus() {
        const active = document.activeElement;
        if (active && active !== document.body && !this.contains(active)) this._returnFocus = active;
    }

    /** @param {boolean} focus whether to move focus in (an open at load leaves the page's focus alone) */
    _opened(focus) {
        this._open = true;
        // Shown from now until it settles hidden (a hidden card takes no focus, and is not read).
        this.removeAttribute("data-closed");
        this.removeAttribute("aria-hidden");
        if (focus && !this.contains(document.activeElement) && this.shadowRoot?.activeElement == null) {
            this._handle.focus({ preventScroll: true });
            // A card shown in this task may not take focus before its style is computed: once more
            // on the next frame, if focus is not in the sheet by then.
            if (!this._focusInside()) {
                requestAnimationFrame(() => {
                    if (this._open && !this.contains(document.activeElement) && this.shadowRoot?.activeElement == null) {
                        this._handle.focus({ preventScroll: true });
                    }
                });
            }
        }
    }

    /** Whether focus is on the sheet's handle or in its content. */
    _focusInside() {
        return this.contains(document.activeElement) || this.shadowRoot?.activeElement != null;
    }

    _closed() {
        this._open = false;
        this.setAttribute("data-closed", "");
        this.setAttribute("aria-hidden", "true");
        const back = this._returnFocus;
        this._returnFocus = null;
        if (this.contains(document.activeElement) || this.shadowRoot?.activeElement) {
            if (back instanceof HTMLElement && back.isConnected) back.focus({ preventScroll: true });
            else /** @type {HTMLElement} */ (document.activeElement)?.blur?.(); // nothing to return to: the page's start
        }
    }

    /** The elements of the sheet a Tab reaches, in order: the handle, the scrolling content, the content's. */
    _tabbable() {
        const inside = Array.from(this.querySelectorAll(FOCUSABLE)).filter(
            /** @returns {e is HTMLElement} */ (e) => e instanceof HTMLElement && !e.closest("[inert]") && e.closest("sheet-view") === this
                && e.getClientRects().length > 0);
        return [this._handle, ...(this._content.hasAttribute("tabindex") ? [this._content] : []), ...inside];
    }

    /**
     * The content's scrolling: focusable when it scrolls (a keyboard scrolls it too), and scrolled
     * natively by touch where sheetd would not take the drag (at the top-most detent, on a preset
     * without the `scrollHandOff` capability); elsewhere a drag on it is the sheet's.
     */
    _contentMode() {
        const content = this._content;
        const scrolls = content.scrollHeight > content.clientHeight + 1;
        if (scrolls) content.setAttribute("tabindex", "0"); else content.removeAttribute("tabindex");
        const s = this.session?.snapshot;
        const caps = /** @type {any} */ (this.presetInfo)?.capabilities ?? [];
        const atTop = !!s && s.state === "resting" && Math.abs(s.constant - Math.min(...Object.values(s.detents))) < 0.01;
        content.classList.toggle("native", scrolls && atTop && !caps.includes("scrollHandOff"));
    }

    // ------------------------------------------------------------ input

    _bind() {
        this._onResize = debounce(() => this._viewportChanged(), 150);
        /** @param {KeyboardEvent} e */
        this._onDocumentKey = (e) => {
            if (!this.session || this.session.snapshot.state === "hidden" && !this._open) return;
            // The top-most sheet takes Escape and Tab: a covered one leaves them to the sheet above it.
            if (e.defaultPrevented || this.covered) return;
            // Contained, the page around the sheet stays usable: Escape in one of its fields is the field's.
            const field = this.contained && e.target instanceof Element && !this.contains(e.target) && e.target !== this
                && e.target.closest("input, select, textarea, [contenteditable]");
            if (e.key === "Escape" && this._open && !field) {
                e.preventDefault();
                this.dismiss();
            } else if (e.key === "Tab" && this._modal) {
                const list = this._tabbable();
                const active = this.shadowRoot?.activeElement ?? document.activeElement;
                const i = list.indexOf(/** @type {HTMLElement} */ (active));
                if (e.shiftKey && i <= 0) { e.preventDefault(); list[list.length - 1].focus(); }
                else if (!e.shiftKey && (i === list.length - 1 || i < 0)) { e.preventDefault(); list[0].focus(); }
            }
        };
        /** @param {FocusEvent} e */
        this._onFocusIn = (e) => {
            // Kept inside while modal: focus that lands outside (a click, a script) comes back.
            if (this._modal && this._open && !this.covered && e.target instanceof Node && !this.contains(e.target) && e.target !== this) {
                this._handle.focus({ preventScroll: true });
            }
        };
        this._handle.addEventListener("keydown", (e) => {
            if (e.altKey || e.metaKey || e.ctrlKey) return;
            const s = this.session?.snapshot;
            if (!s || this.covered) return;
            const visible = Object.entries(s.detents).filter(([n]) => n !== "hidden").sort((a, b) => a[1] - b[1]);
            if (e.key === "ArrowUp") this.step(-1);
            else if (e.key === "ArrowDown") this.step(+1);
            else if (e.key === "Home") this.show(visible[0][0]);
            else if (e.key === "End") this.show(visible[visible.length - 1][0]);
            else return;
            e.preventDefault();
        });
        // Enter, Space or a tap on the handle: the next detent up, or from the top-most back down to the lowest.
        this._handle.addEventListener("click", (e) => {
            if (performance.now() - this._lastDragEnd < 400 && e.detail > 0) return; // the end of a drag, not a press
            const s = this.session?.snapshot;
            if (!s || this.covered) return;
            const visible = Object.entries(s.detents).filter(([n]) => n !== "hidden").sort((a, b) => a[1] - b[1]);
            const here = s.detents[this._target ?? ""] ?? this._drawn.constant;
            if (visible.length && here <= visible[0][1] + 0.01) this.show(visible[visible.length - 1][0]);
            else this.step(-1);
        });
        // A tap on the backdrop (pressed and released on it: a click may not follow a touch the
        // browser took for the start of a gesture) dismisses, where the engine dims the page.
        /** @type {number | null} */
        let pressed = null;
        this._backdrop.addEventListener("pointerdown", (e) => { pressed = e.pointerId; });
        this._backdrop.addEventListener("pointerup", (e) => {
            if (pressed === e.pointerId && this._drawn.alpha > 0.01 && !this.covered) this.dismiss();
            pressed = null;
        });
        this._backdrop.addEventListener("pointercancel", () => { pressed = null; });
        this._card.addEventListener("pointerdown", (e) => this._down(e));
        this._card.addEventListener("pointermove", (e) => this._move(e));
        this._card.addEventListener("pointerup", (e) => this._up(e, "ended"));
        this._card.addEventListener("pointercancel", (e) => this._up(e, "cancelled"));
        this._card.addEventListener("lostpointercapture", (e) => { if (this._drag?.pointerId === e.pointerId) this._up(e, "ended"); });
        // A wheel over the content scrolls it (native); over the handle it does nothing.
    }

    /** @type {() => void} */ _onResize = () => {};
    /** @type {(e: KeyboardEvent) => void} */ _onDocumentKey = () => {};
    /** @type {(e: FocusEvent) => void} */ _onFocusIn = () => {};

    /** @param {PointerEvent} e */
    _down(e) {
        const session = this.session;
        if (!session || this._drag || (e.pointerType === "mouse" && e.button !== 0)) return;
        // A press on a sheet stacked on this one (nested in its content) is that sheet's.
        if (e.composedPath().find((n) => n instanceof SheetView) !== this) return;
        // Covered: an open sheet stacked on this one holds it; sheetd would refuse the drag (409
        // `covered`), so none is sent and the card stays where it is drawn.
        if (this.covered) {
            e.preventDefault();
            return;
        }
        const inContent = e.composedPath().includes(this._content);
        // A press on a control of the content stays the control's (a button, a field, a link).
        if (inContent && e.target instanceof Element && e.target.closest("a, button, input, select, textarea, label, [contenteditable]")) return;
        const scroller = inContent && this._content.scrollHeight > this._content.clientHeight + 1;
        // sheetd's scroll hand-off (a preset with the `scrollHandOff` capability) lets the content
        // take a drag that began with the card resting at the top-most detent; elsewhere the whole
        // card is the sheet's.
        const caps = /** @type {any} */ (this.presetInfo)?.capabilities ?? [];
        const s = session.snapshot;
        const topMost = Math.min(...Object.values(s.detents));
        const handOff = scroller && caps.includes("scrollHandOff") && !session.moving && s.state === "resting"
            && Math.abs(s.constant - topMost) < 0.01;
        if (scroller && !handOff && !caps.includes("scrollHandOff") && !session.moving && Math.abs(s.constant - topMost) < 0.01) {
            return; // no hand-off: at the top, the content scrolls natively
        }
        e.preventDefault();
        this._card.setPointerCapture(e.pointerId);
        const t = eventTime(e);
        this._pendingSettled = null;
        this._drag = { pointerId: e.pointerId, startY: e.clientY, translation: 0, moved: false, scroller, scrollTop: this._content.scrollTop, lastY: e.clientY, handOff };
        this._rememberFocus();
        this._drag.scale = this.scale;
        session.began({ time: t }).then((r) => this._result(r, "POST …/pan began"), () => {});
        this._animate();
    }

    /** @param {PointerEvent} e */
    _move(e) {
        const drag = this._drag;
        const session = this.session;
        if (!drag || !session || e.pointerId !== drag.pointerId) return;
        // Every move the browser saw, at its own time (a busy page gets a frame's moves as one event).
        const moves = e.getCoalescedEvents?.() ?? [];
        for (const move of moves.length > 0 ? moves : [e]) {
            const scale = drag.scale ?? 1; // screen px per point
            const translation = Math.round(((move.clientY - drag.startY) / scale) * 100) / 100; // points
            if (Math.abs(translation) > 3) drag.moved = true;
            /** @type {{time: number, scrollOffset?: number}} */
            const options = { time: eventTime(move) };
            if (drag.handOff) {
                // The content takes the finger while it is scrolled or the finger goes up (the rule
                // of docs/PHYSICS.md's scroll hand-off); sheetd's answer (`consumer`) is checked against it.
                // Decided on exactly what sheetd is sent: the offset as rounded, the translation's fall.
                const dy = (move.clientY - drag.lastY) / scale;
                const content = this._content;
                options.scrollOffset = Math.max(0, Math.round(content.scrollTop * 100) / 100);
                const drawnByContent = options.scrollOffset > 0 || translation < drag.translation;
                if (drawnByContent) content.scrollTop = Math.max(0, content.scrollTop - dy);
                const time = options.time;
                session.changed(translation, options).then((r) => {
                    this._emitResult("POST …/pan changed", r);
                    // A batch's answer is its last event's: only that event is compared with it.
                    const mine = Math.abs(r.time - time) < 2e-6;
                    if (mine && r.consumer && (r.consumer === "scroll") !== drawnByContent) this.handOffMismatches += 1;
                }, () => {});
            } else {
                session.changed(translation, options).then((r) => this._emitResult("POST …/pan changed", r), () => {});
            }
            drag.translation = translation;
            drag.lastY = move.clientY;
        }
        this._animate();
    }

    /** @param {PointerEvent} e @param {"ended" | "cancelled"} phase */
    _up(e, phase) {
        const drag = this._drag;
        const session = this.session;
        if (!drag || !session || e.pointerId !== drag.pointerId) return;
        this._drag = null;
        if (drag.moved) this._lastDragEnd = performance.now();
        const t = eventTime(e);
        // No velocity: sheetd (and the client, for its prediction) estimate it from the samples.
        const call = phase === "ended" ? session.ended(drag.translation, { time: t }) : session.cancelled({ time: t });
        call.then((r) => this._result(r, `POST …/pan ${phase}`), (error) => { if (error?.code === "session-not-found") this._start(); });
        this._animate();
    }

    // ------------------------------------------------------------ options as properties

    /**
     * Every option of every preset in the catalog becomes a property (camelCase): reading it gives
     * the session's effective value, setting it reconfigures the session.
     * @param {PresetInfo[]} catalog
     */
    _defineOptionProperties(catalog) {
        for (const info of catalog) {
            for (const [name, spec] of Object.entries(info.options)) {
                if (name in this) continue;
                Object.defineProperty(this, name, {
                    configurable: true,
                    enumerable: true,
                    get: () => this.session?.snapshot.options?.[name] ?? spec.default,
                    set: (value) => {
                        this._pendingOptions[name] = value;
                        if (typeof value !== "object" || value === null) this.setAttribute(kebab(name), String(value));
                        else this.setAttribute(kebab(name), JSON.stringify(value));
                        this._reconfigure();
                    },
                });
            }
        }
        // Options set as properties before the catalog was read.
        for (const [name, value] of Object.entries(this._pendingOptions)) if (typeof value !== "object") this.setAttribute(kebab(name), String(value));
    }

    /** Properties set on the element before the class was defined (the upgrade pattern). */
    _upgradeProperties() {
        for (const name of ["preset", "detent", "geometry", "scale", "predicting", "latency", "contained"]) {
            if (Object.prototype.hasOwnProperty.call(this, name)) {
                const value = /** @type {any} */ (this)[name];
                delete (/** @type {any} */ (this))[name];
                /** @type {any} */ (this)[name] = value;
            }
        }
    }
}

/**
 * An attribute's text as an option of the catalog's type ("number", "boolean", "string",
 * "object", or a union such as "number|null" or "string|object").
 * @param {string} type @param {string} text
 */
function parseOption(type, text) {
    const types = type.split("|");
    if (types.includes("null") && (text === "null" || text === "")) return null;
    if (types.includes("boolean")) return text !== "false";
    if (types.includes("number") && text.trim() !== "" && Number.isFinite(Number(text))) return Number(text);
    if (types.includes("object") && /^\s*[[{]/.test(text)) return JSON.parse(text);
    return text;
}

/**
 * Progress (0 at the lowest or hidden detent, 1 at the top-most) where nothing else gives it.
 * @param {Snapshot} s @param {number} c
 */
function progressOf(s, c) {
    const values = Object.values(s.detents);
    const top = Math.min(...values), low = s.detents.hidden ?? Math.max(...values);
    return low === top ? 1 : (low - c) / (low - top);
}

/**
 * An event's time on the client clock (event.timeStamp shares performance.now()'s origin).
 * @param {Event} e
 */
const eventTime = (e) => (e.timeStamp > 0 ? e.timeStamp / 1000 : clientTime());

/**
 * @param {() => void} fn @param {number} ms
 * @returns {() => void}
 */
function debounce(fn, ms) {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    return () => {
        clearTimeout(timer);
        timer = setTimeout(fn, ms);
    };
}

if (!customElements.get("sheet-view")) customElements.define("sheet-view", SheetView);
