#!/usr/bin/env python3
"""Browser test of sheetd's web demo (run by scripts/browser-test, which builds and starts sheetd).

Drives Debian's headless Chromium through its chromedriver with a pinned Selenium (never Selenium
Manager: nothing is downloaded). Environment: SHEETD_URL (http://127.0.0.1:PORT/), SHEETD_LOG
(sheetd's debug log, to see the CORS preflights), ARTIFACTS (folder for screenshots).
Prints one line per check and closes with `browser-test: N passed, M failed`.
"""

import functools
import http.server
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

os.environ["SE_OFFLINE"] = "true"  # Selenium Manager, if ever consulted, must not download
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

# The README's prototype, verbatim but for the server's address: a page on another origin that
# imports sheet-client.js from sheetd and drives a card with it.
PROTOTYPE = """<!doctype html>
<div id="card" style="position:fixed;inset:0;background:#fff;border-radius:16px 16px 0 0;touch-action:none"></div>
<script type="module">
import { SheetClient } from "http://127.0.0.1:8080/sheet-client.js";
const sheet = await new SheetClient().createSession({ preset: "fluid", clock: "client", initialDetent: "half" }, "proto-1");
const card = document.getElementById("card"), top = sheet.snapshot.geometry.safeAreaTop;
const place = (c) => (card.style.transform = `translateY(${top + c}px)`); // constraint "top": card top = safe area + constant
place(sheet.snapshot.constant);
sheet.frames({ onFrame: (f) => place(f.constant) }); // every settle animation, 60 fps
const at = (e) => ({ time: e.timeStamp / 1000 }); // the client clock, in seconds
let y0 = null;
card.onpointerdown = (e) => { y0 = e.clientY; card.setPointerCapture(e.pointerId); sheet.began(at(e)); };
card.onpointermove = async (e) => { if (y0 === null) return; const r = await sheet.changed(e.clientY - y0, at(e)); if (r.state === "dragging") place(r.constant); };
card.onpointerup = async (e) => { const r = await sheet.ended(e.clientY - y0, at(e)); y0 = null; console.log("snap", r.snap.detent, r.snap.reason); };
</script>
"""


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
    else:
        failed += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)
    return ok


def wait_for(fn, timeout=10.0, interval=0.05):
    """Polls fn until it returns a truthy value; returns it, or the last value at the timeout."""
    deadline = time.monotonic() + timeout
    value = fn()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = fn()
    return value


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


def wait_settled(driver, after, timeout=8.0):
    """Waits for a settled event beyond `after` and a resting/hidden card."""
    return wait_for(lambda: (lambda s: s if s["settled"] > after and s["state"] in ("resting", "hidden") else None)(
        phone_state(driver)), timeout)


def load(driver, url, label):
    t0 = time.monotonic()
    driver.get(url)
    ready = wait_for(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), 15)
    check(f"{label}: page loads, session created, frame stream open", ready,
          f"{time.monotonic() - t0:.2f} s" if ready else "document.body.dataset.ready never became 1")
    return ready


def grab_point(driver):
    """The card's grabber area, in viewport pixels."""
    return driver.execute_script(
        "const r = document.querySelector('#card').getBoundingClientRect();"
        "return [Math.round(r.left + r.width / 2), Math.round(r.top + 14)];")


def last_result(driver):
    return json.loads(driver.execute_script("return document.querySelector('#json').textContent"))


def scripted_drag(driver, dy_px, label, screenshot=None, pointer="mouse"):
    """Presses on the grabber, moves by dy_px in steps (pausing: velocity estimate ~0), takes a
    screenshot mid-drag, then releases. Returns (state before, state mid-drag, state after)."""
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
        phone_state(driver)), 3) or phone_state(driver)
    time.sleep(0.25)  # hold still: the release is decided by position
    if screenshot:
        driver.save_screenshot(os.path.join(ARTIFACTS, screenshot))
    mid = phone_state(driver)
    release = ActionBuilder(driver, mouse=PointerInput(kind, pointer), duration=40)
    release.pointer_action.pointer_up()
    release.perform()
    after = wait_settled(driver, before["settled"]) or phone_state(driver)
    return before, mid, after


