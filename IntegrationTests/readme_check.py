#!/usr/bin/env python3
"""The README's curl sessions, as printed, against a real sheetd (run by IntegrationTests/readme-check).

Each block between the README's markers runs with localhost:8080 replaced by the test server, every
curl made strict (`-fsS`, bounded by `-m`): the curl session (each command must succeed), the
prediction session (its answers must say what the README says of them), the streaming session (its
first line in the background must print a whole animation while the others drive it), and the
Operating example (a sheetd started with the block's flags; the id echoed and the README's access line
found in its log). Closes with `readme-check: N passed, 0 failed`; exits 1 at the first failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

from sheetkit.harness import ROOT, Sheetd  # noqa: E402

README = open(os.path.join(ROOT, "README.md")).read()


def fail(message: str, output: str = "") -> None:
    print(f"readme-check: {message}", file=sys.stderr)
    if output:
        print(output, file=sys.stderr)
    sys.exit(1)


def block(name: str) -> str:
    """The README's text between <!-- name --> and <!-- /name -->."""
    found = re.search(rf"<!-- {name} -->(.*?)<!-- /{name} -->", README, re.S)
    return found.group(1) if found else ""


def curls(name: str) -> list[str]:
    return [line for line in block(name).splitlines() if line.startswith("curl ")]


def strict(line: str, port: int, seconds: int = 30) -> str:
    """The README's command against the test server: fail on an HTTP error, quiet but show errors.
    (`seconds` only bounds a failing run: each command takes milliseconds.)"""
    return line.replace("localhost:8080", f"127.0.0.1:{port}").replace("curl ", f"curl -fsS -m {seconds} ", 1)


def wait_streams_open(port: int, reader: subprocess.Popen, timeout: float = 30) -> bool:
    """Polls sheetd's /metrics until a frame stream is open, or the reader has already ended (its
    output then tells); whether either happened within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and reader.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                m = re.search(r"^sheetd_streams_open (\S+)$", r.read().decode(), re.M)
            if m and float(m.group(1)) >= 1:
                return True
        except OSError:
            pass
        time.sleep(0.02)
    return reader.poll() is not None


def wait_at_rest(port: int, session: str, timeout: float = 30) -> bool:
    """Polls the session until its state is not `animating`; whether that happened within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/sessions/{session}", timeout=5) as r:
            if json.load(r)["state"] != "animating":
                return True
        time.sleep(0.02)
    return False


def run(line: str, port: int) -> str:
    done = subprocess.run(["bash", "-c", strict(line, port)], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"failed: {line}", done.stdout + done.stderr)
    return done.stdout


