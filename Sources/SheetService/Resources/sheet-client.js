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
// refuses a time that goes backwards, and `changed` must follow `began`). On a client-clock
// session every pan event is delivered: events made while a request is in flight wait and leave
// together as the next batch (`{"events": [...]}`), so sheetd's velocity estimate sees every
// sample whatever the round trip. (A server-clock session cannot take batches: there, queued
// `changed` events are coalesced into the latest.) Times default to this page's monotonic
// clock, `performance.now() / 1000` seconds, and never decrease.
//
// Prediction (client-clock sessions): every snapshot carries the session's drag law (`dragLaw`)
// and the answer to `began` the drag's segment (`drag`); `sheet.predict(translation)` evaluates
// them, which is exactly what sheetd will answer, so a front end draws the card on the pointer
// event that moved it. Every snapshot also carries the release law (`releaseLaw`): at the
// release the client estimates the velocity from the samples it sent, as sheetd does, evaluates
// the law and starts sheetd's animation on the same frame, in closed form; the answer confirms
// it (or its frames, `?frames=`, replace it, blended). `sheet.at(time)` is where to draw the card
// at any instant. `sheet.stats` counts predictions and mismatches.

/**
 * @typedef {string} PresetName  A preset's name, one of those `GET /presets` lists (the catalog; no copy here)
 * @typedef {"top" | "bottom" | "frameY" | "offset"} Constraint
 * @typedef {"hidden" | "resting" | "dragging" | "animating"} SheetState
 * @typedef {"began" | "changed" | "ended" | "cancelled"} PanPhase
 *
 * @typedef {object} Geometry  The container, in points.
 * @property {number} [height]          default 844
 * @property {number} [safeAreaTop]     default 47
 * @property {number} [safeAreaBottom]  default 34
 * @property {number} [width]           a left or right sheet's main dimension (required by them)
 * @property {number} [safeAreaLeft]    default 0
 * @property {number} [safeAreaRight]   default 0
 *
 * @typedef {Geometry & {height: number, safeAreaTop: number, safeAreaBottom: number}} MeasuredGeometry  A geometry as answered (the side members where given).
 *
 * @typedef {"bottom" | "top" | "left" | "right"} Edge  The screen edge a card comes from (fluid's `edge`).
 *
 * @typedef {object} SessionConfig  Body of PUT /sessions/{id}; every field optional.
 * @property {PresetName} [preset]        default "facebook"
 * @property {Geometry} [geometry]
 * @property {Record<string, any>} [options]  the preset's own options (GET /presets lists them)
 * @property {string} [initialDetent]     start resting there instead of hidden
 * @property {"server" | "client"} [clock]  "client": every mutating request carries `time`
 * @property {number} [keyboardInset]     fluid: points the keyboard covers from the bottom (POST /sessions)
 * @property {number} [contentHeight]     fluid: the content's height, points, for `content` detents (POST /sessions)
 * @property {string} [parent]          the session this one is stacked on (same clock): covered while this card is open, drawn by its `recedeLaw`
 * @property {boolean} [reducedMotion]  every motion of the session jumps (the platform's reduce-motion setting)
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
 * @property {MeasuredGeometry} geometry
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
 * @property {DragLaw} dragLaw
 * @property {ReleaseLaw} releaseLaw
 * @property {DragSegment} [drag]  while dragging
 * @property {number} [keyboardInset]   fluid
 * @property {number | null} [contentHeight]  fluid
 * @property {string[]} [unreachable]   fluid: detents the content cannot reach on this layout
 * @property {number} [revision]        the layout revision the laws belong to
 * @property {LayoutLaw} [layoutLaw]    fluid: where the detents are on any layout
 * @property {{interactiveFrom: number}} [modality]  where the page behind takes input (constant ≥ interactiveFrom)
 * @property {boolean} [backgroundInteractive]  whether it does with the card here
 * @property {boolean} [reducedMotion]  present (true) while every motion of the session jumps
 * @property {RecedeLaw} [recedeLaw]  what the card does to what lies beneath it (stacks)
 * @property {SheetTransform} [parentTransform]  a stacked card: how it draws its parent now
 * @property {SheetTransform} [backdropTransform]  a root card whose law has `backdrop`: how it draws the page behind
 * @property {string} [parent]     the session this one is stacked on
 * @property {string} [coveredBy]  while an open card stacked on this one covers it: that card's id
 * @property {SheetTransform} [transform]  with `coveredBy`: how the covering card draws this one now
 *
 * @typedef {object} Snap  Where a release (or show/dismiss) sends the card, and why.
 * @property {string} detent
 * @property {number} constant
 * @property {boolean} dismiss
 * @property {string} reason
 * @property {number} [projected]  fluid only
 * @property {boolean} [reducedMotion]  whether the motion to it jumps by reduced motion (the request's own setting, else the session's)
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
 * @property {ScrollFling} [scrollFling]  a release that handed the card's momentum to the content
 * @property {boolean} [backgroundInteractive]  whether the page behind takes input with the card here
 * @property {string} [announcement]  step results: what a screen reader says
 * @property {string} [value]  step results: the sheet's accessibility value
 * @property {SheetTransform} [parentTransform]  a stacked card: its `recedeLaw` at `constant`, for its parent
 * @property {SheetTransform} [backdropTransform]  a root card with `recedeLaw.backdrop`: for the page behind
 * @property {string[]} [cascade]  a dismiss with `cascade`: the open cards stacked on this one it closed with it, top-most first
 * @property {RecedeLaw} [recedeLaw]  with the laws
 * @property {boolean} [reducedMotion]  after a layout event: present (true) while the session is under reduced motion
 * @property {number} time
 * @property {DragSegment} [drag]   on `began` (and where a new segment starts)
 * @property {DragLaw} [dragLaw]    with `drag`
 * @property {ReleaseLaw} [releaseLaw]  with `drag`
 * @property {{count: number, settles: {index: number, phase: PanPhase, snap: Snap, animation: Animation}[]}} [batch]
 * @property {Frame[]} [frames]     with `?frames=`: the running animation, sampled from its start
 * @property {MeasuredGeometry} [geometry]  after a layout event (with `keyboardInset`, `contentHeight`, `detents`, `unreachable`)
 * @property {number} [keyboardInset]
 * @property {number | null} [contentHeight]
 * @property {Record<string, number>} [detents]
 * @property {string[]} [unreachable]
 * @property {number} [revision]       with the laws: the layout revision they belong to
 * @property {LayoutLaw} [layoutLaw]
 *
 * @typedef {object} Frame  The data of an `event: frame`.
 * @property {number} animation
 * @property {number} index
 * @property {number} t          seconds since the animation's start
 * @property {number} constant
 * @property {number} dimmerAlpha
 * @property {number} progress
 * @property {number} velocity   points per second
 * @property {SheetTransform} [parentTransform]  a stacked card's: its parent drawn at this frame
 * @property {SheetTransform} [backdropTransform]  a root card's with `backdrop`: the page behind at this frame
 *
 * @typedef {object} PanOptions
 * @property {number} [time]          seconds on the client clock (default: now)
 * @property {number} [velocity]      pt/s, down positive; leave it out on `ended` to let sheetd estimate it
 * @property {number} [scrollOffset]  fluid only, on `changed`
 * @property {boolean} [reducedMotion]  this request's own reduced-motion setting for the motion it starts (`ended`, `cancelled`, a `changed` that finishes a transition; `began` starts none): true jumps, false animates, whatever the session's; absent: the session's
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
 * @typedef {object} DragLaw  What a drag does with the finger (every snapshot's `dragLaw`).
 * @property {number | null} lower   the smallest constant a drag reaches freely (null: none)
 * @property {number | null} upper   the largest one
 * @property {{coefficient: number, dimension: number} | null} rubberBand  resistance past a bound (null: clamp)
 * @property {{full: number, fullAt: number, clearAt: number}} dimmer     alpha as a function of the constant
 * @property {{low: number, top: number}} progress                       progress 0 at `low`, 1 at `top`
 * @property {number | null} finishThreshold  transition: the fraction of the way at which a drag finishes by itself
 * @property {Edge} [edge]        the edge the card comes from (absent from an older sheetd: bottom)
 * @property {"x" | "y"} [axis]   the pointer axis: translation = sign · (pointer delta along axis)
 * @property {number} [sign]      1 (bottom, right) or −1 (top, left)
 *
 * @typedef {object} ReleaseCondition  One condition of a release rule: `{origin}`, or a quantity compared.
 * @property {string} [origin]  the drag began at this detent
 * @property {"constant" | "truncatedConstant" | "velocity" | "velocityPerDistance" | "fraction" | "projectedFraction"} [quantity]
 * @property {"<" | "<=" | ">" | ">="} [is]
 * @property {number} [value]
 * @property {number} [to]      velocityPerDistance: v / max(to − constant, 1)
 * @property {number} [from]    fraction: (constant − from) / (toward − from)
 * @property {number} [toward]
 *
 * @typedef {object} CurveLaw  The curve of a release law's motion.
 * @property {"linear" | "easeIn" | "easeOut" | "easeInOut" | "durationSpring" | "spring"} name
 * @property {number[]} [controlPoints]  timed curves: [x1, y1, x2, y2]
 * @property {number} [duration]         seconds (timed with no `remaining`, durationSpring)
 * @property {{whole: number, span: number, speed: number, max: number}} [remaining]  duration = min(whole · (|to − from| / span) / speed, max)
 * @property {number} [dampingRatio]
 * @property {number | null} [initialVelocity]  durationSpring; null: v · sign(to − from) / max(|to − from|, 1)
 * @property {number} [omega]            springs: ω₀, rad/s
 * @property {number} [response]         spring
 * @property {{distance: number, speed: number, max: number}} [settle]  spring: when it ends
 *
 * @typedef {object} ReleaseLaw  Where a release sends the card and how (every snapshot's `releaseLaw`).
 * @property {number} velocityWindow  seconds of samples in the velocity estimate
 * @property {{decelerationRate: number} | null} projection
 * @property {{when: ReleaseCondition[], detent?: string, nearest?: {candidates: string[], of: "constant" | "projection", clampToNeighbours: boolean}}[]} rules
 * @property {{when: {toHidden?: boolean, releasedAbove?: number}[], curve: CurveLaw}[]} motions
 * @property {"interpolate" | "position"} alphaRule
 * @property {{detent: string} | null} [handOff]  fluid: a spring crossing this detent hands its velocity to the content
 * @property {boolean} [reducedMotion]  the session's reduced-motion setting, which `motions` and `handOff` follow
 * @property {MotionVariant} [requestOverride]  the motions and hand-off of a request that asks the other setting
 *
 * @typedef {object} MotionVariant  A release law's motions for one reduced-motion setting.
 * @property {boolean} reducedMotion
 * @property {{when: {toHidden?: boolean, releasedAbove?: number}[], curve: CurveLaw}[]} motions
 * @property {{detent: string} | null} handOff
 *
 * @typedef {object} ScrollFling  When a release hands the card's momentum to its content.
 * @property {number} time      seconds on the session's clock: the instant the card reaches the top-most detent
 * @property {number} velocity  pt/s (< 0: upward), the velocity the content's own fling starts with
 *
 * @typedef {object} LocalAnimation  An animation predicted from the release law (an answer's `animation` without `id`).
 * @property {string} curve
 * @property {number} from
 * @property {number} to
 * @property {number} duration
 * @property {number} fromAlpha
 * @property {number} toAlpha
 * @property {"interpolate" | "position"} alphaRule
 * @property {number} startTime
 * @property {string} detent
 * @property {boolean} dismiss
 * @property {number} [dampingRatio]
 * @property {number} [initialVelocity]
 * @property {number} [response]
 * @property {number} [velocity]
 * @property {number[]} [controlPoints]
 * @property {number} [id]  sheetd's number, once the answer confirmed it
 * @property {ScrollFling} [scrollFling]  the release law's hand-off to the content (step 5), where it applies
 * @property {DragLaw} dragLaw
 * @property {(t: number) => {x: number, v: number}} sampleAt  the spring's state
 *
 * @typedef {object} DragSegment  The current drag's segment (the answer to `began`: `drag`).
 * @property {number} start   the constant the segment started from
 * @property {number} base    the translation it started at
 * @property {string | null} origin  the detent a cancel returns to
 * @property {boolean | null} contentCanScroll  fluid: a `changed` with `scrollOffset` may go to the content
 * @property {{from: number, toward: number, threshold: number, detent: string} | null} finish  transition
 *
 * @typedef {object} Prediction  What sheetd will answer to a `changed` at that translation.
 * @property {number} constant
 * @property {number} dimmerAlpha
 * @property {number} progress
 * @property {boolean} finishes  transition: this `changed` finishes the drag (sheetd answers with an animation)
 *
 * @typedef {object} CardState  Where to draw the card at one instant (`sheet.at(time)`).
 * @property {number} constant
 * @property {number} dimmerAlpha
 * @property {number} progress
 * @property {"rest" | "drag" | "hold" | "coast" | "animation" | "unknown"} motion
 *   drag: the prediction for the finger; hold: waiting for sheetd where no motion can be
 *   predicted; coast: released where the release law cannot be evaluated (no answer to `began`
 *   yet for a drag that needs its origin), moving at the release velocity until the answer;
 *   animation: the release law's animation, or sheetd's frames, played on the client clock
 *
 * @typedef {object} PredictionStats  `sheet.stats`.
 * @property {number} samples        pan events the caller made
 * @property {number} eventsSent     pan events sent (every one, on the client clock)
 * @property {number} requestsSent
 * @property {number} largestBatch
 * @property {number} inFlight
 * @property {number} maxInFlight    never above 1: one request at a time
 * @property {number} predictions    `changed` events predicted from the law
 * @property {number} mismatches     answers that differ from the law evaluated for the same translation (there should be none)
 * @property {number} maxError       the largest such difference, points
 * @property {number} catches        grabs of a moving card: the drag's start was estimated from the frames, and sheetd's differed
 * @property {number} corrections    blends (a catch, or the release joining sheetd's animation)
 * @property {number} releases       animations started locally from the release law (releases, transition finishes, cancels)
 * @property {number} releaseMismatches  answers whose snap or animation differs from that (there should be none)
 * @property {number} layouts        layout changes predicted from the layout law (the card placed and moved on the frame of the change)
 * @property {number} layoutMismatches  answers to them that differ: detents, unreachable, laws, the move, the drag's new segment (there should be none)
 * @property {number} layoutsUnpredicted  layout changes sent without a prediction (options changed, no layout law, a card coasting): the card follows the answer
 * @property {number} transforms   stacks: `parentTransform`s and `backdropTransform`s of answers and frames compared with the recede law evaluated here
 * @property {number} transformMismatches  those that differ, bit for bit (there should be none)
 * @property {number} retried        event requests sent again with the same `seq` (an answer lost to a dropped connection or a proxy's 502/503/504, or the session busy with another request)
 * @property {number} replays        answers that were the first answer again (`Sheetd-Replay`: a retried request sheetd had applied already)
 * @property {number} resent         acknowledged requests sent again because the session lacked them (`sequence-gap` below what it had acknowledged: its instance died before writing them)
 * @property {number} acknowledgedLost  acknowledged requests the session lacked that could not be sent again (kept no more, or refused): there should be none
 * @property {number} renumbered     requests given another `seq` (the session numbered elsewhere: another client, or a try of this one it did or did not apply)
 *
 * @typedef {object} LayoutRule  One detent of the layout law.
 * @property {string} name
 * @property {"fromTop" | "fraction" | "height" | "content" | "contentAnchor"} kind
 * @property {number} [offset]  contentAnchor: the points shown beyond the anchor
 * @property {number} value
 *
 * @typedef {object} LayoutLaw  fluid: where the detents are on any layout (every snapshot's `layoutLaw`).
 * @property {LayoutRule[]} detents
 * @property {boolean} hideable
 * @property {"lift" | "extend" | "none"} keyboard
 * @property {boolean} keyboardDrag
 * @property {"release" | "none"} motion
 * @property {Edge} [edge]  the axis step 0 takes the geometry along (absent: bottom)
 *
 * @typedef {object} Layout  The layout around the card, as the client measured it.
 * @property {MeasuredGeometry} geometry
 * @property {number} keyboardInset
 * @property {number | null} contentHeight
 *
 * @typedef {"release" | "none" | {curve: "linear" | "easeIn" | "easeOut" | "easeInOut", duration: number}} LayoutMotion
 *
 * @typedef {object} LayoutChange  What changed (`sheet.layout(change)`): fields left out keep their value.
 * @property {Geometry} [geometry]
 * @property {number} [keyboardInset]
 * @property {number} [contentHeight]
 * @property {Record<string, any>} [options]  options to change (not predicted: the card follows the answer)
 * @property {LayoutMotion} [motion]          default: the law's `motion`
 * @property {number} [time]                  client clock (default: now)
 * @property {boolean} [reducedMotion]        the platform's reduce-motion setting changed (not predicted: the card follows the answer)
 *
 * @typedef {object} ResolvedLayout  The layout law evaluated on a layout.
 * @property {{name: string, constant: number}[]} detents  reachable ones top-down, `hidden` last
 * @property {string[]} unreachable
 * @property {number} top   step 2's bound (0 without a non-content rule)
 *
 * @typedef {object} LayoutObserverOptions  `sheet.observeLayout(options)`: the sources to follow.
 * @property {boolean | {viewport?: LayoutViewport, layoutHeight?: () => number}} [keyboard]
 *   the keyboard's inset from `window.visualViewport` (or a stand-in with the same members):
 *   layoutHeight() − (viewport.height + viewport.offsetTop), on its `resize` and `scroll`
 * @property {Element} [content]  content height from a ResizeObserver on this element (its border box)
 * @property {boolean | {element?: Element, read: () => Geometry}} [geometry]
 *   on window resize and orientationchange (and a ResizeObserver on `element`), `read()` gives the
 *   new geometry (true: the window's inner height, the safe areas unchanged)
 * @property {() => number} [scale]  CSS px per point (default 1)
 * @property {LayoutMotion} [keyboardMotion]  the motion of a keyboard change (default easeOut 0.25 s, the keyboard's own)
 * @property {(result: Promise<Result>, change: LayoutChange) => void} [onLayout]  after each layout event is sent
 *
 * @typedef {EventTarget & {height: number, offsetTop: number}} LayoutViewport
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
    /**
     * @param {number} status
     * @param {{code?: string, detail?: string, title?: string, field?: string, lastSeq?: number}} problem
     * @param {number | null} [retryAfter]  the answer's Retry-After, seconds
     */
    constructor(status, problem, retryAfter = null) {
        super(problem.detail || problem.title || `HTTP ${status}`);
        this.name = "SheetError";
        /** HTTP status. */
        this.status = status;
        /** A stable slug, e.g. "unknown-option", "session-not-found", "clock-backwards". */
        this.code = problem.code ?? "http-" + status;
        /** The offending field, where there is one. */
        this.field = problem.field;
        this.problem = problem;
        /** Seconds after which to try again (Retry-After), where the answer says; else null. */
        this.retryAfter = retryAfter;
    }
}

