#!/usr/bin/env python3
"""Browser test of <sheet-view> and its examples (run by IntegrationTests/element-test, which builds and
starts sheetd and gives SHEETD_URL).

Debian's headless Chromium through its chromedriver (a pinned Selenium, nothing downloaded), as the
phone a designer holds: 390 × 844 CSS px, touch. For every example sheetd serves (/examples/NAME):

- layout: the page fills the viewport with no page scroll, and the session's geometry is the viewport's;
- accessibility: axe-core 4.4 (bundled by axe-core-python) finds 0 violations with the sheet open at
  each of its detents; keyboard only (the handle: arrows, Home, End) reaches every detent, Escape
  dismisses and focus returns where it was; Tab never leaves a modal sheet;
- gestures: through testkit/sheetkit/delay_proxy.py at +0 and +200 ms, a drag by mouse and by touch, a
  flick down and a flick up by each, with CDP input carrying explicit timestamps (sheetkit.gestures):
  zero prediction mismatches, every release started from the release law as sheetd answered it, one
  request in flight at most, and the same snaps at +200 ms as at +0;
- dismissal: a tap on the backdrop (by touch and by mouse) where the engine dims the page;
- stacks: a <sheet-view> nested in another's content (checkout.html's card details, and a page of
  the test's own through each proxy): its session stacked on the parent's, the parent drawn by the
  child's recede law (what it drew is sheetd's `parentTransform`, bit for bit, at each detent and
  after each gesture; 0 transform mismatches), a covered parent not moved by a drag (nothing sent),
  Escape closing the top-most sheet only, focus into the child and back, a cascade closing both
  from one instant, axe-core 0 violations with the child open.

Then the first and second visit of the long-list example and of the demo page: the bytes on the wire
(gzip) against the same files sent whole, and the second visit's static files only 304s (or unasked,
within their lifetime). No timing verdicts: each wait only bounds a failing run.

The parts are independent (each opens its own pages and sessions), so they run side by side in
ELEMENT_BROWSERS Chromiums (default 3; 1: one after another), each part on whichever browser is free,
the longest parts first; the test is mostly waiting (animations, the +200 ms proxy), not computing.
Their results are printed in the order above, whatever order they ended in: the same checks, named
alike, as when they ran in one browser.
Prints one line per check and closes with `element-test: N passed, M failed`.
"""

import glob
import json
import os
import queue
import sys
import threading
import time
import traceback
import urllib.parse
import urllib.request

os.environ["SE_OFFLINE"] = "true"  # Selenium Manager, if ever consulted, must not download
from axe_core_python.selenium import Axe  # noqa: E402  (axe-core 4.4, bundled)
from sheetkit import delay_proxy  # noqa: E402
from sheetkit import gestures  # noqa: E402  (CDP input with explicit timestamps, wait_for)
from sheetkit.checklist import Checklist  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

API = os.environ["SHEETD_URL"].rstrip("/") + "/"
ARTIFACTS = os.environ.get("ARTIFACTS", ".build/element-artifacts")
EXAMPLES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "SheetService", "Resources", "examples", "*.html")))
WIDTH, HEIGHT = 390, 844  # an iPhone 14's viewport, CSS px
RTTS = (0, 200)  # added round trips, ms
BROWSERS = max(1, int(os.environ.get("ELEMENT_BROWSERS", "3")))  # Chromiums running parts side by side

wait_for = gestures.wait_for
results = Checklist("element-test")
_part = threading.local()  # the results of the part this thread runs, printed once it is its turn


def check(name, ok, detail=""):
    """One result (the figures are printed with a pass too: they are what the check measured)."""
    held = getattr(_part, "results", None)
    if held is not None:  # a part running beside others: kept, printed in the parts' order
        held.append((name, bool(ok), detail))
        return bool(ok)
    ok = results.check(bool(ok), name, detail)
    if ok and detail:
        print(f"       {detail}", flush=True)
    return ok


def new_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = gestures.CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={WIDTH},{HEIGHT}",
                "--hide-scrollbars", "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-background-timer-throttling", "--disable-renderer-backgrounding"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=gestures.CHROMEDRIVER), options=options)
    # The phone: its viewport, touch, a mobile user agent's layout.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": True})
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    return driver


# What the test reads of the first <sheet-view> of the page (the sheet the page is about).
VIEW = "const v = document.querySelector(arguments[0] || 'sheet-view');"
STATE = VIEW + """
if (!v || !v.session) return null;
const s = v.session.snapshot, h = v.shadowRoot.querySelector('.handle').getBoundingClientRect();
return {state: v.state, detent: v.detent, moving: v.session.moving || v.hasAttribute('data-moving') || !!v._pendingSettled, inFlight: v.stats.inFlight,
  closed: v.hasAttribute('data-closed'),
  constant: s.constant, dimmerAlpha: s.dimmerAlpha, detents: s.detents, geometry: s.geometry, modal: v.getAttribute('aria-modal') === 'true',
  settled: Number(v.getAttribute('data-settled') || 0), handle: [Math.round(h.left + h.width / 2), Math.round(h.top + h.height / 2)],
  preset: s.preset, showDefault: v.presetInfo && v.presetInfo.showDefault, handOff: v.handOffMismatches};
"""


def state(driver, selector=None):
    return driver.execute_script(STATE, selector)


def at_rest(driver, selector=None):
    s = state(driver, selector)
    return s if s and not s["moving"] and s["inFlight"] == 0 and s["state"] in ("resting", "hidden") else None


def resting(driver, selector=None, detent=None):
    """The sheet's state if it is at rest at a detent (not hidden; at `detent` when given), else None."""
    s = at_rest(driver, selector)
    return s if s and s["state"] == "resting" and detent in (None, s["detent"]) else None