def main() -> int:
    n = 0
    with Sheetd(flags=["--log-level", "warning"]) as sheetd:
        port = sheetd.port
        session = curls("curl-session")
        if not session:
            fail("no curl session found in README.md")
        for line in session:
            run(line, port)
            n += 1

        # A batch that begins a drag answers with its segment and the law; a batch that releases
        # it, with `?frames=`, answers the snap and the frames of the animation.
        prediction = curls("prediction-session")
        if len(prediction) != 3:
            fail("the prediction session is not 3 commands")
        created, began, released = (json.loads(run(line, port)) for line in prediction)
        # What the README says of these answers.
        assert created["dragLaw"]["lower"] == 18 and created["dragLaw"]["rubberBand"]["coefficient"] == 0.55, created["dragLaw"]
        assert began["constant"] == 373.5 and began["drag"]["start"] == 398.5 and began["drag"]["base"] == 0, began
        assert released["snap"]["detent"] == "full" and round(released["velocity"]) == -1909, released
        assert len(released["frames"]) == 19 and released["frames"][-1]["constant"] == 18, len(released["frames"])
        n += 3

        # The layout block: a content-fit detent, the keyboard lifting it with its curve, then the
        # keyboard gone and the content grown, each answer as the README describes it.
        layout = curls("layout-session")
        if len(layout) != 3:
            fail("the layout session is not 3 commands")
        created, up, down = (json.loads(run(line, port)) for line in layout)
        assert created["detents"] == {"fit": 457, "tip": 728, "hidden": 797}, created["detents"]
        assert created["unreachable"] == ["full"] and created["revision"] == 0, created
        assert up["snap"]["detent"] == "fit" and up["animation"]["to"] == 166, up
        assert up["animation"]["curve"] == "easeOut" and up["animation"]["duration"] == 0.25, up["animation"]
        assert up["revision"] == 1 and up["detents"]["fit"] == 166, up
        assert down["animation"]["to"] == 337 and down["animation"]["curve"] == "spring", down
        assert down["revision"] == 2 and down["contentHeight"] == 420, down
        n += 3

        # The side drawer: a left sheet of width 844 is the standard bottom sheet along x.
        drawer = curls("side-drawer")
        if len(drawer) != 3:
            fail("the side drawer is not 3 commands")
        created, began, ended = (json.loads(run(line, port)) for line in drawer)
        assert created["detents"] == {"full": 18, "half": 398.5, "tip": 728, "hidden": 797}, created["detents"]
        law = created["dragLaw"]
        assert (law["edge"], law["axis"], law["sign"]) == ("left", "x", -1), law
        assert began["state"] == "dragging", began
        assert ended["snap"]["detent"] == "hidden" and ended["animation"]["from"] == 698.5, ended
        assert ended["animation"]["to"] == 797, ended
        n += 3

        # The stack: the child covers its parent, which recedes by the child's law; a drag on the
        # covered parent is refused; the cascade closes both.
        stack = curls("stack-session")
        if len(stack) != 5:
            fail("the stack is not 5 commands")
        for line in stack[:3]:
            answer = json.loads(run(line, port))
        assert answer["coveredBy"] == "cart~pay", answer
        assert answer["transform"] == {"scale": 0.94, "lift": 10, "cornerRadius": 10, "alpha": 0.2}, answer
        assert "backdropTransform" in answer, answer
        refused = subprocess.run(
            stack[3].replace("localhost:8080", f"127.0.0.1:{port}").replace("curl ", "curl -sS -m 30 ", 1),
            shell=True, capture_output=True, text=True, check=True)
        assert json.loads(refused.stdout)["code"] == "covered", refused.stdout
        closed = json.loads(run(stack[4], port))
        assert closed["cascade"] == ["cart~pay"] and closed["snap"]["detent"] == "hidden", closed
        n += 5

        # The streaming block: its first line runs in the background, the others drive it. A person
        # types it seconds after the curl session's dismiss, when that animation has played out; a
        # `once` stream opened while it still plays would print the dismiss instead of the show.
        # So first wait, as they do, until the session says it is no longer animating.
        stream = curls("stream-session")
        if not wait_at_rest(port, "a1"):
            fail("session a1 was still animating 30 s after the curl session's dismiss")
        with tempfile.TemporaryFile("w+") as out:
            reader = subprocess.Popen(["bash", "-c", strict(stream[0], port, 60)], stdout=out)
            # The others once sheetd counts the stream open (it sends nothing before the animation).
            if not wait_streams_open(port, reader):
                reader.kill()
                fail("the stream never opened (sheetd_streams_open stayed 0 for 30 s)")
            for line in stream[1:]:
                subprocess.run(["bash", "-c", strict(line, port)], stdout=subprocess.DEVNULL, check=True)
            reader.wait()
            out.seek(0)
            printed = out.read()
        if reader.returncode != 0 or not re.search(r"^event: settled", printed, re.M):
            fail("the stream did not print a whole animation:", printed)
        frames = len(re.findall(r"^event: frame", printed, re.M))
        # The README's `id: 3:0`: the show is the session's third animation (release, dismiss, show),
        # and the stream prints it from its first frame.
        ids = re.findall(r"^id: (\d+):(\d+)$", printed, re.M)
        if not ids or ids[0] != ("3", "0") or {n for n, _ in ids} != {"3"}:
            fail("the stream did not print the show animation from `id: 3:0`:", printed)
        n += 1

    # The Operating example: a sheetd started as the block shows, the block's curl, the id echoed,
    # and the README's access line for it (from "request_id" to "status") found in the real log.
    operating = block("operating-session")
    flags = re.search(r"^ *sheetd (.*)", operating, re.M)
    request = re.search(r"^ *(curl .*)", operating, re.M)
    expected = re.search(r'"request_id":"checkout-7f3a".*"status":[0-9]+', README)
    if not (flags and request and expected):
        fail("the Operating example is incomplete")
    with tempfile.NamedTemporaryFile(suffix=".log") as log:
        operated = Sheetd(flags=flags.group(1).split(), log=log.name).start()
        try:
            subprocess.run(["curl", "-fsS", "-o", "/dev/null", "-X", "PUT", f"{operated.url}sessions/demo",
                            "-d", '{"initialDetent": "normal"}'], check=True)
            headers = subprocess.run(["bash", "-c", request.group(1).replace("localhost:8080", f"127.0.0.1:{operated.port}")],
                                     capture_output=True, text=True).stdout
        finally:
            operated.stop()
        written = open(log.name).read()
    if not re.search(r"^X-Request-Id: checkout-7f3a", headers.replace("\r", ""), re.M) or expected.group(0) not in written:
        fail("the Operating example does not match a run:", headers + written)
    n += 1
    print(f"readme-check: stream printed {frames} frames and settled")
    print(f"readme-check: {n} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
