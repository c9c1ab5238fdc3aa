// Types of sheet-view.js, the <sheet-view> custom element (for editors and TypeScript; the module
// itself carries the same in JSDoc, checked by IntegrationTests/types-check).
//
//   import type { SheetView } from "./sheet-view.js";
//   const sheet = document.querySelector("sheet-view")!;      // SheetView, by the tag name map
//   sheet.addEventListener("snap", (e) => console.log(e.detail.reason));

import type { SheetSession, PresetInfo, PredictionStats, Result, Snapshot, Geometry } from "./sheet-client.js";

/** The detail of a `snap` event: where a release, show or dismiss sends the card, and why. */
export interface SnapDetail {
    detent: string;
    reason: string;
    dismiss: boolean;
    constant: number;
}

/** The detail of a `settle` event: where the card came to rest. */
export interface SettleDetail {
    state: string;
    detent: string | null;
}

/** The detail of a `frame` event: a position the element drew (every frame while the card moves). */
export interface FrameDetail {
    constant: number;
    dimmerAlpha: number;
    progress: number;
    /** The client's motion: `rest`, `drag`, `hold`, `coast`, `animation`; `jump` under reduced motion. */
    motion: string;
    /** On the client clock, seconds. */
    time: number;
}

/** The detail of a `result` event: one answer of sheetd (the session's snapshot for its PUT). */
export interface ResultDetail {
    /** What was asked, e.g. `POST …/pan ended`, `PUT /sessions/ID`. */
    request: string;
    result: Result | Snapshot;
}

/** The detail of a `problem` event: sheetd refused a configuration or an action. */
export interface ProblemDetail {
    /** sheetd's problem code (`unknown-option`, `unknown-detent`, …). */
    code: string;
    message: string;
}

/** The events a <sheet-view> dispatches, by name. */
export interface SheetViewEventMap extends HTMLElementEventMap {
    snap: CustomEvent<SnapDetail>;
    settle: CustomEvent<SettleDetail>;
    dismiss: CustomEvent<undefined>;
    ready: CustomEvent<undefined>;
    frame: CustomEvent<FrameDetail>;
    result: CustomEvent<ResultDetail>;
    problem: CustomEvent<ProblemDetail>;
}

/**
 * A bottom sheet on sheetd's physics. Attributes: `preset`, `detent`, `open`, `label`, `fit`,
 * `server`, and every option of the preset in kebab-case (the catalog, `GET /presets`, says
 * which); the options are also properties, in camelCase, once the catalog is read. A <sheet-view>
 * nested in another's content is stacked on it (sheetd's `parent`): the parent recedes by the
 * child's recede law while the child is open.
 */
export declare class SheetView extends HTMLElement {
    static readonly observedAttributes: string[];
    /** The session (null until `ready`). */
    session: SheetSession | null;
    /** The preset's catalog entry (null until read). */
    presetInfo: PresetInfo | null;
    /** Resolves once the session exists and its frame stream is open. */
    readonly ready: Promise<void>;
    /** Scroll hand-off answers that disagreed with what the element drew (there should be none). */
    handOffMismatches: number;
    /** The preset's name. */
    preset: string;
    /** The detent the card rests at or heads to; setting it moves the card there. */
    detent: string | null;
    /** `hidden`, `resting`, `dragging` or `animating`; "" before `ready`. */
    readonly state: string;
    /** The session's effective options; setting some replaces the session with them. */
    options: Record<string, unknown>;
    /** The client's prediction counters (with a stack's `transforms` and `transformMismatches`). */
    readonly stats: PredictionStats | null;
    /** The <sheet-view> this one is stacked on: the one whose content holds it (null: a root sheet). */
    readonly parentView: SheetView | null;
    /** Whether an open sheet is stacked on this one (it recedes, takes no drag, key or tap; dismiss() closes the stack). */
    readonly covered: boolean;
    /**
     * A geometry of the element's own, points (a device frame drawn in a page); the session is
     * re-created with it at the detent it is at. null: the viewport's (or, contained, the element's box).
     */
    geometry: Geometry | null;
    /** Screen px per point (pointer movements are divided by it); unless set, measured from the element's box. */
    scale: number;
    /** Placed in its container (the `contained` attribute): geometry from its box, modal in the container only. */
    contained: boolean;
    /** Draw from the drag and release laws (default true); false: the card waits for each answer. */
    predicting: boolean;
    /** A simulated round trip added to the element's requests, ms (the `latency` attribute). */
    latency: number;
    /** Any option of the catalog, by its camelCase name. */
    [option: string]: unknown;

    /** Presents the sheet, or moves it to `detent`. */
    show(detent?: string): Promise<Result | null>;
    /** Dismisses the sheet (to the preset's dismissTarget); a covered one closes with the sheets stacked on it (cascade). */
    dismiss(): Promise<Result | null>;
    /** One detent up (-1) or down (+1); down from the lowest visible one dismisses where the preset can hide. */
    step(direction: number): Promise<Result | null>;

    addEventListener<K extends keyof SheetViewEventMap>(
        type: K, listener: (this: SheetView, ev: SheetViewEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
    addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
    removeEventListener<K extends keyof SheetViewEventMap>(
        type: K, listener: (this: SheetView, ev: SheetViewEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
    removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

declare global {
    interface HTMLElementTagNameMap {
        "sheet-view": SheetView;
    }
}