def open_page(driver, url):
    driver.get_log("browser")
    driver.get(url)
    ready = wait_for(lambda: driver.execute_script(
        "const all = [...document.querySelectorAll('sheet-view')];"
        "return all.length > 0 && all.every((v) => v.session && v.hasAttribute('data-state'))"), 60)
    return ready and wait_for(lambda: at_rest(driver), 30)


def visible_detents(s):
    """The sheet's detents but hidden, top-most first."""
    return [n for n, _ in sorted(s["detents"].items(), key=lambda kv: kv[1]) if n != "hidden"]


def move_to(driver, detent, selector=None):
    """show(detent) and wait for the card to rest there."""
    driver.execute_script(VIEW + "v.show(arguments[1])", selector, detent)
    return wait_for(lambda: resting(driver, selector, detent), 30)


def console_errors(driver):
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


# ---------------------------------------------------------------- layout and accessibility

def layout_and_axe(driver, name):
    url = f"{API}examples/{name}"
    if not check(f"{name}: the page loads, every sheet's session created", open_page(driver, url)):
        return
    s = state(driver)
    page = driver.execute_script("return {scroll: document.scrollingElement.scrollHeight, width: document.scrollingElement.scrollWidth,"
                                 " h: innerHeight, w: innerWidth}")
    check(f"{name}: fills the {WIDTH} × {HEIGHT} viewport with no page scroll",
          page["scroll"] <= page["h"] and page["width"] <= page["w"] and (page["w"], page["h"]) == (WIDTH, HEIGHT),
          f"page {page['width']} × {page['scroll']}, viewport {page['w']} × {page['h']}")
    check(f"{name}: the session's geometry is the viewport's", s["geometry"]["height"] == page["h"],
          f"geometry {s['geometry']}, viewport height {page['h']}")
    axe = Axe()
    found = {}
    for detent in visible_detents(s):
        move_to(driver, detent)
        report = axe.run(driver)
        found[detent] = [f"{v['id']} ({len(v['nodes'])}: {v['nodes'][0]['target']})" for v in report["violations"]]
    check(f"{name}: axe-core 4.4: 0 violations with the sheet open at each detent",
          all(not v for v in found.values()), "; ".join(f"{d}: {v or 'none'}" for d, v in found.items()))


