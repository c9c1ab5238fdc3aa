#!/usr/bin/env python3
"""Generated clients, third-party SSE clients and the spec's live examples against a real sheetd.

Run by IntegrationTests/clients-test (which builds what this needs and installs the Python packages):

    clients_test.py --sheetd BIN [--swift-example BIN --swift-generator BIN --swift-build-log FILE]

- Python: openapi-python-client generates a client from openapi.yaml into a temporary folder
  (any warning fails), and Clients/python/session.py drives a whole session with it, comparing
  every typed answer encoded again with the raw JSON.
- Numbered events (`seq`) through each generated client: the typed request carries `seq`, the
  same request again is answered with the same bytes and `Sheetd-Replay: true` (typed in the Swift
  client), and a `seq` past the next one is the 409 `sequence-gap` problem, decoded with its
  `lastSeq` by the typed model, and the `Sheetd-Seq` header parameter alone numbers a request
  (`python_sequence` here; the Swift example's "seq" section).
- Swift: swift-openapi-generator's diagnostics for openapi.yaml must be empty (run directly, and
  in the example's build log), and Clients/swift's example (built by the caller with the build
  plugin) drives a whole session, with the same comparison.
- SSE: httpx-sse reads frame streams the way an EventSource does (reconnecting after `retry:`
  with Last-Event-ID): frames, resumption, and the stop (204), counting the connections.
- The examples of openapi.yaml that sheetd answers deterministically are what it answers.

Prints each check, and last `clients: N passed, M failed`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from httpx_sse import connect_sse

ROOT = Path(__file__).resolve().parent.parent
from sheetkit.harness import Sheetd  # noqa: E402
SPEC = ROOT / "openapi.yaml"
COUNTS = [0, 0]


def check(ok: bool, what: str, why: str = "") -> None:
    COUNTS[0 if ok else 1] += 1
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f": {why}"), flush=True)


def indented(text: str) -> str:
    """A tool's own output, indented so that its summary lines are not counted twice."""
    return "".join("    " + line + "\n" for line in text.splitlines())


def start_sheetd(binary: str) -> Sheetd:
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    try:
        return Sheetd(binary, ["--log-level", "info"], log=log.name).start()
    except RuntimeError as error:
        sys.exit(f"clients-test: sheetd did not start: {error}")


# --------------------------------------------------------------------------------------------
# Python: openapi-python-client


def python_client(base: str) -> None:
    generator = Path(sys.executable).parent / "openapi-python-client"
    with tempfile.TemporaryDirectory() as folder:
        run = subprocess.run(
            [str(generator), "generate", "--path", str(SPEC), "--output-path", f"{folder}/sheetd_client",
             "--meta", "none", "--config", str(ROOT / "Clients/python/config.yaml")],
            capture_output=True, text=True)
        output = (run.stdout + run.stderr).strip()
        # Its only line on success is "Generating <path>"; anything else is a warning or an error.
        extra = [line for line in output.splitlines() if line.strip() and not line.startswith("Generating ")]
        check(run.returncode == 0 and not extra,
              "openapi-python-client generates a client from openapi.yaml without a warning", "\n" + output[-3000:])
        if run.returncode != 0:
            return
        sys.path.insert(0, folder)
        spec = importlib.util.spec_from_file_location("session", ROOT / "Clients/python/session.py")
        session = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(session)
        passed, failed = session.run(base)
        COUNTS[0] += passed
        COUNTS[1] += failed
        python_sequence(base)
        sys.path.remove(folder)


