#!/usr/bin/env python3
"""Browser test of sheetd's web demo (run by IntegrationTests/browser-test, which builds and starts sheetd).

Drives Debian's headless Chromium through its chromedriver with a pinned Selenium (never Selenium
Manager: nothing is downloaded). Environment: SHEETD_URL (http://127.0.0.1:PORT/), SHEETD_LOG
(sheetd's debug log, to see the CORS preflights), ARTIFACTS (folder for screenshots).
Prints one line per check and closes with `browser-test: N passed, M failed`.

In the page, IntegrationTests/release_law_check.js compares sheet-client.js's release law with sheetd's
answers for every preset (snaps, animations and frames). The last part opens the page through
testkit/sheetkit/delay_proxy.py at +0 and +200 ms of round trip and,
for every preset, drags and flicks the card with CDP input events carrying explicit timestamps
(testkit/sheetkit/gestures.py): functional checks only (the client's prediction, of the drag
and of the release, never disagrees with sheetd, one request at a time, every pan event sent, the same snaps at +200 ms as at +0),
no timing verdicts (scripts/latency measures those).

Then the layout page (GET /layout.html: the keyboard, a rotation mid-drag, content-fit detents, and
a list whose fling hands its momentum to the card and takes the card's, both ways) at +0 and
+200 ms, and the edges page (GET /edges.html: a top sheet, a left and a right drawer land where the
bottom sheet lands under the same gestures mirrored; a non-modal map sheet lets a click through to
the page behind up through its detent and not above; under prefers-reduced-motion a release
jumps), each in one browser of its own, and in the edges page's browser the stacks page (GET
/stacks.html: a parent drawn by its child's recede law at the child's drawn constant while the
child is dragged, the page behind receding, a covered parent refusing a drag, a cascade closing a
stack at one instant, a left-drawer stack receding along x, reduced motion), with pointer input
from CDP events carrying explicit timestamps and zero prediction mismatches.
"""

import functools
import http.server
import json
import math
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import urllib.request

os.environ["SE_OFFLINE"] = "true"  # Selenium Manager, if ever consulted, must not download
# The kit's delay proxy and gestures, which scripts/latency's measurement shares.
from sheetkit import delay_proxy  # noqa: E402  (a loopback proxy that adds a round trip)
from sheetkit import gestures as latency  # noqa: E402  (CDP input with explicit timestamps)
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.actions.action_builder import ActionBuilder  # noqa: E402
from selenium.webdriver.common.actions.pointer_input import PointerInput  # noqa: E402
from selenium.webdriver.common.actions import interaction  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

API = os.environ["SHEETD_URL"].rstrip("/") + "/"
LOG = os.environ.get("SHEETD_LOG", "")
ARTIFACTS = os.environ.get("ARTIFACTS", ".build/browser-artifacts")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
PAGE = os.path.join(os.path.dirname(__file__), "..", "Sources", "SheetService", "Resources", "index.html")

passed, failed = 0, 0

# The README's two prototypes, as printed there but for the server's address: pages on another
# origin that import sheet-client.js from sheetd and drive a card with it (the first draws each
# answer, the second predicts from the drag law and plays sheetd's frames).
README = os.path.join(os.path.dirname(__file__), "..", "README.md")
PROTOTYPE, PREDICTING_PROTOTYPE = re.findall(r"```html\n(<!doctype html>.*?)```", open(README, encoding="utf-8").read(), re.S)


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
    else:
        failed += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)
    return ok


wait_for = latency.wait_for  # polls until a truthy value or the timeout


def get_json(path):
    with urllib.request.urlopen(API + path.lstrip("/"), timeout=5) as r:
        return json.load(r)


def new_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1440,960", "--hide-scrollbars", "--force-device-scale-factor=1",
                "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def dataset(driver, key, selector="#phone"):
    return driver.execute_script(f"return document.querySelector('{selector}').dataset['{key}'] ?? null")


def phone_state(driver):
    return driver.execute_script(
        "const d = document.querySelector('#phone').dataset;"
        "return {state: d.state, detent: d.detent, constant: Number(d.constant), frames: Number(d.frames || 0),"
        " settled: Number(d.settled || 0), session: d.session, stream: d.stream};")


def wait_settled(driver, after, timeout=60.0):
    """Waits for a settled event beyond `after` and a resting/hidden card (the deadline only bounds
    a failing run: a settle animation lasts under a second)."""
    return wait_for(lambda: (lambda s: s if s["settled"] > after and s["state"] in ("resting", "hidden") else None)(
        phone_state(driver)), timeout)


def load(driver, url, label):
    t0 = time.monotonic()
    driver.get(url)
    ready = wait_for(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), 60)
    check(f"{label}: page loads, session created, frame stream open", ready,
          f"{time.monotonic() - t0:.2f} s" if ready else "document.body.dataset.ready never became 1")
    return ready


def grab_point(driver):
    """The card's grabber area (the handle of the page's <sheet-view>: its card part), in viewport pixels."""
    return driver.execute_script(
        "const r = window.sheetDemo.card().getBoundingClientRect();"
        "return [Math.round(r.left + r.width / 2), Math.round(r.top + 10)];")


def last_result(driver):
    return json.loads(driver.execute_script("return document.querySelector('#json').textContent"))


def scripted_drag(driver, dy_px, label, screenshot=None, pointer="mouse"):
    """Presses on the grabber, moves by dy_px in steps, holds still, takes a screenshot mid-drag,
    then releases. Returns (state before, state mid-drag, state after).

    The release is decided by position alone on any machine: the pointerup is dispatched at least
    0.25 s after Chromium acknowledged the last move (each WebDriver action waits for its
    dispatch), so sheetd's estimate window (the last 0.1 s of `changed` events before `ended`, on
    the events' own timeStamps) holds no sample and its velocity is 0; a busy machine only makes
    that pause longer."""
    x, y = grab_point(driver)
    before = phone_state(driver)
    kind = interaction.POINTER_TOUCH if pointer == "touch" else interaction.POINTER_MOUSE
    actions = ActionBuilder(driver, mouse=PointerInput(kind, pointer), duration=40)
    actions.pointer_action.move_to_location(x, y).pointer_down()
    steps = 8
    for i in range(1, steps + 1):
        actions.pointer_action.move_to_location(x, y + round(dy_px * i / steps))
    actions.perform()
    mid = wait_for(lambda: (lambda s: s if s["state"] == "dragging" and abs(s["constant"] - before["constant"]) > 20 else None)(
        phone_state(driver)), 30) or phone_state(driver)
    time.sleep(0.25)  # hold still (at least 0.25 s between the last move and the release)
    if screenshot:
        driver.save_screenshot(os.path.join(ARTIFACTS, screenshot))
    mid = phone_state(driver)
    release = ActionBuilder(driver, mouse=PointerInput(kind, pointer), duration=40)
    release.pointer_action.pointer_up()
    release.perform()
    after = wait_settled(driver, before["settled"]) or phone_state(driver)
    return before, mid, after


def flick(driver, cdp, dy_px, ms=100, paced=True):
    """A quick touch swipe released while moving, as CDP touch events at 120 Hz that carry explicit
    timestamps: the page's events have those `timeStamp`s and it sends them as the pan events'
    `time`s (every move, also the moves a busy page gets coalesced into one pointermove), so
    sheetd's estimate over the last 0.1 s is the swipe's own speed however late the events were
    delivered. Not `paced`: the events are dispatched all at once (a loaded machine at its worst),
    with the same timestamps; Chromium then hands the page the moves coalesced into one pointermove.
    Returns (state before, state after, the velocity the timestamps give in pt/s, (the pan events
    the page sent, the touch events dispatched))."""
    x, y = grab_point(driver)
    before = phone_state(driver)
    scale = latency.Page(driver, cdp).geometry()["scale"]  # screen px per point
    stats0 = driver.execute_script("return window.sheetDemo.stats()")
    events = latency.plan("touch", x, y, dy_px, ms / 1000)
    latency.perform(cdp, events, paced)
    after = wait_settled(driver, before["settled"]) or phone_state(driver)
    stats1 = driver.execute_script("return window.sheetDemo.stats()")
    # the moves, evenly spaced on the timestamps sent, all inside the 0.1 s before the release
    moves = [(offset, y_px) for offset, method, params, y_px in events if params["type"] == "touchMove"]
    expected = (moves[-1][1] - moves[0][1]) / scale / (moves[-1][0] - moves[0][0])
    return before, after, expected, (stats1.get("samples", 0) - stats0.get("samples", 0), len(events))


def agrees_with_server(driver, label):
    """The card's resting place in the DOM is the engine's: same detent, constant at that detent."""
    s = phone_state(driver)
    snap = get_json(f"sessions/{s['session']}")
    target = snap["detents"].get(snap["detent"])
    ok = (s["detent"] == snap["detent"] and target is not None and abs(s["constant"] - target) < 0.01)
    check(f"{label}: card rests where the engine chose (DOM vs GET /sessions/{{id}})", ok,
          f"DOM {s['detent']} @ {s['constant']:.2f}, server {snap['detent']} @ {target}")
    return snap


def keyboard_and_dimmer(driver):
    """The element's handle (a button) from the keyboard: Home, ArrowDown, Escape (the element's);
    with the sheet closed, focus on the page: ArrowUp (the page steps the element), then the handle
    again (focus moved in as it opened); a tap on the element's backdrop dismisses."""
    start = phone_state(driver)
    # the handle (a closed sheet's takes no focus: the key goes to the page, which opens it, and
    # focus moves in as it opens)
    driver.execute_script("window.sheetDemo.handle().focus()")
    ActionChains(driver).send_keys(Keys.HOME).perform()  # the top-most detent, a known start
    s0 = wait_settled(driver, start["settled"]) or phone_state(driver)
    # focus on the handle inside the <sheet-view>, drawn visibly (a keyboard user's focus ring)
    focused = driver.execute_script(
        "const h = window.sheetDemo.handle();"
        "return document.activeElement === window.sheetDemo.sheet && h.getRootNode().activeElement === h"
        " && h.matches(':focus-visible') && getComputedStyle(h).outlineStyle !== 'none'")
    detents = get_json(f"sessions/{s0['session']}")["detents"]
    order = sorted(detents, key=lambda n: detents[n])
    ActionChains(driver).send_keys(Keys.ARROW_DOWN).perform()
    s1 = wait_settled(driver, s0["settled"]) or phone_state(driver)
    expected = next((n for n in order if detents[n] > detents.get(s0["detent"], 0) + 0.01), None)
    check("keyboard: ArrowDown moves the card one detent down", s1["detent"] == expected,
          f"{s0['detent']} → {s1['detent']} (expected {expected})")
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    s2 = wait_settled(driver, s1["settled"]) or phone_state(driver)
    check("keyboard: Escape dismisses", s2["state"] == "hidden", f"state {s2['state']}, detent {s2['detent']}")
    agrees_with_server(driver, "after Escape")
    # back up two detents (the dimmer is off at the lowest), then tap the dimmer
    ActionChains(driver).send_keys(Keys.ARROW_UP).perform()
    s3 = wait_settled(driver, s2["settled"]) or phone_state(driver)
    ActionChains(driver).send_keys(Keys.ARROW_UP).perform()
    s4 = wait_settled(driver, s3["settled"]) or phone_state(driver)
    check("keyboard: ArrowUp moves the card up", s4["state"] == "resting" and detents[s4["detent"]] < detents[s3["detent"]],
          f"hidden → {s3['detent']} → {s4['detent']}")
    check("focus is visible on the card's handle", bool(focused))
    alpha = float(dataset(driver, "alpha"))
    driver.execute_script("window.scrollTo(0, 0)")
    x, y = driver.execute_script(  # a point of the screen above the card: the element's backdrop (contained: the screen)
        "const r = document.querySelector('#screen').getBoundingClientRect();"
        "return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height * 0.2)];")
    on_backdrop = driver.execute_script(
        "const e = window.sheetDemo.sheet.shadowRoot.elementFromPoint(arguments[0], arguments[1]);"
        "return !!e && e.matches('[part~=backdrop]')", x, y)
    check("the point tapped is the element's backdrop", on_backdrop)
    tap = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"), duration=40)
    tap.pointer_action.move_to_location(x, y).pointer_down().pointer_up()
    tap.perform()
    s5 = wait_settled(driver, s4["settled"]) or phone_state(driver)
    check("tapping the dimmer dismisses", alpha > 0 and s5["state"] == "hidden", f"alpha {alpha:.2f}, state {s5['state']}")