def keyboard(driver, name):
    """Keyboard only: a page control gets focus, the sheet opens (focus moves to its handle), the
    arrows, Home and End reach every detent, Tab stays inside while modal, Escape dismisses and focus
    goes back to the control."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    open_page(driver, f"{API}examples/{name}")
    s = state(driver)
    detents = visible_detents(s)
    keys = lambda *k: ActionChains(driver).send_keys(*k).perform()  # noqa: E731
    # Start hidden, focus on a control of the page, then open the sheet from the keyboard.
    driver.execute_script(VIEW + "v.dismiss()")
    wait_for(lambda: (lambda r: r if r and r["state"] == "hidden" and r["closed"] else None)(at_rest(driver)), 30)
    driver.execute_script("const b = document.querySelector('main button, main a, main input'); (b || document.body).focus();"
                          "if (!b) { document.body.tabIndex = -1; document.body.focus(); }")
    opener = driver.execute_script("return document.activeElement.outerHTML.slice(0, 60)")
    has_button = driver.execute_script("return !!document.querySelector('main button[onclick]')")
    if has_button:
        keys(Keys.ENTER)  # the page's own button opens the sheet
    else:
        driver.execute_script(VIEW + "v.show()")
    opened = wait_for(lambda: resting(driver), 30)
    focus_in = driver.execute_script(VIEW + "return v.shadowRoot.activeElement === v.shadowRoot.querySelector('.handle')")
    check(f"{name}: keyboard: the sheet opens with focus on its handle", bool(opened) and focus_in,
          f"opened at {opened and opened['detent']}, from {opener}")
    reached = set()
    keys(Keys.HOME)
    s0 = wait_for(lambda: (lambda r: r if r and r["detent"] == detents[0] else None)(at_rest(driver)), 30)
    if s0:
        reached.add(s0["detent"])
    for _ in detents[1:]:
        before = at_rest(driver)
        keys(Keys.ARROW_DOWN)
        after = wait_for(lambda: (lambda r: r if r and r["detent"] != before["detent"] else None)(at_rest(driver)), 30)
        if not after or after["state"] == "hidden":
            break
        reached.add(after["detent"])
    keys(Keys.END)
    s_end = wait_for(lambda: (lambda r: r if r and r["detent"] == detents[-1] else None)(at_rest(driver)), 30)
    if s_end:
        reached.add(s_end["detent"])
    check(f"{name}: keyboard: Home, ArrowDown and End reach every detent", reached == set(detents),
          f"reached {sorted(reached)} of {detents}")
    # Tab, many times, while the sheet is modal (the top-most detent of a dimming preset).
    keys(Keys.HOME)
    top = wait_for(lambda: (lambda r: r if r and r["detent"] == detents[0] else None)(at_rest(driver)), 30)
    if top and top["modal"]:
        inside = []
        for i in range(12):
            keys(Keys.SHIFT + Keys.TAB if i % 5 == 4 else Keys.TAB)
            inside.append(driver.execute_script(VIEW + "return v.contains(document.activeElement) || document.activeElement === v"))
        check(f"{name}: focus never leaves the open modal sheet (12 Tab and Shift+Tab)", all(inside), f"inside {inside}")
    keys(Keys.ESCAPE)
    closed = wait_for(lambda: (lambda r: r if r and r["state"] == "hidden" else None)(at_rest(driver)), 30)
    back = driver.execute_script("return document.activeElement.outerHTML.slice(0, 60)")
    check(f"{name}: keyboard: Escape dismisses and focus returns", bool(closed) and back == opener,
          f"state {closed and closed['state']}, focus on {back}")


# ---------------------------------------------------------------- gestures at +0 and +200 ms

def gesture(driver, cdp, kind, dy, seconds, selector=None):
    """One gesture on the handle, released while moving (CDP events at 120 Hz with timestamps):
    returns the snap it caused (the last `snap` event's detent, or where the card rests) and the
    prediction counters of that gesture."""
    s = state(driver, selector)
    x, y = s["handle"]
    driver.execute_script(VIEW + "v.session.resetStats(); window.__snaps = [];"
                          "if (!window.__snapListener) { window.__snapListener = true;"
                          " document.addEventListener('snap', (e) => window.__snaps.push(e.detail)); }", selector)
    if kind == "mouse":
        cdp.wait([cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "buttons": 0})])
    gestures.perform(cdp, gestures.plan(kind, x, y, dy, seconds))
    rest = wait_for(lambda: at_rest(driver, selector), 60)
    stats = driver.execute_script(VIEW + "return v.stats", selector)
    snaps = driver.execute_script("return window.__snaps")
    snap = snaps[-1]["detent"] if snaps else (rest or {}).get("detent")
    return snap, stats, rest


GESTURE_PLANS = [  # (label, pointer, dy px, seconds): each clear of every snap threshold
    ("drag up", "mouse", -240.0, 0.3),     # 800 px/s up: a slow drag, the card follows and snaps where it is let go
    ("flick down", "mouse", 180.0, 0.1),   # 1800 px/s down: past every preset's flick threshold
    ("flick up", "mouse", -180.0, 0.1),    # the same, up
    ("drag up", "touch", -240.0, 0.3),     # the three again by touch (touch-action, pointer capture)
    ("flick down", "touch", 180.0, 0.1),
    ("flick up", "touch", -180.0, 0.1),
]


def start_proxies():
    """One delay proxy per added round trip, shared by every browser (they share one event loop)."""
    target = urllib.parse.urlsplit(API)
    return {rtt: delay_proxy.start((target.hostname, target.port), rtt) for rtt in RTTS}


def gestures_through_proxy(driver, cdp, name, rtt, proxy):
    """One example through the proxy that adds `rtt` ms: the six gestures of GESTURE_PLANS from the
    detent the page rests at, the taps on the backdrop, the console. Returns the snaps seen (for
    `same_snaps`), or None when the page did not load."""
    label = f"{name} +{rtt} ms"
    if not open_page(driver, f"{proxy.url}examples/{name}"):
        check(f"{label}: the page loads through the delay proxy", False)
        return None
    s = state(driver)
    start = s["detent"] if s["state"] == "resting" else (s["showDefault"] if s["showDefault"] in s["detents"] else visible_detents(s)[-1])
    seen, deltas, unsettled = [], [], []
    for what, pointer, dy, seconds in GESTURE_PLANS:
        move_to(driver, start)
        snap, stats, rest = gesture(driver, cdp, pointer, dy, seconds)
        seen.append(f"{pointer} {what} → {snap}")
        deltas.append((f"{pointer} {what}", stats or {}))
        if not rest:
            unsettled.append(f"{pointer} {what}")
    check(f"{label}: drags and flicks by mouse and touch come to rest", not unsettled, "; ".join(seen) if not unsettled else f"not at rest after {unsettled}")
    check(f"{label}: zero prediction mismatches", all(d.get("mismatches") == 0 for _, d in deltas),
          ", ".join(f"{g}: {d.get('mismatches')} of {d.get('predictions')}" for g, d in deltas))
    check(f"{label}: every release started from the release law, as sheetd answered it",
          all((d.get("releases") or 0) >= 1 and d.get("releaseMismatches") == 0 for _, d in deltas),
          ", ".join(f"{g}: {d.get('releases')} predicted, {d.get('releaseMismatches')} differed" for g, d in deltas))
    check(f"{label}: one request in flight at most, every pan event sent",
          all(d.get("maxInFlight", 9) <= 1 and d.get("eventsSent") == d.get("samples") for _, d in deltas),
          ", ".join(f"{g}: ≤ {d.get('maxInFlight')}, {d.get('eventsSent')}/{d.get('samples')}" for g, d in deltas))
    # Dismissal by a tap on the backdrop, by touch and by mouse, where the engine dims the page.
    for pointer in ("touch", "mouse"):
        top = visible_detents(s)[0]
        r = move_to(driver, top)
        if not r or r["dimmerAlpha"] <= 0.01:
            continue
        x, y = WIDTH // 2, 8  # above the card at its top-most detent: the backdrop
        tap = gestures.plan(pointer, x, y, 0.0, 1 / 120)
        gestures.perform(cdp, [tap[0], tap[-1]])
        gone = wait_for(lambda: (lambda q: q if q and q["state"] == "hidden" else None)(at_rest(driver)), 30)
        check(f"{label}: a {pointer} tap on the backdrop dismisses", bool(gone), f"state {(gone or state(driver))['state']}")
    errors = console_errors(driver)
    check(f"{label}: no console errors", not errors, "; ".join(errors)[:300])
    return seen


def same_snaps(name, snaps):
    """The gestures of an example snapped alike at +0 and +200 ms (snaps: rtt → what
    gestures_through_proxy returned, None for a page that did not load)."""
    if all(snaps.get(rtt) is not None for rtt in RTTS):
        check(f"{name}: the same snaps at +{RTTS[1]} ms as at +{RTTS[0]} ms", snaps[RTTS[1]] == snaps[RTTS[0]],
              f"+{RTTS[0]}: {snaps[RTTS[0]]}; +{RTTS[1]}: {snaps[RTTS[1]]}")


# ---------------------------------------------------------------- bytes: first and second visit

def network(driver):
    """The responses since the last call: url, status on the wire, bytes on the wire, whether the
    cache answered without asking."""
    out, lengths, wire = {}, {}, {}
    for entry in driver.get_log("performance"):
        m = json.loads(entry["message"])["message"]
        p = m.get("params", {})
        if m["method"] == "Network.responseReceived":
            r = p["response"]
            out[p["requestId"]] = {"url": r["url"], "status": r["status"], "cache": bool(r.get("fromDiskCache") or r.get("fromMemoryCache")),
                                   "encoding": {k.lower(): v for k, v in r.get("headers", {}).items()}.get("content-encoding")}
        elif m["method"] == "Network.responseReceivedExtraInfo":
            wire[p["requestId"]] = p["statusCode"]  # the status on the wire (a revalidated file shows 200 above)
        elif m["method"] == "Network.loadingFinished":
            lengths[p["requestId"]] = p["encodedDataLength"]
    return [dict(v, bytes=lengths.get(k, 0), status=wire.get(k, v["status"])) for k, v in out.items()]


def identity_bytes(url):
    """What the same file weighs sent whole (as sheetd sent every file before it compressed)."""
    req = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return len(r.read())


def visits(driver, path, label):
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get("about:blank")
    network(driver)
    statics = ("/", "/sheet-client.js", "/sheet-view.js", "/openapi.yaml", "/presets")  # the files StaticFile serves
    is_static = lambda u: u.startswith(API) and (urllib.parse.urlsplit(u).path in statics or urllib.parse.urlsplit(u).path.startswith("/examples/"))  # noqa: E731
    open_page(driver, API + path) if path != "" else (driver.get(API), wait_for(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), 60))
    time.sleep(0.5)  # the page's last subresources (none is awaited by the ready condition)
    first = [r for r in network(driver) if is_static(r["url"]) and r["status"] == 200]
    wire = sum(r["bytes"] for r in first)
    whole = sum(identity_bytes(r["url"]) for r in first)
    check(f"{label}: first visit compressed under a third of the files sent whole",
          first and all(r["encoding"] == "gzip" or r["bytes"] < 1500 for r in first) and wire * 3 < whole,
          f"{wire:,} bytes on the wire for {len(first)} files ({', '.join(urllib.parse.urlsplit(r['url']).path for r in first)}), "
          f"{whole:,} sent whole: {wire / max(whole, 1):.0%}")
    driver.get("about:blank")
    network(driver)
    open_page(driver, API + path) if path != "" else (driver.get(API), wait_for(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), 60))
    time.sleep(0.5)
    second = [r for r in network(driver) if is_static(r["url"])]
    transferred = [r for r in second if r["status"] == 200 and not r["cache"]]
    check(f"{label}: second visit: the static files only 304s (or unasked within their lifetime)", not transferred,
          f"{sum(1 for r in second if r['status'] == 304)} × 304, {sum(1 for r in second if r['cache'])} from the cache unasked, "
          f"{len(transferred)} × 200 ({', '.join(r['url'] for r in transferred)})")


def scroll_hand_off(driver, cdp):
    """long-list.html at its top-most detent, by touch on the list: a drag up scrolls the list and
    the card stays; a drag down scrolls it back to its top, then the sheet takes the finger (sheetd's
    scroll hand-off): every answer's `consumer` is what the element drew (scroll or sheet)."""
    name = "long-list.html"
    open_page(driver, f"{API}examples/{name}")
    top = visible_detents(state(driver))[0]
    move_to(driver, top)
    x, y = WIDTH // 2, HEIGHT // 2
    gestures.perform(cdp, gestures.plan("touch", x, y, -300.0, 0.6))
    up = wait_for(lambda: at_rest(driver), 60)
    scrolled = driver.execute_script(VIEW + "return v.shadowRoot.querySelector('.content').scrollTop")
    check(f"{name}: a touch drag up on the list at {top} scrolls the list, the card stays",
          bool(up) and up["detent"] == top and scrolled > 200 and up["handOff"] == 0,
          f"list scrolled {scrolled:.0f} px, card at {up and up['detent']}, {up and up['handOff']} hand-off mismatches")
    gestures.perform(cdp, gestures.plan("touch", x, y - 200, 500.0, 1.0))
    down = wait_for(lambda: at_rest(driver), 60)
    back = driver.execute_script(VIEW + "return v.shadowRoot.querySelector('.content').scrollTop")
    check(f"{name}: a touch drag down scrolls the list to its top, then the sheet takes the finger",
          bool(down) and back == 0 and down["detent"] != top and down["handOff"] == 0,
          f"list at {back:.0f} px, card at {down and down['detent']}, {down and down['handOff']} hand-off mismatches")


def reduced_motion(driver):
    """With prefers-reduced-motion the card jumps: every position drawn during a show is where it
    started or where it ends, none between."""
    name = "long-list.html"
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    try:
        open_page(driver, f"{API}examples/{name}")
        s = state(driver)
        detents = visible_detents(s)
        move_to(driver, detents[-1])
        driver.execute_script(VIEW + """
            const card = v.shadowRoot.querySelector('.card');
            window.__tops = [];
            window.__observer = new MutationObserver(() => window.__tops.push(card.getBoundingClientRect().top));
            window.__observer.observe(card, {attributes: true, attributeFilter: ['style']});""")
        end = move_to(driver, detents[0])
        tops = driver.execute_script("window.__observer.disconnect(); return [...new Set(window.__tops.map((t) => Math.round(t * 100) / 100))]")
        first, last = s["detents"][detents[-1]], s["detents"][detents[0]]
        check(f"{name}: prefers-reduced-motion: the card jumps from {detents[-1]} to {detents[0]}, nothing drawn between",
              bool(end) and all(abs(t - first) < 0.5 or abs(t - last) < 0.5 for t in tops),
              f"tops drawn {tops[:8]} (from {first}, to {last})")
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "no-preference"}]})