def flick(driver, dy_px, pointer="touch"):
    """A quick swipe released while moving: sheetd estimates the velocity from the last 0.1 s."""
    x, y = grab_point(driver)
    before = phone_state(driver)
    kind = interaction.POINTER_TOUCH if pointer == "touch" else interaction.POINTER_MOUSE
    actions = ActionBuilder(driver, mouse=PointerInput(kind, pointer), duration=16)
    actions.pointer_action.move_to_location(x, y).pointer_down()
    for i in range(1, 7):
        actions.pointer_action.move_to_location(x, y + round(dy_px * i / 6))
    actions.pointer_action.pointer_up()
    actions.perform()
    after = wait_settled(driver, before["settled"]) or phone_state(driver)
    return before, after


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
    card = driver.find_element(By.ID, "card")
    driver.execute_script("arguments[0].focus()", card)
    focused = driver.execute_script("return document.activeElement.id === 'card' && getComputedStyle(document.activeElement).boxShadow !== 'none'")
    start = phone_state(driver)
    ActionChains(driver).send_keys(Keys.HOME).perform()  # the top-most detent, a known start
    s0 = wait_settled(driver, start["settled"]) or phone_state(driver)
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
    check("focus is visible on the card", bool(focused))
    alpha = float(dataset(driver, "alpha"))
    driver.execute_script("window.scrollTo(0, 0)")
    x, y = driver.execute_script(  # a point on the dimmer above the card
        "const r = document.querySelector('#dimmer').getBoundingClientRect();"
        "return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height * 0.2)];")
    tap = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"), duration=40)
    tap.pointer_action.move_to_location(x, y).pointer_down().pointer_up()
    tap.perform()
    s5 = wait_settled(driver, s4["settled"]) or phone_state(driver)
    check("tapping the dimmer dismisses", alpha > 0 and s5["state"] == "hidden", f"alpha {alpha:.2f}, state {s5['state']}")


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
    done = wait_for(lambda: driver.execute_script("return document.querySelector('#map').dataset.done === '1'"), 30, 0.1)
    cells = dataset(driver, "cells", "#map")
    check(f"{label}: release map computed with POST /simulate", done and cells == "960", f"{cells} cells")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def second_origin_server():
    """A static server on another port, serving a copy of the page (nothing else: no sheetd)."""
    root = tempfile.mkdtemp(prefix="sheetd-origin-")
    shutil.copy(PAGE, os.path.join(root, "index.html"))
    with open(os.path.join(root, "prototype.html"), "w", encoding="utf-8") as f:
        f.write(PROTOTYPE.replace("http://127.0.0.1:8080/", API))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, root


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    started = time.monotonic()
    driver = new_driver()
    server = None
    try:
        # ---- 1. the page as sheetd serves it
        if load(driver, API, "same origin"):
            presets = driver.execute_script("return document.querySelectorAll('#presets input').length")
            check("preset picker lists GET /presets", presets == len(get_json("presets")["presets"]), f"{presets} presets")
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
            before, after = flick(driver, 260, pointer="touch")
            result = last_result(driver)
            check("a touch flick down: velocity estimated by sheetd", result.get("velocitySource") == "estimated" and result.get("velocity", 0) > 0,
                  f"velocity {result.get('velocity', 0):.0f} pt/s → {after['detent']}")
            agrees_with_server(driver, "after the flick")
            keyboard_and_dimmer(driver)
            reduced_motion(driver)
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
            log = open(LOG, encoding="utf-8", errors="replace").read()[log_mark:] if LOG else ""
            preflights = sorted(set(re.findall(r"OPTIONS (/\S+) → 204", log)))
            wanted = [f"/sessions/{session}", f"/sessions/{session}/pan", "/simulate"]
            check("second origin: CORS preflights answered (PUT session, pan, simulate)", all(p in preflights for p in wanted),
                  ", ".join(preflights))
            driver.save_screenshot(os.path.join(ARTIFACTS, "second-origin.png"))
            errors = console_errors(driver)
            check("second origin: no console errors", not errors, "; ".join(e["message"] for e in errors)[:300])

        # ---- 3. the README's prototype on the second origin
        driver.get_log("browser")  # drop what came before
        driver.get(f"{origin}/prototype.html")
        placed = wait_for(lambda: driver.execute_script("return document.getElementById('card').style.transform"), 10)
        if check("README prototype: imports sheet-client.js cross-origin and creates its session", bool(placed), placed or "no transform"):
            x = driver.execute_script("return Math.round(innerWidth / 2)")
            y = driver.execute_script("return Math.round(document.getElementById('card').getBoundingClientRect().top + 20)")
            drag = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
            drag.pointer_action.move_to_location(x, y).pointer_down()
            for i in range(1, 7):
                drag.pointer_action.move_to_location(x, y - 40 * i)
            drag.perform()
            time.sleep(0.2)
            up = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=40)
            up.pointer_action.pointer_up()
            up.perform()
            logs = wait_for(lambda: [e for e in driver.get_log("browser") if "snap" in e["message"]], 5)
            snap = get_json("sessions/proto-1")
            time.sleep(0.8)  # the settle animation, streamed
            transform = driver.execute_script("return document.getElementById('card').style.transform")
            expected = snap["geometry"]["safeAreaTop"] + snap["detents"][snap["detent"]]
            got = float(re.search(r"translateY\(([-0-9.e]+)px\)", transform).group(1))
            check("README prototype: drag, release, the card settles at the engine's detent",
                  bool(logs) and snap["detent"] in logs[0]["message"] and abs(got - expected) < 0.01,
                  f"{snap['detent']}: translateY {got:.2f} (expected {expected:.2f})")

        # ---- 4. a dark-mode picture for people to look at (no check)
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        driver.get(API)
        wait_for(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), 15)
        wait_for(lambda: driver.execute_script("return document.querySelector('#map').dataset.done === '1'"), 30, 0.1)
        driver.save_screenshot(os.path.join(ARTIFACTS, "dark.png"))
    except Exception:
        traceback.print_exc()
        check("the test ran to the end", False, "exception (above)")
        try:
            driver.save_screenshot(os.path.join(ARTIFACTS, "failure.png"))
        except Exception:
            pass
    finally:
        driver.quit()
        if server:
            server.shutdown()
    print(f"screenshots: {os.path.abspath(ARTIFACTS)} · {time.monotonic() - started:.1f} s in the browser")
    print(f"browser-test: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
