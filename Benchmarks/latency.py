#!/usr/bin/env python3
"""How the demo card feels across a network hop (run by scripts/latency, which builds and starts sheetd).

For each added round trip (a loopback delay proxy, sheetkit.delay_proxy, in front of sheetd),
opens the demo page THROUGH the proxy (`http://127.0.0.1:PROXYPORT/?preset=NAME`, so the page, its
fetches and its EventSource all cross the delay) in Debian's headless Chromium, and for every
preset performs, from the preset's start detent at rest: (a) a 600 px drag at 1000 px/s with the
mouse, released while moving, (b) a touch flick down and (c) a touch flick up (150 px in 100 ms),
released while moving.

Input goes through the Chrome DevTools Protocol (Input.dispatchMouseEvent / dispatchTouchEvent)
on a WebSocket of our own to the page's target (commands pipelined: never waiting for Chromium's
ack, which for a mouse move comes a frame later), paced in real time at 120 Hz, each event with
an explicit `timestamp` on the intended schedule (Chromium gives it to the page as
`event.timeStamp`; a late harness keeps the intended times). A recorder injected with
Page.addScriptToEvaluateOnNewDocument (independent of the page's code) logs the pointer events
the page receives and, at every animation frame, after the page's own frame callbacks, the card's
top, `#phone`'s state and `window.sheetDemo.expectedTop(latest clientY)`.

Environment: SHEETD_URL (http://127.0.0.1:PORT/ of a running sheetd), LATENCY_OUT (folder for
latest.md / latest.json, default .build/latency), LATENCY_CMD (the command line, for --write-docs).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import time
import traceback
import urllib.parse
import urllib.request

from sheetkit import delay_proxy
from sheetkit.gestures import (CDP, DRAG_PX, DRAG_SPEED, FLICK_PX, FLICK_S, GESTURES, HZ, RECORDER, Page, fmt,
                               get_json, new_driver, percentile, run_gesture)
from sheetkit.presets import names as preset_names

# ---------------------------------------------------------------- one run

class Runner:
    def __init__(self, args, api):
        self.args = args
        self.api = api
        target = urllib.parse.urlsplit(api)
        self.target = (target.hostname, target.port)
        self.presets_info = {p["name"]: p for p in get_json(api + "presets")["presets"]}
        self.proxies = {}
        self.results = []
        self.layout = []
        self.notes = []

    def proxy(self, rtt):
        if rtt not in self.proxies:
            self.proxies[rtt] = delay_proxy.start(self.target, rtt)
        return self.proxies[rtt]

    def run(self, driver, cdp, modes):
        page = Page(driver, cdp)
        time_budget = 8.0
        for mode in modes:
            for rtt in self.args.rtt:
                proxy = self.proxy(rtt)
                for preset in self.args.presets:
                    url = f"{proxy.url}?preset={urllib.parse.quote(preset)}"
                    page.load(url, preset, 20 + rtt / 1000 * 20)
                    predict_set = page.set_predict(mode == "predict")
                    if not predict_set and mode == "off":
                        self.notes.append("window.sheetDemo.setPredict is missing: the --compare run used the page as it is")
                    for rnd in range(self.args.rounds):
                        for gesture in GESTURES:
                            result = {"mode": mode, "rtt": rtt, "preset": preset, "gesture": gesture, "round": rnd}
                            try:
                                page.reset(url, preset, time_budget + rtt / 1000 * 10)
                                if mode == "off":
                                    page.set_predict(False)
                                result.update(self.gesture(page, cdp, preset, gesture, rtt))
                            except Exception as e:
                                traceback.print_exc()
                                result["error"] = f"{type(e).__name__}: {e}"
                            self.results.append(result)
                            print(progress_line(result), flush=True)

    def gesture(self, page, cdp, preset, gesture, rtt):
        return run_gesture(page, cdp, gesture, rtt, self.presets_info[preset]["detents"])


def progress_line(r):
    if "error" in r:
        return f"latency: {r['mode']:7} +{r['rtt']:>3} ms {r['preset']:10} {r['gesture']:9} ERROR {r['error']}"
    s = r.get("statsDelta") or {}
    return (f"latency: {r['mode']:7} +{r['rtt']:>3} ms {r['preset']:10} {r['gesture']:9} {r['direction']:4} "
            f"lag p50/p95/max {fmt(r.get('lagP50'))}/{fmt(r.get('lagP95'))}/{fmt(r.get('lagMax'))} px "
            f"release→moving {fmt(r.get('releaseToMoving'), 0)} ms → {r['snap']}"
            f" · mismatches {s.get('mismatches', '–')} inFlight≤{s.get('maxInFlight', '–')}"
            f" sent {s.get('eventsSent', '–')}/{s.get('samples', '–')} · late ≤{r['harnessLateMs']['max']:.1f} ms"
            f" · ts error ≤{fmt(r.get('timestampError'), 2)} ms")


# ---------------------------------------------------------------- report

def checks(results, modes, rtts):
    """(name, ok, detail) for every check."""
    out = []
    by = {(r["mode"], r["rtt"], r["preset"], r["gesture"], r["round"]): r for r in results}
    errors = [r for r in results if "error" in r]
    bad = [r for r in results if "error" in r or not r.get("settled") or r.get("cdpErrors")]
    out.append(("every gesture ran, Chromium took every input event, the card came to rest", not errors and not bad,
                "; ".join(f"{r['mode']} +{r['rtt']} {r['preset']} {r['gesture']}: "
                          f"{r.get('error') or ('CDP ' + r['cdpErrors'][0] if r.get('cdpErrors') else 'not at rest')}"
                          for r in bad)[:600]))
    base_rtt = 0 if 0 in rtts else min(rtts)
    for mode in modes:
        diff = []
        for (m, rtt, preset, gesture, rnd), r in by.items():
            if m != mode or rtt == base_rtt or "error" in r:
                continue
            b = by.get((mode, base_rtt, preset, gesture, rnd))
            if b and "error" not in b and b["snap"] != r["snap"]:
                diff.append(f"{preset} {gesture} +{rtt}: {r['snap']} (at +{base_rtt}: {b['snap']})")
        out.append((f"{mode}: the same snap for the same gesture at every RTT as at +{base_rtt} ms", not diff, "; ".join(diff)))
        ok_results = [r for r in results if r["mode"] == mode and "error" not in r]
        if not ok_results:
            out.append((f"{mode}: gestures ran", False, "none"))
            continue
        have_stats = [r for r in ok_results if isinstance(r.get("statsDelta"), dict) and r["statsDelta"]]
        if not have_stats:
            out.append((f"{mode}: window.sheetDemo.stats() available", False, "no stats from the page"))
            continue
        mism = [r for r in have_stats if (r["statsDelta"].get("mismatches") or 0) != 0]
        out.append((f"{mode}: zero prediction mismatches", not mism,
                    "; ".join(f"{r['preset']} {r['gesture']} +{r['rtt']}: {r['statsDelta']['mismatches']} (maxError {r['statsDelta'].get('maxError')})" for r in mism)))
        inflight = [r for r in have_stats if (r["statsDelta"].get("maxInFlight") or 0) > 1]
        out.append((f"{mode}: maxInFlight ≤ 1", not inflight,
                    "; ".join(f"{r['preset']} {r['gesture']} +{r['rtt']}: {r['statsDelta']['maxInFlight']}" for r in inflight)))
        unsent = [r for r in have_stats if r["statsDelta"].get("eventsSent") != r["statsDelta"].get("samples")]
        out.append((f"{mode}: eventsSent == samples", not unsent,
                    "; ".join(f"{r['preset']} {r['gesture']} +{r['rtt']}: {r['statsDelta'].get('eventsSent')}/{r['statsDelta'].get('samples')}" for r in unsent)))
    if len(modes) == 2:
        diff = []
        for (m, rtt, preset, gesture, rnd), r in by.items():
            o = by.get(("off", rtt, preset, gesture, rnd))
            if m == "predict" and o and "error" not in r and "error" not in o and o["snap"] != r["snap"]:
                diff.append(f"{preset} {gesture} +{rtt}: {r['snap']} with prediction, {o['snap']} without")
        out.append(("prediction on and off: the same snaps", not diff, "; ".join(diff)))
    return out


def render(results, args, modes, meta):
    lines = []
    scale = next((r["scale"] for r in results if "scale" in r), None)
    lines.append(f"Gestures in screen px (the demo phone is drawn at scale {fmt(scale, 4)}: 1 pt = {fmt(scale, 3)} px): "
                 f"(a) drag {DRAG_PX:.0f} px at {DRAG_SPEED:.0f} px/s with the mouse, toward the side with more room "
                 f"({DRAG_PX / (scale or 1):.0f} pt); (b) touch flick down and (c) up, {FLICK_PX:.0f} px in {FLICK_S * 1000:.0f} ms; "
                 f"every one released while moving; events at {HZ:.0f} Hz with CDP timestamps. "
                 f"Lag: |card top − sheetDemo.expectedTop(latest clientY)| at every frame of the drag, screen px. "
                 f"Release → moving: pointerup's timeStamp to the first frame where the card top moved > 0.5 px from "
                 f"where it was at the pointerup (with prediction off the card is then still behind the finger, so "
                 f"that first move is its catch-up to the last `changed` answers); – where the release moves nothing "
                 f"(a flick toward the end the card rests at). Release → at rest: to the first frame from which the "
                 f"card top stays where it ends. Rounds: {args.rounds}.")
    lines.append("")
    mode_name = {"predict": "prediction on", "off": "prediction off (setPredict(false): the card moves when answers arrive)"}
    for mode in modes:
        lines.append(f"### {mode_name[mode]}")
        lines.append("")
        lines.append("| RTT | preset | drag | drag lag p50 / p95 / max (px) | flick lag max (px) | release → moving, drag / flick↓ / flick↑ (ms) | snap: drag / flick↓ / flick↑ | mismatches | max in flight | events sent / samples |")
        lines.append("| ---: | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
        for rtt in args.rtt:
            for preset in args.presets:
                rs = [r for r in results if r["mode"] == mode and r["rtt"] == rtt and r["preset"] == preset]
                if not rs:
                    continue
                g = {name: [r for r in rs if r["gesture"] == name and "error" not in r] for name in GESTURES}
                drag = g["drag"]
                lags_p50 = [r["lagP50"] for r in drag if r.get("lagP50") is not None]
                lags_p95 = [r["lagP95"] for r in drag if r.get("lagP95") is not None]
                lags_max = [r["lagMax"] for r in drag if r.get("lagMax") is not None]
                flick_max = [r["lagMax"] for n in ("flickDown", "flickUp") for r in g[n] if r.get("lagMax") is not None]
                rel = " / ".join(fmt(percentile([r["releaseToMoving"] for r in g[n] if r.get("releaseToMoving") is not None], 50), 0) for n in GESTURES)
                snaps = " / ".join(",".join(sorted({r["snap"] for r in g[n]})) or "ERROR" for n in GESTURES)
                sd = [r.get("statsDelta") or {} for r in rs]
                mism = sum((s.get("mismatches") or 0) for s in sd) if any("mismatches" in s for s in sd) else None
                mif = max((s.get("maxInFlight") or 0) for s in sd) if any("maxInFlight" in s for s in sd) else None
                sent = sum((s.get("eventsSent") or 0) for s in sd) if any("eventsSent" in s for s in sd) else None
                samp = sum((s.get("samples") or 0) for s in sd) if any("samples" in s for s in sd) else None
                direction = drag[0]["direction"] if drag else "–"
                lines.append(f"| +{rtt} ms | {preset} | {direction} | {fmt(percentile(lags_p50, 50))} / {fmt(max(lags_p95) if lags_p95 else None)} / {fmt(max(lags_max) if lags_max else None)}"
                             f" | {fmt(max(flick_max) if flick_max else None)} | {rel} | {snaps} | {mism if mism is not None else '–'}"
                             f" | {mif if mif is not None else '–'} | {sent if sent is not None else '–'} / {samp if samp is not None else '–'} |")
        lines.append("")
    lines.append("### Summary per RTT (all presets)")
    lines.append("")
    head = "| RTT |"
    sep = "| ---: |"
    for mode in modes:
        tag = "on" if mode == "predict" else "off"
        head += f" drag lag p50 / p95 / max, {tag} (px) | release → moving median / max, {tag} (ms) | release → at rest median, {tag} (ms) | mismatches, {tag} |"
        sep += " ---: | ---: | ---: | ---: |"
    lines.append(head)
    lines.append(sep)
    for rtt in args.rtt:
        row = f"| +{rtt} ms |"
        for mode in modes:
            rs = [r for r in results if r["mode"] == mode and r["rtt"] == rtt and "error" not in r]
            pool = []
            for r in rs:
                if r["gesture"] == "drag" and r.get("lagSamples"):
                    pool.extend(r["lagSamples"])
            rel = [r["releaseToMoving"] for r in rs if r.get("releaseToMoving") is not None]
            rest = [r["releaseToRest"] for r in rs if r.get("releaseToRest") is not None]
            mism = [((r.get("statsDelta") or {}).get("mismatches")) for r in rs]
            mism = sum(m for m in mism if m) if any(m is not None for m in mism) else None
            row += (f" {fmt(percentile(pool, 50))} / {fmt(percentile(pool, 95))} / {fmt(max(pool) if pool else None)} |"
                    f" {fmt(percentile(rel, 50), 0)} / {fmt(max(rel) if rel else None, 0)} | {fmt(percentile(rest, 50), 0)} |"
                    f" {mism if mism is not None else '–'} |")
        lines.append(row)
    lines.append("")
    late = [r["harnessLateMs"]["max"] for r in results if "harnessLateMs" in r]
    tse = [r["timestampError"] for r in results if r.get("timestampError") is not None]
    lines.append(f"Harness pacing: events sent up to {fmt(max(late) if late else None, 1)} ms after their intended time (they keep "
                 f"their intended timestamps); the page's event.timeStamp differed from the sent timestamp by at most "
                 f"{fmt(max(tse) if tse else None, 2)} ms.")
    for kind, name in (("mouse", "mouse"), ("touch", "touch")):
        d = [r["upDeliveryMs"] for r in results if r.get("pointer") == kind and r.get("upDeliveryMs") is not None]
        if d:
            lines.append(f"Chromium's input delay: the page's listeners saw the {name} pointerup {fmt(percentile(d, 50), 1)} ms "
                         f"(median; max {fmt(max(d), 1)}) after its timeStamp; release → moving includes it.")
    for note in sorted(set(meta.get("notes", []))):
        lines.append(f"Note: {note}")
    lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------- the layout scenario

LAYOUT_RECORDER = r"""
(() => {
  const R = window.__lay = { on: false, frames: [], events: [], y: null, down: false };
  for (const type of ['pointerdown', 'pointermove', 'pointerup']) {
    window.addEventListener(type, (e) => {
      if (!R.on || !e.isPrimary) return;
      if (type === 'pointerdown') R.down = true;
      R.y = e.clientY;
      if (type === 'pointerup') R.down = false;
    }, { capture: true });
  }
  const raf = window.requestAnimationFrame.bind(window);
  // after the page's own callbacks of the frame: its loop asks for the next frame inside its callback
  const tick = (t) => {
    if (R.on) R.frames.push([t, document.querySelector('#card').getBoundingClientRect().top, R.down ? R.y : null]);
    raf(tick);
  };
  raf(() => raf(tick));
})();
"""

LAYOUT_CASES = ["resting", "dragging"]


def layout_case(driver, cdp, case, rtt):
    """The layout page (GET /layout.html) through the proxy: the keyboard up and down (the real
    text field's focus and blur) with the card resting at half, or while a drag is on. Every frame
    the card is drawn is compared, once the answers arrived, with where sheetd has it at that
    frame's time (layoutDemo.truthAt: sheetd's own segments and animations, sampled in closed
    form): lag = |card top − sheetd's|, screen px. "change → moving": from each layout change to
    the first frame whose card top moved > 0.5 px (ms)."""
    js = driver.execute_script
    driver.set_script_timeout(60)
    ok = driver.execute_async_script("const done = arguments[arguments.length - 1];"
                                     "window.layoutDemo.reset({policy: 'lift', mode: 'fixed', detent: 'half'}).then(done, (e) => done(String(e)))")
    if ok is not True:
        raise RuntimeError(f"layoutDemo.reset: {ok}")
    js(LAYOUT_RECORDER if not js("return !!window.__lay") else "")
    js("Object.assign(window.__lay, {on: true, frames: [], y: null, down: false})")
    idle = lambda: gestures_wait(lambda: js("return window.layoutDemo.idle()"), 30 + rtt / 50)
    changes = []
    if case == "resting":
        time.sleep(0.1)
        for up in (True, False):
            changes.append(js("const t = performance.now(); " + ("window.layoutDemo.focusField()" if up else "document.activeElement.blur()") + "; return t"))
            time.sleep(0.6)
            idle()
            time.sleep(0.1)
    else:
        x, y = js("return layoutDemo.headerPoint()")
        cdp.wait([cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "buttons": 0})])
        # press, then 120 Hz moves: 0.3 s up, the keyboard rises; 0.3 s more, it goes; 0.2 s, release
        legs = [(-150, 0.3), (-60, 0.3), (80, 0.3), (0, 0.1)]
        y_now = y
        t0 = time.time() + 0.03
        stamp = t0
        ids = [cdp.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1, "timestamp": stamp})]
        for k, (dy, seconds) in enumerate(legs):
            n = round(seconds * HZ)
            for i in range(1, n + 1):
                stamp += 1 / HZ
                while time.time() < stamp:
                    time.sleep(0.001)
                ids.append(cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y_now + dy * i / n, "button": "left", "buttons": 1, "timestamp": stamp}))
            y_now += dy
            if k == 0:
                changes.append(js("const t = performance.now(); window.layoutDemo.focusField(); return t"))
            elif k == 1:
                changes.append(js("const t = performance.now(); document.activeElement.blur(); return t"))
        stamp += 1 / HZ
        ids.append(cdp.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y_now, "button": "left", "buttons": 0, "clickCount": 1, "timestamp": stamp}))
        cdp.wait(ids, 10)
        time.sleep(0.2)
        idle()
    time.sleep(0.05)
    rec = js("window.__lay.on = false; const f = window.__lay.frames;"
             "return {frames: f.map(([t, top, y]) => [t, top, y, window.layoutDemo.truthAt(t / 1000, y)]), stats: window.layoutDemo.stats()}")
    frames = rec["frames"]
    lags = []
    unknown = 0
    for t, top, y, truth in frames:
        if case == "dragging" and y is None:
            continue  # the release's animation is the gestures' measurement
        if truth is None:
            unknown += 1
            continue
        lags.append(abs(top - truth))
    moving, nth = [], []
    for c in changes if case == "resting" else []:  # mid-drag the card stays under the finger: the lag says it
        before = next((f[1] for f in reversed(frames) if f[0] <= c), None)
        after = [f for f in frames if f[0] > c]
        k = next((i for i, f in enumerate(after) if before is not None and abs(f[1] - before) > 0.5), None)
        if k is not None:
            moving.append(after[k][0] - c)
            nth.append(k + 1)  # 1: the first frame drawn after the change
    s = rec["stats"]
    return {"case": case, "rtt": rtt, "frames": len(frames), "lagFrames": len(lags), "unknown": unknown,
            "lagP50": percentile(lags, 50), "lagP95": percentile(lags, 95), "lagMax": max(lags) if lags else None,
            "lagSamples": [round(v, 3) for v in lags], "changeToMoving": moving, "framesToMoving": nth, "stats": s,
            "mismatches": (s.get("mismatches") or 0) + (s.get("layoutMismatches") or 0) + (s.get("releaseMismatches") or 0),
            "layouts": s.get("layouts"), "unpredicted": s.get("layoutsUnpredicted")}


def gestures_wait(fn, timeout):
    from sheetkit.gestures import wait_for
    return wait_for(fn, timeout)


def run_layout(args, runner, driver, cdp):
    """The layout scenario at every RTT; returns its results."""
    out = []
    for rtt in args.rtt:
        proxy = runner.proxy(rtt)
        driver.get(f"{proxy.url}layout.html")
        if not gestures_wait(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), 60):
            out.append({"case": "load", "rtt": rtt, "error": "the layout page never became ready"})
            continue
        for rnd in range(args.rounds):
            for case in LAYOUT_CASES:
                try:
                    r = layout_case(driver, cdp, case, rtt)
                except Exception as e:
                    traceback.print_exc()
                    r = {"case": case, "rtt": rtt, "error": f"{type(e).__name__}: {e}"}
                r["round"] = rnd
                out.append(r)
                if "error" in r:
                    print(f"latency: layout +{rtt:>3} ms {case:9} ERROR {r['error']}", flush=True)
                else:
                    print(f"latency: layout +{rtt:>3} ms {case:9} lag p50/p95/max {fmt(r['lagP50'])}/{fmt(r['lagP95'])}/{fmt(r['lagMax'])} px"
                          f" over {r['lagFrames']} frames ({r['unknown']} unknown)"
                          + (f" · change → moving {', '.join(fmt(m, 0) for m in r['changeToMoving'])} ms, frame {', '.join(map(str, r['framesToMoving']))}" if r['changeToMoving'] else "")
                          + f" · {r['layouts']} layout changes predicted, {r['unpredicted']} not · mismatches {r['mismatches']}", flush=True)
    return out


def render_layout(results, args):
    lines = ["### Layout changes (GET /layout.html): the keyboard up and down, resting at half and while dragging", "",
             "Lag: |card top − where sheetd has it at that frame's time| (its segments and animations from the answers, in closed form), "
             "every frame after the page's own draw, screen px (the phone at scale 1); while dragging, the frames with the button down. "
             "Change → moving: from each layout change (the field's focus or blur) to the first frame whose card top moved > 0.5 px, in ms and "
             "as the frame's number after the change (1: the first frame drawn after it; the keyboard's easeOut moves the card < 0.5 px in "
             "a frame's first milliseconds). Unknown: frames whose revision's segment no answer carried (two changes in one batch). "
             "Target: lag p95 ≤ 20 px (a reported figure, not a check).", "",
             "| RTT | case | lag p50 / p95 / max (px) | frames (unknown) | change → moving (ms; frame) | layout changes predicted / not | mismatches |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for rtt in args.rtt:
        for case in LAYOUT_CASES:
            rs = [r for r in results if r["rtt"] == rtt and r["case"] == case and "error" not in r]
            if not rs:
                lines.append(f"| +{rtt} ms | {case} | ERROR | | | | |")
                continue
            pool = [v for r in rs for v in r["lagSamples"]]
            moving = [m for r in rs for m in r["changeToMoving"]]
            nth = [k for r in rs for k in r["framesToMoving"]]
            lines.append(f"| +{rtt} ms | {case} | {fmt(percentile(pool, 50))} / {fmt(percentile(pool, 95))} / {fmt(max(pool) if pool else None)}"
                         f" | {sum(r['lagFrames'] for r in rs)} ({sum(r['unknown'] for r in rs)}) | {(', '.join(fmt(m, 0) for m in moving) + '; ' + ', '.join(map(str, nth))) if moving else '– (stays under the finger)'}"
                         f" | {sum(r['layouts'] or 0 for r in rs)} / {sum(r['unpredicted'] or 0 for r in rs)} | {sum(r['mismatches'] for r in rs)} |")
    lines.append("")
    return "\n".join(lines)


def layout_checks(results):
    bad = [r for r in results if "error" in r]
    mism = [r for r in results if "error" not in r and r["mismatches"]]
    unpredicted = [r for r in results if "error" not in r and (r["unpredicted"] or not r["layouts"])]
    return [("layout: every case ran", not bad, "; ".join(f"+{r['rtt']} {r['case']}: {r['error']}" for r in bad)),
            ("layout: zero prediction mismatches", not mism, "; ".join(f"+{r['rtt']} {r['case']}: {r['mismatches']}" for r in mism)),
            ("layout: every layout change predicted", not unpredicted,
             "; ".join(f"+{r['rtt']} {r['case']}: {r['layouts']} predicted, {r['unpredicted']} not" for r in unpredicted))]


def main():
    parser = argparse.ArgumentParser(description="The demo card across a network hop, in headless Chromium.")
    parser.add_argument("--rtt", default="0,50,100,200", help="added round trips, ms (comma-separated)")
    parser.add_argument("--presets", default="", help="comma-separated (default: every preset GET /presets lists)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--compare", action="store_true", help="also run with sheetDemo.setPredict(false)")
    parser.add_argument("--write-docs", action="store_true", help="print a block for docs/PERFORMANCE.md")
    parser.add_argument("--scenarios", default="gestures,layout",
                        help="gestures (every preset dragged and flicked), layout (the keyboard on /layout.html), comma-separated")
    args = parser.parse_args()
    args.scenarios = [x for x in args.scenarios.split(",") if x]
    if not args.scenarios or any(x not in ("gestures", "layout") for x in args.scenarios):
        parser.error("--scenarios: gestures, layout")
    try:
        args.rtt = [int(x) for x in args.rtt.split(",") if x.strip() != ""]
    except ValueError:
        parser.error("--rtt: integers, comma-separated")
    if not args.rtt or any(x < 0 or x > 2000 for x in args.rtt):
        parser.error("--rtt: 0..2000 ms")
    if not 1 <= args.rounds <= 20:
        parser.error("--rounds: 1..20")
    api = os.environ["SHEETD_URL"].rstrip("/") + "/"
    host = urllib.parse.urlsplit(api).hostname
    catalog = preset_names(urllib.parse.urlsplit(api).port)  # the presets sheetd serves, in its order
    args.presets = [p for p in args.presets.split(",") if p] or catalog
    unknown = [p for p in args.presets if p not in catalog]
    if unknown:
        parser.error(f"--presets: unknown {unknown} (choose from {catalog})")
    if not delay_proxy.is_loopback(host or ""):
        print("latency: SHEETD_URL must be on loopback", file=sys.stderr)
        return 2
    out_dir = os.environ.get("LATENCY_OUT", ".build/latency")
    os.makedirs(out_dir, exist_ok=True)
    modes = ["predict", "off"] if args.compare else ["predict"]
    # a TERM (scripts/latency's time limit, or its trap) unwinds: the browser and driver are quit
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    started = time.monotonic()
    runner = Runner(args, api)
    driver = new_driver()
    cdp = None
    crashed = None
    try:
        cdp = CDP(driver)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
        if "gestures" in args.scenarios:
            runner.run(driver, cdp, modes)
        if "layout" in args.scenarios:
            runner.layout = run_layout(args, runner, driver, cdp)
    except (Exception, KeyboardInterrupt, SystemExit) as e:
        if not isinstance(e, (KeyboardInterrupt, SystemExit)):
            traceback.print_exc()
        crashed = f"{type(e).__name__}: {e}" if isinstance(e, Exception) else "stopped (time limit or signal): the tables hold what ran"
    finally:
        browser = driver.capabilities.get("browserVersion", "?")
        if cdp:
            cdp.close()
        try:
            driver.quit()
        except Exception:
            pass
        for p in runner.proxies.values():
            p.stop()

    meta = {
        "command": os.environ.get("LATENCY_CMD") or "scripts/latency " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "nproc": os.cpu_count(), "chromium": browser, "rtt": args.rtt, "presets": args.presets, "rounds": args.rounds,
        "modes": modes, "seconds": round(time.monotonic() - started, 1), "notes": runner.notes,
        "loadavg": os.getloadavg(),
    }
    results = runner.results
    table = render(results, args, modes, meta) if "gestures" in args.scenarios else ""
    verdicts = checks(results, modes, args.rtt) if "gestures" in args.scenarios else []
    if "layout" in args.scenarios:
        table += ("\n" if table else "") + render_layout(runner.layout, args)
        verdicts += layout_checks(runner.layout)
    if crashed:
        verdicts.insert(0, ("the run finished", False, crashed))
    lines = [table, "### Checks", ""]
    for name, ok, detail in verdicts:
        lines.append(f"- {'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail else ""))
    report = "\n".join(lines) + "\n"
    print()
    print(report)
    with open(os.path.join(out_dir, "latest.md"), "w", encoding="utf-8") as f:
        f.write(f"# scripts/latency\n\n`{meta['command']}` · {meta['nproc']} cores · Chromium {browser} · "
                f"load average {meta['loadavg'][0]:.2f} · {meta['seconds']} s\n\n" + report)
    with open(os.path.join(out_dir, "latest.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "results": results, "layout": runner.layout, "checks": [{"name": n, "ok": o, "detail": d} for n, o, d in verdicts]}, f, indent=1)
    if args.write_docs:
        print("---- for docs/PERFORMANCE.md " + "-" * 40)
        print(f"`{meta['command']}` on this machine ({meta['nproc']} cores, load average {meta['loadavg'][0]:.2f} at the end), "
              f"headless Chromium {browser} (Debian), through testkit/sheetkit/delay_proxy.py on loopback; {meta['seconds']} s.\n")
        print(table)
        print("-" * 69)
    failed = sum(1 for _, ok, _ in verdicts if not ok)
    print(f"latency: {len(verdicts) - failed} checks passed, {failed} failed · {len(results)} gestures · "
          f"{meta['seconds']} s · tables in {out_dir}/latest.md, raw data in {out_dir}/latest.json")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