/** The client clock: seconds on this page's monotonic clock (the same base as `event.timeStamp`). */
export const clientTime = () => performance.now() / 1000;

/**
 * Evaluates a drag law for a finger at `translation` in the drag segment `segment`: exactly
 * what sheetd answers to that `changed` (the same IEEE-754 operations in the same order).
 * @param {DragLaw} law @param {{start: number, base: number, finish?: DragSegment["finish"]}} segment
 * @param {number} translation
 * @returns {Prediction}
 */
export function evaluateDragLaw(law, segment, translation) {
    const candidate = segment.start + (translation - segment.base);
    let c = candidate;
    const band = law.rubberBand;
    // f(x) = (1 − 1/(x·coefficient/dimension + 1))·dimension: resistance that never reaches `dimension`
    const resist = (/** @type {number} */ x) => band ? (1 - 1 / ((x * band.coefficient) / band.dimension + 1)) * band.dimension : 0;
    if (law.upper !== null && candidate > law.upper) c = band ? law.upper + resist(candidate - law.upper) : law.upper;
    else if (law.lower !== null && candidate < law.lower) c = band ? law.lower - resist(law.lower - candidate) : law.lower;
    const alpha = dimmerAlpha(law, c);
    const progress = progressOf(law, c);
    let finishes = false;
    const f = segment.finish;
    if (f) {
        const span = f.toward - f.from;
        finishes = (span === 0 ? 0 : (c - f.from) / span) >= f.threshold;
    }
    return { constant: c, dimmerAlpha: alpha, progress, finishes };
}

/**
 * The dimmer's alpha at constant `c` (the drag law's `dimmer`).
 * @param {DragLaw} law
 * @param {number} c
 */
function dimmerAlpha(law, c) {
    const d = law.dimmer;
    if (d.full === 0) return 0;
    if (c <= d.fullAt) return d.full;
    if (c >= d.clearAt) return 0;
    return (d.full * (d.clearAt - c)) / (d.clearAt - d.fullAt);
}

/**
 * How open the card is at constant `c` (the drag law's `progress`).
 * @param {DragLaw} law
 * @param {number} c
 */
function progressOf(law, c) {
    const p = law.progress;
    return Math.abs(p.low - p.top) < 1e-9 ? 1 : (p.low - c) / (p.low - p.top);
}

/**
 * sheetd's release velocity, exactly: the least-squares slope of translation over time (pt/s)
 * of the drag's `changed` samples with `t ≥ end − window` (`releaseLaw.velocityWindow`); 0 for
 * fewer than two, or all at one time. Same operations in the same order as the engine.
 * @param {{t: number, x: number}[]} samples  oldest first @param {number} end @param {number} window
 */
export function releaseVelocity(samples, end, window) {
    let n = 0, st = 0, sx = 0;
    for (const s of samples) {
        if (s.t >= end - window) {
            n += 1;
            st += s.t;
            sx += s.x;
        }
    }
    if (n < 2) return 0;
    const mt = st / n, mx = sx / n;
    let num = 0, den = 0;
    for (const s of samples) {
        if (s.t >= end - window) {
            const dt = s.t - mt;
            num += dt * (s.x - mx);
            den += dt * dt;
        }
    }
    return den === 0 ? 0 : num / den;
}

/**
 * Evaluates a release law: the detent a release at `constant` with `velocity` (pt/s, down
 * positive), from a drag that began at `origin`, goes to, as sheetd decides it.
 * @param {ReleaseLaw} law @param {Record<string, number>} detents  the snapshot's name → constant
 * @param {number} constant @param {number} velocity @param {string | null} origin
 * @returns {{detent: string, projected: number | null} | null}  null: the law has no rule that applies
 */
export function evaluateReleaseLaw(law, detents, constant, velocity, origin) {
    const c = constant, v = velocity;
    const r = law.projection?.decelerationRate;
    // UIScrollView's deceleration: where momentum would carry the card.
    const projected = r === undefined ? null : c + ((v / 1000) * r) / (1 - r);
    /**
     * @param {ReleaseCondition} w
     */
    const quantity = (w) => {
        switch (w.quantity) {
            case "constant": return c;
            case "truncatedConstant": return Math.trunc(c);
            case "velocity": return v;
            case "velocityPerDistance": return v / Math.max(/** @type {number} */ (w.to) - c, 1);
            case "fraction": {
                const from = /** @type {number} */ (w.from), span = /** @type {number} */ (w.toward) - from;
                return span === 0 ? 0 : (c - from) / span;
            }
            case "projectedFraction": {
                const from = /** @type {number} */ (w.from), span = /** @type {number} */ (w.toward) - from;
                return span === 0 ? 0 : ((projected ?? c) - from) / span;
            }
            default: return NaN; // an unknown quantity never holds
        }
    };
    /**
     * @param {ReleaseCondition} w
     */
    const holds = (w) => {
        if (w.origin !== undefined) return w.origin === origin;
        const a = quantity(w), b = /** @type {number} */ (w.value);
        switch (w.is) {
            case "<": return a < b;
            case "<=": return a <= b;
            case ">": return a > b;
            case ">=": return a >= b;
            default: return false;
        }
    };
    for (const rule of law.rules) {
        if (!rule.when.every(holds)) continue;
        if (rule.detent !== undefined) return { detent: rule.detent, projected };
        const near = rule.nearest;
        if (!near || near.candidates.some((name) => detents[name] === undefined)) return null;
        let q = c;
        if (near.of === "projection" && projected !== null) {
            q = projected;
            if (near.clampToNeighbours) {
                // At most one detent passed: between the neighbours of the release point.
                const upper = [...near.candidates].reverse().find((name) => detents[name] < c) ?? near.candidates[0];
                const lower = near.candidates.find((name) => detents[name] > c) ?? near.candidates[near.candidates.length - 1];
                if (projected < detents[upper]) q = detents[upper];
                else if (projected > detents[lower]) q = detents[lower];
            }
        }
        let best = near.candidates[0];
        for (const name of near.candidates.slice(1)) if (Math.abs(detents[name] - q) < Math.abs(detents[best] - q)) best = name;
        return { detent: best, projected };
    }
    return null;
}

/**
 * The release law a request evaluates: the session's motions and hand-off, or, where the
 * request's own `reducedMotion` differs from the law's, `requestOverride`'s (the law publishes
 * both; nothing here knows what a jump is).
 * @param {ReleaseLaw} law @param {boolean} [reducedMotion]  the request's; undefined: the session's
 * @returns {ReleaseLaw}
 */
export function requestMotions(law, reducedMotion) {
    const other = law.requestOverride;
    if (reducedMotion === undefined || !other || reducedMotion === (law.reducedMotion ?? false)) return law;
    return {
        ...law, motions: other.motions, handOff: other.handOff, reducedMotion: other.reducedMotion,
        requestOverride: { reducedMotion: law.reducedMotion ?? false, motions: law.motions, handOff: law.handOff ?? null },
    };
}

/**
 * The animation sheetd starts for a release (or a transition's finish, or a cancel): the release
 * law's first matching motion, from `from` to the detent `to`, at `startTime`. It has the fields
 * of an answer's `animation` (except `id`) and samples with `sampleAnimation`.
 * @param {ReleaseLaw} releaseLaw @param {DragLaw} dragLaw @param {Record<string, number>} detents
 * With `move.release` (an `ended` or a `fling`), the law's hand-off applies (step 5): a spring to
 * `handOff.detent` from below that crosses it before settling ends there, and the animation says
 * when and with what velocity the content takes over (`scrollFling`).
 * `move.reducedMotion`: the request's own setting (`requestMotions`).
 * @param {{from: number, to: string, velocity: number, startTime: number, isShow?: boolean, release?: boolean, reducedMotion?: boolean}} move
 * @returns {LocalAnimation | null}
 */
export function releaseAnimation(releaseLaw, dragLaw, detents, move) {
    releaseLaw = requestMotions(releaseLaw, move.reducedMotion);
    const { from, velocity: v } = move;
    const to = detents[move.to];
    if (to === undefined) return null;
    const motion = releaseLaw.motions.find((m) => m.when.every((w) =>
        w.toHidden ? move.to === "hidden" : !move.isShow && Math.trunc(from) < /** @type {number} */ (w.releasedAbove)));
    if (!motion) return null;
    const k = motion.curve;
    /** @type {LocalAnimation} */
    const a = {
        curve: k.name, from, to, duration: 0, fromAlpha: dimmerAlpha(dragLaw, from), toAlpha: dimmerAlpha(dragLaw, to),
        alphaRule: releaseLaw.alphaRule, startTime: move.startTime, detent: move.to, dismiss: move.to === "hidden",
        dragLaw, sampleAt: () => ({ x: 0, v: 0 }),
    };
    if (k.name === "durationSpring") {
        let initial = k.initialVelocity;
        if (initial === null || initial === undefined) {
            // The card leaves the finger at its speed: v in distances per second toward the target.
            const distance = to - from;
            const sign = distance > 0 ? 1 : distance < 0 ? -1 : 0;
            initial = (v * sign) / Math.max(Math.abs(distance), 1);
        }
        Object.assign(a, { dampingRatio: k.dampingRatio, initialVelocity: initial, duration: k.duration });
        a.sampleAt = oscillator(/** @type {number} */ (k.omega), /** @type {number} */ (k.dampingRatio), 1, -initial);
    } else if (k.name === "spring") {
        Object.assign(a, { response: k.response, dampingRatio: k.dampingRatio, velocity: v });
        a.sampleAt = oscillator(/** @type {number} */ (k.omega), /** @type {number} */ (k.dampingRatio), from - to, v);
        a.duration = settleTime(a.sampleAt, /** @type {NonNullable<CurveLaw["settle"]>} */ (k.settle));
        if (move.release && releaseLaw.handOff && releaseLaw.handOff.detent === move.to && from > to) {
            const t = firstCrossing(/** @type {number} */ (k.omega), /** @type {number} */ (k.dampingRatio), from - to, v);
            const handed = t === null ? 0 : a.sampleAt(t).v;
            if (t !== null && t < a.duration && handed < 0) {
                a.duration = t;
                a.scrollFling = { time: move.startTime + t, velocity: handed };
            }
        }
    } else {
        a.controlPoints = k.controlPoints;
        const rest = k.remaining;
        if (rest) {
            const remaining = rest.span === 0 ? 0 : Math.abs(to - from) / rest.span;
            a.duration = Math.min((rest.whole * remaining) / rest.speed, rest.max);
        } else {
            a.duration = /** @type {number} */ (k.duration);
        }
    }
    return a;
}

/**
 * The first t > 0 at which a spring of natural frequency `w` and damping ratio `z`, displaced by
 * x0 at velocity v0, crosses its target (openapi.yaml's `ReleaseLaw`, step 5); null: never.
 * @param {number} w @param {number} z @param {number} x0 @param {number} v0 @returns {number | null}
 */
export function firstCrossing(w, z, x0, v0) {
    if (Math.abs(z - 1) <= 1e-12) {
        const b = v0 + w * x0;
        return b !== 0 && -x0 / b > 0 ? -x0 / b : null;
    }
    if (z < 1) {
        const decay = z * w, wd = w * Math.sqrt(1 - z * z);
        let theta = Math.atan2((v0 + decay * x0) / wd, x0) + Math.PI / 2;
        while (theta <= 0) theta += Math.PI;
        while (theta > Math.PI) theta -= Math.PI;
        return theta / wd;
    }
    const root = Math.sqrt(z * z - 1), r1 = -w * (z - root), r2 = -w * (z + root);
    const c1 = (v0 - r2 * x0) / (r1 - r2);
    if (c1 === 0) return null;
    const ratio = -(x0 - c1) / c1;
    return ratio > 1 ? Math.log(ratio) / (r1 - r2) : null;
}

/**
 * A physical spring's duration: the first whole millisecond at which |x| ≤ settle.distance and
 * |v| ≤ settle.speed, at most settle.max seconds.
 * @param {(t: number) => {x: number, v: number}} state @param {{distance: number, speed: number, max: number}} settle
 */
function settleTime(state, settle) {
    const limit = Math.round(settle.max * 1000);
    for (let k = 0; k < limit; k++) {
        const s = state(k / 1000);
        if (Math.abs(s.x) <= settle.distance && Math.abs(s.v) <= settle.speed) return k / 1000;
    }
    return limit / 1000;
}

/**
 * x″ + 2ζω₀x′ + ω₀²x = 0 in closed form from x(0) = x0, x′(0) = v0, as the engine writes it.
 * @param {number} omega @param {number} z @param {number} x0 @param {number} v0
 * @returns {(t: number) => {x: number, v: number}}
 */
