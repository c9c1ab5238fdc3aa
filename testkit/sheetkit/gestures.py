"""The demo page driven as a finger drives it: headless Chromium (Debian's, through Debian's
chromedriver and a pinned Selenium), input through the Chrome DevTools Protocol with explicit
timestamps at 120 Hz (drags with the mouse, flicks by touch), a recorder injected into the page, and one
gesture run from where the card rests (`run_gesture`) with what the page saw. Used by
Benchmarks/latency.py (scripts/latency) and IntegrationTests/browser_test.py.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import urllib.request

os.environ["SE_OFFLINE"] = "true"  # Selenium Manager, if ever consulted, must not download
import websocket  # noqa: E402  (websocket-client: a dependency of the pinned selenium)
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
HZ = 120.0
DRAG_PX, DRAG_SPEED = 600.0, 1000.0  # screen px, px/s
FLICK_PX, FLICK_S = 180.0, 0.100  # 1800 px/s: clear of facebook's 1500 pt/s threshold at scale 1
GESTURES = ["drag", "flickDown", "flickUp"]
# The card: the demo's hook (its <sheet-view>'s card part), or an element with id `card`.
CARD_JS = "(window.sheetDemo?.card?.() ?? document.querySelector('#card'))"

# ---------------------------------------------------------------- the recorder (injected)

RECORDER = r"""
(() => {
  if (window.__lat) return;
  const R = window.__lat = { on: false, events: [], frames: [], down: false, lastY: null, errors: 0 };
  const card = () => (window.sheetDemo?.card?.() ?? document.querySelector('#card'));
  const phone = () => document.querySelector('#phone');
  const topOf = () => { const c = card(); return c ? c.getBoundingClientRect().top : null; };
  for (const type of ['pointerdown', 'pointermove', 'pointerup', 'pointercancel']) {
    window.addEventListener(type, (e) => {
      if (!R.on || !e.isPrimary) return;
      if (type === 'pointerdown') R.down = true;
      if (type !== 'pointercancel') R.lastY = e.clientY;
      R.events.push([type, e.timeStamp, e.clientY, e.pointerType, performance.now(), topOf()]);
      if (type === 'pointerup' || type === 'pointercancel') R.down = false;
    }, { capture: true });
  }
  // Our frame callback runs after the page's own for the same frame. A callback the page asks for
  // between frames is queued behind ours, so ours is then re-queued behind it; one it asks for
  // during a frame's callbacks is for the next frame, and ours, still to run in this frame,
  // re-queues itself after it.
  const raf = window.requestAnimationFrame.bind(window), caf = window.cancelAnimationFrame.bind(window);
  let mine = 0, inRun = false;
  const tick = (t) => {
    inRun = false;
    if (R.on) {
      const d = phone()?.dataset ?? {};
      let expected = null;
      if (R.down && R.lastY !== null) {
        try { expected = window.sheetDemo?.expectedTop?.(R.lastY) ?? null; } catch (e) { R.errors++; }
      }
      R.frames.push([t, topOf(), d.state ?? null, expected, R.lastY, R.down, Number(d.settled || 0)]);
    }
    mine = raf(tick);
  };
  window.requestAnimationFrame = function (cb) {
    const id = raf((t) => { inRun = true; cb(t); });
    if (!inRun) { caf(mine); mine = raf(tick); }
    return id;
  };
  mine = raf(tick);
})();
"""


# ---------------------------------------------------------------- small helpers

def wait_for(fn, timeout=10.0, interval=0.05):
    """Polls fn until it returns a truthy value; returns it, or the last value at the timeout."""
    deadline = time.monotonic() + timeout
    value = fn()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = fn()
    return value


def percentile(values, q):
    """Linear interpolation between closest ranks; None for no values."""
    if not values:
        return None
    v = sorted(values)
    if len(v) == 1:
        return v[0]
    k = (len(v) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def fmt(x, digits=1):
    return "–" if x is None else f"{x:.{digits}f}"


class CDP:
    """A DevTools WebSocket of our own to the page's target: commands can be sent without waiting
    (input events are pipelined, in order); replies are collected by a reader thread."""

    def __init__(self, driver):
        address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        host = address.rsplit(":", 1)[0]
        if host not in ("localhost", "127.0.0.1", "::1", "[::1]"):
            raise RuntimeError(f"DevTools is not on loopback: {address}")
        with urllib.request.urlopen(f"http://{address}/json", timeout=5) as r:
            targets = json.load(r)
        handle = driver.current_window_handle
        page = next((t for t in targets if t.get("id") == handle), None) or next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], suppress_origin=True, timeout=10)
        self.ws.settimeout(None)  # the reader waits as long as it takes (a page load is quiet for seconds)
        self.next_id = 0
        self.replies: dict[int, dict] = {}
        self.errors: list[str] = []
        self.closed = False
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        threading.Thread(target=self._read, daemon=True, name="cdp-reader").start()

    def _read(self):
        while True:
            try:
                message = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                continue
            except Exception:  # closed
                with self.cond:
                    self.closed = True
                    self.cond.notify_all()
                return
            if "id" in message:
                with self.cond:
                    self.replies[message["id"]] = message
                    if "error" in message:
                        self.errors.append(json.dumps(message["error"]))
                    self.cond.notify_all()

    def send(self, method, params) -> int:
        with self.lock:
            self.next_id += 1
            mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        return mid

    def wait(self, ids, timeout=5.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not all(i in self.replies for i in ids):
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    return False
                self.cond.wait(left)
            for i in ids:
                self.replies.pop(i, None)
        return True

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


def new_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1440,1400", "--hide-scrollbars", "--force-device-scale-factor=1",
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


# ---------------------------------------------------------------- the page

class Page:
    def __init__(self, driver, cdp):
        self.d = driver
        self.cdp = cdp

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def phone(self):
        return self.js(
            "const d = document.querySelector('#phone')?.dataset ?? {};"
            "return {state: d.state ?? null, detent: d.detent ?? null, constant: Number(d.constant), settled: Number(d.settled || 0),"
            " frames: Number(d.frames || 0), session: d.session ?? null};")

    def has_api(self):
        return bool(self.js("return typeof window.sheetDemo?.reset === 'function'"))

    def ready(self):
        return self.js("return !!(window.sheetDemo?.ready ?? (document.body?.dataset.ready === '1'))")

    def map_done(self):
        return self.js("const m = document.querySelector('#map'); return !m || m.dataset.done === '1'")

    def at_rest(self):
        s = self.phone()
        return s["state"] in ("resting", "hidden")

    def load(self, url, preset, timeout):
        self.d.get(url)
        if not wait_for(self.ready, timeout):
            raise RuntimeError(f"{url}: the page never became ready")
        current = self.js("return window.sheetDemo?.state?.snapshot?.preset ?? null")
        if current is not None and current != preset:
            # a page without ?preset=: pick it in the preset picker
            self.js(f"document.querySelector('#presets input[value=\"{preset}\"]').click()")
            wait_for(lambda: self.js("return window.sheetDemo?.state?.snapshot?.preset ?? null") == preset, timeout)
        wait_for(self.map_done, timeout + 20, 0.1)
        wait_for(self.at_rest, timeout)

    def reset(self, url, preset, timeout):
        """The card at rest at the preset's start detent; the release map computed (its requests
        would share the browser's connections with the gesture's)."""
        if self.has_api():
            self.d.set_script_timeout(timeout)
            error = self.d.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "window.sheetDemo.reset({preset: arguments[0]}).then(() => done(null), (e) => done(String(e)));", preset)
            if error:
                raise RuntimeError(f"sheetDemo.reset: {error}")
        else:
            self.load(url, preset, timeout)
        wait_for(self.map_done, timeout + 20, 0.1)
        if not wait_for(self.at_rest, timeout):
            raise RuntimeError("the card is not at rest after reset")
        time.sleep(0.15)

    def geometry(self):
        return self.js(
            "const s = window.sheetDemo?.state?.snapshot;"
            "const screen = document.querySelector('#screen').getBoundingClientRect();"
            f"const card = {CARD_JS}.getBoundingClientRect();"
            "const h = s?.geometry?.height ?? 844;"
            "return {scale: screen.height / h, screenTop: screen.top, screenBottom: screen.bottom, height: h,"
            " detents: s?.detents ?? null, constant: s ? Number(document.querySelector('#phone').dataset.constant) : null,"
            " cardTop: card.top, x: Math.round(card.left + card.width / 2), y: Math.round(card.top + 14)};")

    def wait_release_settled(self, settled_before, rtt):
        """After a release: the card at rest after a settle animation (`#phone` dataset.settled
        beyond `settled_before`), or, where the release moved nothing (a flick toward the end the
        card already rests at), at rest and still for 0.5 s once the `ended` answer arrived.
        Returns "settled", "still" or None (timed out: the deadline only bounds a failing run, a
        settle animation lasts under a second)."""
        deadline = time.monotonic() + 60 + 3 * rtt / 1000
        has_release = self.js("return typeof window.sheetDemo?.lastRelease === 'function'")
        quiet_since, last_top = None, None
        started = time.monotonic()
        while time.monotonic() < deadline:
            s = self.js(
                "const d = document.querySelector('#phone').dataset;"
                f"return {{state: d.state, settled: Number(d.settled || 0), top: {CARD_JS}.getBoundingClientRect().top,"
                " answered: !!(window.sheetDemo?.lastRelease?.())}")
            at_rest = s["state"] in ("resting", "hidden")
            if at_rest and s["settled"] > settled_before:
                return "settled"
            answered = s["answered"] if has_release else time.monotonic() - started > 1.0 + 2 * rtt / 1000
            if at_rest and answered and (last_top is None or abs(s["top"] - last_top) < 0.01):
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= 0.5:
                    return "still"
            else:
                quiet_since = None
            last_top = s["top"]
            time.sleep(0.03)
        return None

    def stats(self):
        return self.js("try { return window.sheetDemo?.stats?.() ?? null } catch (e) { return {error: String(e)} }")

    def last_release(self):
        return self.js("try { return window.sheetDemo?.lastRelease?.() ?? null } catch (e) { return {error: String(e)} }")

    def set_predict(self, on):
        return self.js("if (typeof window.sheetDemo?.setPredict !== 'function') return false;"
                       "window.sheetDemo.setPredict(arguments[0]); return true;", on)


# ---------------------------------------------------------------- gestures

def plan(kind, x, y0, dy, seconds):
    """Events (offset s, cdp method, params-without-timestamp, y) at 120 Hz: press, moves along a
    straight line at constant speed, release one tick after the last move (at its position)."""
    n = max(1, round(seconds * HZ))
    out = []
    if kind == "mouse":
        out.append((0.0, "Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y0, "button": "left", "buttons": 1, "clickCount": 1}, y0))
        for i in range(1, n + 1):
            y = y0 + dy * i / n
            out.append((i / HZ, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "left", "buttons": 1}, y))
        out.append(((n + 1) / HZ, "Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y0 + dy, "button": "left", "buttons": 0, "clickCount": 1}, y0 + dy))
    else:
        out.append((0.0, "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y0, "id": 1}]}, y0))
        for i in range(1, n + 1):
            y = y0 + dy * i / n
            out.append((i / HZ, "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y, "id": 1}]}, y))
        out.append(((n + 1) / HZ, "Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []}, y0 + dy))
    return out


def perform(cdp, events, paced=True):
    """Sends the planned events in real time (`paced`), or all at once (a machine late to deliver
    them, at its worst: the page gets the moves coalesced); each carries its intended time as
    `timestamp` (seconds since the epoch, which Chromium maps onto the page's clock). Returns the
    intended epoch times and the harness's lateness (ms) per event."""
    start_wall = time.time() + 0.03
    start_perf = time.perf_counter() + 0.03
    sent, late, ids = [], [], []
    for offset, method, params, _ in events:
        due = start_perf + offset
        while paced:
            left = due - time.perf_counter()
            if left <= 0:
                break
            time.sleep(left - 0.001 if left > 0.002 else 0)
        late.append((time.perf_counter() - due) * 1000)
        stamp = start_wall + offset
        ids.append(cdp.send(method, dict(params, timestamp=stamp)))
        sent.append(stamp)
    ok = cdp.wait(ids, 10)
    if not ok:
        raise RuntimeError("Chromium did not acknowledge every input event (DevTools socket closed?)")
    return sent, late, ok


def analyse(rec, sent_stamps, time_origin, events):
    """The figures of one gesture from the recorder's log (times on the page's clock, ms)."""
    evs, frames = rec["events"], rec["frames"]
    down = next((e for e in evs if e[0] == "pointerdown"), None)
    up = next((e for e in evs if e[0] in ("pointerup", "pointercancel")), None)
    out = {"pointerEvents": len(evs), "frames": len(frames)}
    # timestamps: what the page received against what was sent (same planned y)
    expected_ts = [s * 1000 - time_origin for s in sent_stamps]
    devs = []
    for e in evs:
        # match by position along the plan (the y of the planned event nearest in time)
        i = min(range(len(expected_ts)), key=lambda k: abs(expected_ts[k] - e[1]))
        if abs(events[i][3] - e[2]) <= 1.0:
            devs.append(e[1] - expected_ts[i])
    out["timestampError"] = max((abs(d) for d in devs), default=None)
    out["timestampsMatched"] = len(devs)
    if down is None or up is None:
        out["error"] = "the page saw no pointerdown/pointerup"
        return out
    lags, nulls = [], 0
    for f in frames:
        t, top, state, expected, last_y, is_down = f[:6]
        if not is_down or t < down[1]:
            continue
        if expected is None or top is None:
            nulls += 1
            continue
        lags.append(abs(top - expected))
    out.update(lagP50=percentile(lags, 50), lagP95=percentile(lags, 95), lagMax=max(lags) if lags else None,
               lagFrames=len(lags), lagNulls=nulls, lagSamples=[round(x, 2) for x in lags])
    # the first frame recorded after the pointerup whose card top moved > 0.5 px from its top then
    top_up = up[5]
    moving = None
    first_after = next((i for i, f in enumerate(frames) if i > 0 and not f[5] and frames[i - 1][5]), None)
    if first_after is not None and top_up is not None:
        for f in frames[first_after:]:
            if f[1] is not None and abs(f[1] - top_up) > 0.5:
                moving = f[0] - up[1]
                break
    out["releaseToMoving"] = moving
    # the first frame after the pointerup from which the card top stays where it ends
    rest = None
    if first_after is not None:
        tail = [f for f in frames[first_after:] if f[1] is not None]
        if tail:
            final = tail[-1][1]
            k = len(tail)
            while k > 0 and abs(tail[k - 1][1] - final) <= 0.5:
                k -= 1
            if k < len(tail):
                rest = tail[k][0] - up[1]
    out["releaseToRest"] = rest
    # how long after its timeStamp the page's handlers saw the pointerup (Chromium's own input delay)
    out["upDeliveryMs"] = up[4] - up[1]
    out["upTimeStamp"] = up[1]
    out["downTimeStamp"] = down[1]
    return out


def run_gesture(page, cdp, gesture, rtt, default_detents=None, record=True):
    """One gesture from where the card rests (the caller has reset it): "drag" (mouse, toward the
    side with more room), "flickDown" or "flickUp" (touch). Waits until the card is at rest again;
    returns the snap, the page's stats before/after, and (record: the recorder is injected) the
    figures of `analyse`."""
    g = page.geometry()
    scale = g["scale"]
    detents = g["detents"] or default_detents
    here = g["constant"]
    lo, hi = min(detents.values()), max(detents.values())
    if gesture == "drag":
        room_up, room_down = here - lo, hi - here
        sign = -1 if room_up > room_down else 1
        dy, seconds, kind = sign * DRAG_PX, DRAG_PX / DRAG_SPEED, "mouse"
    else:
        sign = 1 if gesture == "flickDown" else -1
        dy, seconds, kind = sign * FLICK_PX, FLICK_S, "touch"
    x, y0 = g["x"], g["y"]
    events = plan(kind, x, y0, dy, seconds)
    if kind == "mouse":  # hover first (outside the measurement)
        cdp.wait([cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y0, "buttons": 0})])
    before = page.phone()
    stats0 = page.stats()
    page.js("if (window.sheetDemo?.state) window.sheetDemo.state.lastReleaseResult = null")  # reset() keeps the last one
    time_origin = page.js("return performance.timeOrigin")
    if record:
        page.js("Object.assign(window.__lat, {events: [], frames: [], down: false, lastY: null, on: true})")
    sent, late, acked = perform(cdp, events)
    settled = page.wait_release_settled(before["settled"], rtt)
    time.sleep(0.05)
    rec = page.js("window.__lat.on = false; return {events: window.__lat.events, frames: window.__lat.frames, errors: window.__lat.errors}") if record else None
    after = page.phone()
    stats1 = page.stats()
    release = page.last_release()
    out = {
        "direction": "down" if dy > 0 else "up", "pointer": kind, "px": abs(dy), "seconds": seconds,
        "pt": abs(dy) / scale, "scale": scale, "start": before, "end": after, "settled": settled,
        "snap": (release or {}).get("detent") or (after["detent"] if after["state"] == "resting" else after["state"]),
        "release": release, "stats": stats1, "statsBefore": stats0, "statsDelta": stats_delta(stats0, stats1),
        "harnessLateMs": {"p50": percentile(late, 50), "max": max(late)}, "acked": acked,
        "cdpErrors": list(cdp.errors),
    }
    cdp.errors.clear()
    if rec is not None:
        out["recorderErrors"] = rec.get("errors", 0)
        out.update(analyse(rec, sent, time_origin, events))
        out["raw"] = {"events": rec["events"], "frames": rec["frames"], "sent": sent}
    return out


def stats_delta(a, b):
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    counters = ("predictions", "mismatches", "catches", "samples", "eventsSent", "requestsSent", "corrections", "releases",
                "releaseMismatches")
    out = {}
    for k in counters:
        if isinstance(b.get(k), (int, float)):
            out[k] = b[k] - (a.get(k) or 0) if isinstance(a.get(k), (int, float)) and a.get(k) <= b[k] else b[k]
    for k in ("maxError", "maxInFlight", "largestBatch"):
        if k in b:
            out[k] = b[k]
    return out


def get_json(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)