def demo_is_the_element(driver):
    """The card is a <sheet-view> in the phone (contained, the device's geometry, the phone's
    scale), and the page shows the markup it uses."""
    out = driver.execute_script(
        "const sheet = document.querySelector('#screen > sheet-view');"
        "const screen = document.querySelector('#screen').getBoundingClientRect();"
        "const s = sheet && sheet.session && sheet.session.snapshot;"
        "return {element: !!sheet && sheet === window.sheetDemo.sheet && customElements.get('sheet-view') === sheet.constructor,"
        " contained: !!sheet && sheet.contained && getComputedStyle(sheet).position === 'absolute',"
        " geometry: s ? s.geometry : null, preset: s ? s.preset : null, scale: sheet ? sheet.scale : null,"
        " phoneScale: s ? screen.height / s.geometry.height : null, markup: document.querySelector('#markup').textContent}")
    check("the card is the page's <sheet-view>, placed in the phone's screen (contained)", out["element"] and out["contained"])
    g = out["geometry"] or {}
    check("the element's session has the device's geometry (iPhone 14), not the window's",
          (g.get("height"), g.get("safeAreaTop"), g.get("safeAreaBottom")) == (844, 47, 34), f"geometry {g}")
    check("the element's scale (px per point) is the phone's as drawn",
          out["scale"] and out["phoneScale"] and abs(out["scale"] - out["phoneScale"]) < 1e-3,
          f"element {out['scale']}, phone {out['phoneScale']}")
    markup = out["markup"] or ""
    check("the page shows the markup it uses (a <sheet-view> with its preset, the geometry, the events)",
          "<sheet-view " in markup and f'preset="{out["preset"]}"' in markup and "contained" in markup
          and "sheet.geometry = " in markup and '"frame"' in markup and '"result"' in markup, markup[:200])


def axe_at_each_detent(driver):
    """axe-core 4.4 (axe-core-python) on the demo page with the card at each visible detent."""
    from axe_core_python.selenium import Axe  # the kit's pin (element-test's too)
    s = phone_state(driver)
    detents = get_json(f"sessions/{s['session']}")["detents"]
    found = {}
    for name in sorted((n for n in detents if n != "hidden"), key=lambda n: detents[n]):
        s = phone_state(driver)
        driver.find_element(By.CSS_SELECTOR, f"#detent-buttons [data-detent='{name}']").click()
        if not (s["detent"] == name and s["state"] == "resting"):
            wait_settled(driver, s["settled"])
        report = Axe().run(driver)
        found[name] = [f"{v['id']} ({len(v['nodes'])}: {v['nodes'][0]['target']})" for v in report["violations"]]
    check("the demo page: axe-core 4.4: 0 violations with the card at each detent",
          found and all(not v for v in found.values()), "; ".join(f"{d}: {v or 'none'}" for d, v in found.items()))