def python_sequence(base: str) -> None:
    """Numbered events through the generated Python client's typed models (docs/HTTP.md, "Idempotent
    events: seq"): `seq` sent, the replay of a repeated request, the gap problem with `lastSeq`."""
    from sheetd_client import Client
    from sheetd_client import models as m
    from sheetd_client.api.sessions import create_session, delete_session, pan, show

    sent = []  # the bodies the client put on the wire
    fields = []  # and each request's Sheetd-Seq field (None: not sent)

    def keep(request):
        sent.append(json.loads(request.content or b"null"))
        fields.append(request.headers.get("sheetd-seq"))

    client = Client(base_url=base, raise_on_unexpected_status=True, httpx_args={"event_hooks": {"request": [keep]}})
    created = create_session.sync_detailed(client=client, body=m.FacebookConfig(
        preset=m.FacebookConfigPreset.FACEBOOK, initial_detent="normal"))
    if created.status_code != 201:
        check(False, "python seq: a session created", f"{created.status_code} {created.content[:300]!r}")
        return
    sid = created.parsed.id
    began = m.PanEvent(phase=m.PanPhase.BEGAN, seq=1)
    first = pan.sync_detailed(sid, client=client, body=began)
    again = pan.sync_detailed(sid, client=client, body=began)
    check(sent[-2:] == [{"phase": "began", "seq": 1}] * 2, "python seq: the typed PanEvent sends seq", repr(sent[-2:]))
    check(first.status_code == 200 and "Sheetd-Replay" not in first.headers and isinstance(first.parsed, m.Result),
          "python seq: seq 1 is applied (200, a typed Result, no Sheetd-Replay)",
          f"{first.status_code} {dict(first.headers)} {first.content[:200]!r}")
    check(again.status_code == 200 and again.headers.get("Sheetd-Replay") == "true" and again.content == first.content,
          "python seq: the same request again gets Sheetd-Replay: true and the first answer's bytes",
          f"{again.status_code} {dict(again.headers)} {again.content[:200]!r}")
    gap = pan.sync_detailed(sid, client=client, body=m.PanEvent(phase=m.PanPhase.CHANGED, translation=40, seq=3))
    problem = gap.parsed
    check(gap.status_code == 409 and isinstance(problem, m.Problem) and problem.code == "sequence-gap"
          and problem.last_seq == 1 and problem.field == "seq" and not problem.additional_properties,
          "python seq: seq 3 after 1 is the sequence-gap problem, typed, lastSeq 1",
          f"{gap.status_code} {gap.content[:300]!r}")
    shown = show.sync_detailed(sid, client=client, body=m.ShowRequest(detent="expanded", seq=2))
    check(shown.status_code == 200 and "Sheetd-Replay" not in shown.headers,
          "python seq: seq 2 (show) follows, applied", f"{shown.status_code} {shown.content[:200]!r}")
    # The number in the `Sheetd-Seq` header parameter alone (where a proxy reads it).
    grab = m.PanEvent(phase=m.PanPhase.BEGAN)
    fielded = pan.sync_detailed(sid, client=client, body=grab, sheetd_seq=3)
    fielded_again = pan.sync_detailed(sid, client=client, body=grab, sheetd_seq=3)
    check(fields[-2:] == ["3", "3"] and sent[-1] == {"phase": "began"} and fielded.status_code == 200
          and "Sheetd-Replay" not in fielded.headers and fielded_again.headers.get("Sheetd-Replay") == "true"
          and fielded_again.content == fielded.content,
          "python seq: seq 3 in the Sheetd-Seq header parameter alone is applied, and its retry is the replay",
          f"{fields[-2:]} {fielded.status_code} {dict(fielded_again.headers)}")
    delete_session.sync_detailed(sid, client=client)


# --------------------------------------------------------------------------------------------
# Swift: swift-openapi-generator and the example package