def smallest_page(driver):
    """The README's smallest page (between its smallest-page markers), served from another origin
    with sheetd's address put in: at most 5 lines of HTML, no JavaScript of its own, and a working
    sheet whose content scrolls."""
    import functools
    import http.server
    import re
    import tempfile
    import threading
    readme = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md"), encoding="utf-8").read()
    found = re.search(r"<!-- smallest-page -->\s*```html\n(.*?)```\s*<!-- /smallest-page -->", readme, re.S)
    if not check("README: the smallest page is there", bool(found)):
        return
    html = found.group(1)
    lines = html.strip().splitlines()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    check("README: the smallest page is at most 5 lines, with no JavaScript of its own",
          len(lines) <= 5 and all("src=" in attrs and not body.strip() for attrs, body in scripts) and not re.search(r"\son[a-z]+=", html),
          f"{len(lines)} lines, {len(scripts)} script element(s), each with src and no body")
    root = tempfile.mkdtemp(prefix="sheet-view-")
    with open(os.path.join(root, "index.html"), "w", encoding="utf-8") as f:
        f.write(html.replace("http://127.0.0.1:8080/", API))
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        loaded = open_page(driver, f"http://127.0.0.1:{server.server_address[1]}/index.html")
        s = loaded and move_to(driver, visible_detents(state(driver))[0])
        scrolls = driver.execute_script(VIEW + "const c = v.shadowRoot.querySelector('.content'); return c.scrollHeight > c.clientHeight")
        check("README: the smallest page shows a working sheet (from another origin), its content scrolling",
              bool(s) and scrolls, f"at {s and s['detent']}, content scrolls: {scrolls}")
    finally:
        server.shutdown()