def reduced_motion(driver):
    """With prefers-reduced-motion the card jumps to the final frame: no intermediate positions."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    driver.execute_script(
        "window.__seen = []; window.__obs = new MutationObserver(() => window.__seen.push(Number(document.querySelector('#phone').dataset.constant)));"
        "window.__obs.observe(document.querySelector('#phone'), {attributes: true, attributeFilter: ['data-constant']});")
    s0 = phone_state(driver)
    frames0 = s0["frames"]
    driver.find_element(By.CSS_SELECTOR, "#detent-buttons [data-detent]").click()  # the top-most detent
    s1 = wait_settled(driver, s0["settled"]) or phone_state(driver)
    seen = driver.execute_script("window.__obs.disconnect(); return [...new Set(window.__seen)]")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "no-preference"}]})
    check("prefers-reduced-motion: the card jumps to the final frame", s1["frames"] > frames0 and all(abs(c - s1["constant"]) < 0.01 for c in seen),
          f"constants drawn {[round(c, 1) for c in seen]}, frames received {s1['frames'] - frames0}")


def release_map(driver, label):
    done = wait_for(lambda: driver.execute_script("return document.querySelector('#map').dataset.done === '1'"), 120, 0.1)
    cells = dataset(driver, "cells", "#map")
    check(f"{label}: release map computed with POST /simulate", done and cells == "960", f"{cells} cells")


def prototype_drag(driver, url, session_id, follows):
    """Opens a README prototype and drags its card 240 px up with the mouse, then releases it.
    Returns (the card's transform once placed, how far the card top moved before the release
    (`follows`: the prototype draws the card on the pointer events, so that is awaited), the
    console lines that say "snap", the session's snapshot after the release, the card's translateY
    once it reached the engine's detent (or at the deadline), and the translateY that detent
    gives)."""
    driver.get_log("browser")  # drop what came before
    driver.get(url)
    placed = wait_for(lambda: driver.execute_script("return document.getElementById('card').style.transform"), 60)
    if not placed:
        return placed, None, [], None, None, None
    card_top = "return document.getElementById('card').getBoundingClientRect().top"
    x = driver.execute_script("return Math.round(innerWidth / 2)")
    y = round(driver.execute_script(card_top) + 20)
    top0 = driver.execute_script(card_top)
    drag = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
    drag.pointer_action.move_to_location(x, y).pointer_down()
    for i in range(1, 7):
        drag.pointer_action.move_to_location(x, y - 40 * i)
    drag.perform()
    if follows:  # the card is drawn on the pointer events: wait for it to be drawn there
        wait_for(lambda: abs(driver.execute_script(card_top) - top0 + 240) < 1.5, 30)
    time.sleep(0.2)  # hold still: the release is decided by position (velocity 0, as in scripted_drag)
    moved = driver.execute_script(card_top) - top0
    up = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
    up.pointer_action.pointer_up()
    up.perform()
    seen = []  # the console lines come once: get_log empties the buffer
    logs = wait_for(lambda: seen.extend(e for e in driver.get_log("browser") if "snap" in e["message"]) or list(seen), 60)
    snap = get_json(f"sessions/{session_id}")
    expected = snap["geometry"]["safeAreaTop"] + snap["detents"][snap["detent"]]

    def translate_y():
        transform = driver.execute_script("return document.getElementById('card').style.transform")
        found = re.search(r"translateY\(([-0-9.e]+)px\)", transform or "")
        return float(found.group(1)) if found else None

    # the settle animation ends at the detent: wait for the card to get there (the deadline only
    # bounds a failing run), then read where it is
    wait_for(lambda: (lambda y: y is not None and abs(y - expected) < 0.01)(translate_y()), 60)
    got = translate_y()
    return placed, moved, logs, snap, (got if got is not None else float("nan")), expected


RELEASE_LAW_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "release_law_check.js")


def release_law_in_javascript(driver):
    """IntegrationTests/release_law_check.js in the page: sheet-client.js evaluates each preset's release law
    for random drags (and drags ending at the law's thresholds) and must give sheetd's snap, its
    animation and every frame of it, to 1e-9."""
    driver.set_script_timeout(180)
    source = open(RELEASE_LAW_CHECK, encoding="utf-8").read()
    out = driver.execute_async_script(
        source + "\nconst done = arguments[arguments.length - 1];"
        "releaseLawCheck(arguments[0]).then(done, (e) => done({error: String(e && e.stack || e)}));", API)
    if not check("release law in JavaScript: the check ran", out and "error" not in out, (out or {}).get("error", "")[:300]):
        return
    by_preset = out["byPreset"]
    presets = [p["name"] for p in get_json("presets")["presets"]]
    check("release law in JavaScript: every preset's snaps and animations are sheetd's (releases, finishes, cancels)",
          not out["mismatches"] and all(by_preset.get(p, 0) > 0 for p in presets) and out["finishes"] > 0 and out["cancels"] > 0,
          f"{out['releases']} releases, {out['finishes']} finishes, {out['cancels']} cancels; by preset {by_preset}; "
          + "; ".join(out["mismatches"][:5]))
    # fluid's momentum hand-off (step 5 of the release law, a spring crossing the top-most detent):
    # sheet-client.js predicts when and with what velocity the content takes over.
    check("release law in JavaScript: the hand-offs to the content (scrollFling) are sheetd's",
          not out["mismatches"] and out.get("handOffs", 0) > 0, f"{out.get('handOffs', 0)} hand-offs")
    check("release law in JavaScript: every frame sheetd sent equals the closed form to 1e-9",
          not out["mismatches"] and out["frames"] > 0 and out["maxFrameError"] <= 1e-9,
          f"{out['frames']} frames, largest difference {out['maxFrameError']:.3g}")


STEPS_CHECK = """
const api = arguments[0], done = arguments[arguments.length - 1];
(async () => {
    const m = await import(api + "sheet-client.js");
    const client = new m.SheetClient(api);
    // The step action through every detent and past both ends, on a non-modal sheet (the page
    // behind takes input at half and below): what each answer announces, and where the page is
    // interactive once the move ends.
    const s = await client.createSession({preset: "fluid", options: {interactiveUpThrough: "half"}, initialDetent: "tip", clock: "client"});
    const steps = [];
    let t = 1;
    for (const direction of ["expand", "expand", "expand", "collapse", "collapse", "collapse", "collapse", "expand"]) {
        const r = await s.step(direction, {time: (t += 5)});
        const end = r.animation ? r.animation.to : r.constant;
        steps.push({direction, announcement: r.announcement, value: r.value, interactive: s.backgroundInteractive(end)});
    }
    // Reduced motion: the release law carries a jump, and a step's frames have no intermediate one.
    const reduced = await client.createSession({preset: "fluid", reducedMotion: true, initialDetent: "tip", clock: "client"});
    const moved = await client.request("POST", `sessions/${reduced.id}/step?frames=60`, {direction: "expand", time: 1});
    done({steps, frames: moved.frames.map((f) => f.constant), to: moved.animation && moved.animation.to,
          motion: reduced.snapshot.releaseLaw.motions[0].curve});
})().catch((e) => done({error: String(e && e.stack || e)}));
"""


def steps_and_reduced_motion(driver):
    """The accessibility step from the page (sheet-client.js `step`): every detent in order and
    past both ends, each answer's announcement read in order; where the page behind is interactive
    (modality independent of the dimmer); reduced motion yields no intermediate frame."""
    driver.set_script_timeout(60)
    out = driver.execute_async_script(STEPS_CHECK, API)
    if not check("steps: the check ran", out and "error" not in out, (out or {}).get("error", "")[:300]):
        return
    said = [s["announcement"] for s in out["steps"]]
    expected = ["Expanded to half, 2 of 3", "Expanded to full, 1 of 3", "Already at full, 1 of 3", "Collapsed to half, 2 of 3",
                "Collapsed to tip, 3 of 3", "Dismissed", "Already hidden", "Shown at tip, 3 of 3"]
    check("steps: the step action moves through every detent, announced in order", said == expected, "; ".join(said))
    interactive = [s["interactive"] for s in out["steps"]]
    check("steps: the page behind takes input at half and below, not at full (independent of the dimmer)",
          interactive == [True, False, False, True, True, True, True, True], str(interactive))
    check("reduced motion: the law carries a jump and a step has no intermediate frame",
          out["motion"].get("duration") == 0 and out["frames"] and all(c == out["to"] for c in out["frames"]),
          f"frames {out['frames']}, to {out['to']}, motion {out['motion']}")


def through_delay_proxies(rtts=(0, 200)):
    """Every preset, through testkit/sheetkit/delay_proxy.py at each added round trip: from the preset's start
    detent at rest, a drag (600 px at 1000 px/s, mouse) and a flick down and up (touch), each
    released while moving, with CDP events at 120 Hz carrying explicit timestamps. Functional
    checks only: zero prediction mismatches, at most one request in flight, every pan event sent,
    and the same snaps at +200 ms as at +0 (each gesture is clear of every snap threshold)."""
    target = urllib.parse.urlsplit(API)
    proxies = {rtt: delay_proxy.start((target.hostname, target.port), rtt) for rtt in rtts}
    driver = latency.new_driver()  # a taller window: the phone is drawn at scale 1 (px = pt)
    cdp = latency.CDP(driver)
    page = latency.Page(driver, cdp)
    presets = [p["name"] for p in get_json("presets")["presets"]]
    try:
        for preset in presets:
            snaps = {}
            for rtt in rtts:
                url = f"{proxies[rtt].url}?preset={urllib.parse.quote(preset)}"
                label = f"delay proxy +{rtt} ms, {preset}"
                page.load(url, preset, 60)
                results = {}
                for gesture in latency.GESTURES:
                    page.reset(url, preset, 60 + rtt / 1000 * 10)
                    results[gesture] = latency.run_gesture(page, cdp, gesture, rtt, record=False)
                snaps[rtt] = {g: r["snap"] for g, r in results.items()}
                deltas = {g: r["statsDelta"] or {} for g, r in results.items()}
                unsettled = [g for g, r in results.items() if not r["settled"]]
                check(f"{label}: drag, flick down, flick up: the card comes to rest", not unsettled,
                      ", ".join(f"{g} → {r['snap']}" for g, r in results.items()) if not unsettled else f"not at rest after {', '.join(unsettled)}")
                check(f"{label}: zero prediction mismatches", all(d.get("mismatches") == 0 for d in deltas.values()),
                      ", ".join(f"{g}: {d.get('mismatches')} mismatches of {d.get('predictions')} predictions (max error {d.get('maxError')})" for g, d in deltas.items()))
                check(f"{label}: every release started from the release law, as sheetd answered it",
                      all((d.get("releases") or 0) >= 1 and d.get("releaseMismatches") == 0 for d in deltas.values()),
                      ", ".join(f"{g}: {d.get('releases')} predicted, {d.get('releaseMismatches')} differed" for g, d in deltas.items()))
                check(f"{label}: one request in flight at most, every pan event sent",
                      all(d.get("maxInFlight") is not None and d["maxInFlight"] <= 1 and d.get("eventsSent") == d.get("samples") for d in deltas.values()),
                      ", ".join(f"{g}: in flight ≤ {d.get('maxInFlight')}, {d.get('eventsSent')}/{d.get('samples')} events in {d.get('requestsSent')} requests" for g, d in deltas.items()))
            base = snaps[rtts[0]]
            for rtt in rtts[1:]:
                check(f"delay proxy, {preset}: the same snaps at +{rtt} ms as at +{rtts[0]} ms", snaps[rtt] == base,
                      f"+{rtts[0]}: {base}, +{rtt}: {snaps[rtt]}")
        errors = console_errors(driver)
        check("delay proxy: no console errors", not errors, "; ".join(e["message"] for e in errors)[:300])
    finally:
        cdp.close()
        driver.quit()
        for p in proxies.values():
            p.stop()


LAYOUT_LAW_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layout_law_check.js")
KEYBOARD_PT = 291  # the layout page's keyboard in portrait, points


def pointer_gesture(cdp, kind, x, y, dx, dy, seconds, hold=0.0):
    """A straight pointer gesture as CDP input events carrying explicit timestamps (as
    sheetkit.gestures.plan, in any direction): press at (x, y), moves at 120 Hz along (dx, dy) px over
    `seconds`, then the release at the last position, one tick after the last move (released while
    moving: sheetd's velocity is the gesture's speed) or `hold` s after it (held still: no sample
    in sheetd's 0.1 s window, velocity 0). The timestamps decide the velocity, whenever the events
    arrive; dispatched in real time (latency.perform)."""
    n = max(1, round(seconds * latency.HZ))
    events = []
    if kind == "mouse":
        cdp.wait([cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "buttons": 0})])  # hover first
        press = lambda t, px, py: {"type": t, "x": px, "y": py, "button": "left", "buttons": 1, "clickCount": 1}  # noqa: E731
        events.append((0.0, "Input.dispatchMouseEvent", press("mousePressed", x, y), y))
        for i in range(1, n + 1):
            events.append((i / latency.HZ, "Input.dispatchMouseEvent",
                           {"type": "mouseMoved", "x": x + dx * i / n, "y": y + dy * i / n, "button": "left", "buttons": 1}, y + dy * i / n))
        up = dict(press("mouseReleased", x + dx, y + dy), buttons=0)
        events.append((n / latency.HZ + (hold or 1 / latency.HZ), "Input.dispatchMouseEvent", up, y + dy))
    else:
        events.append((0.0, "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y, "id": 1}]}, y))
        for i in range(1, n + 1):
            events.append((i / latency.HZ, "Input.dispatchTouchEvent",
                           {"type": "touchMove", "touchPoints": [{"x": x + dx * i / n, "y": y + dy * i / n, "id": 1}]}, y + dy * i / n))
        events.append((n / latency.HZ + (hold or 1 / latency.HZ), "Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []}, y + dy))
    latency.perform(cdp, events, paced=True)
    return events


# each edge's direction toward closing on the screen (x, y)
CLOSING = {"bottom": (0, 1), "top": (0, -1), "left": (-1, 0), "right": (1, 0)}
# the edges page's gestures, in px along the closing direction: 150 px toward closing in 8 steps,
# held still (velocity 0: position decides), from half; then 100 px toward opening in 0.1 s, released
# while moving (1000 pt/s: the projection decides), from where the first left the card.
EDGE_GESTURES = [("drag 150 px toward closing, held", 150, 8 / 120, 0.25), ("flick 100 px toward opening in 0.1 s", -100, 0.1, 0.0)]


def edges_page():
    """GET /edges.html (every edge, the non-modal map, reduced motion), in a browser of its own,
    with pointer input from CDP events carrying explicit timestamps (`pointer_gesture`):
    - every edge: a bottom sheet, a top sheet, a left and a right drawer on a 500 × 500 pt screen,
      each from half, dragged toward closing and held, then flicked toward opening (the same
      gestures mirrored along each axis): each lands where the bottom sheet lands (the same
      detent, the same constant, the same release velocity), sheetd agrees with the drawn card,
      and sheet-client.js predicted every answer;
    - the map: a non-modal bottom sheet (interactiveUpThrough medium): a click on the page behind
      lands at medium (dimmed all the same) and at peek, and is taken by the overlay at large;
    - reduced motion (prefers-reduced-motion emulated, the session's `reducedMotion`): a release
      jumps, with no intermediate frame drawn or sent;
    - reduced motion per request (the page's release control, `reducedMotion` on the `ended`): on
      the reduced session a release that asks for motion animates, on a session with motion one
      that asks for reduced motion jumps with no intermediate frame; the session keeps its setting
      and sheet-client.js predicted both."""
    driver = latency.new_driver()
    cdp = latency.CDP(driver)
    js = driver.execute_script

    def reset(edge, mode="edge"):
        driver.set_script_timeout(60)
        error = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "edgesDemo.reset(arguments[0], arguments[1]).then((ok) => done(ok ? null : 'not idle'), (e) => done(String(e)));", edge, mode)
        return check(f"edges page: {mode if mode != 'edge' else edge}: a new session, at rest", not error, error or "")

    def gesture(along, seconds, hold, kind="mouse"):
        """One gesture from the grab point, `along` px toward closing; returns once the page is idle
        (the answer arrived, the card at rest) with what the page and sheetd say."""
        edge = js("return edgesDemo.card().edge")
        x, y = js("return edgesDemo.grabPoint()")
        cx, cy = CLOSING[edge]
        pointer_gesture(cdp, kind, x, y, cx * along, cy * along, seconds, hold)
        # idle: the answer to the release arrived and the card is at rest, drawn there at least once since
        wait_for(lambda: js("return edgesDemo.idle() && edgesDemo.lastRelease() !== null && edgesDemo.drawnSinceRelease()?.length > 0"), 30)
        card = js("return edgesDemo.card()")
        snap = get_json(f"sessions/{card['session']}")
        # On the client clock sheetd's time is the last event's: a card still animating there rests at its animation's end.
        snap["final"] = snap["animation"]["to"] if snap.get("animation") else snap["constant"]
        return card, snap, js("return edgesDemo.lastRelease()"), js("return edgesDemo.stats()")

    def counters(stats):
        return ", ".join(f"{k} {stats.get(k)}" for k in ("predictions", "mismatches", "releases", "releaseMismatches", "eventsSent", "samples"))

    def clean(stats):
        return stats.get("mismatches") == 0 and stats.get("releaseMismatches") == 0 and stats.get("eventsSent") == stats.get("samples")

    try:
        driver.get(f"{API}edges.html")
        if not check("edges page: loads, session created", wait_for(lambda: js("return document.body.dataset.ready === '1'"), 60)):
            return

        # -- every edge: the same gestures, mirrored, land where the bottom sheet lands
        landed = {}
        for edge in ("bottom", "top", "left", "right"):
            if not reset(edge):
                continue
            for i, (name, along, seconds, hold) in enumerate(EDGE_GESTURES):
                card, snap, release, stats = gesture(along, seconds, hold)
                law = snap["dragLaw"]
                landed[(edge, i)] = (snap["detent"], snap["final"], release and release["velocity"])
                check(f"edges page: {edge}: {name}: drawn where sheetd rests it, every answer predicted",
                      abs(card["constant"] - snap["final"]) < 1e-9 and law["edge"] == edge and clean(stats)
                      and stats.get("predictions", 0) > 0 and stats.get("releases", 0) == i + 1,
                      f"{snap['detent']} {snap['final']} (drawn {card['constant']}), velocity {release and release['velocity']} pt/s "
                      f"(axis {law['axis']}, sign {law['sign']}); {counters(stats)}")
        for i, (name, along, seconds, hold) in enumerate(EDGE_GESTURES):
            bottom = landed.get(("bottom", i))
            speed = abs(along) / seconds if not hold else 0.0
            for edge in ("top", "left", "right"):
                got = landed.get((edge, i))
                # the same detent and constant; the velocity sheetd estimated the same to the
                # page's event timestamps (0.1 ms resolution: 2 % at 0.1 s, as the flicks above)
                same = bool(got and bottom) and got[0] == bottom[0] and abs(got[1] - bottom[1]) <= 1e-9 \
                    and got[2] is not None and abs(got[2] - bottom[2]) <= 0.02 * speed + 1e-9
                check(f"edges page: {name}: the {edge} sheet lands where the bottom sheet lands",
                      same and bottom[0] == ("tip" if i == 0 else "half"),
                      f"{edge} {got}, bottom {bottom}")

        # -- the map: a non-modal sheet, the page behind clickable at medium and below, not above
        if reset("bottom", "map"):
            def click_behind():
                """A real mouse click on the page behind (the pin); returns (who took it: 'page' or
                'overlay', the map's state just before)."""
                before = js("return edgesDemo.map()")
                px, py = before["pin"]
                click = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
                click.pointer_action.move_to_location(px, py).click()
                click.perform()
                after = wait_for(lambda: (lambda m: m if sum(m["clicks"].values()) > sum(before["clicks"].values()) else None)(
                    js("return edgesDemo.map()")), 10) or js("return edgesDemo.map()")
                took = [k for k in ("page", "overlay") if after["clicks"][k] > before["clicks"][k]]
                return (took[0] if len(took) == 1 else ",".join(took) or "nobody"), before

            session = js("return edgesDemo.card().session")
            seen, ok = [], True
            steps = [("medium", None), ("large", -150), ("peek", 280)]  # the card's grab point moved (px, + down)
            for expected, along in steps:
                if along is not None:
                    card, snap, _, _ = gesture(along, 8 / 120, 0.25)
                else:
                    snap = get_json(f"sessions/{session}")
                    snap["final"] = snap["constant"]
                took, m = click_behind()
                limit = snap["detents"]["medium"]
                should = snap["final"] >= limit  # at or below the limit (a constant at or beyond interactiveFrom)
                good = snap["detent"] == expected and snap["backgroundInteractive"] == should and m["interactive"] == should \
                    and m["pointerEvents"] == ("none" if should else "auto") and took == ("page" if should else "overlay")
                ok = ok and good
                seen.append(f"{snap['detent']} {snap['final']}: sheetd backgroundInteractive {snap['backgroundInteractive']}, "
                            f"overlay pointer-events {m['pointerEvents']} at alpha {m['alpha']:.2f}, the click reached the {took}")
                if expected == "medium":
                    dimmed = m["alpha"]
            stats = js("return edgesDemo.stats()")
            check("edges page: map (interactiveUpThrough medium): a click on the page behind lands at medium and peek, not at large",
                  ok and clean(stats) and stats.get("releases") == 2, "; ".join(seen) + f"; {counters(stats)}")
            check("edges page: map: at medium the overlay is visible while the page behind takes input", ok and dimmed > 0,
                  f"dimmer alpha {dimmed:.2f} at medium")

        # -- reduced motion: prefers-reduced-motion, carried by the session; a release jumps
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        try:
            if reset("bottom"):
                snap0 = get_json(f"sessions/{js('return edgesDemo.card().session')}")
                card, snap, release, stats = gesture(150, 8 / 120, 0.25)
                drawn = js("return edgesDemo.drawnSinceRelease()") or []
                target = snap["final"]
                at_release = snap0["detents"]["half"] + 150  # where the finger left the card (position held)
                between = [c for c in drawn if abs(c - target) > 1e-9 and abs(c - at_release) > 1e-9]
                frames = (release or {}).get("frames") or []
                curve = (snap0.get("releaseLaw") or {}).get("motions", [{}])[0].get("curve", {})
                check("edges page: reduced motion: the session says so and its release law jumps",
                      snap0.get("reducedMotion") is True and curve.get("duration") == 0, f"reducedMotion {snap0.get('reducedMotion')}, curve {curve}")
                check("edges page: reduced motion: a pointer release jumps to its target, no intermediate frame drawn or sent, predicted",
                      snap["detent"] == "tip" and drawn and drawn[-1] == target and not between and frames and all(c == target for c in frames)
                      and clean(stats) and stats.get("releases") == 1,
                      f"released at {at_release} → {snap['detent']} {target}; {len(drawn)} frames drawn since the release "
                      f"(distinct {sorted(set(round(c, 3) for c in drawn))}), sheetd's frames {frames}; {counters(stats)}")
                # -- per request: `reducedMotion: false` on the ended animates this one release on the reduced session
                js("edgesDemo.setReleaseMotion('animated')")
                back = js("return edgesDemo.card().constant")
                card, snap, release, stats = gesture(-150, 8 / 120, 0.25)
                drawn = js("return edgesDemo.drawnSinceRelease()") or []
                between = [c for c in drawn if abs(c - snap["final"]) > 1e-9]
                again = get_json(f"sessions/{card['session']}")
                check("edges page: reduced motion per request: an ended with reducedMotion false animates on the reduced session, predicted",
                      (release or {}).get("snap", {}).get("reducedMotion") is False and (release or {}).get("animation", {}).get("curve") == "spring"
                      and len(between) > 2 and again.get("reducedMotion") is True and clean(stats) and stats.get("releases") == 2,
                      f"from {back}: {snap['detent']} {snap['final']}, snap {(release or {}).get('snap')}, {len(between)} intermediate frames drawn, "
                      f"session reducedMotion {again.get('reducedMotion')}; {counters(stats)}")
        finally:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "no-preference"}]})
        # -- per request: `reducedMotion: true` on the ended jumps on a session with motion, and the session keeps it
        if reset("bottom"):
            js("edgesDemo.setReleaseMotion('reduced')")
            snap0 = get_json(f"sessions/{js('return edgesDemo.card().session')}")
            card, snap, release, stats = gesture(150, 8 / 120, 0.25)
            drawn = js("return edgesDemo.drawnSinceRelease()") or []
            at_release = snap0["detents"]["half"] + 150
            between = [c for c in drawn if abs(c - snap["final"]) > 1e-9 and abs(c - at_release) > 1e-9]
            js("edgesDemo.setReleaseMotion('session')")
            check("edges page: reduced motion per request: an ended with reducedMotion true jumps on a session with motion, no intermediate frame, predicted",
                  snap0.get("reducedMotion") is None and (snap0.get("releaseLaw") or {}).get("requestOverride", {}).get("reducedMotion") is True
                  and (release or {}).get("snap", {}).get("reducedMotion") is True and snap["detent"] == "tip" and drawn
                  and drawn[-1] == snap["final"] and not between and snap.get("reducedMotion") is None and clean(stats) and stats.get("releases") == 1,
                  f"released at {at_release} → {snap['detent']} {snap['final']}, snap {(release or {}).get('snap')}; {len(drawn)} frames drawn "
                  f"(distinct {sorted(set(round(c, 3) for c in drawn))}); {counters(stats)}")
        errors = console_errors(driver)
        check("edges page: no console errors", not errors, "; ".join(e["message"] for e in errors)[:300])
        # the stacks page, in this browser (no start-up of its own)
        stacks_page(driver, cdp)
    finally:
        cdp.close()
        driver.quit()


def recede_law(law, progress, c):
    """openapi.yaml's RecedeLaw at the constant c, each step the double operation it writes (so the
    values are sheetd's, and sheet-client.js's, bit for bit)."""
    span = progress["low"] - progress["top"]
    p = min(max(1.0 if abs(span) < 1e-9 else (progress["low"] - c) / span, 0.0), 1.0)
    return {"scale": 1 + (law["scale"] - 1) * p, "lift": law["lift"] * p, "cornerRadius": law["cornerRadius"] * p, "alpha": law["alpha"] * p}


# A receding surface's CSS per the edge its thing comes from: the lift's direction (x, y) and the
# transform origin as fractions of its box (centre across the axis, far edge along it).
RECEDE_CSS = {"bottom": ((0, -1), (0.5, 0.0)), "left": ((1, 0), (1.0, 0.5))}


def recede_css_error(css, t, edge, k, radius=0.0):
    """How far a surface's computed style is from the transform `t` drawn on it (`recedeStyle`), in
    px: the matrix's translation, the transform origin and the corners' radius; the matrix's scale
    and the shade's opacity (CSS gives them to 6 significant digits) count 1e-3 for each 1e-5 off.
    None where the style cannot be read."""
    found = re.fullmatch(r"matrix\(([^)]*)\)", css["transform"] or "")
    origin = [float(v[:-2]) for v in (css["origin"] or "").split()[:2] if v.endswith("px")]
    if not found or len(origin) != 2:
        return None
    a, b, c, d, e, f = (float(v) for v in found.group(1).split(","))
    (dx, dy), (ox, oy) = RECEDE_CSS[edge]
    lift = t["lift"] * k
    radius_px = max(radius, t["cornerRadius"]) * k
    return max(abs(a - t["scale"]) / 1e-5 * 1e-3, abs(d - t["scale"]) / 1e-5 * 1e-3, abs(b), abs(c),
               abs(e - dx * lift), abs(f - dy * lift), abs(origin[0] - ox * css["width"]), abs(origin[1] - oy * css["height"]),
               *(abs(float(r[:-2]) - radius_px) for r in css["radius"]),
               abs((css["shade"] if css["shade"] is not None else t["alpha"]) - t["alpha"]) / 1e-5 * 1e-3)


def stacks_page(driver, cdp):
    """GET /stacks.html (two stacks of fluid sessions, the child of each created with `parent`), in
    the edges page's browser, with pointer input from CDP events carrying explicit timestamps:
    - bottom stack: the details opened from a button in the message; dragged down with the mouse
      (held there, then released to tip), the message's surface is drawn by the details' recede law
      at the constant drawn for the pointer (what the page applied equals the law evaluated here,
      bit for bit; its computed transform, origin, corners and shade say the same), and the page
      behind recedes with the message (`backdrop`); the covered message, dragged, moves not at all
      and the page hears sheetd's 409 `covered`; an arrow key steps the details up (announced);
      "Close all" closes both with one `cascade` dismiss, their animations from one instant, both
      drawn hidden and nothing receded any more;
    - side stack: the filters (a left drawer on a left drawer) dragged toward closing: the drawer
      beneath recedes along x, away from its edge, by the law at the drawn constant; then under
      prefers-reduced-motion (sent live, a layout event) an arrow key and a cascade each jump (no
      intermediate constant drawn);
    - zero prediction mismatches on every card: drags, releases, transforms (sheet-client.js
      compares every `parentTransform` and `backdropTransform` of the answers and their frames with
      the law evaluated on the constants they belong to, exactly)."""
    js = driver.execute_script
    began = time.monotonic()
    driver.get_log("browser")  # the edges page's lines are behind us
    driver.get(f"{API}stacks.html")
    if not check("stacks page: loads, both stacks created", wait_for(lambda: js("return document.body.dataset.ready === '1'"), 60)):
        return
    k = js("return stacksDemo.K")
    # pointer gestures made; transforms the page drew compared with the law here; sheetd's compared by sheet-client.js
    figures = {"gestures": 0, "compared": 0, "transforms": 0}

    def reset(stack):
        driver.set_script_timeout(60)
        error = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "stacksDemo.reset(arguments[0]).then((ok) => done(ok ? null : 'not idle'), (e) => done(String(e)));", stack)
        return check(f"stacks page: {stack} stack: new sessions, at rest", not error, error or "")

    def card(name):
        return js("return stacksDemo.card(arguments[0])", name)

    def idle(stack):
        return wait_for(lambda: js("return stacksDemo.idle(arguments[0])", stack), 30)

    def server(session):
        """sheetd's snapshot, with where its card comes to rest (on the client clock sheetd's time is
        the last event's: a card still animating there rests at its animation's end)."""
        snap = get_json(f"sessions/{urllib.parse.quote(session, safe='')}")
        snap["final"] = snap["animation"]["to"] if snap.get("animation") else snap["constant"]
        return snap

    def drawn_by_law(child, parent, law_snap):
        """Whether the child's recession as the page drew it is the law at the child's drawn constant,
        bit for bit, and the parent's surface shows it (computed style); with the details."""
        expected = recede_law(law_snap["recedeLaw"], law_snap["dragLaw"]["progress"], child["constant"])
        got = (child["recession"] or {}).get("parent")
        err = recede_css_error(parent["css"], expected, parent["edge"], k, radius=16)
        figures["compared"] += 1
        ok = got == expected and child["recession"]["constant"] == child["constant"] and err is not None and err <= 1e-3
        return ok, f"child drawn at {child['constant']}: law {expected}, page drew {got}; parent {parent['css']['transform']} origin {parent['css']['origin']} (css off by {err})"

    def stack_drawn(child_name, root_name, law_snap=None):
        """A stack as drawn now: the child and root cards, the child's snapshot from sheetd (or
        `law_snap`, kept from before), and whether the root is drawn by the child's law (with the
        details)."""
        child, root = card(child_name), card(root_name)
        csnap = law_snap or server(child["session"])
        ok, detail = drawn_by_law(child, root, csnap)
        return child, root, csnap, ok, detail

    def press_and_move(name, along):
        """Mouse down 20 px inside the card's leading edge and `along` px toward closing in 8 moves at
        120 Hz (CDP events with explicit timestamps); the button stays down. Returns the position
        and the last move's timestamp."""
        x, y = js("return stacksDemo.grabPoint(arguments[0])", name)
        dx, dy = (-along, 0) if card(name)["edge"] == "left" else (0, along)
        cdp.wait([cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "buttons": 0})])
        events = [(0.0, "Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1}, y)]
        for i in range(1, 9):
            events.append((i / latency.HZ, "Input.dispatchMouseEvent",
                           {"type": "mouseMoved", "x": x + dx * i / 8, "y": y + dy * i / 8, "button": "left", "buttons": 1}, y))
        sent, _, _ = latency.perform(cdp, events, paced=True)
        figures["gestures"] += 1
        return x + dx, y + dy, sent[-1]

    def release(x, y, last):
        """The button up at (x, y), at least 0.25 s after the last move (no sample in sheetd's 0.1 s
        window: velocity 0, the release is decided by position on any machine)."""
        due = max(0.0, last + 0.25 - (time.time() + 0.03))
        latency.perform(cdp, [(due, "Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y, "button": "left", "buttons": 0, "clickCount": 1}, y)])

    def held(name, along):
        """Waits until the page drew the card under the pointer held `along` px from its start, every
        event answered; returns the card."""
        return wait_for(lambda: (lambda c: c if c["dragging"] and c["motion"] == "drag" and c["netIdle"]
                                 and c["translation"] is not None and abs(c["translation"] - along / k) < 0.006 else None)(card(name)), 30)

    def clean(stats):
        return (stats.get("mismatches") == 0 and stats.get("releaseMismatches") == 0 and stats.get("transformMismatches") == 0
                and stats.get("maxInFlight", 0) <= 1 and stats.get("eventsSent") == stats.get("samples"))

    def counters(stats):
        keys = ("predictions", "mismatches", "releases", "releaseMismatches", "transforms", "transformMismatches", "eventsSent", "samples")
        return ", ".join(f"{key} {stats.get(key)}" for key in keys)

    # ---- the bottom stack: the message (the page behind recedes with it), the details on it
    if reset("bottom"):
        root, child = card("message"), card("details")
        rsnap = server(root["session"])
        back = js("return stacksDemo.backdrop()")
        page_law = recede_law(rsnap["recedeLaw"], rsnap["dragLaw"]["progress"], rsnap["constant"])
        err = recede_css_error(back, page_law, "bottom", k)
        check("stacks page: the page behind recedes with the message (its law's backdrop), as sheetd says",
              rsnap["recedeLaw"]["backdrop"] and rsnap.get("backdropTransform") == page_law and page_law["scale"] < 1
              and (root["recession"] or {}).get("backdrop") == page_law and err is not None and err <= 1e-3,
              f"message at {rsnap['detent']} {rsnap['constant']}: {page_law}; page {back['transform']} origin {back['origin']} corners {back['radius']} (css off by {err})")
        driver.find_element(By.ID, "open-details").click()
        idle("bottom")
        child, root, csnap, ok, detail = stack_drawn("details", "message")
        check("stacks page: the details open from the message's button; the message recedes by their law",
              ok and csnap["parent"] == root["session"] and csnap["final"] == csnap["detents"]["full"] and child["constant"] == csnap["final"]
              and csnap["parentTransform"] == recede_law(csnap["recedeLaw"], csnap["dragLaw"]["progress"], csnap["constant"]), detail)

        # dragged down 600 px, held: the message recedes less, by the law at the constant drawn for the pointer
        x, y, last = press_and_move("details", 600)
        child = held("details", 600)
        root = card("message")
        if check("stacks page: details dragged 600 px down with the mouse, held", bool(child), str(card("details"))):
            ok, detail = drawn_by_law(child, root, csnap)
            check("stacks page: while the details are dragged the message is drawn by their law at the constant drawn",
                  ok and child["constant"] == csnap["detents"]["full"] + child["translation"] and root["constant"] == rsnap["constant"], detail)
        release(x, y, last)
        idle("bottom")
        child, root, csnap, ok, detail = stack_drawn("details", "message")
        check("stacks page: released, the details rest at tip, the message drawn by the law there",
              ok and csnap["detent"] == "tip" and child["constant"] == csnap["final"] == csnap["detents"]["tip"], detail)

        # the covered message, dragged down (at tip the details leave the page behind them interactive)
        js("stacksDemo.record('message')")
        x, y = js("return stacksDemo.grabPoint('message')")
        pointer_gesture(cdp, "mouse", x, y, 0, 150, 8 / latency.HZ, 0.25)
        figures["gestures"] += 1
        refused = wait_for(lambda: js("return stacksDemo.idle('bottom') && stacksDemo.covered().length > 0 ? stacksDemo.covered() : null"), 30) or []
        drawn = js("return stacksDemo.recorded('message')")
        rsnap2 = server(root["session"])
        stats = card("message")["stats"]
        check("stacks page: the covered message refuses a drag: the page hears 409 covered, the message does not move",
              refused and all(r["card"] == "message" and r["coveredBy"] == child["session"] for r in refused)
              and drawn and all(c == rsnap["constant"] for c in drawn) and rsnap2["detent"] == rsnap["detent"] and rsnap2["constant"] == rsnap["constant"]
              and rsnap2.get("coveredBy") == child["session"] and stats.get("predictions") == 0 and stats.get("releases") == 0,
              f"refusals {[(r['coveredBy'], r['phases']) for r in refused]}; message drawn at {sorted(set(drawn))} over {len(drawn)} frames "
              f"and events; sheetd: {rsnap2['detent']} {rsnap2['constant']}, coveredBy {rsnap2.get('coveredBy')}; {counters(stats)}")

        # the keyboard: an arrow on the details' handle steps them up to half, announced
        driver.execute_script("stacksDemo.cards.details.grabber.focus()")
        ActionChains(driver).send_keys(Keys.ARROW_UP).perform()
        said = wait_for(lambda: js("return stacksDemo.idle('bottom') && stacksDemo.announced().length > 0 ? stacksDemo.announced() : null"), 30) or []
        child, root, csnap, ok, detail = stack_drawn("details", "message", csnap)
        check("stacks page: ArrowUp on the details' handle steps them to half (announced), the message drawn by the law there",
              ok and said[-1:] == ["the details: Expanded to half, 2 of 3"] and child["constant"] == csnap["detents"]["half"], f"said {said}; {detail}")

        # close all: one dismiss with cascade; both animations from one instant, both drawn hidden
        driver.find_element(By.ID, "close-all").click()
        closed = wait_for(lambda: js("return stacksDemo.idle('bottom') && stacksDemo.lastCascade()"), 30)
        child, root = card("details"), card("message")
        rsnap, csnap = server(root["session"]), server(child["session"])
        back = js("return stacksDemo.backdrop()")
        identity = {"scale": 1, "lift": 0, "cornerRadius": 0, "alpha": 0}
        started = [closed and (closed["animation"] or {}).get("startTime"), (rsnap.get("animation") or {}).get("startTime"), (csnap.get("animation") or {}).get("startTime")]
        check("stacks page: Close all dismisses the stack with one cascade: both close from one instant and are drawn hidden, nothing recedes",
              bool(closed) and closed["cascade"] == [child["session"]] and started[0] is not None and len(set(started)) == 1
              and rsnap["final"] == rsnap["detents"]["hidden"] == root["constant"] and csnap["final"] == csnap["detents"]["hidden"] == child["constant"]
              and not root["open"] and not child["open"] and child["recession"]["parent"] == identity and root["recession"]["backdrop"] == identity
              and root["css"]["transform"] in ("none", "matrix(1, 0, 0, 1, 0, 0)") and back["transform"] in ("none", "matrix(1, 0, 0, 1, 0, 0)"),
              f"cascade {closed and closed['cascade']}; started at {started}; message {root['constant']} (sheetd {rsnap['final']}), "
              f"details {child['constant']} (sheetd {csnap['final']}); message surface {root['css']['transform']}, page {back['transform']}")
        for name in ("message", "details"):
            stats = card(name)["stats"]
            figures["transforms"] += stats.get("transforms", 0)
            check(f"stacks page: bottom stack, {name}: zero prediction mismatches (drag, release, transforms)",
                  clean(stats) and (name == "message" or (stats.get("predictions", 0) > 0 and stats.get("releases") == 1)) and stats.get("transforms", 0) > 0,
                  counters(stats))

    # ---- the side stack: the places drawer (left), the filters drawer on it
    if reset("side"):
        driver.find_element(By.ID, "open-filters").click()
        idle("side")
        child, root, csnap, ok, detail = stack_drawn("filters", "drawer")
        check("stacks page: side stack: the filters open from the drawer's button; the drawer recedes along x by their law",
              ok and csnap["dragLaw"]["axis"] == "x" and child["constant"] == csnap["final"] == csnap["detents"]["half"], detail)
        x, y, last = press_and_move("filters", 150)
        child = held("filters", 150)
        root = card("drawer")
        if check("stacks page: side stack: filters dragged 150 px toward their edge with the mouse, held", bool(child), str(card("filters"))):
            ok, detail = drawn_by_law(child, root, csnap)
            check("stacks page: side stack: while the filters are dragged the drawer is drawn by their law at the constant drawn (along x)",
                  ok and child["constant"] == csnap["detents"]["half"] + child["translation"], detail)
        release(x, y, last)
        idle("side")
        child, root, csnap, ok, detail = stack_drawn("filters", "drawer")
        check("stacks page: side stack: released, the filters rest at tip, the drawer drawn by the law there",
              ok and csnap["detent"] == "tip" and child["constant"] == csnap["final"], detail)

        # reduced motion (prefers-reduced-motion, sent live as a layout event): a step and a cascade jump
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        try:
            reduced = wait_for(lambda: js("return stacksDemo.idle('side') && ['drawer', 'filters'].every((n) => stacksDemo.cards[n].session.snapshot.reducedMotion)"), 30)
            js("stacksDemo.record('drawer'); stacksDemo.record('filters')")
            driver.execute_script("stacksDemo.cards.filters.grabber.focus()")
            ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
            said = wait_for(lambda: js("return stacksDemo.idle('side') && stacksDemo.announced().length > 0 ? stacksDemo.announced() : null"), 30) or []
            stepped = card("filters")
            driver.find_element(By.ID, "close-drawers").click()
            closed = wait_for(lambda: js("return stacksDemo.idle('side') && stacksDemo.lastCascade()"), 30)
            seen = {name: sorted(set(js("return stacksDemo.recorded(arguments[0])", name))) for name in ("drawer", "filters")}
            child, root = card("filters"), card("drawer")
            check("stacks page: side stack under reduced motion: ArrowRight steps the filters to half and Close all closes both, each a jump",
                  bool(reduced and closed) and said[-1:] == ["the filters: Expanded to half, 2 of 3"] and stepped["constant"] == csnap["detents"]["half"]
                  and closed["cascade"] == [child["session"]] and seen["filters"] == sorted({csnap["detents"]["tip"], csnap["detents"]["half"], csnap["detents"]["hidden"]})
                  and seen["drawer"] == sorted({csnap["detents"]["full"], csnap["detents"]["hidden"]}) and not root["open"] and not child["open"],
                  f"reducedMotion {bool(reduced)}; said {said}; drawn: filters {seen['filters']}, drawer {seen['drawer']}; cascade {closed and closed['cascade']}")
        finally:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "no-preference"}]})
        for name in ("drawer", "filters"):
            stats = card(name)["stats"]
            figures["transforms"] += stats.get("transforms", 0)
            check(f"stacks page: side stack, {name}: zero prediction mismatches (drag, release, transforms)",
                  clean(stats) and stats.get("layoutMismatches") == 0
                  and (name == "drawer" or (stats.get("predictions", 0) > 0 and stats.get("releases") == 1 and stats.get("transforms", 0) > 0)),
                  counters(stats))
    print(f"stacks page: {figures['gestures']} pointer gestures; {figures['compared']} transforms the page drew compared with the law here, "
          f"{figures['transforms']} of sheetd's (answers and frames) by sheet-client.js; {time.monotonic() - began:.1f} s", flush=True)
    # sheetd's refusals of the covered message are 409 answers, which Chromium logs as failed loads
    errors = [e for e in console_errors(driver) if "status of 409" not in e["message"]]
    check("stacks page: no console errors (but the 409s of the covered message)", not errors, "; ".join(e["message"] for e in errors)[:300])


def layout_page(rtts=(0, 200)):
    """GET /layout.html (the layout demo) through testkit/sheetkit/delay_proxy.py at each added
    round trip, in a browser of its own: the keyboard brought up by a real text field, a rotation
    mid-drag, content-fit detents following a content element, momentum across the list's boundary
    both ways (`list_hand_off`), and sheet-client.js's layout law against sheetd's answers
    (IntegrationTests/layout_law_check.js, once). Decided on what the page drew and what sheetd
    answers, never on timing; zero prediction mismatches throughout."""
    target = urllib.parse.urlsplit(API)
    proxies = {rtt: delay_proxy.start((target.hostname, target.port), rtt) for rtt in rtts}
    driver = latency.new_driver()
    cdp = latency.CDP(driver)  # pointer input with explicit timestamps (the list hand-off)
    js = driver.execute_script

    def idle(timeout=30):
        return wait_for(lambda: js("return window.layoutDemo.idle()"), timeout)

    def after_layout(action, timeout):
        """Does `action` (a keyboard brought up or sent away) and waits for the layout change it makes
        to be sent and the page idle again (observeLayout may send it on the next animation frame:
        idle alone can hold before it leaves)."""
        revision = js("return layoutDemo.session.revision")
        action()
        return wait_for(lambda: js("return layoutDemo.idle() && layoutDemo.session.revision > arguments[0]", revision), timeout)

    def reset(**kw):
        driver.set_script_timeout(60)
        return driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.layoutDemo.reset(arguments[0]).then(done, (e) => done(String(e)));", kw)

    def card():
        """The card as drawn (its top in screen px, its constant) and where that constant belongs."""
        return js("const c = Number(document.querySelector('#phone').dataset.constant);"
                  "return {constant: c, top: layoutDemo.cardTop(), expected: layoutDemo.topFor(c), revision: layoutDemo.session.revision,"
                  " session: layoutDemo.session.id, stats: layoutDemo.stats()};")

    def drawn_at_rest(drawn, final, timeout):
        """The card as drawn once it shows `final` (sheetd's rest), else as drawn at the timeout. The
        page can be idle a frame before a move's last step is drawn (on a loaded machine the card
        was read 0.54 pt short of half on its way back): the verdict is on where the card comes to
        rest, not on when it was read."""
        if drawn["constant"] == final:
            return drawn

        def at_rest():
            c = card()
            return c if c["constant"] == final else None
        return wait_for(at_rest, timeout) or card()

    def server(session):
        """sheetd's snapshot, with where its card comes to rest: on the client clock sheetd's time is
        the last event's, so a card still animating there rests at its animation's end."""
        snap = get_json(f"sessions/{session}")
        snap["final"] = snap["animation"]["to"] if snap.get("animation") else snap["constant"]
        return snap

    def clean(stats):
        return (stats.get("mismatches") == 0 and stats.get("layoutMismatches") == 0 and stats.get("releaseMismatches") == 0
                and stats.get("maxInFlight", 0) <= 1 and stats.get("eventsSent") == stats.get("samples"))

    def counters(stats):
        keys = ("layouts", "layoutMismatches", "layoutsUnpredicted", "predictions", "mismatches", "releases", "releaseMismatches", "eventsSent", "samples", "maxInFlight")
        return ", ".join(f"{k} {stats.get(k)}" for k in keys)

    def list_hand_off(label, slow, to_rest):
        """The list (80 rows) in the card at half, scrolled 400 pt down, flung by touch toward its
        top (the finger 200 px down in 0.1 s, released while moving): its fling reaches the top
        and the card takes the velocity left there (a `fling` event, the release law from half);
        then the card, dragged up from tip by the mouse (680 px at ≈ 3000 px/s) and released while
        moving, crosses full and hands its velocity to the list (`scrollFling`), which scrolls on
        (`to_rest`: to the closed form's rest, ≈ 4 s of deceleration; else the list moved). The
        figures are the closed forms' (the list's deceleration, the card's spring) on the events'
        own timestamps: no timing verdict."""
        k = 1000 * math.log(0.998)  # the list's deceleration, 1/s (layout.html's DECELERATION)
        reset(policy="lift", mode="fixed", rows=80, detent="half", handoff=True)
        scale = js("return layoutDemo.state.scale")
        start = js("return layoutDemo.scrollList(400)")
        x, y = js("return layoutDemo.listPoint()")
        pointer_gesture(cdp, "touch", x, y, 0, 200, 0.1)
        done = wait_for(lambda: js("const l = layoutDemo.list(); return !l.dragging && !l.moving && l.flings.length > 0"
                                   " && l.flings[0].answer !== null && layoutDemo.idle() ? l : null"), slow)
        lst = done or js("return layoutDemo.list()")
        rel = (lst["releases"] or [None])[-1]
        fling = (lst["flings"] or [None])[0]
        c = card()
        snap = server(c["session"])
        stats = c["stats"]
        ok = bool(done and rel and fling)
        if ok:
            s0, u0 = rel["offset"], rel["velocity"]
            q = 1 - s0 * k / u0
            expected_v, expected_t = -(u0 - s0 * k), rel["time"] + math.log(q) / k
            speed = 200 / 0.1 / scale
        check(f"{label}: a list fling that reaches the list's top hands its velocity there to the card (fling event)",
              ok and abs(s0 - (start - 200 / scale)) < 1e-9 and abs(-u0 - speed) <= 0.02 * speed
              and abs(fling["velocity"] - expected_v) <= 1e-9 * speed and abs(fling["time"] - expected_t) <= 1e-9
              and fling["answer"]["velocity"] == fling["velocity"] and lst["offset"] == 0,
              f"list released at {rel and rel['offset']} pt (from {start}) at {rel and -rel['velocity']:.1f} pt/s toward its top; "
              f"reached it {(fling['time'] - rel['time']) if ok else None:.4f} s later at {fling and fling['velocity']:.4f} pt/s "
              f"(closed form {expected_v if ok else None:.4f}); sheetd took {fling and fling['answer'] and fling['answer']['velocity']}"
              if ok else f"list {lst}")
        # (the fling's pan event is a sample as every event is: sheet-client.js's fling() counts it)
        check(f"{label}: the card takes the list's momentum from half to tip, predicted: zero mismatches",
              ok and fling["answer"]["snap"] == "tip" and snap["detent"] == "tip" and snap["final"] == snap["detents"]["tip"]
              and c["constant"] == snap["final"] and stats.get("releases") == 1 and clean(stats),
              f"sheetd {snap['detent']} {snap['final']}, drawn {c['constant']}; {counters(stats)}")

        reset(policy="lift", mode="fixed", rows=80, detent="tip", handoff=True)
        x, y = js("return layoutDemo.headerPoint()")
        pointer_gesture(cdp, "mouse", x, y, 0, -680, 27 / latency.HZ)
        done = wait_for(lambda: js("const l = layoutDemo.list(); return (arguments[0] ? !l.moving : l.offset > 0) && l.handedIn.length > 0"
                                   " && layoutDemo.idle() ? l : null", to_rest), slow + 10)
        lst = done or js("return layoutDemo.list()")
        c = card()
        snap = server(c["session"])
        answer = js("const r = layoutDemo.state.last; return r && {phase: r.phase, scrollFling: r.scrollFling ?? null, snap: r.snap?.detent ?? null, velocity: r.velocity}")
        handed = (answer or {}).get("scrollFling")
        taken = (lst["handedIn"] or [None])[0]
        stats = c["stats"]
        ok = bool(done and handed and taken)
        rest = handed["velocity"] / k if ok else None  # the list from its top at −v: s(∞) = −u0/K
        check(f"{label}: a card flung up past full hands its velocity to the list (scrollFling), which scrolls on",
              ok and handed["velocity"] < 0 and len(lst["handedIn"]) == 1 and taken["time"] == handed["time"]
              and taken["velocity"] == handed["velocity"] and abs(lst["scrollTop"] - lst["offset"] * scale) <= 1
              and (abs(lst["offset"] - min(rest, lst["maxOffset"])) <= 1e-6 if to_rest else 0 < lst["offset"] <= rest),
              (f"released at {answer['velocity']:.1f} pt/s → {answer['snap']}; sheetd hands {handed['velocity']:.4f} pt/s at "
               f"t {handed['time']:.6f}, the page took {taken['velocity']:.4f} at {taken['time']:.6f}; the list "
               + (f"came to rest at {lst['offset']:.3f} pt (closed form {rest:.3f})" if to_rest else f"scrolls on ({lst['offset']:.3f} pt of {rest:.3f})")
               + f", scrollTop {lst['scrollTop']} px") if ok else f"answer {answer}, list {lst}")
        check(f"{label}: the card rests at full, its release and hand-off predicted: zero mismatches",
              ok and snap["detent"] == "full" and c["constant"] == snap["final"] and clean(stats) and stats.get("releases") == 1,
              f"sheetd {snap['detent']} {snap['final']}, drawn {c['constant']}; {counters(stats)}")

    try:
        for rtt in rtts:
            label = f"layout page +{rtt} ms"
            driver.get(f"{proxies[rtt].url}layout.html")
            if not check(f"{label}: loads, session created", wait_for(lambda: js("return document.body.dataset.ready === '1'"), 60)):
                continue
            slow = 30 + rtt / 1000 * 20

            # -- the keyboard (lift): a card resting at half sits exactly the inset higher, and returns on blur
            reset(policy="lift", mode="fixed", detent="half")
            c0 = card()
            half = server(c0["session"])["detents"]["half"]
            # a real text field: focus brings the keyboard up
            up = after_layout(lambda: driver.find_element(By.ID, "field").click(), slow) and card()
            snap_up = server(c0["session"])
            up = up and drawn_at_rest(up, snap_up["final"], slow)
            check(f"{label}: keyboard up under lift: the card at half sits exactly the inset higher",
                  up and up["constant"] == half - KEYBOARD_PT and abs(up["top"] - up["expected"]) < 0.01
                  and snap_up["detent"] == "half" and snap_up["final"] == half - KEYBOARD_PT
                  and snap_up["keyboardInset"] == KEYBOARD_PT,
                  f"half {half} → drawn {up and up['constant']} (top {up and round(up['top'], 2)} px, expected {up and round(up['expected'], 2)}); "
                  f"sheetd {snap_up['detent']} {snap_up['final']}, inset {snap_up.get('keyboardInset')}")
            down = after_layout(lambda: js("document.activeElement.blur()"), slow) and card()  # blur: the keyboard goes
            snap_down = server(c0["session"])
            down = down and drawn_at_rest(down, snap_down["final"], slow)
            check(f"{label}: on blur the card returns to half",
                  down and down["constant"] == half and abs(down["top"] - down["expected"]) < 0.01
                  and snap_down["detent"] == "half" and snap_down["final"] == half and snap_down["keyboardInset"] == 0,
                  f"drawn {down and down['constant']}, sheetd {snap_down['detent']} {snap_down['final']}")
            stats = card()["stats"]
            check(f"{label}: keyboard: both moves predicted, zero mismatches", stats.get("layouts") == 2 and clean(stats), counters(stats))

            # -- extend: to the top-most and back to the detent it left
            reset(policy="extend", mode="fixed", detent="half")
            up = after_layout(lambda: driver.find_element(By.ID, "field").click(), slow) and card()
            down = after_layout(lambda: js("document.activeElement.blur()"), slow) and card()
            stats = card()["stats"]
            check(f"{label}: keyboard under extend: to full and back to half, zero mismatches",
                  up and down and up["constant"] == 18 and down["constant"] == half and clean(stats) and stats.get("layouts") == 2,
                  f"{up and up['constant']} → {down and down['constant']}; {counters(stats)}")

            # -- a rotation mid-drag keeps the card under the finger
            reset(policy="lift", mode="fixed", detent="half")
            x, y = js("return layoutDemo.headerPoint()")
            press = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
            press.pointer_action.move_to_location(x, y).pointer_down()
            for i in range(1, 7):
                press.pointer_action.move_to_location(x, y - 20 * i)
            press.perform()
            wait_for(lambda: js("return layoutDemo.session.at().motion === 'drag' && layoutDemo.session.stats.inFlight === 0 && layoutDemo.session._queued === null"), slow)
            before = js("return {c: layoutDemo.session.at().constant, revision: layoutDemo.session.revision}")
            js("layoutDemo.rotate()")
            rotated = wait_for(lambda: js("const s = layoutDemo.session; return s.revision > arguments[0] ? {c: s.at().constant, motion: s.at().motion,"
                                          " height: s.layoutState.geometry.height} : null", before["revision"]), slow)
            check(f"{label}: a rotation mid-drag keeps the card under the finger",
                  bool(rotated) and rotated["motion"] == "drag" and rotated["height"] == 390 and abs(rotated["c"] - before["c"]) <= 1e-9,
                  f"constant {before['c']} → {rotated and rotated['c']} on the new geometry {rotated and rotated['height']}")
            more = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
            for i in range(1, 4):
                more.pointer_action.move_to_location(x, y - 120 - 10 * i)
            more.perform()
            moved = js("return layoutDemo.session.at().constant")
            time.sleep(0.25)  # hold still: the release is decided by position
            up_action = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
            up_action.pointer_action.pointer_up()
            up_action.perform()
            rest = idle(slow) and card()
            snap = server(rest["session"]) if rest else {}
            stats = card()["stats"]
            check(f"{label}: after the rotation the drag goes on, releases, and rests where sheetd has it",
                  bool(rest) and moved < rotated["c"] and snap.get("final") == rest["constant"]
                  and clean(stats) and stats.get("layouts", 0) >= 1 and stats.get("predictions", 0) > 0 and stats.get("releases", 0) >= 1,
                  f"{rotated and round(rotated['c'], 2)} → {round(moved, 2)} → {snap.get('detent')} {snap.get('final')}; {counters(stats)}")
            js("layoutDemo.rotate()")
            idle(slow)

            # -- content-fit detents follow a content element whose height changes
            reset(policy="lift", mode="fit", rows=4, detent="fit")
            ok, details = True, []
            for rows in (8, 2, 6):
                revision = card()["revision"]
                js("layoutDemo.setRows(arguments[0])", rows)
                wait_for(lambda: card()["revision"] > revision, slow)
                c = idle(slow) and card()
                content = js("return document.querySelector('#content').getBoundingClientRect().height")
                snap = server(c["session"]) if c else {}
                H = 844 - 47
                expected = H - (content + 96)
                good = bool(c) and c["constant"] == expected and snap.get("detents", {}).get("fit") == expected and snap.get("final") == expected \
                    and snap.get("contentHeight") == content and abs(c["top"] - c["expected"]) < 0.01
                ok = ok and good
                details.append(f"{rows} rows: content {content} pt → fit {snap.get('detents', {}).get('fit')} (H − (content + 96) = {expected}), drawn {c and c['constant']}")
            stats = card()["stats"]
            check(f"{label}: content-fit detents follow the content element's height", ok and clean(stats) and stats.get("layouts", 0) >= 3,
                  "; ".join(details) + f"; {counters(stats)}")

            # -- a contentAnchor detent: the card stops with the Buy button just above the bottom safe edge,
            #    follows the button when it moves (the anchor re-resolved by name) and stays when rows below it change
            reset(policy="lift", mode="anchor", rows=3, detent="buy")
            ok, details = True, []
            for step, action in (("created", None), ("Buy ↓", "return layoutDemo.moveBuy(1)"), ("Buy ↓", "return layoutDemo.moveBuy(1)"),
                                 ("Buy ↑", "return layoutDemo.moveBuy(-1)"), ("rows below 3 → 7", "layoutDemo.setRows(7)")):
                revision = card()["revision"]
                if action:
                    js(action)
                    wait_for(lambda: card()["revision"] > revision, slow)
                c = idle(slow) and card()
                buy = js("return layoutDemo.buy()")
                snap = server(c["session"]) if c else {}
                spec = buy["detents"]["buy"]
                H = 844 - 47
                expected = H - (spec["contentAnchor"] + spec["offset"])
                good = bool(c) and snap.get("detent") == "buy" and snap.get("detents", {}).get("buy") == expected and snap.get("final") == expected \
                    and c["constant"] == expected and abs(buy["bottom"] - buy["safeBottom"]) < 0.5 and "buy" not in snap.get("unreachable", [])
                ok = ok and good
                details.append(f"{step}: anchor {spec['contentAnchor']:.1f} + offset {spec['offset']:.1f} → buy {snap.get('detents', {}).get('buy')} "
                               f"(H − (anchor + offset) = {expected:.2f}), drawn {c and c['constant']}, button bottom {buy['bottom']:.2f} px, "
                               f"safe edge {buy['safeBottom']:.2f} px")
            stats = card()["stats"]
            check(f"{label}: a contentAnchor detent stops the card with the Buy button visible, and follows the button",
                  ok and clean(stats) and stats.get("layoutsUnpredicted", 0) >= 3, "; ".join(details) + f"; {counters(stats)}")

            # -- momentum across the list's boundary (the hand-off on: contentScrollsAt everywhere, momentumHandOff)
            list_hand_off(label, slow, to_rest=rtt == rtts[0])

            # -- sheet-client.js's layout law against sheetd, in Chromium (the table of layout_law_check.js)
            if rtt == rtts[0]:
                driver.set_script_timeout(300)
                source = open(LAYOUT_LAW_CHECK, encoding="utf-8").read()
                out = driver.execute_async_script(
                    source + "\nconst done = arguments[arguments.length - 1];"
                    "layoutLawCheck(arguments[0]).then(done, (e) => done({error: String(e && e.stack || e)}));", API)
                if check("layout law in JavaScript: the check ran", out and "error" not in out, (out or {}).get("error", "")[:300]):
                    check("layout law in JavaScript: every layout change predicted as sheetd answered it (detents, laws, move, segment)",
                          not out["failures"] and out["layoutMismatches"] == 0 and out["mismatches"] == 0 and out["releaseMismatches"] == 0
                          and out["layouts"] > 200 and out["underFinger"] > 20 and out["maxFingerError"] <= 1e-9,
                          f"{out['scenarios']} scenarios, {out['layouts']} layout changes ({out['unpredicted']} not predicted), "
                          f"{out['underFinger']} mid-drag (card moved ≤ {out['maxFingerError']:.2g} pt), {out['predictions']} drag predictions, "
                          f"{out['releases']} releases; mismatches {out['layoutMismatches']}/{out['mismatches']}/{out['releaseMismatches']}; "
                          + "; ".join(out["failures"][:3]))
            errors = console_errors(driver)
            check(f"{label}: no console errors", not errors, "; ".join(e["message"] for e in errors)[:300])
    finally:
        cdp.close()
        driver.quit()
        for p in proxies.values():
            p.stop()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def second_origin_server():
    """A static server on another port, serving a copy of the page (nothing else: no sheetd)."""
    root = tempfile.mkdtemp(prefix="sheetd-origin-")
    shutil.copy(PAGE, os.path.join(root, "index.html"))
    with open(os.path.join(root, "prototype.html"), "w", encoding="utf-8") as f:
        f.write(PROTOTYPE.replace("http://127.0.0.1:8080/", API))
    with open(os.path.join(root, "prototype-2.html"), "w", encoding="utf-8") as f:
        f.write(PREDICTING_PROTOTYPE.replace("http://127.0.0.1:8080/", API))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, root


def demo_part():
    """Sections 1–4: the demo page as sheetd serves it, from a second origin, the README's prototypes,
    a dark-mode picture; in one Chromium of its own."""
    driver = new_driver()
    cdp = latency.CDP(driver)  # input events with explicit timestamps, on a DevTools socket of our own
    server = None
    try:
        # ---- 1. the page as sheetd serves it
        if load(driver, API, "same origin"):
            presets = driver.execute_script("return document.querySelectorAll('#presets input').length")
            check("preset picker lists GET /presets", presets == len(get_json("presets")["presets"]), f"{presets} presets")
            demo_is_the_element(driver)
            release_map(driver, "same origin")
            before, mid, after = scripted_drag(driver, -160, "same origin", "mid-drag.png")
            check("a scripted pointer drag moves the card", mid["state"] == "dragging" and mid["constant"] < before["constant"] - 100,
                  f"constant {before['constant']:.1f} → {mid['constant']:.1f} mid-drag")
            driver.save_screenshot(os.path.join(ARTIFACTS, "after-snap.png"))
            check("after release the card settles, frames received", after["state"] in ("resting", "hidden") and after["frames"] > before["frames"],
                  f"{after['detent']} after {after['frames'] - before['frames']} frames")
            agrees_with_server(driver, "after the drag")
            result = last_result(driver)
            check("the result panel shows the release and snap.reason", result.get("phase") == "ended" and bool((result.get("snap") or {}).get("reason")),
                  (result.get("snap") or {}).get("reason", ""))
            flicks = [
                # Dispatched in real time, 120 Hz.
                ("a touch flick down", True),
                # The same swipe (the same timestamps) dispatched all at once, as a loaded machine may
                # deliver it: the moves reach the page coalesced into one pointermove, and the page
                # sends each (sending only that one, sheetd would see one sample: velocity 0).
                ("a touch flick down delivered in one burst", False),
            ]
            for label, paced in flicks:
                before, after, expected, (sent, dispatched) = flick(driver, cdp, 260, paced=paced)
                result = last_result(driver)
                velocity = result.get("velocity") or 0
                # sheetd's estimate is the speed the timestamps sent give (to their 0.1 ms
                # resolution), whenever the events were delivered
                check(f"{label}: velocity estimated by sheetd from the events' timestamps",
                      result.get("velocitySource") == "estimated" and abs(velocity - expected) <= 0.02 * expected,
                      f"velocity {velocity:.0f} pt/s (the timestamps give {expected:.0f}) → {after['detent']}; "
                      f"{sent} pan events sent for {dispatched} touch events")
                agrees_with_server(driver, f"after {label}")
                if paced:  # back to the top-most detent for the next
                    s0 = phone_state(driver)
                    driver.find_element(By.CSS_SELECTOR, "#detent-buttons [data-detent]").click()
                    wait_settled(driver, s0["settled"])
            keyboard_and_dimmer(driver)
            axe_at_each_detent(driver)
            reduced_motion(driver)
            release_law_in_javascript(driver)
            steps_and_reduced_motion(driver)
            plotted = driver.execute_script("return document.querySelector('#plot-caption').textContent")
            check("the plot shows the last gesture", bool(plotted), plotted)
            errors = console_errors(driver)
            check("same origin: no console errors", not errors, "; ".join(e["message"] for e in errors)[:300])

        # ---- 2. the same page from a second origin: CORS (module import, preflights, EventSource)
        server, root = second_origin_server()
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        log_mark = os.path.getsize(LOG) if LOG and os.path.exists(LOG) else 0
        if load(driver, f"{origin}/index.html?api={API}", f"second origin {origin}"):
            release_map(driver, "second origin")
            before, mid, after = scripted_drag(driver, -160, "second origin")
            check("second origin: the drag moves the card and it settles", mid["constant"] < before["constant"] - 100 and after["frames"] > before["frames"],
                  f"{before['detent']} → {after['detent']}, {after['frames'] - before['frames']} frames")
            agrees_with_server(driver, "second origin")
            session = phone_state(driver)["session"]
            # log_mark is a byte offset (getsize): slice the bytes, then decode ("→" is 3 bytes)
            log = open(LOG, "rb").read()[log_mark:].decode("utf-8", errors="replace") if LOG else ""
            preflights = sorted(set(re.findall(r"OPTIONS (/[^\s?]+)\S* → 204", log)))  # the path, without its query (pan?frames=…)
            wanted = [f"/sessions/{session}", f"/sessions/{session}/pan", "/simulate"]
            check("second origin: CORS preflights answered (PUT session, pan, simulate)", all(p in preflights for p in wanted),
                  ", ".join(preflights))
            driver.save_screenshot(os.path.join(ARTIFACTS, "second-origin.png"))
            errors = console_errors(driver)
            check("second origin: no console errors", not errors, "; ".join(e["message"] for e in errors)[:300])

        # ---- 3. the README's prototypes on the second origin: the first draws each answer; the
        # second predicts from the drag law and plays the frames of sheetd's answer.
        placed, moved, logs, snap, got, expected = prototype_drag(driver, f"{origin}/prototype.html", "proto-1", follows=False)
        if check("README prototype: imports sheet-client.js cross-origin and creates its session", bool(placed), placed or "no transform"):
            check("README prototype: drag, release, the card settles at the engine's detent",
                  bool(logs) and snap["detent"] in logs[0]["message"] and abs(got - expected) < 0.01,
                  f"{snap['detent']}: translateY {got:.2f} (expected {expected:.2f})")
        placed, moved, logs, snap, got, expected = prototype_drag(driver, f"{origin}/prototype-2.html", "proto-2", follows=True)
        if check("README predicting prototype: creates its session and places the card", bool(placed), placed or "no transform"):
            stats = json.loads(re.search(r"(\{.*\})", logs[0]["message"].replace('\\"', '"')).group(1)) if logs else {}
            check("README predicting prototype: the card followed the pointer before the release", abs(moved + 240) < 1.5,
                  f"card top moved {moved:.1f} px for a pointer moved −240 px")
            check("README predicting prototype: the card settles at the engine's detent, the release predicted, zero mismatches",
                  bool(logs) and snap["detent"] in logs[0]["message"] and abs(got - expected) < 0.01 and stats.get("mismatches") == 0
                  and stats.get("predictions", 0) > 0 and stats.get("releases", 0) > 0 and stats.get("releaseMismatches") == 0,
                  f"{snap['detent']}: translateY {got:.2f} (expected {expected:.2f}); stats {stats}")

        # ---- 4. a dark-mode picture for people to look at (no check)
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        driver.get(API)
        wait_for(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), 15)
        wait_for(lambda: driver.execute_script("return document.querySelector('#map').dataset.done === '1'"), 30, 0.1)
        driver.save_screenshot(os.path.join(ARTIFACTS, "dark.png"))
    except Exception:
        try:
            driver.save_screenshot(os.path.join(ARTIFACTS, "failure.png"))
        except Exception:
            pass
        raise
    finally:
        cdp.close()
        driver.quit()
        if server:
            server.shutdown()