function oscillator(omega, z, x0, v0) {
    if (Math.abs(z - 1) <= 1e-12) {
        const a = x0, b = v0 + omega * x0;
        return (t) => {
            const e = Math.exp(-omega * t);
            return { x: e * (a + b * t), v: e * (b - omega * (a + b * t)) };
        };
    }
    if (z < 1) {
        const decay = z * omega, wd = omega * Math.sqrt(1 - z * z);
        const a = x0, b = (v0 + decay * x0) / wd;
        return (t) => {
            const e = Math.exp(-decay * t), c = Math.cos(wd * t), s = Math.sin(wd * t);
            return { x: e * (a * c + b * s), v: e * ((b * wd - decay * a) * c - (a * wd + decay * b) * s) };
        };
    }
    const root = Math.sqrt(z * z - 1);
    const r1 = -omega * (z - root), r2 = -omega * (z + root);
    const c1 = (v0 - r2 * x0) / (r1 - r2), c2 = x0 - c1;
    return (t) => {
        const e1 = Math.exp(r1 * t), e2 = Math.exp(r2 * t);
        return { x: c1 * e1 + c2 * e2, v: c1 * r1 * e1 + c2 * r2 * e2 };
    };
}

/**
 * A cubic bezier coordinate in Bernstein form, as a polynomial.
 * @param {number} s
 * @param {number} c1
 * @param {number} c2
 */
function bezier(s, c1, c2) {
    const c = 3 * c1, b = 3 * (c2 - c1) - c, a = 1 - c - b;
    return ((a * s + b) * s + c) * s;
}
/**
 * @param {number} s
 * @param {number} c1
 * @param {number} c2
 */
function bezierSlope(s, c1, c2) {
    const c = 3 * c1, b = 3 * (c2 - c1) - c, a = 1 - c - b;
    return (3 * a * s + 2 * b) * s + c;
}

/**
 * A timing curve's progress at time fraction x, and its slope: Newton steps guarded by
 * bisection, to 1e-12, the engine's steps.
 * @param {number[]} points  [x1, y1, x2, y2] @param {number} x
 */
function timingProgress(points, x) {
    const [x1, y1, x2, y2] = points;
    if (x1 === y1 && x2 === y2) return { progress: Math.min(Math.max(x, 0), 1), slope: 1 };
    let s;
    if (x <= 0) s = 0;
    else if (x >= 1) s = 1;
    else {
        s = x;
        let solved = false;
        for (let i = 0; i < 8; i++) {
            const err = bezier(s, x1, x2) - x;
            if (Math.abs(err) < 1e-12) {
                solved = true;
                break;
            }
            const d = bezierSlope(s, x1, x2);
            if (Math.abs(d) < 1e-9) break;
            s -= err / d;
        }
        if (!solved) {
            let lo = 0, hi = 1;
            s = x;
            for (let i = 0; i < 64; i++) {
                const value = bezier(s, x1, x2);
                if (Math.abs(value - x) < 1e-12) break;
                if (value < x) lo = s;
                else hi = s;
                s = (lo + hi) / 2;
            }
        }
    }
    const dx = bezierSlope(s, x1, x2);
    const progress = s === 0 ? 0 : s === 1 ? 1 : bezier(s, y1, y2);
    return { progress, slope: dx === 0 ? 0 : bezierSlope(s, y1, y2) / dx };
}

/**
 * The card `elapsed` seconds into a local animation (clamped to [0, duration]; exactly the
 * target at the end): what sheetd's frame at that instant holds.
 * @param {LocalAnimation} a @param {number} elapsed
 * @returns {{t: number, constant: number, dimmerAlpha: number, progress: number, velocity: number}}
 */
export function sampleAnimation(a, elapsed) {
    const t = Math.min(Math.max(elapsed, 0), a.duration);
    let constant, velocity, p;
    if (t >= a.duration) {
        constant = a.to;
        velocity = 0;
        p = 1;
    } else if (a.curve === "durationSpring") {
        const s = a.sampleAt(t);
        p = 1 - s.x;
        constant = a.from + (a.to - a.from) * p;
        velocity = -(a.to - a.from) * s.v;
    } else if (a.curve === "spring") {
        const s = a.sampleAt(t);
        constant = a.to + s.x;
        velocity = s.v;
        p = a.from === a.to ? 1 : (constant - a.from) / (a.to - a.from);
    } else {
        const r = timingProgress(/** @type {number[]} */ (a.controlPoints), t / a.duration);
        p = r.progress;
        constant = a.from + (a.to - a.from) * p;
        velocity = ((a.to - a.from) * r.slope) / a.duration;
    }
    const alpha = a.alphaRule === "interpolate"
        ? a.fromAlpha + (a.toAlpha - a.fromAlpha) * Math.min(Math.max(p, 0), 1)
        : dimmerAlpha(a.dragLaw, constant);
    return { t, constant, dimmerAlpha: alpha, progress: progressOf(a.dragLaw, constant), velocity };
}

// ------------------------------------------------------------ every edge

/**
 * The translation to send for a pointer that moved (dx, dy) screen points (x rightward, y
 * downward) since `began`: the pointer's movement along the law's axis, toward closing positive.
 * A client maps the pointer once, by the law, for every edge.
 * @param {DragLaw} law @param {number} dx @param {number} dy @returns {number}
 */
export function pointerTranslation(law, dx, dy) {
    return (law.sign ?? 1) * ((law.axis ?? "y") === "x" ? dx : dy);
}

/**
 * A geometry along an edge's axis, as a bottom sheet sees it (the engine's `Geometry.along`):
 * height = the main dimension (the width for left and right), safeAreaTop = the far side's inset,
 * safeAreaBottom = the near side's. null: a side edge without a width (sheetd refuses it).
 * @param {Geometry} g @param {Edge} [edge] @returns {{height: number, safeAreaTop: number, safeAreaBottom: number} | null}
 */
export function axisGeometry(g, edge = "bottom") {
    const h = g.height ?? 844, st = g.safeAreaTop ?? 47, sb = g.safeAreaBottom ?? 34;
    const sl = g.safeAreaLeft ?? 0, sr = g.safeAreaRight ?? 0;
    switch (edge) {
        case "top": return { height: h, safeAreaTop: sb, safeAreaBottom: st };
        case "left": return g.width === undefined ? null : { height: g.width, safeAreaTop: sr, safeAreaBottom: sl };
        case "right": return g.width === undefined ? null : { height: g.width, safeAreaTop: sl, safeAreaBottom: sr };
        default: return { height: h, safeAreaTop: st, safeAreaBottom: sb };
    }
}

/**
 * Where the card's leading edge is for a constant: its distance, points, from the screen's far
 * side along the axis, far inset + constant. bottom: the y of the card's top edge; top: the
 * distance of its bottom edge from the screen's bottom; left: of its right edge from the screen's
 * right; right: of its left edge from the screen's left.
 * @param {Geometry} g @param {Edge} edge @param {number} constant @returns {number}
 */
export function leadingEdgeOffset(g, edge, constant) {
    const a = axisGeometry(g, edge);
    return (a ? a.safeAreaTop : 0) + constant;
}

/**
 * Whether the keyboard acts on a sheet whose layout law is `law` (on bottom sheets only).
 * @param {LayoutLaw | undefined} law @returns {boolean}
 */
function keyboardActs(law) {
    return (law?.edge ?? "bottom") === "bottom";
}

// ------------------------------------------------------------ layout

/** The named timing curves' control points [x1, y1, x2, y2] (UIKit's, as sheetd's `TimingCurve`). */
export const TIMING_CURVES = {
    linear: [0, 0, 1, 1], easeIn: [0.42, 0, 1, 1], easeOut: [0, 0, 0.58, 1], easeInOut: [0.42, 0, 0.58, 1],
};

/**
 * Evaluates a layout law on a layout: the steps of openapi.yaml's `LayoutLaw` (and of the engine's
 * `LayoutLaw.resolve`), each one IEEE-754 double operation as written, so the constants are
 * sheetd's to the bit.
 * @param {LayoutLaw} law @param {Layout} layout
 * @returns {ResolvedLayout}
 */
export function resolveLayoutLaw(law, layout) {
    // 0. the geometry along the edge's axis
    const g = axisGeometry(layout.geometry, law.edge) ?? layout.geometry;
    const H = g.height - g.safeAreaTop;
    const ch = layout.contentHeight;
    // 1. each rule's constant, clamped to [0, H] (a `content` rule has none without a content
    //    height, a `contentAnchor` none either where its point lies past the content's end)
    const followsContent = (/** @type {LayoutRule} */ rule) => rule.kind === "content" || rule.kind === "contentAnchor";
    /** @type {(number | null)[]} */
    const constants = law.detents.map((rule) => {
        let c;
        switch (rule.kind) {
            case "fromTop": c = rule.value; break;
            case "fraction": c = H - H * rule.value; break;
            case "height": c = H - rule.value; break;
            case "contentAnchor": c = ch === null || ch === undefined || rule.value > ch ? null : H - (rule.value + (rule.offset ?? 0)); break;
            default: c = ch === null || ch === undefined ? null : H - (ch + rule.value);
        }
        return c === null ? null : Math.min(Math.max(c, 0), H);
    });
    // 2. top: the smallest constant of the rules that do not follow the content; theirs clamped to [top, H]
    /** @type {number | null} */
    let top = null;
    law.detents.forEach((rule, k) => {
        const c = constants[k];
        if (!followsContent(rule) && c !== null && c < (top ?? Infinity)) top = c;
    });
    // 3. fit: the highest reachable content detent; a detent above it is unreachable
    /** @type {number | null} */
    let fit = null;
    law.detents.forEach((rule, k) => {
        const c = constants[k];
        if (!followsContent(rule) || c === null) return;
        const clamped = Math.max(c, top ?? 0);
        constants[k] = clamped;
        if (rule.kind === "content" && clamped < (fit ?? Infinity)) fit = clamped;
    });
    /** @type {{index: number, constant: number}[]} */
    const reachable = [];
    /** @type {string[]} */
    const unreachable = [];
    law.detents.forEach((rule, k) => {
        const c = constants[k];
        if (c === null || !(rule.kind === "content" || c >= (fit ?? -Infinity))) unreachable.push(rule.name);
        else reachable.push({ index: k, constant: c });
    });
    // 4. by constant, a tie in the rules' order
    reachable.sort((a, b) => (a.constant !== b.constant ? a.constant - b.constant : a.index - b.index));
    let detents = reachable.map((d) => ({ name: law.detents[d.index].name, constant: d.constant }));
    // 5. lift: up by the inset, never above top
    if (law.keyboard === "lift" && keyboardActs(law) && layout.keyboardInset > 0) {
        const bound = top ?? 0, k = layout.keyboardInset;
        detents = detents.map((d) => ({ name: d.name, constant: Math.max(d.constant - k, bound) }));
    }
    // 6. hidden at H
    if (law.hideable) detents.push({ name: "hidden", constant: H });
    return { detents, unreachable, top: top ?? 0 };
}

/**
 * fluid's drag and release laws on a layout whose detents `resolved` gives, built as sheetd builds
 * them (`Presets/Fluid.swift`): lower = the top-most detent, upper = the lowest (hidden where there
 * is one), the rubber band over the screen's height, the dimmer from the undimmed detent (the one
 * named, else the lowest reachable) to the one above it, progress over the detents; the release
 * law's removal rule measured to the new H and its candidates the new detents. The answer's laws
 * (same revision) confirm them; a difference counts in `stats.layoutMismatches`.
 * @param {DragLaw} dragLaw @param {ReleaseLaw} releaseLaw  the laws of the layout before
 * @param {ResolvedLayout} resolved @param {Layout} layout
 * @param {{undimmedDetent?: string, maxDimAlpha: number, momentumHandOff?: boolean, contentScrollsAt?: string | string[]}} dimmer
 *   the options that place the dimmer (and the hand-off to the content, at the top-most detent where the content scrolls there)
 * @returns {{dragLaw: DragLaw, releaseLaw: ReleaseLaw} | null}  null: no visible detent (sheetd refuses the layout)
 */
export function relaidLaws(dragLaw, releaseLaw, resolved, layout, dimmer) {
    const all = resolved.detents;
    const visible = all.filter((d) => d.name !== "hidden");
    if (visible.length === 0) return null;
    const ag = axisGeometry(layout.geometry, dragLaw.edge) ?? layout.geometry;
    const H = ag.height - ag.safeAreaTop;
    let u = visible.findIndex((d) => d.name === dimmer.undimmedDetent);
    if (u < 0) u = visible.length - 1;
    const band = dragLaw.rubberBand;
    const hidden = all.find((d) => d.name === "hidden");
    /** @type {DragLaw} */
    const drag = {
        lower: visible[0].constant, upper: all[all.length - 1].constant,
        rubberBand: band ? { coefficient: band.coefficient, dimension: ag.height } : null,
        dimmer: u === 0 ? { full: 0, fullAt: 0, clearAt: 0 } : { full: dimmer.maxDimAlpha, fullAt: visible[u - 1].constant, clearAt: visible[u].constant },
        progress: { low: (hidden ?? all[all.length - 1]).constant, top: all[0].constant },
        finishThreshold: null,
        ...(dragLaw.edge !== undefined ? { edge: dragLaw.edge, axis: dragLaw.axis, sign: dragLaw.sign } : {}),
    };
    // The hand-off goes to the new top-most detent; reduced motion's variant has none.
    const handOff = dimmer.momentumHandOff && (dimmer.contentScrollsAt !== undefined && typeof dimmer.contentScrollsAt !== "string"
        ? dimmer.contentScrollsAt.includes(visible[0].name) : true) ? { detent: visible[0].name } : null;
    /** @type {ReleaseLaw} */
    const release = {
        ...releaseLaw,
        ...(releaseLaw.handOff !== undefined ? { handOff: releaseLaw.reducedMotion ? null : handOff } : {}),
        ...(releaseLaw.requestOverride ? {
            requestOverride: { ...releaseLaw.requestOverride, handOff: releaseLaw.requestOverride.reducedMotion ? null : handOff },
        } : {}),
        rules: releaseLaw.rules.map((rule) => ({
            ...rule,
            when: rule.when.map((w) => (w.quantity === "velocityPerDistance" ? { ...w, to: H } : w)),
            ...(rule.nearest ? { nearest: { ...rule.nearest, candidates: all.map((d) => d.name) } } : {}),
        })),
    };
    return { dragLaw: drag, releaseLaw: release };
}

/**
 * Where a card at (or heading for) the detent `name` goes on a new layout: the detent of the same
 * name, or where it vanished the visible one nearest to its progress on the old layout (a tie
 * goes to the upper one).
 * @param {string} name @param {number} oldConstant @param {DragLaw} oldLaw @param {ResolvedLayout} resolved @param {DragLaw} newLaw
 */
export function placeDetent(name, oldConstant, oldLaw, resolved, newLaw) {
    if (resolved.detents.some((d) => d.name === name)) return name;
    const p = progressOf(oldLaw, oldConstant);
    /** @type {{name: string, constant: number} | null} */
    let best = null;
    for (const d of resolved.detents) {
        if (d.name === "hidden") continue;
        if (!best || Math.abs(progressOf(newLaw, d.constant) - p) < Math.abs(progressOf(newLaw, best.constant) - p)) best = d;
    }
    return (best ?? resolved.detents[0]).name;
}

/**
 * The candidate a drag law turns into `constant` (the inverse of the rubber band; a clamping bound
 * maps past itself to the bound): a drag re-based on a new law at it stays under the finger.
 * @param {DragLaw} law @param {number} constant
 */
export function dragCandidate(law, constant) {
    const band = law.rubberBand;
    const maxStretch = 1e11;
    /** @param {number} y */
    const stretch = (y) => (band && y < band.dimension ? (1 / (1 - y / band.dimension) - 1) * band.dimension / band.coefficient : Infinity);
    if (law.upper !== null && constant > law.upper) return band ? law.upper + Math.min(stretch(constant - law.upper), maxStretch) : law.upper;
    if (law.lower !== null && constant < law.lower) return band ? law.lower - Math.min(stretch(law.lower - constant), maxStretch) : law.lower;
    return constant;
}

/**
 * Whether two JSON values are equal, numbers within 1e-9 relative.
 * @param {any} a @param {any} b @returns {boolean}
 */