def swift_client(port: int, example: str, generator: str, build_log: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        diagnostics = Path(folder) / "diagnostics.yaml"
        run = subprocess.run(
            [generator, "generate", str(SPEC), "--config",
             str(ROOT / "Clients/swift/Sources/SheetClientExample/openapi-generator-config.yaml"),
             "--output-directory", folder, "--diagnostics-output-path", str(diagnostics)],
            capture_output=True, text=True)
        text = diagnostics.read_text() if diagnostics.exists() else ""
        check(run.returncode == 0 and re.search(r"^diagnostics: \[\]$", text, re.M) is not None,
              "swift-openapi-generator: no diagnostic for openapi.yaml (no unsupported schema)",
              f"exit {run.returncode}\n{text[-3000:]}{run.stderr[-2000:]}")
    log = Path(build_log).read_text()
    # The example's own warnings and the generator's (when the build plugin ran); the build of the
    # dependencies warns about their own files, which is not ours to fix.
    ours = [line for line in log.splitlines()
            if "warning:" in line and ("Clients/swift" in line or "not supported" in line or "Validation warning" in line
                                        or "OpenAPI" in line)]
    check(not ours, "the Swift example builds without a warning of its own or of the generator", "\n".join(ours[:10]))
    run = subprocess.run([example, str(port)], capture_output=True, text=True, timeout=300)
    print(indented(run.stdout + run.stderr), end="")
    match = re.search(r"^swift-client: (\d+) passed, (\d+) failed$", run.stdout, re.M)
    if match is None:
        check(False, "the Swift example ran to its end", f"exit {run.returncode}")
        return
    COUNTS[0] += int(match.group(1))
    COUNTS[1] += int(match.group(2))


# --------------------------------------------------------------------------------------------
# SSE with a third-party client library (httpx-sse), read as an EventSource reads


def event_source(base: str, path: str, last_id: str | None = None, on_event=None, most: int = 6):
    """Reads `path` like an EventSource: after the body ends it waits `retry:` and reconnects with
    Last-Event-ID, until an answer that is not 200 (204: stop). Returns the events, the number of
    connections and the final status."""
    events, connections, retry = [], 0, 1.0
    with httpx.Client(base_url=base, timeout=10) as client:
        while connections < most:
            headers = {"Accept": "text/event-stream"}
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            connections += 1
            with connect_sse(client, "GET", path, headers=headers) as source:
                status = source.response.status_code
                if status != 200:
                    return events, connections, status
                for event in source.iter_sse():
                    events.append(event)
                    if event.id:
                        last_id = event.id
                    if event.retry is not None:
                        retry = event.retry / 1000
                    if on_event is not None:
                        on_event(event)
            time.sleep(retry)
    return events, connections, None


def frame_indices(events, animation: int) -> list[int]:
    return [json.loads(e.data)["index"] for e in events if e.event == "frame" and e.id.startswith(f"{animation}:")]


def sse_clients(base: str) -> None:
    http = httpx.Client(base_url=base, timeout=10)

    # 1. A `once` stream of a running animation: every frame, `settled`, then one reconnection
    #    that is answered 204 (so no loop of `settled` again and again).
    assert http.put("/sessions/sse-once", json={"initialDetent": "normal"}).status_code == 201
    n = http.post("/sessions/sse-once/dismiss").json()["animation"]["id"]
    events, connections, status = event_source(base, "/sessions/sse-once/frames?once=true&pace=instant&fps=60")
    kinds = [e.event for e in events]
    check(frame_indices(events, n) == list(range(16)) and kinds.count("settled") == 1,
          "httpx-sse: a once stream's frames 0…15 with ids n:k, one settled", f"{[e.id or e.event for e in events]}")
    check(all(e.data for e in events), "httpx-sse: no event without data (retry: travels with the first event)",
          f"{[(e.event, e.data, e.retry) for e in events if not e.data]}")
    check(events[0].retry == 1000 and events[0].event == "frame" and all(e.retry is None for e in events[1:]),
          "httpx-sse: retry: 1000 in the first event's block", f"{[(e.event, e.retry) for e in events[:2]]}")
    check(connections == 2 and status == 204, "httpx-sse: the reconnection after settled is 204, and it stops",
          f"{connections} connections, last status {status}")

    # 2. Resumption: Last-Event-ID n:3 of an animation still running (client clock) resumes after
    #    frame 3; the `once` stream then stops the same way.
    assert http.put("/sessions/sse-resume", json={"clock": "client"}).status_code == 201
    n = http.post("/sessions/sse-resume/show", json={"time": 1}).json()["animation"]["id"]
    events, connections, status = event_source(base, "/sessions/sse-resume/frames?once=true&pace=instant&fps=60",
                                                last_id=f"{n}:3")
    check(frame_indices(events, n) == list(range(4, 16)) and events[-1].event == "settled"
          and events[-1].id == f"{n}:15", "httpx-sse: Last-Event-ID n:3 resumes at frame 4; settled has id n:15",
          f"{[e.id or e.event for e in events]}")
    check(connections == 2 and status == 204, "httpx-sse: a resumed once stream stops too",
          f"{connections} connections, last status {status}")

    # 3. A session deleted under an open stream: `closed`, then the reconnection (Last-Event-ID of
    #    the frames seen) is 204 and the client stops.
    assert http.put("/sessions/sse-gone", json={"clock": "client"}).status_code == 201
    n = http.post("/sessions/sse-gone/show", json={"time": 1}).json()["animation"]["id"]

    def delete_once_settled(event):
        if event.event == "settled":
            http.delete("/sessions/sse-gone")

    events, connections, status = event_source(base, "/sessions/sse-gone/frames?pace=instant&fps=60",
                                                on_event=delete_once_settled)
    check([e.event for e in events][-2:] == ["settled", "closed"] and json.loads(events[-1].data) == {"reason": "deleted"},
          "httpx-sse: a deleted session's stream ends with closed (deleted)", f"{[e.id or e.event for e in events][-3:]}")
    check(connections == 2 and status == 204, "httpx-sse: the reconnection to the deleted session is 204, and it stops",
          f"{connections} connections, last status {status}")
    http.close()


# --------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sheetd", required=True)
    parser.add_argument("--swift-example")
    parser.add_argument("--swift-generator")
    parser.add_argument("--swift-build-log")
    args = parser.parse_args()
    sheetd = start_sheetd(args.sheetd)
    port = sheetd.port
    base = f"http://127.0.0.1:{port}"
    try:
        examples = subprocess.run([sys.executable, str(ROOT / "IntegrationTests/openapi_examples.py"), base],
                                  capture_output=True, text=True)
        print(indented(examples.stdout + examples.stderr), end="")
        check(examples.returncode == 0, "openapi.yaml's simulate example is what sheetd answers",
              "regenerate it: python3 IntegrationTests/openapi_examples.py URL --write")
        python_client(base)
        if args.swift_example:
            swift_client(port, args.swift_example, args.swift_generator, args.swift_build_log)
        sse_clients(base)
    finally:
        code = sheetd.stop(timeout=15)
    check(code == 0, "sheetd exited 0 after SIGTERM", f"exit {code}")
    print(f"clients: {COUNTS[0]} passed, {COUNTS[1]} failed")
    return 1 if COUNTS[1] else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