# ---------------------------------------------------------------- stacks: a <sheet-view> nested in another's

# A parent sheet and a sheet nested in its content (stacked on it: sheetd's `parent`), as a
# prototype writes them; the child leaves the page (here: its parent) interactive at tip, so the
# covered parent can be touched. {api}: sheetd's address (through a delay proxy).
STACK_PAGE = """<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>A stack of sheets</title>
<script type="module" src="{api}sheet-view.js"></script>
<main><h1>Orders</h1><button type="button" id="open-parent" onclick="document.getElementById('parent').show('full')">Open the order</button></main>
<sheet-view id="parent" preset="fluid" detent="full">
  <h2>Order 1024</h2><p>A lamp and a chair.</p>
  <button type="button" id="open-child" onclick="document.getElementById('child').show('half')">Delivery details</button>
  <sheet-view id="child" preset="fluid" interactive-up-through="tip">
    <h2>Delivery</h2><p>Tuesday, between 9 and 12.</p>
    <button type="button" onclick="this.closest('sheet-view').dismiss()">Close</button>
  </sheet-view>
</sheet-view>
"""

# The parent as drawn: the transform the child last drew it by (`lastRecession`: the law at the
# constant the child was drawn at) and the parent card's inline style and shade.
DRAWN_PARENT = """
const p = document.getElementById(arguments[0] || 'parent'), c = document.getElementById(arguments[1] || 'child');
const card = p.shadowRoot.querySelector('.card'), shade = p.shadowRoot.querySelector('.shade');
return {transform: card.style.transform, radius: card.style.borderTopLeftRadius, shade: shade.style.opacity,
  own: p._ownRadius(), parentId: p.session.id, childId: c.session.id, childParent: c.session.snapshot.parent,
  nested: c.parentView === p, covered: p.covered, recession: c.session.lastRecession,
  settled: {parentTransform: c.session.snapshot.parentTransform || null, constant: c.session.snapshot.constant, state: c.session.snapshot.state}};
"""


def serve_html(html):
    """Serves one page from another origin (a thread of this process); returns (server, url)."""
    import functools
    import http.server
    import tempfile
    root = tempfile.mkdtemp(prefix="sheet-view-")
    with open(os.path.join(root, "index.html"), "w", encoding="utf-8") as f:
        f.write(html)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/index.html"


def sheetd_parent_transform(d):
    """What sheetd says a stacked card at rest does to its parent: the `parentTransform` of the
    snapshot its frame stream sent when the card settled (its recede law at its constant; a GET on
    a client-clock session answers at its last event's time, before the animation), and that constant."""
    return d["settled"]["parentTransform"], d["settled"]["constant"]


def drawn_matches(d, t, constant):
    """The parent is drawn by sheetd's transform: the one the child drew it by is sheetd's, bit for
    bit (JSON doubles compared with ==), evaluated at the constant sheetd has the child at; and the
    card's style is sheet-client.js's recedeStyle of it for a bottom sheet at 1 px per point
    (translate(0, −lift) scale(scale), the radius never below the card's own, the shade's opacity the
    alpha), to the 6 significant digits CSS serializes."""
    import re
    r = d.get("recession") or {}
    if not t or r.get("parent") != t or r.get("constant") != constant:
        return False
    m = re.fullmatch(r"translate\((-?[\d.e+-]+)px, (-?[\d.e+-]+)px\) scale\(([\d.e+-]+)\)", d["transform"] or "")
    if not m:
        return False
    x, y, scale = (float(g) for g in m.groups())
    near = lambda a, b: abs(a - b) <= 1e-5 * max(1.0, abs(b))  # noqa: E731
    return (x == 0 and near(y, -t["lift"]) and near(scale, t["scale"]) and near(float(d["shade"]), t["alpha"])
            and near(float(d["radius"].removesuffix("px")), max(d["own"], t["cornerRadius"])))