function closeJSON(a, b) {
    if (typeof a === "number" && typeof b === "number") return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => closeJSON(x, b[i]));
    if (a && b && typeof a === "object" && typeof b === "object") {
        const ka = Object.keys(a).filter((k) => a[k] !== undefined), kb = Object.keys(b).filter((k) => b[k] !== undefined);
        return ka.length === kb.length && ka.every((k) => closeJSON(a[k], b[k]));
    }
    return a === b;
}

/**
 * The layout a snapshot describes.
 * @param {Partial<Snapshot>} s @returns {Layout}
 */
function layoutOf(s) {
    const g = s.geometry ?? { height: 844, safeAreaTop: 47, safeAreaBottom: 34 };
    return { geometry: { ...g }, keyboardInset: s.keyboardInset ?? 0, contentHeight: s.contentHeight ?? null };
}

/**
 * An answered animation in closed form (a spring, a duration spring or a timing curve), to sample
 * with `sampleAnimation`; null where the answer does not carry its parameters.
 * @param {Animation} a @param {DragLaw} dragLaw  the law its dimmer and progress follow
 * @returns {LocalAnimation | null}
 */
export function closedForm(a, dragLaw) {
    if (!a || a.curve === undefined) return null;
    /** @type {LocalAnimation} */
    const local = { ...a, dragLaw, sampleAt: () => ({ x: 0, v: 0 }) };
    if (a.curve === "spring") {
        if (a.response === undefined || a.dampingRatio === undefined || a.velocity === undefined) return null;
        local.sampleAt = oscillator((2 * Math.PI) / a.response, a.dampingRatio, a.from - a.to, a.velocity);
    } else if (a.curve === "durationSpring") {
        if (a.dampingRatio === undefined || a.initialVelocity === undefined) return null;
        local.sampleAt = oscillator(Math.log(1000) / (a.dampingRatio * a.duration), a.dampingRatio, 1, -a.initialVelocity);
    } else {
        local.controlPoints = TIMING_CURVES[a.curve];
    }
    return local;
}

// ------------------------------------------------------------ stacks

/**
 * @typedef {object} RecedeLaw  What a card does to what lies beneath it as it opens (every snapshot's `recedeLaw`).
 * @property {number} scale         the covered thing's scale with the card at its top-most detent, (0, 1]
 * @property {number} lift          points it then moves away from the edge it comes from
 * @property {number} cornerRadius  its corner radius then, points
 * @property {number} alpha         the alpha of a shade over it then
 * @property {boolean} backdrop     a root card recedes the page behind it too (`backdropTransform`)
 *
 * @typedef {object} SheetTransform  How a card draws what lies beneath it now: its `recedeLaw` at its constant.
 * @property {number} scale         about the covered thing's centre across its axis and its far edge along it
 * @property {number} lift          points away from the edge it comes from (a bottom sheet beneath moves up)
 * @property {number} cornerRadius  points, on its open-side corners
 * @property {number} alpha         the alpha of a shade drawn over it
 *
 * @typedef {object} RecedeTarget  An element a card draws by its recession (`sheet.recedeInto`).
 * @property {HTMLElement} element  the covered thing's surface: a box whose far edge along the axis is the thing's
 *   own (a sheet's surface inside the element the page positions; the page itself)
 * @property {HTMLElement} [shade]  an overlay inside it, whose opacity becomes the transform's alpha
 * @property {Edge} [edge]          the edge the covered thing comes from (default: the parent session's, for a
 *   parent, where this client holds it; the card's own for the page behind; else bottom)
 * @property {number | (() => number)} [pxPerPoint]  CSS px per point (default 1)
 * @property {number} [radius]      points: the surface's own radius on its open-side corners, below which the drawn one never goes
 *
 * @typedef {object} CoveredInfo  A request refused because an open card stacked on this one covers it (`sheet.onCovered`).
 * @property {string | null} coveredBy  the covering card's id (as this client holds it, else as the problem names it)
 * @property {string[]} phases   what was refused: the pan events' phases, or "show", "dismiss", "step"
 * @property {SheetError} error  the 409 `covered` problem
 */

/**
 * Evaluates a recede law at the card's constant: what sheetd answers as `parentTransform` (a
 * stacked card) or `backdropTransform` (a root card with `backdrop`) there, bit for bit (each step
 * one double operation, as openapi.yaml's `RecedeLaw` writes it). The progress is the drag law's.
 * @param {RecedeLaw} law @param {DragLaw} dragLaw @param {number} constant @returns {SheetTransform}
 */
export function evaluateRecedeLaw(law, dragLaw, constant) {
    const p = Math.min(Math.max(progressOf(dragLaw, constant), 0), 1);
    return { scale: 1 + (law.scale - 1) * p, lift: law.lift * p, cornerRadius: law.cornerRadius * p, alpha: law.alpha * p };
}

/** Per edge of the covered thing: the direction of its lift (x, y), its transform origin (centre across, far edge along), its open-side corners. */
const RECEDE_GEOMETRY = {
    bottom: { x: 0, y: -1, origin: "50% 0%", corners: ["border-top-left-radius", "border-top-right-radius"] },
    top: { x: 0, y: 1, origin: "50% 100%", corners: ["border-bottom-left-radius", "border-bottom-right-radius"] },
    left: { x: 1, y: 0, origin: "100% 50%", corners: ["border-top-right-radius", "border-bottom-right-radius"] },
    right: { x: -1, y: 0, origin: "0% 50%", corners: ["border-top-left-radius", "border-bottom-left-radius"] },
};

/**
 * The CSS that draws a transform on a surface whose things come from `edge`: `translate(lift
 * away from the edge) scale(scale)` about the centre across the axis and the far edge along it,
 * the radius on the open-side corners (never below `radius`), the shade's opacity.
 * @param {SheetTransform} t @param {Edge} [edge] @param {number} [pxPerPoint] @param {number} [radius]  points
 * @returns {{transform: string, transformOrigin: string, corners: string[], radius: string, opacity: string}}
 */
export function recedeStyle(t, edge = "bottom", pxPerPoint = 1, radius = 0) {
    const g = RECEDE_GEOMETRY[edge] ?? RECEDE_GEOMETRY.bottom;
    const lift = t.lift * pxPerPoint;
    return {
        transform: `translate(${g.x * lift}px, ${g.y * lift}px) scale(${t.scale})`, transformOrigin: g.origin,
        corners: g.corners, radius: `${Math.max(radius, t.cornerRadius) * pxPerPoint}px`, opacity: String(t.alpha),
    };
}

/**
 * Draws a transform on a wired element (`RecedeTarget`): its transform, origin and open-side
 * corners, and its shade's opacity.
 * @param {RecedeTarget} target @param {SheetTransform} t @param {Edge} [edge]  where the target names none
 */
export function applyRecession(target, t, edge) {
    const k = typeof target.pxPerPoint === "function" ? target.pxPerPoint() : target.pxPerPoint ?? 1;
    const css = recedeStyle(t, target.edge ?? edge ?? "bottom", k, target.radius ?? 0);
    const style = target.element.style;
    style.transform = css.transform;
    style.transformOrigin = css.transformOrigin;
    for (const corner of css.corners) style.setProperty(corner, css.radius);
    if (target.shade) target.shade.style.opacity = css.opacity;
}

/**
 * Whether two transforms are the same, bit for bit.
 * @param {SheetTransform} a @param {SheetTransform} b
 */
function sameTransform(a, b) {
    return a.scale === b.scale && a.lift === b.lift && a.cornerRadius === b.cornerRadius && a.alpha === b.alpha;
}

/**
 * @param {number} ms
 */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sheetd server. */