# The parts, each in a Chromium of its own (IntegrationTests/browser-test runs them side by side, one
# process each, and prints their outputs in this order): the demo page (sections 1–4), the demo
# through delay proxies at +0 and +200 ms (5: prediction, batching, the same snaps), the layout page
# (6: keyboard, rotation, content-fit, momentum both ways) and the edges page, then in the same
# browser the stacks page (7: every edge lands where the bottom sheet lands, the non-modal map, reduced
# motion, recession, covered, cascade).
PARTS = {"demo": demo_part, "proxies": lambda: through_delay_proxies(), "layout": lambda: layout_page(),
         "edges": lambda: edges_page()}


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description="sheetd's web demo pages in Chromium")
    parser.add_argument("--part", choices=list(PARTS), action="append",
                        help="run this part (repeatable; default: every part, one after another)")
    args = parser.parse_args(argv)
    os.makedirs(ARTIFACTS, exist_ok=True)
    started = time.monotonic()
    for name in args.part or list(PARTS):
        try:
            PARTS[name]()
        except Exception:
            traceback.print_exc()
            check(f"{name}: the part ran to the end", False, "exception (above)")
    label = "browser-test" if not args.part else f"browser-test {'+'.join(args.part)}"
    print(f"screenshots: {os.path.abspath(ARTIFACTS)} · {time.monotonic() - started:.1f} s in the browser")
    print(f"{label}: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