def focused(driver):
    """Where focus is: the id of the focused element, or 'SHEET#id handle' for a sheet's handle."""
    return driver.execute_script("""
        const a = document.activeElement;
        if (a && a.localName === 'sheet-view' && a.shadowRoot.activeElement) return a.id + ' handle';
        return a ? (a.id || a.localName) : null;""")


def stacked_sheets(driver, cdp, rtt, proxy):
    """A <sheet-view> nested in another's content, through the proxy that adds `rtt` ms."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    label = f"stacked sheets +{rtt} ms"
    keys = lambda *k: ActionChains(driver).send_keys(*k).perform()  # noqa: E731
    rest_at = lambda sel, detent: wait_for(lambda: resting(driver, sel, detent), 30)  # noqa: E731
    hidden = lambda sel: wait_for(lambda: (lambda r: r if r and r["state"] == "hidden" and r["closed"] else None)(at_rest(driver, sel)), 30)  # noqa: E731
    server, url = serve_html(STACK_PAGE.format(api=proxy.url))
    try:
        if not check(f"{label}: the page loads, both sessions created", open_page(driver, url)):
            return
        # Rule: a nested <sheet-view> creates its session with the parent's session as `parent`,
        # its id the parent's, `~`, its own (a stack lives where its root does).
        d = driver.execute_script(DRAWN_PARENT)
        check(f"{label}: the nested sheet's session is stacked on its parent's",
              d["nested"] and d["childParent"] == d["parentId"] and d["childId"].startswith(d["parentId"] + "~"),
              f"child {d['childId']} on {d['childParent']} (parent {d['parentId']})")
        # Rule: focus goes into the child when it opens (from a control of the parent).
        driver.execute_script("document.getElementById('open-child').focus()")
        keys(Keys.ENTER)
        opened = rest_at("#child", "half")
        check(f"{label}: the child opens from the parent's button, focus on the child's handle",
              bool(opened) and focused(driver) == "child handle", f"child at {opened and opened['detent']}, focus on {focused(driver)}")
        # Rule: while the child is open the parent is drawn by the child's recede law at the child's
        # constant: bit for bit sheetd's `transform` of the parent, at each detent of the child;
        # axe-core finds nothing with the child open there.
        axe, drawn, found = Axe(), [], {}
        for detent in visible_detents(state(driver, "#child")):
            move_to(driver, detent, "#child")
            d = driver.execute_script(DRAWN_PARENT)
            t, constant = sheetd_parent_transform(d)
            drawn.append((detent, d["covered"] and drawn_matches(d, t, constant),
                          f"{detent}: drew {(d['recession'] or {}).get('parent')} ({d['transform']}, shade {d['shade']}), sheetd {t}"))
            report = axe.run(driver)
            found[detent] = [f"{v['id']} ({len(v['nodes'])}: {v['nodes'][0]['target']})" for v in report["violations"]]
        check(f"{label}: the parent recedes by the child's law, bit for bit sheetd's transform, at each child detent",
              drawn and all(ok for _, ok, _ in drawn), "; ".join(x for _, _, x in drawn))
        check(f"{label}: axe-core 4.4: 0 violations with the child open at each detent",
              found and all(not v for v in found.values()), "; ".join(f"{k}: {v or 'none'}" for k, v in found.items()))
        # Rule: gestures on the child move the parent on the same frame: every parentTransform of
        # sheetd's answers and frames is the law evaluated here (0 transform mismatches), the
        # predictions hold, and at rest the parent is drawn as sheetd says.
        seen, stats, after = [], [], []
        for what, pointer, dy, seconds in GESTURE_PLANS:
            move_to(driver, "half", "#child")
            snap, st, rest = gesture(driver, cdp, pointer, dy, seconds, "#child")
            seen.append(f"{pointer} {what} → {snap}")
            stats.append((f"{pointer} {what}", st or {}))
            d = driver.execute_script(DRAWN_PARENT)
            t, constant = sheetd_parent_transform(d)
            after.append((f"{pointer} {what}", bool(rest) and drawn_matches(d, t, constant)))
        check(f"{label}: gestures on the child: zero prediction and transform mismatches",
              all(st.get("mismatches") == 0 and st.get("transformMismatches") == 0 and (st.get("transforms") or 0) > 0 for _, st in stats),
              "; ".join(f"{g}: {st.get('mismatches')} of {st.get('predictions')} predictions, {st.get('transformMismatches')} of {st.get('transforms')} transforms"
                        for g, st in stats) + f" ({', '.join(seen)})")
        check(f"{label}: after each gesture on the child the parent rests drawn as sheetd says", all(ok for _, ok in after),
              ", ".join(f"{g}: {'ok' if ok else 'differs'}" for g, ok in after))
        # Rule: a covered parent takes no drag (sheetd would refuse it, 409 covered): with the child
        # at tip (it leaves the parent interactive there), a touch and a mouse drag on the parent's
        # handle send nothing and the parent stays where it is drawn.
        move_to(driver, "tip", "#child")
        refused = []
        for pointer in ("touch", "mouse"):
            driver.execute_script("document.getElementById('parent').session.resetStats()")
            before = state(driver, "#parent")
            x, y = before["handle"]
            if pointer == "mouse":
                cdp.wait([cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "buttons": 0})])
            gestures.perform(cdp, gestures.plan(pointer, x, y, 240.0, 0.3))
            now = wait_for(lambda: at_rest(driver, "#parent"), 30)
            sent = driver.execute_script("const s = document.getElementById('parent').stats; return s.samples + s.eventsSent")
            refused.append((pointer, bool(now) and now["constant"] == before["constant"] and now["detent"] == before["detent"] and sent == 0,
                            f"{pointer}: {before['detent']} → {now and now['detent']}, {sent} events"))
        check(f"{label}: a covered parent does not move under a drag, nothing sent",
              all(ok for _, ok, _ in refused), "; ".join(x for _, _, x in refused))
        # Rule: Escape closes the top-most sheet only, and focus returns where it came from; a
        # second Escape closes the parent, and focus returns to the page's control.
        driver.execute_script("document.getElementById('parent').dismiss()")
        hidden("#parent")
        driver.execute_script("document.getElementById('open-parent').focus()")
        keys(Keys.ENTER)
        rest_at("#parent", "full")
        parent_focus = focused(driver)
        driver.execute_script("document.getElementById('open-child').focus()")
        keys(Keys.ENTER)
        rest_at("#child", "half")
        keys(Keys.ESCAPE)
        child_gone = hidden("#child")
        parent_there = at_rest(driver, "#parent")
        back = focused(driver)
        check(f"{label}: Escape closes only the child, focus back on the parent's button",
              bool(child_gone) and bool(parent_there) and parent_there["state"] == "resting" and back == "open-child" and parent_focus == "parent handle",
              f"child {child_gone and child_gone['state']}, parent {parent_there and parent_there['detent']}, focus {back} (on opening the parent: {parent_focus})")
        keys(Keys.ESCAPE)
        parent_gone = hidden("#parent")
        check(f"{label}: a second Escape closes the parent, focus back on the page's button",
              bool(parent_gone) and focused(driver) == "open-parent", f"parent {parent_gone and parent_gone['state']}, focus {focused(driver)}")
        # Rule: closing the parent cascades: sheetd closes the open child with it at one instant
        # (its answer lists the child), the child plays the dismiss sheetd started for it from
        # that instant, both come to rest hidden, focus returns to the page's button.
        keys(Keys.ENTER)
        rest_at("#parent", "full")
        driver.execute_script("document.getElementById('open-child').focus()")
        keys(Keys.ENTER)
        rest_at("#child", "half")
        driver.execute_script("""
            const s = document.getElementById('child').session, follow = s._followCascade.bind(s);
            window.__followed = null;
            s._followCascade = async (t) => { window.__followed = {time: t}; await follow(t); window.__followed.animation = s.snapshot.animation; };""")
        r = driver.execute_async_script("const done = arguments[arguments.length - 1];"
                                        "document.getElementById('parent').dismiss().then((r) => done(r && {cascade: r.cascade, time: r.time, animation: r.animation}))")
        both = hidden("#child") and hidden("#parent")
        followed = driver.execute_script("return window.__followed")
        child_id = driver.execute_script("return document.getElementById('child').session.id")
        anim = (followed or {}).get("animation") or {}
        check(f"{label}: dismissing the parent closes both from one instant (cascade)",
              bool(r) and r.get("cascade") == [child_id] and bool(both) and followed and followed["time"] == r["time"]
              and anim.get("startTime") == (r.get("animation") or {}).get("startTime") and anim.get("detent") == "hidden",
              f"cascade {r and r.get('cascade')}, at {r and r.get('time')}; the child followed from {followed and followed['time']}, "
              f"its dismiss from {anim.get('startTime')}, the parent's from {(r or {}).get('animation', {}).get('startTime')}")
        check(f"{label}: after the cascade focus is back on the page's button", focused(driver) == "open-parent", f"focus {focused(driver)}")
        errors = console_errors(driver)
        check(f"{label}: no console errors", not errors, "; ".join(errors)[:300])
    finally:
        server.shutdown()


def checkout_stack(driver):
    """checkout.html: its card details sheet is nested in the checkout sheet, which recedes behind it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    name = "checkout.html"
    if not check(f"{name}: the page loads, both sheets' sessions created", open_page(driver, f"{API}examples/{name}")):
        return
    # The checkout presents itself as the page loads: the button is pressed once it is at rest,
    # and once the focus is seen on it (a key sent before that went nowhere once, on a loaded
    # machine: the card details never opened).
    wait_for(lambda: resting(driver, "#checkout"), 30)
    focused = wait_for(lambda: driver.execute_script(
        "const b = document.querySelector('#checkout .pay'); b.focus(); return document.activeElement === b"), 10)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    opened = wait_for(lambda: resting(driver, "#pay-sheet"), 30)
    # Where it stood if it did not open (the failure's detail: what the page saw).
    unopened = "" if opened else (
        f"; the button focused: {focused}; card details {state(driver, '#pay-sheet')}; focus now on "
        + str(driver.execute_script("return document.activeElement && document.activeElement.outerHTML.slice(0, 120)")))
    d = driver.execute_script(DRAWN_PARENT, "checkout", "pay-sheet")
    t, constant = sheetd_parent_transform(d)
    check(f"{name}: the card details sheet stacks on the checkout, which recedes by its law (bit for bit sheetd's parentTransform)",
          bool(opened) and d["nested"] and d["childParent"] == d["parentId"] and t and t["scale"] < 1 and drawn_matches(d, t, constant),
          f"card details at {opened and opened['detent']}; checkout drawn {d['transform']}, shade {d['shade']}; sheetd {t}"
          + unopened)
    report = Axe().run(driver)
    found = [f"{v['id']} ({len(v['nodes'])}: {v['nodes'][0]['target']})" for v in report["violations"]]
    check(f"{name}: axe-core 4.4: 0 violations with the card details open", not found, "; ".join(found) or "none")
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    gone = wait_for(lambda: (lambda r: r if r and r["state"] == "hidden" and r["closed"] else None)(at_rest(driver, "#pay-sheet")), 30)
    parent = at_rest(driver, "#checkout")
    back = driver.execute_script("return document.activeElement.className")
    check(f"{name}: Escape closes the card details only, focus back on the checkout's button",
          bool(gone) and bool(parent) and parent["state"] == "resting" and back == "pay", f"checkout {parent and parent['detent']}, focus on .{back}")