export class SheetClient {
    /**
     * @param {string | URL} [baseURL]  the server; default: where this module was loaded from, so
     *   `import … from "http://host:8080/sheet-client.js"` then `new SheetClient()` just works.
     * @param {{addedLatency?: number, numbering?: boolean}} [options]  addedLatency: a simulated
     *   network round trip in milliseconds added to every request of this client (half before it
     *   leaves, half after the answer), to feel a remote sheetd from localhost. Frame streams are
     *   not delayed. numbering (default true): the sessions of this client number their event
     *   requests (`seq`, see SheetSession.numbering); false: as before numbering existed.
     */
    constructor(baseURL = new URL(".", import.meta.url), options = {}) {
        const base = new URL(baseURL, typeof location === "undefined" ? undefined : location.href);
        if (!base.pathname.endsWith("/")) base.pathname += "/";
        /** @type {URL} */
        this.baseURL = base;
        /** Simulated round trip added to every request, milliseconds (0: none). */
        this.addedLatency = options.addedLatency ?? 0;
        /** Whether the sessions this client makes number their event requests (each session's `numbering` starts so). */
        this.numbering = options.numbering ?? true;
    }
    /**
     * @param {string} path
     */
    url(path) {
        return new URL(path.replace(/^\//, ""), this.baseURL);
    }

    /**
     * One JSON request; throws a SheetError for a problem answer.
     * @param {string} method @param {string} path @param {any} [body] @param {AbortSignal} [signal]
     * @returns {Promise<any>}
     */
    async request(method, path, body, signal) {
        return (await this.exchange(method, path, body, signal)).body;
    }

    /**
     * One JSON request, and whether its answer was a replay (`Sheetd-Replay: true`: the first
     * answer to a `seq` sent again, nothing applied); throws a SheetError for a problem answer.
     * `fields`: request header fields to send besides Content-Type (a numbered event's `Sheetd-Seq`).
     * @param {string} method @param {string} path @param {any} [body] @param {AbortSignal} [signal]
     * @param {Record<string, string>} [fields]
     * @returns {Promise<{body: any, replay: boolean}>}
     */
    async exchange(method, path, body, signal, fields) {
        /** @type {Record<string, string>} */
        const headers = { ...fields };
        /** @type {RequestInit} */
        const init = { method, signal, headers };
        if (body !== undefined) {
            init.body = JSON.stringify(body);
            headers["Content-Type"] = "application/json";
        }
        const delay = this.addedLatency / 2;
        if (delay > 0) await sleep(delay);
        const response = await fetch(this.url(path), init);
        const text = await response.text();
        if (delay > 0) await sleep(delay);
        let json = null;
        if (text) {
            try {
                json = JSON.parse(text);
            } catch {
                json = { detail: text };
            }
        }
        if (!response.ok) {
            const retryAfter = Number.parseInt(response.headers.get("Retry-After") ?? "", 10);
            throw new SheetError(response.status, json ?? {}, Number.isFinite(retryAfter) ? retryAfter : null);
        }
        return { body: json, replay: response.headers.get("Sheetd-Replay") === "true" };
    }

    /**
     * Every preset, its options (with defaults) and detents for the default geometry.
     * @returns {Promise<PresetInfo[]>}
     */
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
        const session = new SheetSession(this, snapshot);
        session.sentOptions = { ...(config.options ?? {}) };
        this._register(session);
        return session;
    }

    /**
     * A handle on an existing session (call `get()` to load its snapshot).
     * @param {string} id
     */
    session(id) {
        return this._register(new SheetSession(this, /** @type {any} */ ({ id })));
    }

    /**
     * The sessions this client created or holds a handle on, by id: a stack's cards find each
     * other here (a child's parent, a parent's open children, the cards a cascade closed).
     * @type {Map<string, SheetSession>}
     */
    _sessions = new Map();

    /**
     * @param {SheetSession} session @returns {SheetSession}
     */
    _register(session) {
        this._sessions.set(session.id, session);
        return session;
    }

    /**
     * @param {SheetSession} session
     */
    _forget(session) {
        if (this._sessions.get(session.id) === session) this._sessions.delete(session.id);
    }
}

/** How long a jump (a catch, the release joining sheetd's animation) takes to blend out, seconds. */
const BLEND = 0.12;
/** How fast a released card's coasting velocity decays while it waits for sheetd, seconds. */
const COAST_DECAY = 0.08;

/**
 * Whether a predicted animation is the one sheetd answered: the same target, curve and start,
 * and the same numbers to 1e-9 relative (the springs' exp, sin and cos may differ in the last bit
 * between JavaScript engines and the server's libm).
 * @param {LocalAnimation} local @param {Animation | null | undefined} answered
 * @param {ScrollFling | null} [handed]  the answer's `scrollFling` (null: none), where it can have one
 */
function sameAnimation(local, answered, handed = undefined) {
    if (!answered || answered.detent !== local.detent || answered.curve !== local.curve) return false;
    const closeTo = (/** @type {number} */ a, /** @type {number} */ b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    // A hand-off to the content: predicted exactly when the answer has one (`scrollFling`).
    if (handed !== undefined && (!local.scrollFling !== !handed
        || (handed && local.scrollFling && !(closeTo(handed.time, local.scrollFling.time) && closeTo(handed.velocity, local.scrollFling.velocity))))) return false;
    const close = (/** @type {number} */ a, /** @type {number} */ b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    return close(answered.startTime, local.startTime) && close(answered.from, local.from) && close(answered.to, local.to)
        && close(answered.duration, local.duration) && close(answered.initialVelocity ?? 0, local.initialVelocity ?? 0)
        && close(answered.velocity ?? 0, local.velocity ?? 0);
}

/** One card. Mutating calls are serialized; each resolves with sheetd's Result. */
export class SheetSession {
    /**
     * @param {SheetClient} client
     * @param {Snapshot} snapshot
     */
    constructor(client, snapshot) {
        this.client = client;
        /** @type {string} */
        this.id = /** @type {string} */ (snapshot.id);
        /**
         * The last snapshot seen (from create, replace, get or a settled/interrupted frame event).
         * @type {Snapshot}
         */
        this.snapshot = snapshot;
        /**
         * Predict (client-clock sessions): draw from the drag law and play sheetd's frames on
         * this clock. Off: `at()` follows the answers only (the card waits for the network).
         */
        this.predicting = true;
        /** Frames per second of the animations sheetd returns with each answer (`?frames=`) while predicting. */
        this.playbackFps = 120;
        /**
         * fluid with `momentumHandOff`: called when a release hands the card's momentum to the
         * content (`scrollFling`: when, on the session's clock, and the velocity), predicted on the
         * frame of the release, or from the answer where the release was not predicted.
         * @type {((fling: ScrollFling) => void) | null}
         */
        this.onScrollFling = null;
        /**
         * Number the event requests (`seq`, one more for each the session acknowledged), so that
         * sheetd applies each once: a request whose answer was lost is sent again (`retries`) and
         * answered as the first time, and the requests acknowledged in the last `keepAcknowledged`
         * seconds are kept and sent again when the session answers that it lacks them (its
         * instance died before writing them to the store). false: no `seq`, no retry.
         */
        this.numbering = client.numbering ?? true;
        /**
         * Tries more of a numbered request whose answer was lost (the connection dropped; a
         * proxy's 502, 503 or 504) or that the session asked to send later (Retry-After), each
         * after a backoff (0.1 s doubling, up to 2 s, or the Retry-After). 0: none.
         */
        this.retries = 4;
        /** Seconds an acknowledged request is kept to be sent again, counted at each later acknowledgement. */
        this.keepAcknowledged = 5;
        /** The last `seq` sent. */
        this._seq = 0;
        /** The last `seq` the session is known to have applied (an acknowledgement, or its word). */
        this._acknowledged = 0;
        /** @type {{seq: number, method: string, target: string, body: any, at: number}[]} acknowledged requests, oldest first */
        this._kept = [];
        /** @type {PredictionStats} */
        this.stats = this._freshStats(0);
        /** @type {Promise<any>} */
        this._tail = Promise.resolve();
        /** @type {any} */
        this._queued = null; // the last queued job not yet sent
        this._lastTime = -Infinity;
        /** Local gestures started (began, show, dismiss): an answer moves the card only if no newer one began. */
        this._gesture = 0;
        /** @type {(DragSegment & {estimated?: boolean}) | null} the current drag's segment, as predicted or as answered */
        this._segment = null;
        /** @type {{t: number, x: number}[]} this drag's samples (time, translation) */
        this._samples = [];
        /** @type {any} what `at()` draws: see _motionAt */
        this._motion = this._restMotion(snapshot);
        /** @type {{constant: number, alpha: number, progress: number, t0: number} | null} a jump being blended out */
        this._blend = null;
        /** The highest animation number played from an answer's frames. */
        this.playedAnimation = -1;
        /**
         * The layout around the card as this client knows it: the last it sent (`layout()`), or
         * the snapshot's.
         * @type {Layout}
         */
        this.layoutState = layoutOf(snapshot);
        /** The layout revision of the laws `snapshot` holds: one more for each layout change predicted. */
        this.revision = snapshot.revision ?? 0;
        /** The revision sheetd will be at once the layout events queued are applied. */
        this._expectedRevision = this.revision;
        /** @type {string | null} `extend`: the detent the keyboard took the card from */
        this._keyboardReturn = null;
        /**
         * The options this session was created with, where this client created it (fluid's
         * dimmer on a new layout depends on whether `undimmedDetent` was sent); null: unknown.
         * @type {Record<string, any> | null}
         */
        this.sentOptions = null;
        /** A drag refused locally (the keyboard is up and the law's keyboardDrag is false). */
        this._locked = false;
    }

    get path() {
        return `sessions/${encodeURIComponent(this.id)}`;
    }

    /** Starts the counters of `stats` afresh (a request in flight stays counted as in flight). */
    resetStats() {
        this.stats = this._freshStats(this.stats.inFlight);
    }

    /**
     * @param {number} inFlight
     * @returns {PredictionStats}
     */
    _freshStats(inFlight) {
        return {
            samples: 0, eventsSent: 0, requestsSent: 0, largestBatch: 0, inFlight, maxInFlight: inFlight,
            predictions: 0, mismatches: 0, maxError: 0, catches: 0, corrections: 0, releases: 0, releaseMismatches: 0,
            layouts: 0, layoutMismatches: 0, layoutsUnpredicted: 0,
            transforms: 0, transformMismatches: 0,
            retried: 0, replays: 0, resent: 0, acknowledgedLost: 0, renumbered: 0,
        };
    }

    get clientClock() {
        return this.snapshot.clock === "client";
    }

    /** Predictions need the client clock (times are what sheetd's animations and estimates run on) and a law. */
    get predicts() {
        return this.predicting && this.clientClock && !!this.snapshot.dragLaw;
    }

    /**
     * Re-creates this session with a new configuration (same id); its open streams get `closed`.
     * @param {SessionConfig} config
     */
    async replace(config) {
        const snapshot = await this._enqueue("PUT", this.path, config, "other");
        this._lastTime = -Infinity;
        this._restartNumbering();
        this._adopt(snapshot);
        this.sentOptions = { ...(config.options ?? {}) };
        return this.snapshot;
    }

    /**
     * The snapshot now.
     * @returns {Promise<Snapshot>}
     */
    async get() {
        const snapshot = await this.client.request("GET", this.path);
        this._adopt(snapshot);
        return this.snapshot;
    }

    /** Ends the session. */
    delete() {
        this.client._forget(this);
        return this._enqueue("DELETE", this.path, undefined, "other");
    }

    /**
     * What sheetd will answer to a `changed` at `translation` in the current drag: the drag law
     * evaluated in the drag's segment. null when there is no drag, or where the answer depends on
     * more than the finger (a `scrollOffset` the content may take).
     * @param {number} translation @returns {Prediction | null}
     */
    predict(translation) {
        const law = this.snapshot.dragLaw;
        if (!law || !this._segment) return null;
        return evaluateDragLaw(law, this._segment, translation);
    }

    /**
     * Where to draw the card at `time` (seconds on the client clock, e.g. a requestAnimationFrame
     * timestamp / 1000): the prediction while dragging, the release law's animation after a
     * release (or sheetd's frames where the answer differs), with any jump blended out over 0.12 s.
     * @param {number} [time] @returns {CardState}
     */
    at(time = clientTime()) {
        const raw = this._motionAt(time);
        const b = this._blend;
        if (!b) return raw;
        const u = (time - b.t0) / BLEND;
        if (u >= 1 || u < 0) {
            if (u >= 1) this._blend = null;
            return raw;
        }
        const k = 1 - u * u * (3 - 2 * u); // smoothstep down from 1 to 0
        return {
            ...raw,
            constant: raw.constant + b.constant * k,
            dimmerAlpha: Math.min(1, Math.max(0, raw.dimmerAlpha + b.alpha * k)),
            progress: raw.progress + b.progress * k,
        };
    }

    /** Whether the card is moving (or waiting to): a front end keeps drawing `at()` every frame while true. */
    get moving() {
        return this._motion.kind !== "rest" || this._blend !== null;
    }

    /**
     * One pan event.
     * @param {PanPhase} phase @param {number} [translation] @param {PanOptions} [options]
     * @returns {Promise<Result>}
     */
    pan(phase, translation, options = {}) {
        // The keyboard is up and the law locks the drag: sheetd would refuse `began` (409
        // keyboard-locked) and with it every event of its batch; the drag is refused here.
        const law = this.snapshot.layoutLaw;
        if (phase === "began") this._locked = !!law && keyboardActs(law) && !law.keyboardDrag && this.layoutState.keyboardInset > 0;
        if (this._locked) {
            if (phase === "ended" || phase === "cancelled") this._locked = false;
            return Promise.reject(new SheetError(409, { code: "keyboard-locked", detail: "the keyboard is up and this session's keyboardDrag option is false" }));
        }
        /** @type {Record<string, any>} */
        const event = { phase, time: this._stamp(options.time ?? clientTime()) };
        if (translation !== undefined) event.translation = translation;
        if (options.velocity !== undefined) event.velocity = options.velocity;
        if (options.scrollOffset !== undefined) event.scrollOffset = options.scrollOffset;
        if (options.reducedMotion !== undefined) event.reducedMotion = options.reducedMotion;
        this.stats.samples += 1;
        const record = this._predictEvent(event);
        return this._enqueue("POST", `${this.path}/pan`, event, "pan", record);
    }

    /**
     * The finger touches the card.
     * @param {PanOptions} [options]
     */
    began(options) {
        return this.pan("began", undefined, options);
    }
    /**
     * The finger moved: `translation` is the total since `began`, points, down positive.
     * @param {number} translation
     * @param {PanOptions} [options]
     */
    changed(translation, options) {
        return this.pan("changed", translation, options);
    }
    /**
     * The finger lifted. Without `velocity`, sheetd estimates it from the recent `changed` events.
     * @param {number} [translation]
     * @param {PanOptions} [options]
     */
    ended(translation, options) {
        return this.pan("ended", translation, options);
    }
    /**
     * The gesture was cancelled (pointercancel): back to the detent it began at.
     * @param {PanOptions} [options]
     */
    cancelled(options) {
        return this.pan("cancelled", undefined, options);
    }

    /**
     * A fling of the card's content reached the content's top with `velocity` (pt/s, > 0:
     * downward) while the card rests where its content scrolls (fluid's `contentScrollsAt`): the
     * card takes the momentum, released from its detent by the release law (predicted like
     * `ended`). Elsewhere sheetd answers 409.
     * `reducedMotion`: this request's own setting (true jumps, false animates; absent: the session's).
     * @param {number} velocity @param {{time?: number, reducedMotion?: boolean}} [options] @returns {Promise<Result>}
     */
    fling(velocity, options = {}) {
        /** @type {Record<string, any>} */
        const event = { phase: "fling", velocity, time: this._stamp(options.time ?? clientTime()) };
        if (options.reducedMotion !== undefined) event.reducedMotion = options.reducedMotion;
        this.stats.samples += 1;
        const record = this._predictEvent(event);
        return this._enqueue("POST", `${this.path}/pan`, event, "pan", record);
    }

    /**
     * The layout around the card changed (the keyboard, the content's height, the screen):
     * `{"phase": "layout"}` on the pan route, queued behind the events already made (in the
     * batch of a gesture in progress, so its order among them is kept). While predicting, the
     * card moves on this call: the layout law evaluated on the new layout places the detents, the
     * card goes to its detent by name (its position and velocity kept: the release law's spring,
     * a jump, or the timing curve `motion` gives), a dragged card stays under the finger; the
     * answer confirms it (`stats.layouts`, `stats.layoutMismatches`) and brings the laws of the
     * new revision. A partial `geometry` keeps the other members of the current one.
     * @param {LayoutChange} change @returns {Promise<Result>}
     */
    layout(change) {
        /** @type {Record<string, any>} */
        const event = { phase: "layout", time: this._stamp(change.time ?? clientTime()) };
        if (change.geometry !== undefined) event.geometry = { ...this.layoutState.geometry, ...change.geometry };
        if (change.keyboardInset !== undefined) event.keyboardInset = change.keyboardInset;
        if (change.contentHeight !== undefined) event.contentHeight = change.contentHeight;
        if (change.options !== undefined) event.options = change.options;
        if (change.motion !== undefined) event.motion = change.motion;
        if (change.reducedMotion !== undefined) event.reducedMotion = change.reducedMotion;
        this.stats.samples += 1;
        const record = this._predictEvent(event);
        return this._enqueue("POST", `${this.path}/pan`, event, "pan", record);
    }

    /**
     * Follows the page's layout and sends each change (`layout()`), at most one layout event per
     * animation frame: the first change of a frame leaves at once (the card moves on that frame),
     * later ones of the same frame together on the next. Only what differs from the layout the
     * client holds is sent. Returns a function that stops observing.
     * @param {LayoutObserverOptions} options
     * @returns {() => void}
     */
    observeLayout(options) {
        const scale = options.scale ?? (() => 1);
        const keyboardMotion = options.keyboardMotion ?? { curve: "easeOut", duration: 0.25 };
        /** @type {LayoutChange} */
        let pending = {};
        let busy = false;
        /** @type {(() => void)[]} */
        const stops = [];
        const flush = () => {
            const L = this.layoutState;
            /** @type {LayoutChange} */
            const change = {};
            const p = pending;
            pending = {};
            if (p.keyboardInset !== undefined && p.keyboardInset !== L.keyboardInset) change.keyboardInset = p.keyboardInset;
            if (p.contentHeight !== undefined && p.contentHeight !== L.contentHeight) change.contentHeight = p.contentHeight;
            if (p.geometry) {
                const g = { ...L.geometry, ...p.geometry };
                if (g.height !== L.geometry.height || g.safeAreaTop !== L.geometry.safeAreaTop || g.safeAreaBottom !== L.geometry.safeAreaBottom) change.geometry = g;
            }
            if (Object.keys(change).length === 0) return false;
            // The keyboard bounded by the screen it is on (sheetd refuses an inset taller).
            const height = change.geometry?.height ?? L.geometry.height;
            if ((change.keyboardInset ?? L.keyboardInset) > height) change.keyboardInset = height;
            if (change.keyboardInset !== undefined) change.motion = keyboardMotion;
            const result = this.layout(change);
            result.catch(() => {});
            options.onLayout?.(result, change);
            return true;
        };
        const frame = () => {
            busy = true;
            requestAnimationFrame(() => {
                busy = false;
                if (flush()) frame();
            });
        };
        /** @param {LayoutChange} change */
        const changed = (change) => {
            Object.assign(pending, change);
            if (!busy && flush()) frame();
        };
        if (options.keyboard) {
            const o = options.keyboard === true ? {} : options.keyboard;
            const viewport = o.viewport ?? /** @type {LayoutViewport | null} */ (window.visualViewport);
            const layoutHeight = o.layoutHeight ?? (() => window.innerHeight);
            if (viewport) {
                const read = () => {
                    const covered = layoutHeight() - (viewport.height + viewport.offsetTop);
                    changed({ keyboardInset: Math.max(0, covered / scale()) });
                };
                viewport.addEventListener("resize", read);
                viewport.addEventListener("scroll", read);
                stops.push(() => { viewport.removeEventListener("resize", read); viewport.removeEventListener("scroll", read); });
            }
        }
        if (options.content) {
            const observer = new ResizeObserver((entries) => {
                const e = entries[entries.length - 1];
                const box = e.borderBoxSize?.[0];
                const h = box ? box.blockSize : e.target.getBoundingClientRect().height;
                changed({ contentHeight: h / scale() });
            });
            observer.observe(options.content);
            stops.push(() => observer.disconnect());
        }
        if (options.geometry) {
            const o = options.geometry === true
                ? { element: undefined, read: () => ({ ...this.layoutState.geometry, height: window.innerHeight / scale() }) }
                : options.geometry;
            const read = () => changed({ geometry: o.read() });
            window.addEventListener("resize", read);
            window.addEventListener("orientationchange", read);
            stops.push(() => { window.removeEventListener("resize", read); window.removeEventListener("orientationchange", read); });
            if (o.element) {
                const observer = new ResizeObserver(read);
                observer.observe(o.element);
                stops.push(() => observer.disconnect());
            }
        }
        return () => { for (const stop of stops) stop(); };
    }

    /**
     * Presents the card, or moves it to `detent`.
     * @param {string} [detent]
     * `reducedMotion`: this request's own setting (true jumps, false animates; absent: the session's).
     * @param {{time?: number, reducedMotion?: boolean}} [options]
     * @returns {Promise<Result>}
     */
    show(detent, options = {}) {
        /** @type {Record<string, any>} */
        const body = {};
        if (detent) body.detent = detent;
        if (options.reducedMotion !== undefined) body.reducedMotion = options.reducedMotion;
        if (options.time !== undefined || this.clientClock) body.time = this._stamp(options.time ?? clientTime());
        return this._enqueue("POST", `${this.path}/show`, body, "move", this._hold(body.time));
    }

    /**
     * The tap on the dimmer. With `cascade`, the open cards stacked on this one close with it, at
     * the same instant (the answer's `cascade` lists them; those this client holds follow).
     * `reducedMotion`: this request's own setting (true jumps, false animates; absent: the session's).
     * @param {{time?: number, cascade?: boolean, reducedMotion?: boolean}} [options]
     * @returns {Promise<Result>}
     */
    dismiss(options = {}) {
        /** @type {Record<string, any>} */
        const body = {};
        if (options.reducedMotion !== undefined) body.reducedMotion = options.reducedMotion;
        if (options.time !== undefined || this.clientClock) body.time = this._stamp(options.time ?? clientTime());
        if (options.cascade) body.cascade = true;
        return this._enqueue("POST", `${this.path}/dismiss`, body, "move", this._hold(body.time));
    }

    /**
     * An accessibility step (a screen reader's increment or decrement, an arrow key on the
     * handle): to the next detent up (`expand`) or down (`collapse`; from the lowest, where the
     * preset can hide, away). The answer's `announcement` is what to say (politely) and `value`
     * the sheet's accessibility value.
     * `reducedMotion`: this request's own setting (true jumps, false animates; absent: the session's).
     * @param {"expand" | "collapse"} direction @param {{time?: number, reducedMotion?: boolean}} [options]
     * @returns {Promise<Result>}
     */
    step(direction, options = {}) {
        /** @type {Record<string, any>} */
        const body = { direction };
        if (options.reducedMotion !== undefined) body.reducedMotion = options.reducedMotion;
        if (options.time !== undefined || this.clientClock) body.time = this._stamp(options.time ?? clientTime());
        return this._enqueue("POST", `${this.path}/step`, body, "move", this._hold(body.time));
    }

    /**
     * Whether the page behind the card takes input with the card at `constant` (the session's
     * `modality` law: at and below `interactiveFrom`), so a page passes its clicks through.
     * @param {number} constant @returns {boolean}
     */
    backgroundInteractive(constant) {
        const from = this.snapshot.modality?.interactiveFrom;
        return from !== undefined && constant >= from;
    }

    // ------------------------------------------------------------ stacks

    /**
     * Called when sheetd refuses a request because an open card stacked on this one covers it
     * (409 `covered`): the page may say so. Nothing changed and, where this client holds the
     * covering card, nothing was predicted (the card did not move); the request's promise still
     * rejects with the SheetError.
     * @type {((info: CoveredInfo) => void) | null}
     */
    onCovered = null;

    /**
     * The elements this card draws by its recession (`recedeInto`).
     * @type {{parent?: RecedeTarget | null, backdrop?: RecedeTarget | null}}
     */
    recedeTargets = {};

    /**
     * The recession last drawn (`drawRecession`): the constant it was evaluated at and the transforms.
     * @type {{constant: number, parent: SheetTransform | null, backdrop: SheetTransform | null} | null}
     */
    lastRecession = null;

    /**
     * The session this card is stacked on, where this client holds it; null for a root card.
     * @returns {SheetSession | null}
     */
    get parentSession() {
        const id = this.snapshot.parent;
        return id ? this.client._sessions.get(id) ?? null : null;
    }

    /**
     * The recede law evaluated here at `constant` (default: where the card is drawn now): what this
     * card does to its parent (a stacked card: `parent`) and to the page behind it (a root card
     * whose law has `backdrop`: `backdrop`), each null where there is none. Exactly sheetd's
     * `parentTransform` and `backdropTransform` at that constant.
     * @param {number} [constant] @returns {{parent: SheetTransform | null, backdrop: SheetTransform | null}}
     */
    recession(constant = this.at().constant) {
        const law = this.snapshot.recedeLaw, drag = this.snapshot.dragLaw;
        if (!law || !drag) return { parent: null, backdrop: null };
        const t = evaluateRecedeLaw(law, drag, constant);
        const stacked = !!this.snapshot.parent;
        return { parent: stacked ? t : null, backdrop: !stacked && law.backdrop ? t : null };
    }

    /**
     * Wires what this card recedes: `parent`, the surface of the sheet it is stacked on, and
     * `backdrop`, the page behind a root card. `draw()` draws them every frame from the card's
     * constant (or `drawRecession` from a streamed frame's).
     * @param {{parent?: RecedeTarget | null, backdrop?: RecedeTarget | null}} targets @returns {this}
     */
    recedeInto(targets) {
        this.recedeTargets = { ...targets };
        return this;
    }

    /**
     * Where to draw the card at `time` (`at(time)`), with what lies beneath it drawn from that
     * constant (the targets of `recedeInto`): one frame of the card moves both.
     * @param {number} [time] @returns {CardState}
     */
    draw(time = clientTime()) {
        const state = this.at(time);
        this.drawRecession(state.constant);
        return state;
    }

    /**
     * Draws the wired targets by the recede law at `constant` (the card's drawn constant, predicted
     * or streamed) and returns the transforms.
     * @param {number} constant @returns {{parent: SheetTransform | null, backdrop: SheetTransform | null}}
     */
    drawRecession(constant) {
        const r = this.recession(constant);
        const targets = this.recedeTargets;
        if (targets.parent && r.parent) applyRecession(targets.parent, r.parent, this.parentSession?.snapshot.dragLaw?.edge);
        if (targets.backdrop && r.backdrop) applyRecession(targets.backdrop, r.backdrop, this.snapshot.dragLaw?.edge);
        this.lastRecession = { constant, ...r };
        return r;
    }

    /**
     * Whether the card is open at `time` as this client knows it (anything but hidden at rest): an
     * open card covers its parent.
     * @param {number} [time]
     */
    openAt(time = clientTime()) {
        if (!this.predicts) return this.snapshot.state !== "hidden";
        this._motionAt(time); // settles an animation that ended
        const m = this._motion;
        return !(m.kind === "rest" && (m.detent === "hidden" || this.snapshot.state === "hidden"));
    }

    /**
     * The open card stacked on this one at `time`, among those this client holds (null: none known).
     * @param {number} [time] @returns {SheetSession | null}
     */
    coveredAt(time = clientTime()) {
        for (const s of this.client._sessions.values()) {
            if (s !== this && s.snapshot.parent === this.id && s.openAt(time)) return s;
        }
        return null;
    }

    /**
     * Whether an event is refused by sheetd because this card is covered (a layout change never
     * is): decided at a gesture's start, for the whole gesture.
     * @param {Record<string, any>} event
     */
    _coveredFor(event) {
        if (event.phase === "layout") return false;
        if (event.phase !== "changed") this._coveredGesture = !!this.coveredAt(event.time);
        return this._coveredGesture;
    }

    /** Whether the gesture in progress began on a covered card. */
    _coveredGesture = false;

    /**
     * A refused request: where it is 409 `covered`, tells `onCovered` and returns true (the card
     * keeps what it does: nothing was predicted where the covering card is held here; else what
     * was predicted is undone, as for any refusal).
     * @param {unknown} e @param {any} job
     */
    _coveredRefusal(e, job) {
        if (!(e instanceof SheetError) || e.code !== "covered") return false;
        if (job.records.some((/** @type {any} */ r) => r && (r.prediction || r.release || r.segment))) {
            this._segment = null;
            this._motion = this._restMotion(this.snapshot);
        }
        if (job.events.some((/** @type {any} */ ev) => ev && ev.phase === "layout") || this.revision !== this._expectedRevision) this.get().catch(() => {});
        const named = /covered by its child (\S+)/.exec(e.message);
        const phases = job.events.map((/** @type {any} */ ev) => (job.kind === "pan" ? ev.phase : String(job.path).split("/").pop()));
        this.onCovered?.({ coveredBy: this.coveredAt()?.id ?? (named ? named[1] : null), phases, error: e });
        return true;
    }

    /**
     * Compares the transforms an answer or a frame carries with the recede law evaluated here at
     * `constant`, bit for bit (`stats.transforms`, `stats.transformMismatches`).
     * @param {{parentTransform?: SheetTransform, backdropTransform?: SheetTransform}} x
     * @param {DragLaw | null | undefined} drag @param {RecedeLaw | null | undefined} law @param {number} constant
     */
    _checkTransforms(x, drag, law, constant) {
        if (!x.parentTransform && !x.backdropTransform) return;
        const expected = law && drag ? evaluateRecedeLaw(law, drag, constant) : null;
        for (const got of [x.parentTransform, x.backdropTransform]) {
            if (!got) continue;
            this.stats.transforms += 1;
            if (!expected || !sameTransform(got, expected)) this.stats.transformMismatches += 1;
        }
    }

    /**
     * An answer arrived (before `_answered` reads it): its recede law is taken, its transforms and
     * those of its frames are checked against the law evaluated at the constants they belong to
     * (a predicted drag's: the constant drawn), and the cards a cascade closed follow.
     * @param {Result} r @param {any} job
     */
    _stackAnswered(r, job) {
        const fresh = r.revision === undefined || r.revision >= this.revision;
        if (r.recedeLaw && fresh) this.snapshot = { ...this.snapshot, recedeLaw: r.recedeLaw };
        // sheetd's laws for this answer: its own, else the snapshot's where no layout change is on its way
        const drag = r.dragLaw ?? (this.revision === this._expectedRevision ? this.snapshot.dragLaw : null);
        const law = r.recedeLaw ?? this.snapshot.recedeLaw;
        if (drag) {
            const event = job.events[job.events.length - 1], record = job.records[job.records.length - 1];
            const drawn = event?.phase === "changed" && r.state === "dragging" && record?.prediction && !record.estimated
                ? record.prediction.constant : r.constant;
            this._checkTransforms(r, drag, law, drawn);
            for (const f of r.frames ?? []) this._checkTransforms(f, drag, law, f.constant);
        }
        for (const id of r.cascade ?? []) this.client._sessions.get(id)?._followCascade(r.time);
    }

    /**
     * A layout event's answer says whether the session is under reduced motion now (`reducedMotion`
     * present and true, or absent): the snapshot follows, and with it `_jump` (no blend then).
     * @param {Result} r
     */
    _reducedMotionAnswered(r) {
        if (r.geometry === undefined || (r.revision !== undefined && r.revision < this.revision)) return;
        if (r.reducedMotion) this.snapshot = { ...this.snapshot, reducedMotion: true };
        else if (this.snapshot.reducedMotion) this.snapshot = { ...this.snapshot, reducedMotion: undefined };
    }

    /**
     * This card was closed by a cascade from a card beneath it, at `time` (client clock): it holds
     * where it is drawn, then plays the dismiss animation sheetd started for it (its snapshot's, in
     * closed form).
     * @param {number} time
     */
    async _followCascade(time) {
        const record = this._hold(time);
        this._lastTime = Math.max(this._lastTime, time);
        this._segment = null;
        let snapshot;
        try {
            snapshot = /** @type {Snapshot} */ (await this.client.request("GET", this.path));
        } catch {
            if (record.gesture === this._gesture && this.predicts) this._motion = this._restMotion(this.snapshot);
            return;
        }
        const { state, detent, constant, dimmerAlpha, progress, animation } = snapshot;
        this.snapshot = { ...this.snapshot, state, detent, constant, dimmerAlpha, progress, animation, time: snapshot.time };
        if (record.gesture !== this._gesture || !this.predicts) return; // a newer gesture owns the card
        const t = clientTime();
        const before = this.at(t);
        const a = animation ? closedForm(animation, this.snapshot.dragLaw) : null;
        if (a && animation) {
            this.playedAnimation = Math.max(this.playedAnimation, animation.id);
            this._motion = { kind: "animation", animation: a, frames: null };
        } else {
            this._motion = this._restMotion(snapshot);
        }
        this._jump(before, t);
    }

    /**
     * Subscribes to the frames of every animation of this session (one EventSource). A dropped
     * connection reconnects by itself and resumes after the last frame (`Last-Event-ID`).
     * While predicting, the animations this client started come with its answers; the stream
     * still carries them (and those other clients start): `playedAnimation` tells which are
     * played locally already.
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
            /**
             * The id (`animation:index`) of the last frame received; a reconnect resumes after it.
             * @type {string | null}
             */
            lastEventId: /** @type {string | null} */ (null),
            /** Frames received so far. */
            frameCount: 0,
            close: () => source.close(),
        };
        /**
         * @param {MessageEvent} e
         */
        const snapshotOf = (e) => {
            const s = JSON.parse(e.data);
            if (s && s.preset) this.snapshot = { ...s, id: this.id };
            return this.snapshot;
        };
        source.addEventListener("open", () => handlers.onOpen?.({ resumedFrom: stream.lastEventId }));
        source.addEventListener("frame", (e) => {
            stream.lastEventId = e.lastEventId;
            stream.frameCount += 1;
            const frame = JSON.parse(e.data);
            this._checkTransforms(frame, this.snapshot.dragLaw, this.snapshot.recedeLaw, frame.constant);
            handlers.onFrame?.(frame, e);
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

    // ------------------------------------------------------------ prediction

    /**
     * A time for the next request: microseconds, never before the previous one.
     * @param {number} t
     */
    _stamp(t) {
        const time = Math.max(Math.round(t * 1e6) / 1e6, this._lastTime);
        this._lastTime = time;
        return time;
    }

    /**
     * @param {Snapshot} snapshot
     */
    _adopt(snapshot) {
        this.snapshot = snapshot;
        this.layoutState = layoutOf(snapshot);
        this.revision = snapshot.revision ?? 0;
        this._expectedRevision = this.revision;
        this._locked = false;
        this._segment = snapshot.drag ? { ...snapshot.drag } : null;
        this._gesture += 1;
        this._motion = this._restMotion(snapshot);
        this._blend = null;
    }

    /**
     * @param {{constant: number, dimmerAlpha: number, progress: number, detent?: string | null}} s
     */
    _restMotion(s) {
        return { kind: "rest", constant: s.constant, dimmerAlpha: s.dimmerAlpha, progress: s.progress, detent: s.detent ?? null };
    }

    /**
     * Starts blending out the jump from what was drawn at `time` to what will be drawn now.
     * @param {CardState} before
     * @param {number} time
     */
    _jump(before, time) {
        if (this.snapshot.reducedMotion) return; // reduced motion: a jump is drawn as one
        const after = this._motionAt(time);
        const dc = before.constant - after.constant;
        if (Math.abs(dc) < 1e-6 && Math.abs(before.dimmerAlpha - after.dimmerAlpha) < 1e-9) return;
        this._blend = { constant: dc, alpha: before.dimmerAlpha - after.dimmerAlpha, progress: before.progress - after.progress, t0: time };
        this.stats.corrections += 1;
    }

    /**
     * What the card does as this event leaves: the local half of prediction. Returns what the
     * answer is checked against.
     * @param {Record<string, any>} event
     */
    _predictEvent(event) {
        const t = event.time;
        const law = this.snapshot.dragLaw;
        const record = {
            gesture: this._gesture, phase: event.phase, translation: event.translation, prediction: /** @type {Prediction | null} */ (null), estimated: false,
            release: /** @type {LocalAnimation | null} */ (null),
            // what the prediction used: the laws' revision, the drag law and segment
            revision: this.revision, law, segment: /** @type {DragSegment | null} */ (null),
            // a layout change: what the answer of its revision is checked against
            layout: /** @type {any} */ (null),
        };
        if (event.phase !== "changed") {
            this._gesture += 1;
            record.gesture = this._gesture;
        }
        if (event.phase === "layout") return this._predictLayout(event, record);
        if (!this.predicts) return record;
        if (this._coveredFor(event)) return record; // an open card stacked on this one covers it: sheetd refuses it (409), nothing moves
        if (event.phase === "fling") {
            // The content's momentum, taken by the card where it rests: a release from its detent.
            const m = this._motion;
            if (m.kind === "rest" && m.detent && this.revision === this._expectedRevision) {
                const from = this._motionAt(t).constant;
                const snap = evaluateReleaseLaw(this.snapshot.releaseLaw, this.snapshot.detents, from, event.velocity, m.detent);
                record.release = snap && this._startLocal({ from, to: snap.detent, velocity: event.velocity, startTime: t, release: true, reducedMotion: event.reducedMotion });
            }
            return record;
        }
        if (this.revision !== this._expectedRevision) {
            // A layout change not predicted is on its way: the laws are not known until its answer.
            if (event.phase === "began") this._samples = [];
            if (event.phase === "changed") this._samples.push({ t, x: event.translation });
            this._segment = null;
            this._motion = { kind: "hold", state: this.at(t) };
            return record;
        }
        const drawn = this.at(t);
        const m = this._motion;
        if (event.phase === "began") {
            this._samples = [];
            if (this.snapshot.state === "hidden" && m.kind === "rest") {
                this._segment = null; // sheetd refuses it (409): there is nothing to grab
                return record;
            }
            // A card at rest is caught exactly where sheetd has it; a moving one where its
            // frames put it now (sheetd samples its closed form at the event's time: the began
            // answer's `drag.start` corrects the estimate, blended, and counts as a catch).
            const start = this._motionAt(t).constant;
            const base = event.translation ?? 0;
            record.estimated = m.kind !== "rest";
            // The detent a cancel returns to: where the card rests, or where its animation heads.
            const origin = m.kind === "rest" ? m.detent : m.kind === "animation" ? m.animation.detent : null;
            this._segment = { start, base, origin, contentCanScroll: null, finish: this._finishFor(origin), estimated: record.estimated };
            this._motion = { kind: "drag", translation: base, last: evaluateDragLaw(law, this._segment, base) };
            this._jump(drawn, t);
            return record;
        }
        if (event.phase === "changed") {
            this._samples.push({ t, x: event.translation });
            if (m.kind !== "drag" || !this._segment) return record; // a finished (transition) or unpredicted drag
            // The content may take a movement that carries scrollOffset: no prediction then.
            if (event.scrollOffset !== undefined && this._segment.contentCanScroll !== false) {
                this._motion = { kind: "hold", state: drawn };
                return record;
            }
            const p = evaluateDragLaw(law, this._segment, event.translation);
            this.stats.predictions += 1;
            record.prediction = p;
            record.segment = this._segment;
            record.estimated = !!this._segment.estimated;
            this._motion = { kind: "drag", translation: event.translation, last: p };
            // transition: an event that finishes the drag starts the animation to the other detent.
            const finish = this._segment.finish;
            if (p.finishes && finish) {
                record.release = this._startLocal({ from: p.constant, to: finish.detent, velocity: 0, startTime: t, reducedMotion: event.reducedMotion });
                if (!record.release) this._motion = { kind: "hold", state: p, finishing: true };
            }
            return record;
        }
        // ended: the release law's animation starts now (where it cannot be evaluated, the card
        // keeps moving at the release velocity until the answer); cancelled goes back to the origin.
        const segment = this._segment;
        if (event.phase === "ended" && m.kind === "drag" && segment) {
            const translation = event.translation ?? m.translation;
            const v = event.velocity ?? releaseVelocity(this._samples, t, this.snapshot.releaseLaw?.velocityWindow ?? 0.1);
            // an `ended` that carries a translation places the card there first
            const from = evaluateDragLaw(law, segment, translation);
            const snap = this._releaseLawApplies(segment)
                ? evaluateReleaseLaw(this.snapshot.releaseLaw, this.snapshot.detents, from.constant, v, segment.origin)
                : null;
            record.release = snap && this._startLocal({ from: from.constant, to: snap.detent, velocity: v, startTime: t, release: true, reducedMotion: event.reducedMotion });
            if (!record.release) this._motion = { kind: "coast", t0: t, translation, v, segment, law };
            if (from.constant !== m.last.constant) this._jump(drawn, t);
        } else if (event.phase === "cancelled" && m.kind === "drag" && segment?.origin) {
            record.release = this._startLocal({ from: m.last.constant, to: segment.origin, velocity: 0, startTime: t, reducedMotion: event.reducedMotion });
            if (!record.release) this._motion = { kind: "hold", state: drawn };
        } else if (m.kind === "drag") {
            this._motion = { kind: "hold", state: drawn };
        }
        return record;
    }

    /**
     * A layout change as it leaves: the layout law evaluated on the client's new layout places the
     * detents; the card follows by name (openapi.yaml's `LayoutLaw`, the engine's
     * `SheetSession+Layout.swift`). Returns what the answer is checked against.
     * @param {Record<string, any>} event @param {any} record
     */
    _predictLayout(event, record) {
        const t = event.time;
        const before = this.layoutState;
        /** @type {Layout} */
        const next = {
            geometry: event.geometry ?? before.geometry,
            keyboardInset: event.keyboardInset ?? before.keyboardInset,
            contentHeight: event.contentHeight ?? before.contentHeight,
        };
        const g = next.geometry;
        const valid = [g.height, g.safeAreaTop, g.safeAreaBottom, next.keyboardInset].every(Number.isFinite)
            && next.keyboardInset >= 0 && next.keyboardInset <= g.height
            && (next.contentHeight === null || (Number.isFinite(next.contentHeight) && next.contentHeight >= 0 && next.contentHeight <= 1e6))
            && axisGeometry(g, this.snapshot.layoutLaw?.edge) !== null;
        if (!valid) return record; // sheetd refuses it (400) and nothing changes
        const upToDate = this.revision === this._expectedRevision;
        this._expectedRevision += 1;
        this.layoutState = next;
        if (event.options && this.sentOptions) {
            for (const [k, v] of Object.entries(event.options)) {
                if (v === null) delete this.sentOptions[k];
                else this.sentOptions[k] = v;
            }
        }
        const law = this.snapshot.layoutLaw;
        const m0 = this._motion;
        const unpredicted = () => {
            this.stats.layoutsUnpredicted += 1;
            return record;
        };
        if (event.reducedMotion !== undefined) return unpredicted(); // the laws' motions change: the answer brings them
        if (!this.predicts || !law || !upToDate || event.options !== undefined || m0.kind === "hold" || m0.kind === "coast") return unpredicted();
        const old = this.snapshot;
        const resolved = resolveLayoutLaw(law, next);
        const options = old.options ?? {};
        const undimmedDetent = this.sentOptions ? this.sentOptions.undimmedDetent : options.undimmedDetent;
        const laws = relaidLaws(old.dragLaw, old.releaseLaw, resolved, next, {
            undimmedDetent, maxDimAlpha: options.maxDimAlpha ?? old.dragLaw.dimmer.full,
            momentumHandOff: options.momentumHandOff, contentScrollsAt: options.contentScrollsAt,
        });
        if (!laws) {
            // no visible detent: sheetd refuses it
            this._expectedRevision -= 1;
            this.layoutState = before;
            return record;
        }
        /** @type {Record<string, number>} */
        const detents = Object.fromEntries(resolved.detents.map((d) => [d.name, d.constant]));
        const visible = resolved.detents.filter((d) => d.name !== "hidden");
        const topMost = visible[0].name;
        const ag = axisGeometry(g, law.edge) ?? g;
        const H = ag.height - ag.safeAreaTop;
        const acts = keyboardActs(law);
        const extend = acts && law.keyboard === "extend";
        const rose = acts && before.keyboardInset === 0 && next.keyboardInset > 0;
        const fell = acts && before.keyboardInset > 0 && next.keyboardInset === 0;
        /** @type {LayoutMotion} */
        const motion = event.motion ?? law.motion;
        const state = this._motionAt(t); // settles an animation that ended
        const m = this._motion;
        const prediction = { revision: this.revision + 1, detents, unreachable: resolved.unreachable, dragLaw: laws.dragLaw, releaseLaw: laws.releaseLaw, still: false, segment: /** @type {DragSegment | null} */ (null) };
        if (m.kind === "rest" && m.detent === "hidden") {
            // A hidden card stays hidden, at the new H.
            this._keyboardReturn = null;
            this._motion = this._restMotion({ constant: H, dimmerAlpha: dimmerAlpha(laws.dragLaw, H), progress: progressOf(laws.dragLaw, H), detent: "hidden" });
            prediction.still = true;
        } else if ((m.kind === "rest" && m.detent) || m.kind === "animation") {
            // At rest, or heading for a detent: its detent on the new layout, from where the card
            // is at its velocity (an animation from sheetd's frames is sampled in closed form).
            let from = state.constant, alpha = state.dimmerAlpha, velocity = 0, name, oldConstant;
            if (m.kind === "animation") {
                const a = m.frames ? closedForm(m.animation, old.dragLaw) : m.animation;
                if (a) {
                    const s = sampleAnimation(a, t - a.startTime);
                    from = s.constant;
                    alpha = s.dimmerAlpha;
                    velocity = s.velocity;
                } else {
                    record.estimated = true;
                    velocity = this._frameVelocity(m.frames, t - m.animation.startTime);
                }
                name = m.animation.detent;
                oldConstant = m.animation.to;
            } else {
                name = m.detent;
                oldConstant = m.constant;
            }
            if (name === undefined || oldConstant === undefined) return unpredicted();
            const placed = placeDetent(name, oldConstant, old.dragLaw, resolved, laws.dragLaw);
            let target = placed;
            if (extend && rose && placed !== "hidden" && placed !== topMost) {
                this._keyboardReturn = placed;
                target = topMost;
            } else if (fell && this._keyboardReturn !== null) {
                const back = this._keyboardReturn;
                this._keyboardReturn = null;
                if (placed === topMost && detents[back] !== undefined) target = back;
            }
            const to = detents[target];
            if (m.kind === "rest" && from === to) {
                this._motion = this._restMotion({ constant: to, dimmerAlpha: dimmerAlpha(laws.dragLaw, to), progress: progressOf(laws.dragLaw, to), detent: target });
                prediction.still = true;
            } else {
                /** @type {LocalAnimation | null} */
                let a;
                if (motion === "release") {
                    a = releaseAnimation(laws.releaseLaw, laws.dragLaw, detents, { from, to: target, velocity, startTime: t });
                } else {
                    const curve = motion === "none" ? "linear" : motion.curve;
                    a = {
                        curve, from, to, duration: motion === "none" ? 0 : motion.duration, fromAlpha: alpha, toAlpha: 0, alphaRule: "interpolate",
                        startTime: t, detent: target, dismiss: target === "hidden", controlPoints: TIMING_CURVES[curve], dragLaw: laws.dragLaw,
                        sampleAt: () => ({ x: 0, v: 0 }),
                    };
                }
                if (!a) return unpredicted();
                // The dimmer goes from what the card shows to the target's alpha on the new layout.
                a.fromAlpha = alpha;
                a.toAlpha = dimmerAlpha(laws.dragLaw, to);
                a.alphaRule = "interpolate";
                this._motion = { kind: "animation", animation: a, frames: null };
                record.release = a;
            }
        } else if (m.kind === "drag" && this._segment) {
            // Dragged: re-based on the new law so that the card stays under the finger.
            const seg = this._segment;
            const origin = seg.origin && old.detents[seg.origin] !== undefined
                ? placeDetent(seg.origin, old.detents[seg.origin], old.dragLaw, resolved, laws.dragLaw) : null;
            if (extend && rose) this._keyboardReturn = origin;
            if (fell) this._keyboardReturn = null;
            const segment = {
                start: dragCandidate(laws.dragLaw, m.last.constant), base: m.translation, origin,
                contentCanScroll: seg.contentCanScroll, finish: null, estimated: seg.estimated,
            };
            this._segment = segment;
            this._motion = { kind: "drag", translation: m.translation, last: evaluateDragLaw(laws.dragLaw, segment, m.translation) };
            prediction.segment = segment;
            record.estimated = !!seg.estimated;
        } else {
            return unpredicted();
        }
        this.revision += 1;
        this.snapshot = {
            ...old, geometry: next.geometry, keyboardInset: next.keyboardInset, contentHeight: next.contentHeight, detents,
            unreachable: resolved.unreachable, dragLaw: laws.dragLaw, releaseLaw: laws.releaseLaw, revision: this.revision,
        };
        record.layout = prediction;
        this.stats.layouts += 1;
        return record;
    }

    /**
     * The velocity sheetd's frames give at `dt` seconds into their animation (between two frames, the earlier one's).
     * @param {Frame[]} frames @param {number} dt
     */
    _frameVelocity(frames, dt) {
        let v = 0;
        for (const f of frames) if (f.t <= dt) v = f.velocity;
        return frames.length > 0 && dt >= frames[frames.length - 1].t ? 0 : v;
    }

    /**
     * Whether the release law can be evaluated for this drag: it has one, and it knows the drag's
     * origin where a rule reads it (transition's, before the answer to `began` where the card was
     * caught elsewhere than at a detent).
     * @param {DragSegment} segment
     */
    _releaseLawApplies(segment) {
        const law = this.snapshot.releaseLaw;
        if (!law) return false;
        return !!segment.origin || !law.rules.some((r) => r.when.some((w) => w.origin !== undefined));
    }

    /**
     * Starts the release law's animation locally and counts it; null where it cannot be predicted.
     * @param {{from: number, to: string, velocity: number, startTime: number, release?: boolean, reducedMotion?: boolean}} move
     */
    _startLocal(move) {
        const law = this.snapshot.releaseLaw;
        const a = law ? releaseAnimation(law, this.snapshot.dragLaw, this.snapshot.detents, move) : null;
        if (!a) return null;
        this._motion = { kind: "animation", animation: a, frames: null };
        this.stats.releases += 1;
        // The content takes over where the card reaches the top-most detent: told now, with its time.
        if (a.scrollFling) this.onScrollFling?.(a.scrollFling);
        return a;
    }

    /**
     * transition: the finish of a drag from `origin`, from the law (the answer's `drag.finish` confirms it).
     * @param {string | null} own
     */
    _finishFor(own) {
        const threshold = this.snapshot.dragLaw?.finishThreshold;
        if (threshold === null || threshold === undefined) return null;
        // transition has two detents: the drag's own (where it rests or heads) and the other.
        const entries = Object.entries(this.snapshot.detents).filter(([n]) => n !== "hidden");
        const from = entries.find(([n]) => n === own);
        const other = entries.find(([n]) => n !== own);
        if (!from || !other || entries.length !== 2) return null;
        return { from: from[1], toward: other[1], threshold, detent: other[0] };
    }

    /**
     * show and dismiss: the card holds where it is until the answer's frames.
     * @param {number | undefined} time
     */
    _hold(time) {
        const t = time ?? clientTime();
        this._gesture += 1;
        if (this.predicts) this._motion = { kind: "hold", state: this.at(t) };
        return { gesture: this._gesture, phase: null, translation: undefined, prediction: null, estimated: false };
    }

    /**
     * @param {number} time
     * @returns {CardState}
     */
    _motionAt(time) {
        const m = this._motion;
        switch (m.kind) {
            case "drag":
                return { ...m.last, motion: "drag" };
            case "hold":
                return { constant: m.state.constant, dimmerAlpha: m.state.dimmerAlpha, progress: m.state.progress, motion: "hold" };
            case "coast": {
                // The finger's own motion continued, decaying, through the drag law (bounds and
                // rubber band apply as if the finger went on).
                const dt = Math.max(0, time - m.t0);
                const travel = m.v * COAST_DECAY * (1 - Math.exp(-dt / COAST_DECAY));
                const p = evaluateDragLaw(m.law, m.segment, m.translation + travel);
                return { constant: p.constant, dimmerAlpha: p.dimmerAlpha, progress: p.progress, motion: "coast" };
            }
            case "animation": {
                const frames = m.frames;
                const dt = time - m.animation.startTime;
                if (!frames) {
                    // The release law's animation, in closed form: what sheetd's frames hold.
                    const f = sampleAnimation(m.animation, dt);
                    if (dt >= m.animation.duration) {
                        this._motion = { kind: "rest", constant: f.constant, dimmerAlpha: f.dimmerAlpha, progress: f.progress, detent: m.animation.detent };
                        return { constant: f.constant, dimmerAlpha: f.dimmerAlpha, progress: f.progress, motion: "rest" };
                    }
                    return { constant: f.constant, dimmerAlpha: f.dimmerAlpha, progress: f.progress, motion: "animation" };
                }
                const last = frames[frames.length - 1];
                if (dt >= last.t) {
                    this._motion = { kind: "rest", constant: last.constant, dimmerAlpha: last.dimmerAlpha, progress: last.progress, detent: m.animation.detent };
                    return { constant: last.constant, dimmerAlpha: last.dimmerAlpha, progress: last.progress, motion: "rest" };
                }
                if (dt <= 0) return { constant: frames[0].constant, dimmerAlpha: frames[0].dimmerAlpha, progress: frames[0].progress, motion: "animation" };
                // Frames are sheetd's samples of its closed form; between two, a straight line.
                let k = Math.min(frames.length - 2, Math.floor(dt * this.playbackFps));
                while (k > 0 && frames[k].t > dt) k -= 1;
                while (k < frames.length - 2 && frames[k + 1].t <= dt) k += 1;
                const a = frames[k], b = frames[k + 1];
                const u = b.t === a.t ? 1 : (dt - a.t) / (b.t - a.t);
                return {
                    constant: a.constant + (b.constant - a.constant) * u,
                    dimmerAlpha: a.dimmerAlpha + (b.dimmerAlpha - a.dimmerAlpha) * u,
                    progress: a.progress + (b.progress - a.progress) * u,
                    motion: "animation",
                };
            }
            default:
                return { constant: m.constant, dimmerAlpha: m.dimmerAlpha, progress: m.progress, motion: "rest" };
        }
    }

    /**
     * An answer arrived: check it against the prediction, take what sheetd says of the drag,
     * and, where it started an animation, play its frames from the current time, blended.
     * @param {Result} r @param {any} job
     */
    _answered(r, job) {
        this._stackAnswered(r, job);
        this._reducedMotionAnswered(r);
        const events = job.events;
        const records = job.records;
        const lastEvent = events[events.length - 1];
        const lastRecord = records[records.length - 1];
        // The laws an answer carries are taken unless the client holds a newer revision (a layout
        // change predicted since): it never predicts with an older law.
        const fresh = r.revision === undefined || r.revision >= this.revision;
        /** @type {any} the last layout change of this request that was predicted */
        const layoutRecord = [...records].reverse().find((rec) => rec.layout) ?? null;
        if (fresh && (r.dragLaw || r.layoutLaw || r.detents)) {
            const p = layoutRecord?.layout;
            if (p && p.revision === r.revision) {
                // The layout law evaluated on the client's layout, and the laws built on it, are sheetd's.
                const same = closeJSON(p.detents, r.detents) && closeJSON(p.unreachable, r.unreachable ?? [])
                    && closeJSON(p.dragLaw, r.dragLaw) && closeJSON(p.releaseLaw, r.releaseLaw);
                if (!same) this.stats.layoutMismatches += 1;
            }
            /** @type {Partial<Snapshot>} */
            const update = {};
            for (const k of /** @type {const} */ (["dragLaw", "releaseLaw", "layoutLaw", "revision", "detents", "unreachable", "geometry", "keyboardInset", "contentHeight"]))
                if (r[k] !== undefined) update[k] = /** @type {any} */ (r[k]);
            this.snapshot = { ...this.snapshot, ...update };
            if (r.revision !== undefined) this.revision = r.revision;
            // sheetd's layout is the client's own once no newer change is on its way
            if (r.geometry && this.revision === this._expectedRevision) this.layoutState = layoutOf(this.snapshot);
        }
        const law = this.snapshot.dragLaw;
        // sheetd's segment replaces the local one (a catch mid-flight is where the two differ).
        if (r.drag && fresh && lastRecord.gesture === this._gesture) {
            const local = this._segment;
            this._segment = { ...r.drag };
            // (a card caught from a predicted animation is where sheetd has it, to the last bits of exp and sin)
            if (local && (Math.abs(local.start - r.drag.start) > 1e-9 || local.base !== r.drag.base || (layoutRecord?.layout?.segment && local.origin !== r.drag.origin))) {
                if (local.estimated) this.stats.catches += 1;
                else if (layoutRecord?.layout?.segment === local) this.stats.layoutMismatches += 1; // re-based on a layout change: the start is exact
                const t = clientTime();
                const before = this.at(t);
                const m = this._motion;
                if (m.kind === "drag") {
                    m.last = evaluateDragLaw(law, this._segment, m.translation);
                    this._jump(before, t);
                }
            }
        }
        // Check the answer against the law evaluated for the same translation, in sheetd's segment.
        // (a prediction made before a layout change the client predicted since: with its own law and segment)
        const current = lastRecord.revision === this.revision;
        const checkLaw = current ? law : lastRecord.law, checkSegment = current ? this._segment : lastRecord.segment;
        if (r.state === "dragging" && lastEvent.phase === "changed" && checkSegment && checkLaw && lastRecord.prediction && (current || !checkSegment.estimated)) {
            const expected = evaluateDragLaw(checkLaw, checkSegment, lastEvent.translation);
            const error = Math.max(
                Math.abs(expected.constant - r.constant),
                Math.abs(expected.dimmerAlpha - r.dimmerAlpha),
                Math.abs(expected.progress - r.progress),
            );
            this.stats.maxError = Math.max(this.stats.maxError, error);
            if (error > 1e-9 || expected.finishes) this.stats.mismatches += 1;
        } else if (lastEvent.phase === "changed" && lastRecord.prediction?.finishes && !r.snap) {
            this.stats.mismatches += 1; // the law said the drag finishes here; sheetd did not
        }
        // What each event of the batch started (the last one's in the answer itself): a finish
        // the drag law did not foresee (transition) is a mismatch; an animation started from the
        // release law is confirmed by the answer, or corrected below.
        let confirmed = null;
        for (let i = 0; i < events.length; i++) {
            const last = i === events.length - 1;
            const settled = last ? (r.snap ? r : null) : r.batch?.settles.find((s) => s.index === i);
            const record = records[i];
            if (settled && events[i].phase === "changed" && record.prediction && !record.prediction.finishes) this.stats.mismatches += 1;
            const local = record.release;
            if (events[i].phase === "layout") {
                // A layout change: the move predicted (or none, where the card was already there) is sheetd's.
                if (!record.layout) continue;
                if (local && settled && sameAnimation(local, settled.animation) && closeJSON(local.fromAlpha, settled.animation?.fromAlpha)
                    && closeJSON(local.toAlpha, settled.animation?.toAlpha) && settled.animation?.alphaRule === local.alphaRule) {
                    local.id = /** @type {Animation} */ (settled.animation).id;
                    if (last) confirmed = local;
                } else if ((local || settled) && !record.estimated) {
                    this.stats.layoutMismatches += 1;
                }
                continue;
            }
            if (!local) continue;
            // The last event's answer says whether the release handed its momentum on.
            const handed = last && (events[i].phase === "ended" || events[i].phase === "fling") ? (r.scrollFling ?? null) : undefined;
            if (settled && sameAnimation(local, settled.animation, handed)) {
                local.id = /** @type {Animation} */ (settled.animation).id;
                if (last) confirmed = local;
            } else {
                this.stats.releaseMismatches += 1;
            }
        }
        // A hand-off the client did not start itself (not predicted, or predicted otherwise).
        if (r.scrollFling && !confirmed?.scrollFling) this.onScrollFling?.(r.scrollFling);
        this.snapshot = { ...this.snapshot, state: r.state, detent: r.detent, constant: r.constant, dimmerAlpha: r.dimmerAlpha, progress: r.progress, animation: r.animation ?? (r.state === "animating" ? this.snapshot.animation : null), time: r.time };
        if (!this.predicts || lastRecord.gesture !== this._gesture) return; // a newer gesture owns the card
        if (r.state !== "dragging") this._segment = null;
        const t = clientTime();
        const before = this.at(t);
        if (r.frames && r.frames.length > 0 && r.state !== "dragging") {
            const id = r.frames[0].animation;
            if (confirmed && confirmed.id === id) {
                // The prediction was sheetd's animation: it plays on (or has ended) undisturbed.
                this.playedAnimation = Math.max(this.playedAnimation, id);
                return;
            }
            const animation = [r.animation, ...(r.batch?.settles.map((s) => s.animation) ?? []), this.snapshot.animation].find((a) => a && a.id === id);
            this.playedAnimation = Math.max(this.playedAnimation, id);
            this._motion = { kind: "animation", animation: animation ?? { id, startTime: r.time }, frames: r.frames };
            this._jump(before, t);
        } else if (r.state === "resting" || r.state === "hidden") {
            this._motion = this._restMotion(r);
            this._jump(before, t);
        } else if (r.state === "dragging" && this._motion.kind === "hold" && !this._motion.finishing) {
            // not predicted (scroll hand-off): follow the answers
            this._motion = { kind: "hold", state: { constant: r.constant, dimmerAlpha: r.dimmerAlpha, progress: r.progress } };
            this._jump(before, t);
        }
    }

    /**
     * @param {string} method @param {string} path @param {any} body
     * @param {"pan" | "move" | "other"} kind  pan events join the batch waiting to leave
     * @param {any} [record]  what the answer is checked against (pan, show, dismiss)
     */
    _enqueue(method, path, body, kind, record) {
        const last = this._queued;
        if (kind === "pan" && last && last.kind === "pan" && !last.sent) {
            if (this.clientClock) {
                // Every sample is delivered: it joins the batch that leaves when the request in flight is answered.
                last.events.push(body);
                last.records.push(record);
                return last.promise;
            }
            if (body.phase === "changed" && last.events.length === 1 && last.events[0].phase === "changed") {
                // Server clock: a batch cannot be timed, so the latest `changed` replaces the waiting one.
                last.events[0] = body;
                last.records[0] = record;
                return last.promise;
            }
        }
        const job = { method, path, kind, events: [body], records: [record], sent: false, promise: /** @type {Promise<any>} */ (Promise.resolve()) };
        job.promise = this._tail.then(async () => {
            job.sent = true;
            if (this._queued === job) this._queued = null;
            const stats = this.stats;
            let target = path;
            let payload = body;
            if (kind === "pan") {
                payload = job.events.length === 1 ? job.events[0] : { events: job.events };
                stats.eventsSent += job.events.length;
                stats.largestBatch = Math.max(stats.largestBatch, job.events.length);
            }
            if (kind !== "other" && this.predicts) target += `?frames=${this.playbackFps}`;
            stats.requestsSent += 1;
            stats.inFlight += 1;
            stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
            try {
                const result = kind === "other" ? await this.client.request(method, target, payload)
                    : await this._deliver(method, target, payload);
                if (kind !== "other") this._answered(result, job);
                return result;
            } catch (e) {
                if (kind !== "other" && this._coveredRefusal(e, job)) throw e; // covered: nothing changed, `onCovered` told
                if (kind !== "other") {
                    // Refused (a conflict, an expired session): nothing is predicted until the next answer.
                    this._segment = null;
                    this._motion = this._restMotion(this.snapshot);
                    // A refused layout change (a batch is all or nothing): the layout and laws are sheetd's again.
                    if (job.events.some((e) => e.phase === "layout") || this.revision !== this._expectedRevision) this.get().catch(() => {});
                }
                throw e;
            } finally {
                this.stats.inFlight -= 1; // the counters may have been started afresh meanwhile
            }
        });
        this._tail = job.promise.catch(() => {});
        this._queued = job;
        return job.promise;
    }

    // ---- Numbered event requests (`seq`, docs/HTTP.md "Idempotent events") ----

    /**
     * Sends an event request and resolves with its answer: numbered (unless `numbering` is off)
     * with the `seq` after the last one sent, tried again while its answer is lost, and, where the
     * session answers that its count is elsewhere, numbered again: after sending again the
     * acknowledged requests it lacks (`sequence-gap` below what it acknowledged), or from its
     * count (another client numbered it; a lost try it did or did not apply). Kept once
     * acknowledged. A refusal leaves its `seq` for the next request.
     * @param {string} method @param {string} target @param {any} body
     * @returns {Promise<any>}
     */
    async _deliver(method, target, body) {
        if (!this.numbering) return this.client.request(method, target, body);
        const stats = this.stats;
        let seq = this._seq + 1;
        // Times the session's count moved this request (bounded: two clients numbering one
        // session take turns; a third of a second each at most with the retries' backoff).
        for (let turns = 0; ; turns++) {
            this._seq = Math.max(this._seq, seq);
            const sent = await this._numbered(method, target, body, seq);
            if (sent.ok) {
                if (sent.replay && sent.tries === 0 && turns < MAX_SEQUENCE_TURNS) {
                    // The first try of this seq answered with a replay: another client's request
                    // had it (this one was not applied). The next number.
                    stats.renumbered += 1;
                    seq += 1;
                    continue;
                }
                if (sent.replay) stats.replays += 1;
                this._acknowledged = Math.max(this._acknowledged, seq);
                this._keep(seq, method, target, body);
                return sent.body;
            }
            const e = sent.error;
            const last = e instanceof SheetError && e.status === 409 ? e.problem.lastSeq : undefined;
            if (typeof last === "number" && e.retryAfter === null && turns < MAX_SEQUENCE_TURNS) {
                if (e.code === "sequence-gap" && last < this._acknowledged) {
                    // The session lacks requests it acknowledged (written to the store behind
                    // their answers by an instance that died): send them again, then this one.
                    seq = (await this._resend(last)) + 1;
                    continue;
                }
                if (e.code === "sequence-gap" || (e.code === "stale-sequence" && sent.tries === 0 && last >= seq)) {
                    // Its count is past this client's acknowledgements: tries of this client whose
                    // answers were lost, applied or not, or another client's requests. Number on.
                    stats.renumbered += 1;
                    this._acknowledged = Math.max(this._acknowledged, last);
                    seq = last + 1;
                    continue;
                }
                // Applied by a try whose answer is lost for good (stale on a retry): counted as
                // the session's, and the error says so.
                this._acknowledged = Math.max(this._acknowledged, Math.min(last, seq));
            } else if (!answerLost(e)) {
                // Refused (the event does not apply, the body is wrong): the seq stays free.
                this._seq = seq - 1;
            }
            throw e;
        }
    }

    /**
     * One try of `seq` and the tries more while its answer is lost or the session is busy with
     * another request (`retries`, with backoff).
     * @param {string} method @param {string} target @param {any} body @param {number} seq
     * @returns {Promise<{ok: true, body: any, replay: boolean, tries: number} | {ok: false, error: any, tries: number}>}
     */
    async _numbered(method, target, body, seq) {
        for (let tries = 0; ; tries++) {
            try {
                // The number in the body and in `Sheetd-Seq`, where deploy/'s proxies read it: a
                // numbered event whose instance failed with it is sent on to the next one.
                const answer = await this.client.exchange(method, target, { ...body, seq }, undefined, {
                    "Sheetd-Seq": String(seq),
                });
                return { ok: true, body: answer.body, replay: answer.replay, tries };
            } catch (e) {
                const again = answerLost(e) || (e instanceof SheetError && e.status === 409 && e.retryAfter !== null);
                if (!again || tries >= this.retries) return { ok: false, error: e, tries };
                this.stats.retried += 1;
                await sleep(retryDelay(tries, e instanceof SheetError ? e.retryAfter : null));
            }
        }
    }

    /**
     * The session's last applied seq is `last`, below what it acknowledged: sends the kept
     * requests after it again, in order, each numbered on from `last` (with its own number
     * unless an earlier one is missing). Returns the seq the session has now. Throws where an
     * answer is lost again: the requests not sent yet stay kept, and the next request finds the
     * gap again.
     * @param {number} last
     * @returns {Promise<number>}
     */
    async _resend(last) {
        const stats = this.stats;
        const kept = this._kept.filter((k) => k.seq > last);
        // Acknowledged before the oldest request still kept: nothing to send them again with.
        stats.acknowledgedLost += Math.max(0, (kept.length ? kept[0].seq : this._acknowledged + 1) - last - 1);
        let seq = last;
        this._acknowledged = last;
        for (const k of kept) {
            k.seq = seq + 1;
            const sent = await this._numbered(k.method, k.target, k.body, k.seq);
            if (!sent.ok) {
                const e = sent.error;
                if (answerLost(e)) throw e;
                // Refused now (the session moved otherwise meanwhile): it stays lost.
                stats.acknowledgedLost += 1;
                this._kept = this._kept.filter((other) => other !== k);
                if (e instanceof SheetError && typeof e.problem.lastSeq === "number") seq = e.problem.lastSeq;
                continue;
            }
            stats.resent += 1;
            seq = k.seq;
            this._acknowledged = seq;
        }
        this._seq = Math.max(this._seq, seq);
        return seq;
    }

    /**
     * Keeps an acknowledged request to send again; forgets those acknowledged more than
     * `keepAcknowledged` seconds before it (the store has them by then: it is written within
     * milliseconds of an answer), and any beyond the newest 1,024.
     * @param {number} seq @param {string} method @param {string} target @param {any} body
     */
    _keep(seq, method, target, body) {
        const at = performance.now();
        this._kept.push({ seq, method, target, body, at });
        const since = at - this.keepAcknowledged * 1000;
        let drop = Math.max(0, this._kept.length - 1024);
        while (drop < this._kept.length - 1 && this._kept[drop].at < since) drop += 1;
        if (drop > 0) this._kept.splice(0, drop);
    }

    /** A new session under this id (replaced): it numbers from 1. */
    _restartNumbering() {
        this._seq = 0;
        this._acknowledged = 0;
        this._kept = [];
    }
}

/** Times one numbered request may be moved to another `seq` by the session's answers. */
const MAX_SEQUENCE_TURNS = 8;

/**
 * Whether a request's answer was lost on the way: a failed fetch (the connection dropped or
 * never opened) or a proxy's 502, 503 or 504 (an instance that died or is draining).
 * @param {any} e
 */
function answerLost(e) {
    if (e instanceof SheetError) return [502, 503, 504].includes(e.status);
    return !(e instanceof DOMException && e.name === "AbortError");
}

/**
 * Milliseconds before the try after `tries` tries: the Retry-After where the answer gave one
 * (at most 5 s), else 100 ms doubling up to 2 s, three quarters to all of it (clients whose
 * answers one crash lost do not come back in step).
 * @param {number} tries @param {number | null} retryAfter
 */
function retryDelay(tries, retryAfter) {
    if (retryAfter !== null) return Math.min(retryAfter, 5) * 1000;
    return Math.min(100 * 2 ** tries, 2000) * (0.75 + Math.random() / 4);
}
