"""Many clients, one session: the proof that concurrent events serialize into a replayable history.

Starts sheetd (SHEETD_BIN) on a free loopback port. For every round (one preset each, in turn):

1. `PUT /sessions/{id}` with `"clock": "client"` and the preset, then `show` at the base time.
2. Four SSE streams follow the session (`GET /frames`: pace=instant at 60 and 30 fps, realtime
   at 60 and 120 fps), opened before any event.
3. K threads (CONCURRENCY_THREADS, 8), each with its own keep-alive connection, send pan events to
   that one session at once: thread i's j-th event carries time = base + (j·K + i + 1)·0.004, so
   every time is unique and the threads' events interleave. Each thread plays gestures (began,
   changed…, ended with or without a velocity, sometimes cancelled) and sends `show` when a
   fling dismissed the card. sheetd applies them in the order they take the session's lock and
   refuses with 409 any event behind the last accepted one (clock-backwards) or without a drag
   (conflict); those are recorded, never retried.
4. The accepted events (200), sorted by time, are the sequential history: sheetd accepts only
   events at or after its last accepted time, so that is the order in which it applied them. They
   go to `POST /simulate` with the same configuration, and:
   - every result of the replay equals, member for member, the answer sheetd gave to that event;
   - the animation ids of the accepted events count 1, 2, 3… in time order (applied in that order);
   - `GET /sessions/{id}` (a client-clock session is sampled at its last event's time: docs/HTTP.md,
     SheetResponder.sessionTime) equals the last accepted answer and the replay's last result
     (state, detent, constant, dimmerAlpha, progress, time) and its running animation is the
     replay's last animation (or none when the replay says the card is no longer animating).
5. `DELETE` the session; on every stream: 200 text/event-stream, frame ids `n:k` strictly
   increasing (n, then k), every `data:` line whole JSON with every field of its event (no torn
   frames), every animation ended by `settled` or `interrupted` before the next one's frames, a
   final `closed` (reason "deleted") and nothing after it. The instant 60 fps stream's frames of
   the last animation equal the replay's frames, index by index.

One more, deterministic, check runs first: the lock-order probe. Two concurrent requests may take
the lock in either order, so an event refused at a later time (409) may be handled before an
accepted one at an earlier time; "a conflict leaves the session exactly as it was" (SheetSession)
must then hold, or the accepted event sees a changed session. The probe sends, in that order,
`show` at t, a `changed` at a time after the show's animation ended (409: no drag), and a `began`
at a time inside the animation, and checks the `began`'s answer and the snapshots against the
replay of the accepted events.

Knobs (environment): SHEETD_BIN, CONCURRENCY_THREADS (8), CONCURRENCY_EVENTS (events per thread
per round, 120), CONCURRENCY_ROUNDS (default: each preset of GET /presets once), CONCURRENCY_SEED (1), CONCURRENCY_OUT
(.build/concurrency-test). Last line: `concurrency-test: N passed, M failed`.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys
import threading
import time

from sheetkit.checklist import Checklist
from sheetkit.harness import ROOT, Sheetd, default_binary
from sheetkit.presets import names as preset_names
from sheetkit.sse import StreamCheck

BIN = default_binary()
THREADS = int(os.environ.get("CONCURRENCY_THREADS", "8"))
EVENTS = int(os.environ.get("CONCURRENCY_EVENTS", "120"))
ROUNDS_SET = os.environ.get("CONCURRENCY_ROUNDS")  # unset: one round per preset of the catalog
SEED = int(os.environ.get("CONCURRENCY_SEED", "1"))
OUT = os.environ.get("CONCURRENCY_OUT", os.path.join(ROOT, ".build", "concurrency-test"))
HOST = "127.0.0.1"
STEP = 0.004  # client seconds between two consecutive global event slots

CARD = ("state", "detent", "constant", "dimmerAlpha", "progress", "time")

CHECKS = Checklist("concurrency-test")
check = CHECKS.check


# --------------------------------------------------------------------------------------------
# A minimal HTTP/1.1 client: keep-alive, Content-Length bodies; chunked for the streams.


class Conn:
    def __init__(self, port: int, timeout: float = 10):
        self.s = socket.create_connection((HOST, port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._more()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _more(self):
        data = self.s.recv(65536)
        if not data:
            raise ConnectionError("connection closed by sheetd")
        self.buf += data

    def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def head(self) -> tuple[int, dict[str, str]]:
        status = int(self._line().split(b" ", 2)[1])
        headers = {}
        while True:
            line = self._line()
            if not line:
                return status, headers
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()

    def call(self, method: str, path: str, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        req = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\n"
        if body is not None:
            req += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        self.s.sendall(req.encode() + b"\r\n" + data)
        status, headers = self.head()
        raw = self._exactly(int(headers.get("content-length", "0")))
        return status, headers, (json.loads(raw) if raw.strip() else None)

    def close(self):
        self.s.close()


class Stream(threading.Thread, StreamCheck):
    """One SSE stream read to its end on its own thread, checked event by event (sheetkit.sse)."""

    def __init__(self, port: int, sid: str, query: str):
        threading.Thread.__init__(self, daemon=True)
        StreamCheck.__init__(self, sid=sid, fps=int(dict(p.split("=") for p in query.split("&"))["fps"]))
        self.port, self.query = port, query
        self.status = None
        self.ctype = ""
        self.clean_end = False
        self.ready = threading.Event()
        self.conn = Conn(port, timeout=30)
        self.conn.s.sendall(f"GET /sessions/{sid}/frames?{query} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())

    def run(self):
        try:
            self.status, headers = self.conn.head()
            self.ctype = headers.get("content-type", "")
            # The stream is registered with its session before its head is sent.
            self.ready.set()
            text = ""
            while True:
                size = int(self.conn._line().split(b";")[0], 16)
                if size == 0:
                    self.conn._line()
                    self.clean_end = True
                    break
                text += self.conn._exactly(size).decode("utf-8")
                self.conn._exactly(2)
                while "\n\n" in text:
                    block, text = text.split("\n\n", 1)
                    self.event(block)
            if text.strip():
                self.problem(f"bytes after the last event: {text!r}")
        except (OSError, ValueError) as e:
            self.problem(f"stream ended abnormally: {e!r}")
        finally:
            self.ready.set()
            self.conn.close()


# --------------------------------------------------------------------------------------------
# The clients.


def gestures(rng: random.Random, preset: str):
    """Endless pan events for one thread: gestures of 3–10 `changed` toward a random target."""
    while True:
        target = rng.uniform(-420, 420)
        n = rng.randint(3, 10)
        yield {"phase": "began", "translation": 0}
        for i in range(1, n + 1):
            e = {"phase": "changed", "translation": round(target * i / n + rng.uniform(-4, 4), 2)}
            if preset == "fluid" and rng.random() < 0.2:
                e["scrollOffset"] = round(rng.uniform(0, 40), 1)
            yield e
        r = rng.random()
        if r < 0.1:
            yield {"phase": "cancelled"}
        elif r < 0.35:
            yield {"phase": "ended"}  # velocity estimated from the drag's samples
        else:
            yield {"phase": "ended", "velocity": round(rng.uniform(-2500, 2500), 1)}


def client(port: int, sid: str, i: int, base: float, preset: str, seed: int, out: list, barrier):
    rng = random.Random(seed)
    conn = Conn(port)
    gen = gestures(rng, preset)
    show_next = False
    barrier.wait()
    try:
        for j in range(EVENTS):
            t = round(base + (j * THREADS + i + 1) * STEP, 6)
            if show_next:
                kind, body = "show", {"time": t}
                show_next = False
            else:
                kind, body = "pan", dict(next(gen), time=t)
            status, _, answer = conn.call("POST", f"/sessions/{sid}/{kind}", body)
            out.append((t, kind, body, status, answer))
            if status == 409 and kind == "pan" and body["phase"] == "began" and "hidden" in answer.get("detail", ""):
                show_next = True  # a fling dismissed the card: present it again
            # A small random pause now and then lets the threads drift apart, so that events reach
            # the lock out of time order (and get refused as clock-backwards).
            if rng.random() < 0.05:
                time.sleep(rng.uniform(0, 0.003))
    finally:
        conn.close()


def simulate_event(kind: str, body: dict) -> dict:
    e = {"type": kind}
    e.update(body)
    return e


def replay(conn: Conn, config: dict, events: list[tuple[str, dict]], fps: int = 60):
    body = {"config": config, "fps": fps, "events": [simulate_event(k, b) for k, b in events]}
    return conn.call("POST", "/simulate", body)


def diff(a, b, path="") -> str | None:
    """Where two JSON values differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: {'missing in sheetd' if k not in a else 'missing in replay'}"
            d = diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path or 'value'}: {json.dumps(a)} vs {json.dumps(b)}"