class Part:
    """One independent part of the test: `run(driver, cdp)` on a browser of its own while it runs;
    its results are kept (`check` in its thread) and printed in the parts' order."""

    def __init__(self, label, rank, run):
        self.label, self.rank, self.run = label, rank, run
        self.results = []  # (name, ok, detail), as `check` was called
        self.value = None  # what run returned
        self.error = None  # the traceback of an exception, if one ended it
        self.seconds = 0.0  # how long it ran (printed, for the schedule's ranks)
        self.done = threading.Event()


def run_parts(parts, browsers):
    """Runs the parts in `browsers` threads, each with its Chromium and DevTools socket, taking the
    next part (highest rank first) when it is free. Yields each part, in the list's order, once it is
    done; a part no browser could run ends with an error."""
    todo = queue.Queue()
    for part in sorted(parts, key=lambda p: -p.rank):
        todo.put(part)

    def browser():
        try:
            driver = new_driver()
            cdp = gestures.CDP(driver)
        except Exception:
            print(f"element-test: a browser did not start:\n{traceback.format_exc()}", flush=True)
            return
        try:
            while True:
                try:
                    part = todo.get_nowait()
                except queue.Empty:
                    return
                _part.results = part.results
                began = time.monotonic()
                try:
                    part.value = part.run(driver, cdp)
                except Exception:
                    part.error = traceback.format_exc()
                finally:
                    _part.results = None
                    part.seconds = time.monotonic() - began
                    part.done.set()
        finally:
            cdp.close()
            driver.quit()

    threads = [threading.Thread(target=browser, name=f"browser-{n}", daemon=True) for n in range(min(browsers, len(parts)))]
    for t in threads:
        t.start()
    for part in parts:
        while not part.done.wait(0.5):
            if not any(t.is_alive() for t in threads):  # every browser gone: nothing will run it
                part.error = part.error or "no browser left to run it (above)"
                part.done.set()
        yield part
    # Every browser quits before the test ends: one still starting when the last part is done finds
    # no part and quits its driver; as a daemon thread killed at exit it left its chromedriver
    # running, adopted by init (one after each of the last runs).
    for t in threads:
        t.join(120)


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    proxies = start_proxies()

    def examples_part(name):
        def run(driver, cdp):
            layout_and_axe(driver, name)
            keyboard(driver, name)
            driver.save_screenshot(os.path.join(ARTIFACTS, name.replace(".html", ".png")))
        return run

    def gestures_part(name, rtt):
        return lambda driver, cdp: gestures_through_proxy(driver, cdp, name, rtt, proxies[rtt])

    # The parts, in the order their results are printed (the order they ran in when they ran in one
    # browser). Rank: which start first, the longest first (a schedule only, never a verdict).
    parts = [
        # The README's smallest page, from another origin (a second or two).
        Part("the smallest page", 0, lambda driver, cdp: smallest_page(driver)),
        # Each example's layout, axe at each detent and keyboard use (5 to 10 s each).
        *[Part(f"{name}: layout, axe, keyboard", 2, examples_part(name)) for name in EXAMPLES],
        # long-list.html by touch on its list (a few seconds).
        Part("long-list.html: scroll hand-off", 1, lambda driver, cdp: scroll_hand_off(driver, cdp)),
        # long-list.html with prefers-reduced-motion (the emulation is undone at its end).
        Part("long-list.html: reduced motion", 1, lambda driver, cdp: reduced_motion(driver)),
        # Each example's gestures and taps through each proxy (10 to 20 s each; +200 ms the longest);
        # the same-snaps check of an example follows its two parts.
        *[Part(f"{name}: gestures +{rtt} ms", 3 + rtt, gestures_part(name, rtt)) for name in EXAMPLES for rtt in RTTS],
        # Stacks: checkout.html's card details nested in its checkout sheet (a few seconds), and a
        # parent with a nested sheet through each proxy (recession, covered, Escape, focus, cascade, axe).
        Part("checkout.html: a stacked sheet", 1, lambda driver, cdp: checkout_stack(driver)),
        *[Part(f"stacked sheets +{rtt} ms", 3 + rtt, (lambda rtt: lambda driver, cdp: stacked_sheets(driver, cdp, rtt, proxies[rtt]))(rtt))
          for rtt in RTTS],
        # First and second visit, bytes and 304s (each its own browser cache, cleared first).
        Part("long-list.html: visits", 1, lambda driver, cdp: visits(driver, "examples/long-list.html", "long-list.html")),
        Part("the demo page: visits", 1, lambda driver, cdp: visits(driver, "", "the demo page")),
    ]
    began = time.monotonic()
    check("the examples are served", len(EXAMPLES) >= 6, ", ".join(EXAMPLES))
    broken = []
    snaps = {}  # example → rtt → the snaps its gestures part saw
    try:
        for part in run_parts(parts, BROWSERS):
            for name, ok, detail in part.results:
                check(name, ok, detail)
            if part.error:
                print(f"element-test: {part.label}: exception:\n{part.error}", end="", flush=True)
                broken.append(part.label)
            for name in EXAMPLES:
                for rtt in RTTS:
                    if part.label == f"{name}: gestures +{rtt} ms":
                        snaps.setdefault(name, {})[rtt] = part.value
                if len(snaps.get(name, {})) == len(RTTS):
                    same_snaps(name, snaps.pop(name))
    finally:
        for p in proxies.values():
            p.stop()
    if broken:
        check("the test ran to the end", False, f"exception in {', '.join(broken)} (above)")
    print(f"element-test: {len(parts)} parts in {time.monotonic() - began:.0f} s in {min(BROWSERS, len(parts))} browsers: "
          + ", ".join(f"{p.label} {p.seconds:.0f} s" for p in sorted(parts, key=lambda p: -p.seconds)), flush=True)
    print(results.summary())
    return 0 if results.failed == 0 and results.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