# --------------------------------------------------------------------------------------------


def lock_order_probe(conn: Conn):
    """A refused event handled before an earlier accepted one must leave the session unchanged."""
    print("\nlock-order probe (a 409 at a later time, then an accepted event at an earlier time):")
    config = {"preset": "facebook", "clock": "client", "initialDetent": "normal"}
    sid = "concurrency-probe"
    conn.call("PUT", f"/sessions/{sid}", config)
    s1, _, show = conn.call("POST", f"/sessions/{sid}/show", {"detent": "expanded", "time": 10.0})
    duration = show["animation"]["duration"]
    _, _, before = conn.call("GET", f"/sessions/{sid}")
    late = {"phase": "changed", "translation": 5, "time": round(10.0 + duration + 0.1, 6)}
    s2, _, refused = conn.call("POST", f"/sessions/{sid}/pan", late)
    _, _, after = conn.call("GET", f"/sessions/{sid}")
    grab = {"phase": "began", "translation": 0, "time": round(10.0 + duration / 2, 6)}
    s3, _, began = conn.call("POST", f"/sessions/{sid}/pan", grab)
    _, _, rp = replay(conn, config, [("show", {"detent": "expanded", "time": 10.0}), ("pan", grab)])
    conn.call("DELETE", f"/sessions/{sid}")
    check(s1 == 200 and s2 == 409 and s3 == 200, f"show 200, late changed 409, earlier began 200: {s1}, {s2}, {s3}")
    d = diff({k: before[k] for k in CARD}, {k: after[k] for k in CARD})
    check(d is None, "GET after the refused event equals GET before it (client clock: sampled at the last "
                     "accepted event)",
          f"sent show {{detent: expanded, time: 10}} (animation {duration} s), then changed {json.dumps(late)} → "
          f"{s2} {refused.get('code')}; GET before: {json.dumps({k: before[k] for k in CARD})}; GET after: "
          f"{json.dumps({k: after[k] for k in CARD})} ({d})")
    d = diff(began, rp["results"][1]) if rp else "no replay"
    check(d is None, "the accepted earlier `began` equals its replay (without the refused event)",
          f"then began {json.dumps(grab)} → sheetd: constant {began.get('constant')}, state {began.get('state')}; "
          f"POST /simulate of [show, began]: constant {rp['results'][1].get('constant')}, state "
          f"{rp['results'][1].get('state')} ({d})")


def run_round(port: int, rnd: int, preset: str, figures: dict):
    rng = random.Random(SEED * 1000 + rnd)
    sid = f"concurrency-{rnd}-{preset}"
    config = {"preset": preset, "clock": "client"}
    base = 100.0
    conn = Conn(port)
    status, _, _ = conn.call("PUT", f"/sessions/{sid}", config)
    if not check(status in (200, 201), f"round {rnd} ({preset}): PUT /sessions/{sid} → {status}"):
        return
    # Streams first, so they see every animation from the first.
    queries = ["pace=instant&fps=60", "pace=instant&fps=30", "pace=realtime&fps=60", "pace=realtime&fps=120"]
    streams = [Stream(port, sid, q) for q in queries]
    for st in streams:
        st.start()
    for st in streams:
        st.ready.wait(5)
    status, _, shown = conn.call("POST", f"/sessions/{sid}/show", {"time": base})
    check(status == 200, f"round {rnd}: show at t={base} → {status}")

    outs: list[list] = [[] for _ in range(THREADS)]
    barrier = threading.Barrier(THREADS)
    threads = [threading.Thread(target=client, args=(port, sid, i, base, preset, rng.random(), outs[i], barrier))
               for i in range(THREADS)]
    t_start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t_start
    events = sorted((x for out in outs for x in out), key=lambda x: x[0])
    accepted = [(base, "show", {"time": base}, 200, shown)] + [e for e in events if e[3] == 200]
    codes: dict[str, int] = {}
    other = []
    for t, kind, body, status, answer in events:
        if status == 409:
            codes[answer.get("code", "?")] = codes.get(answer.get("code", "?"), 0) + 1
        elif status != 200:
            other.append((t, kind, body, status, answer))
    figures["events sent"] += len(events)
    figures["accepted"] += len(accepted) - 1
    figures["409 clock-backwards"] += codes.get("clock-backwards", 0)
    figures["409 conflict (no drag, hidden)"] += codes.get("conflict", 0)
    figures["seconds sending"] += elapsed
    print(f"  round {rnd} ({preset}): {len(events)} events from {THREADS} threads in {elapsed:.2f} s, "
          f"{len(accepted) - 1} accepted, 409: {codes}")
    check(not other, f"round {rnd}: every answer is 200 or 409",
          "; ".join(f"{k} {json.dumps(b)} → {s} {json.dumps(a)[:300]}" for _, k, b, s, a in other[:3]))
    bad_409 = [e for e in events if e[3] == 409 and e[4].get("code") not in ("clock-backwards", "conflict")]
    check(not bad_409, f"round {rnd}: every 409 is clock-backwards or conflict")
    check(all(a[4].get("time") == a[0] for a in accepted),
          f"round {rnd}: every accepted answer echoes its event's time")
    # The animation ids, in time order, count up one by one: applied in time order.
    ids = [a[4]["animation"]["id"] for a in accepted if a[4].get("animation")]
    check(ids == list(range(ids[0], ids[0] + len(ids))) if ids else True,
          f"round {rnd}: animation ids of the accepted events count up in time order ({len(ids)} animations)",
          f"ids in time order: {ids[:40]}")

    # The sequential replay.
    status, _, rp = replay(conn, config, [(k, b) for _, k, b, _, _ in accepted])
    if not check(status == 200, f"round {rnd}: POST /simulate of the {len(accepted)} accepted events → {status}",
                 json.dumps(rp)[:400]):
        return
    mismatches = []
    for idx, (a, r) in enumerate(zip(accepted, rp["results"])):
        d = diff(a[4], r)
        if d:
            mismatches.append((idx, a, r, d))
    figures["replayed results compared"] += len(accepted)
    detail = None
    if mismatches:
        idx, a, r, d = mismatches[0]
        prev = accepted[idx - 1] if idx else None
        between = [e for e in events if prev and prev[0] < e[0] < a[0]]
        detail = (f"{len(mismatches)} of {len(accepted)} differ; first at #{idx}: {a[1]} {json.dumps(a[2])} — sheetd "
                  f"answered {json.dumps({k: a[4].get(k) for k in CARD})}, the replay "
                  f"{json.dumps({k: r.get(k) for k in CARD})} ({d}); the accepted event before it: "
                  f"{json.dumps(prev[2]) if prev else '-'}; refused events between them in time: "
                  f"{[(e[1], e[2], e[4].get('code')) for e in between][:4]}")
    check(not mismatches, f"round {rnd}: every accepted answer equals its result in the sequential replay", detail)

    status, _, got = conn.call("GET", f"/sessions/{sid}")
    last, last_replay = accepted[-1][4], rp["results"][-1]
    d1 = diff({k: got.get(k) for k in CARD}, {k: last.get(k) for k in CARD})
    check(d1 is None, f"round {rnd}: GET equals the last accepted answer (at t={last.get('time')})",
          f"GET {json.dumps({k: got.get(k) for k in CARD})} vs last answer {json.dumps({k: last.get(k) for k in CARD})}"
          f" ({d1})")
    d2 = diff({k: got.get(k) for k in CARD}, {k: last_replay.get(k) for k in CARD})
    expected_animation = rp["animation"] if last_replay.get("state") == "animating" else None
    d3 = diff(got.get("animation"), expected_animation)
    check(d2 is None and d3 is None,
          f"round {rnd}: GET equals the replay's final state (state, detent, constant, alpha, progress, time, "
          "animation)",
          f"{d2 or d3}; GET {json.dumps({k: got.get(k) for k in CARD + ('animation',)})[:600]}")

    # Let a realtime stream see the last animation run out, then end the session.
    if expected_animation:
        time.sleep(min(max(0.0, expected_animation["duration"]) + 0.1, 1.5))
    conn.call("DELETE", f"/sessions/{sid}")
    for st in streams:
        st.join(10)
    for st in streams:
        figures["stream events checked"] += st.events
        figures["frames checked"] += st.frames
        ok = (st.status == 200 and st.ctype.startswith("text/event-stream") and not st.problems
              and st.closed_reason == "deleted" and not st.after_closed and st.clean_end)
        check(ok, f"round {rnd}: stream {st.query}: {st.frames} frames, {st.events} events, ids increasing, "
                  "whole JSON, animations closed, `closed` last",
              f"status {st.status} {st.ctype!r}, closed {st.closed_reason!r}, {st.after_closed} events after it, "
              f"clean end {st.clean_end}, problems {st.problems}")
    # The instant 60 fps stream has every frame of the last animation: they must be the replay's.
    inst = streams[0]
    if rp["animation"] is not None and not mismatches:
        n = rp["animation"]["id"]
        got_frames = inst.frames_by_animation.get(n)
        d = diff(got_frames, rp["frames"]) if got_frames is not None else "the stream has no frame of it"
        check(d is None, f"round {rnd}: the instant stream's frames of animation {n} equal the replay's "
                         f"({len(rp['frames'])} frames)", d)
    conn.close()


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    log = os.path.join(OUT, "sheetd.log")
    open(log, "wb").close()
    # The replay of a round carries ~1,000 events: more than the default 16 KiB body limit.
    sheetd = Sheetd(BIN, ["--log-level", "warning", "--max-body", str(1 << 20)], log=log)
    figures = {"events sent": 0, "accepted": 0, "409 clock-backwards": 0, "409 conflict (no drag, hidden)": 0,
               "replayed results compared": 0, "stream events checked": 0, "frames checked": 0,
               "seconds sending": 0.0}
    began = time.monotonic()
    try:
        sheetd.start()
        proc, port = sheetd.proc, sheetd.port
        presets = preset_names(port)  # the catalog, as sheetd serves it
        rounds = int(ROUNDS_SET) if ROUNDS_SET else len(presets)
        print(f"concurrency-test: sheetd {BIN} on port {port} (pid {proc.pid}), {THREADS} threads × {EVENTS} "
              f"events per round, {rounds} rounds")
        conn = Conn(port)
        lock_order_probe(conn)
        conn.close()
        print("\nconcurrent rounds:")
        for rnd in range(rounds):
            run_round(port, rnd, presets[rnd % len(presets)], figures)
        check(proc.poll() is None, "sheetd still running after the rounds")
    finally:
        sheetd.stop()
    figures["seconds sending"] = round(figures["seconds sending"], 2)
    rate = figures["events sent"] / figures["seconds sending"] if figures["seconds sending"] else 0
    rows = [(k, f"{v:g}" if isinstance(v, float) else str(v)) for k, v in figures.items()]
    rows.append(("events/s to one session (all threads)", f"{rate:.0f}"))
    rows.append(("run time", f"{time.monotonic() - began:.1f} s"))
    table = "\n".join(["| figure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])
    print("\n" + table + "\n")
    CHECKS.write(os.path.join(OUT, "latest.md"), f"{THREADS} threads × {EVENTS} events per round, {rounds} rounds, "
                 f"seed {SEED}.\n\n{table}\n\n")
    print(CHECKS.summary())
    return 0 if CHECKS.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
