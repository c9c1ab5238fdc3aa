"""Graceful drain under load: the proof behind docs/HTTP.md's SIGTERM paragraph.

Starts sheetd (SHEETD_BIN) with `--drain-grace` on a free loopback port, creates sessions, opens
200 Server-Sent-Event streams (`GET /sessions/{id}/frames`, raw non-blocking sockets on one
selector: some on sessions that never move, so their connections sit suspended inside
libmicrohttpd, most on sessions whose animations run), drives about 1,000 pan events/s over
keep-alive connections (gestures: began, changed…, ended, a `show` after a fling dismissed the
card), then sends SIGTERM and measures, while the load goes on:

- the time until /readyz answers 503 (or a new connection is turned away);
- that every new session (POST /sessions, PUT of an unknown id) during the grace gets 503 with
  Retry-After and the `draining` problem, while existing sessions keep being answered;
- that no request is answered 5xx other than those documented 503s, and none is left without an
  answer during the grace;
- that every pan/show sheetd ran got its answer to the client: sheetd runs with `--log-level
  debug`, which logs each request it answered (`POST /sessions/{id}/pan → 200`); a session with
  more such lines than answers the client read had a request run whose answer was cut off when
  the daemon stopped (an in-flight request that did not finish). A request sent on a keep-alive
  connection that sheetd closed before reading it is counted apart (figure, not a failure: the
  client cannot tell, and may resend it elsewhere);
- when new connections start being turned away (the listener closes after the grace);
- that every one of the 200 streams receives `event: closed` (reason `draining`) before its socket
  closes, and that every stream was well formed throughout (ids increasing, JSON data, every
  animation ended by `settled` or `interrupted` before the next one's frames);
- the exit status (0) and the time from SIGTERM to exit (at most grace + DRAIN_EXIT_BOUND s: a
  deadline for a drain that hangs, far above what a drain takes on any machine).

Knobs (environment): SHEETD_BIN, DRAIN_GRACE (1), DRAIN_STREAMS (200), DRAIN_RATE (1000 events/s),
DRAIN_LOAD_SECONDS (2: load before SIGTERM), DRAIN_EXIT_BOUND (30), DRAIN_CONNECTIONS (16),
DRAIN_OUT (.build/drain-test). Writes the figures to DRAIN_OUT/latest.md, sheetd's log to
DRAIN_OUT/sheetd.log. Last line: `drain-test: N passed, M failed`; exit status 1 on any failure.
"""

from __future__ import annotations

import json
import os
import random
import re
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

from sheetkit.checklist import Checklist
from sheetkit.harness import ROOT, Sheetd, default_binary
from sheetkit.presets import names as preset_names
from sheetkit.sse import StreamCheck

BIN = default_binary()
GRACE = float(os.environ.get("DRAIN_GRACE", "1"))
STREAMS = int(os.environ.get("DRAIN_STREAMS", "200"))
RATE = float(os.environ.get("DRAIN_RATE", "1000"))
LOAD_SECONDS = float(os.environ.get("DRAIN_LOAD_SECONDS", "2"))
EXIT_BOUND = float(os.environ.get("DRAIN_EXIT_BOUND", "30"))
CONNECTIONS = int(os.environ.get("DRAIN_CONNECTIONS", "16"))
# Requests sent this close to the listener's closing may reach sheetd after it stopped reading.
CUT_MARGIN = 0.5
OUT = os.environ.get("DRAIN_OUT", os.path.join(ROOT, ".build", "drain-test"))
HOST = "127.0.0.1"

CHECKS = Checklist("drain-test")
figures_lost: list[int] = []
detail_lines = CHECKS.evidence  # evidence for a failure, printed and written to latest.md
setup_answers: dict[str, int] = {}  # requests per session answered during the setup (also in the log)
LOG_LINE = re.compile(r"POST /sessions/([A-Za-z0-9._~-]+)/(?:pan|show) → \d{3}")


def check(ok: bool, what: str) -> bool:
    return CHECKS.check(ok, what)


# --------------------------------------------------------------------------------------------
# HTTP/1.1 over raw sockets: an incremental response parser (Content-Length, chunked, or to EOF).


class ResponseParser:
    """Feeds bytes, calls on_head(status, headers), on_data(bytes), on_end() for each response."""

    def __init__(self, on_head=None, on_data=None, on_end=None):
        self.buf = bytearray()
        self.state = "head"
        self.remaining = 0
        self.on_head, self.on_data, self.on_end = on_head, on_data, on_end
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.chunked_end_seen = False

    def feed(self, data: bytes):
        self.buf += data
        while True:
            if self.state == "head":
                i = self.buf.find(b"\r\n\r\n")
                if i < 0:
                    return
                head = bytes(self.buf[:i]).decode("latin-1").split("\r\n")
                del self.buf[: i + 4]
                parts = head[0].split(" ", 2)
                self.status = int(parts[1])
                self.headers = {}
                for line in head[1:]:
                    name, _, value = line.partition(":")
                    self.headers[name.strip().lower()] = value.strip()
                self.body = bytearray()
                if self.on_head:
                    self.on_head(self.status, self.headers)
                if "chunked" in self.headers.get("transfer-encoding", "").lower():
                    self.state = "size"
                elif "content-length" in self.headers:
                    self.remaining = int(self.headers["content-length"])
                    self.state = "fixed"
                elif self.status in (204, 304):
                    self.remaining = 0
                    self.state = "fixed"
                else:
                    self.state = "eof"
            elif self.state == "fixed":
                if not self._take_remaining():
                    return
                self._end()
            elif self.state == "size":
                i = self.buf.find(b"\r\n")
                if i < 0:
                    return
                size = int(bytes(self.buf[:i]).split(b";")[0], 16)
                del self.buf[: i + 2]
                if size == 0:
                    self.state = "trailer"
                else:
                    self.remaining = size
                    self.state = "chunk"
            elif self.state == "chunk":
                if not self._take_remaining():
                    return
                self.state = "crlf"
            elif self.state == "crlf":
                if len(self.buf) < 2:
                    return
                del self.buf[:2]
                self.state = "size"
            elif self.state == "trailer":
                i = self.buf.find(b"\r\n")
                if i < 0:
                    return
                line = bytes(self.buf[:i])
                del self.buf[: i + 2]
                if line == b"":
                    self.chunked_end_seen = True
                    self._end()
            elif self.state == "eof":
                if self.buf:
                    self._data(bytes(self.buf))
                    self.buf.clear()
                return

    def _take_remaining(self) -> bool:
        """Passes on what has arrived of the `remaining` body bytes (a fixed body's or a chunk's);
        True once all of them have."""
        n = min(self.remaining, len(self.buf))
        if n:
            self._data(bytes(self.buf[:n]))
            del self.buf[:n]
            self.remaining -= n
        return self.remaining == 0

    def _data(self, b: bytes):
        if self.on_data:
            self.on_data(b)
        else:
            self.body += b

    def _end(self):
        self.state = "head"
        if self.on_end:
            self.on_end()


def request_bytes(method: str, path: str, body=None, close=False) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    if close:
        head += "Connection: close\r\n"
    return head.encode() + b"\r\n" + data


def one_shot(port: int, method: str, path: str, body=None, timeout=2.0):
    """A request on a new connection. Returns (status, headers, body) or (None, reason, b"")
    when the connection is refused or closed without an answer."""
    try:
        s = socket.create_connection((HOST, port), timeout=timeout)
    except OSError as e:
        return None, f"refused ({e.__class__.__name__})", b""
    done = []
    p = ResponseParser(on_end=lambda: done.append(True))
    try:
        s.sendall(request_bytes(method, path, body, close=True))
        while not done:
            data = s.recv(65536)
            if not data:
                return None, "closed without an answer", b""
            p.feed(data)
    except OSError as e:
        return None, f"closed without an answer ({e.__class__.__name__})", b""
    finally:
        s.close()
    return p.status, p.headers, bytes(p.body)


class BlockingClient:
    """One keep-alive connection, for the setup."""

    def __init__(self, port: int):
        self.s = socket.create_connection((HOST, port), timeout=5)

    def call(self, method: str, path: str, body=None):
        done = []
        p = ResponseParser(on_end=lambda: done.append(True))
        self.s.sendall(request_bytes(method, path, body))
        while not done:
            data = self.s.recv(65536)
            if not data:
                raise ConnectionError(f"{method} {path}: connection closed")
            p.feed(data)
        return p.status, p.headers, json.loads(p.body) if p.body.strip() else None

    def close(self):
        self.s.close()


# --------------------------------------------------------------------------------------------
# One SSE stream on a raw socket.


class Stream(StreamCheck):
    def __init__(self, n: int, session: str, query: str, kind: str):
        super().__init__(sid=session)
        self.n, self.session, self.query, self.kind = n, session, query, kind
        self.sock: socket.socket | None = None
        self.status = None
        self.ctype = ""
        self.opened = False  # the head arrived (the stream is registered before it is sent)
        self.text = ""
        self.eof_at: float | None = None
        self.clean_end = False  # the chunked terminator came
        self.parser = ResponseParser(on_head=self._head, on_data=self._data, on_end=self._end)

    def _head(self, status, headers):
        self.status = status
        self.ctype = headers.get("content-type", "")
        self.opened = True

    def _end(self):
        self.clean_end = True

    def _data(self, b: bytes):
        self.text += b.decode("utf-8")
        while "\n\n" in self.text:
            block, self.text = self.text.split("\n\n", 1)
            self.event(block)


# --------------------------------------------------------------------------------------------
# A keep-alive connection that drives gestures on its sessions, one request in flight at a time.


def gesture(rng: random.Random, preset: str) -> list[dict]:
    """began, 6–12 changed 1/60 s apart toward a random target, ended with a velocity."""
    target = rng.uniform(-350, 350)
    n = rng.randint(6, 12)
    events = [{"phase": "began"}]
    for i in range(1, n + 1):
        events.append({"phase": "changed", "translation": round(target * i / n + rng.uniform(-3, 3), 2)})
    end = {"phase": "ended"}
    if rng.random() < 0.8:
        end["velocity"] = round(rng.uniform(-1500, 1500), 1)
    events.append(end)
    return events


class Driver:
    def __init__(self, n: int, port: int, sessions: list[tuple[str, str]], rng: random.Random):
        self.n, self.port, self.rng = n, port, rng
        self.sessions = sessions
        self.queues = {sid: [] for sid, _ in sessions}
        self.turn = 0
        self.sock: socket.socket | None = None
        self.alive = False
        self.inflight: tuple[float, str, dict] | None = None  # (sent at, session, event)
        self.parser = ResponseParser(on_end=self._end)
        self.outbox = b""
        self.last_status = None
        self.done: list[tuple[float, float, int, str, bytes]] = []  # sent, answered, status, sid, body
        self.unanswered: list[tuple[float, str, str, int, dict]] = []  # sent, sid, how, bytes, event
        self.closed_at: float | None = None
        self.pending_show: str | None = None
        self.must_reconnect = False
        self.reconnects = 0

    def connect(self):
        self.sock = socket.create_connection((HOST, self.port), timeout=5)
        self.sock.setblocking(False)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.alive = True

    def next_event(self) -> tuple[str, dict]:
        sid, preset = self.sessions[self.turn % len(self.sessions)]
        self.turn += 1
        q = self.queues[sid]
        if not q:
            q.extend(gesture(self.rng, preset))
        return sid, q.pop(0)

    def send(self, now: float):
        sid, event = self.next_event()
        self.inflight = (now, sid, event)
        self.outbox = request_bytes("POST", f"/sessions/{sid}/pan", event)
        self.flush()

    def flush(self):
        try:
            n = self.sock.send(self.outbox)
            self.outbox = self.outbox[n:]
        except BlockingIOError:
            pass

    def _end(self):
        sent, sid, event = self.inflight
        self.done.append((sent, time.monotonic(), self.parser.status, sid, bytes(self.parser.body)))
        if self.parser.status == 409:
            # began on a card a fling dismissed: show it again, then the next gesture.
            self.queues[sid] = []
            if event.get("phase") == "began":
                self.pending_show = sid
        self.inflight = None
        self.parser.body = bytearray()
        # RFC 9112 §9.6: after "Connection: close" the client sends nothing more on this
        # connection; the next request goes on a new one (draining sheetd answers so).
        if self.parser.headers.get("connection", "").lower() == "close":
            self.must_reconnect = True

    def lost(self, now: float, how: str):
        if self.inflight is not None:
            partial = len(self.parser.buf) + len(self.parser.body)
            self.unanswered.append((self.inflight[0], self.inflight[1], how, partial, self.inflight[2]))
            self.inflight = None
        self.alive = False
        self.closed_at = now


# --------------------------------------------------------------------------------------------


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(int(os.environ.get("DRAIN_SEED", "7")))
    log = os.path.join(OUT, "sheetd.log")
    open(log, "wb").close()
    # One client opens every stream here: the per-client and per-session stream limits (HTTP.md,
    # "Limits") are raised past them, since the drain, not the limits, is what is tested.
    sheetd = Sheetd(BIN, ["--drain-grace", str(GRACE), "--log-level", "debug",
                          "--max-streams-per-client", str(STREAMS + 16),
                          "--max-streams-per-session", str(STREAMS + 16)], log=log)
    figures: list[tuple[str, str]] = []
    try:
        sheetd.start()
        return run(sheetd.proc, sheetd.port, rng, figures)
    finally:
        if sheetd.alive():
            sheetd.proc.kill()  # by PID: the Popen handle of the process started above
            sheetd.proc.wait()


def run(proc: subprocess.Popen, port: int, rng: random.Random, figures: list[tuple[str, str]]) -> int:
    print(f"drain-test: sheetd {BIN} on port {port} (pid {proc.pid}), --drain-grace {GRACE}")
    for _ in range(100):
        status, _, _ = one_shot(port, "GET", "/readyz")
        if status == 200:
            break
        time.sleep(0.1)
    if not check(status == 200, "sheetd is ready before the test"):
        return finish(figures)

    # Sessions: 3/4 of them busy (gestures, most streams), 1/4 idle (streams sit suspended).
    client = BlockingClient(port)
    n_sessions = max(4, STREAMS // 5)
    n_active = max(2, n_sessions * 3 // 4)
    presets = preset_names(port)  # the catalog, as sheetd serves it
    sessions: list[tuple[str, str]] = []
    for i in range(n_sessions):
        preset = presets[i % len(presets)]
        status, headers, body = client.call("POST", "/sessions", {"preset": preset})
        if status != 201:
            check(False, f"POST /sessions answered {status}: {body}")
            return finish(figures)
        sid = body["id"]
        sessions.append((sid, preset))
        # Busy ones are shown (the gestures need a visible card); half of the idle ones too.
        if i < n_active or i % 2 == 0:
            client.call("POST", f"/sessions/{sid}/show", {})
            setup_answers[sid] = setup_answers.get(sid, 0) + 1
    client.close()
    active = sessions[:n_active]
    time.sleep(0.6)  # the idle sessions' show animations settle: their streams will have nothing to send

    # Streams: 5 per session; on busy sessions realtime at 20/30/60 fps and one instant at 30 fps.
    streams: list[Stream] = []
    kinds = [("pace=realtime&fps=20", "realtime"), ("pace=realtime&fps=30", "realtime"),
             ("pace=realtime&fps=20", "realtime"), ("pace=realtime&fps=60", "realtime"),
             ("pace=instant&fps=30", "instant")]
    for i in range(STREAMS):
        sid, _ = sessions[i % n_sessions]
        is_idle = (i % n_sessions) >= n_active
        query, kind = kinds[(i // n_sessions) % len(kinds)]
        streams.append(Stream(i, sid, query, "idle" if is_idle else kind))

    sel = selectors.DefaultSelector()
    for st in streams:
        s = socket.create_connection((HOST, port), timeout=5)
        s.setblocking(False)
        s.sendall(request_bytes("GET", f"/sessions/{st.session}/frames?{st.query}"))
        st.sock = s
        sel.register(s, selectors.EVENT_READ, st)

    drivers: list[Driver] = []
    per = [active[i::CONNECTIONS] for i in range(CONNECTIONS)]
    for i, group in enumerate(g for g in per if g):
        d = Driver(i, port, group, random.Random(rng.random()))
        d.connect()
        sel.register(d.sock, selectors.EVENT_READ, d)
        drivers.append(d)

    shared = {"stop": False, "load_started": None, "sigterm": None}
    loop_error: list[BaseException] = []

    def loop():
        try:
            event_loop(sel, streams, drivers, shared)
        except BaseException as e:  # reported by the main thread
            loop_error.append(e)

    t_loop = threading.Thread(target=loop, name="loop", daemon=True)
    t_loop.start()

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(st.opened or st.eof_at for st in streams):
        time.sleep(0.02)
    opened = sum(1 for st in streams if st.opened and st.status == 200 and st.ctype.startswith("text/event-stream"))
    check(opened == STREAMS, f"{opened} of {STREAMS} streams open (200 text/event-stream)")
    status, _, body = one_shot(port, "GET", "/metrics")
    gauge = None
    for line in body.decode(errors="replace").splitlines():
        if line.startswith("sheetd_streams_open"):
            gauge = float(line.split()[-1])
    if gauge is not None:
        check(gauge == STREAMS, f"sheetd_streams_open = {gauge:g} (the server counts {STREAMS} streams)")

    # Load, then SIGTERM while it goes on.
    shared["load_started"] = time.monotonic()
    time.sleep(LOAD_SECONDS)
    before = sum(len(d.done) for d in drivers)
    rate_before = before / (time.monotonic() - shared["load_started"])

    probes: list[tuple[float, str, object, object]] = []  # (t since SIGTERM, what, status, detail)
    t0 = time.monotonic()
    shared["sigterm"] = t0
    proc.send_signal(signal.SIGTERM)

    # Readiness: poll /readyz on new connections until it says 503 or the connection is refused.
    t_ready = None
    while time.monotonic() - t0 < GRACE + EXIT_BOUND:
        status, headers, _ = one_shot(port, "GET", "/readyz", timeout=1)
        t = time.monotonic() - t0
        probes.append((t, "GET /readyz", status, headers))
        if status != 200:
            t_ready = t
            break
        time.sleep(0.002)
    ready_retry_after = isinstance(probes[-1][3], dict) and "retry-after" in probes[-1][3]

    # During the grace: new sessions refused with 503 + Retry-After, existing sessions still served;
    # after it, new connections are turned away (no answer).
    existing = active[0][0]
    t_turned_away = None
    k = 0
    turned_away_how = "-"
    while time.monotonic() - t0 < GRACE + EXIT_BOUND:
        what = ["POST /sessions", "PUT /sessions/new", f"GET /sessions/{existing}", "GET /healthz"][k % 4]
        k += 1
        if what == "POST /sessions":
            status, headers, body = one_shot(port, "POST", "/sessions", {"preset": "facebook"}, timeout=1)
        elif what == "PUT /sessions/new":
            status, headers, body = one_shot(port, "PUT", f"/sessions/drain-new-{k}", {}, timeout=1)
        else:
            status, headers, body = one_shot(port, "GET", what.split(" ", 1)[1], timeout=1)
        t = time.monotonic() - t0
        detail = headers
        if status is not None and body:
            try:
                detail = (headers, json.loads(body))
            except ValueError:
                detail = (headers, body[:200])
        probes.append((t, what, status, detail))
        if status is None:
            t_turned_away = t
            turned_away_how = headers
            break
        # Every 20 ms during the grace; back to back around its end, to time the listener's closing.
        time.sleep(0.02 if t < GRACE - 0.1 else 0.001)

    # Exit.
    try:
        code = proc.wait(timeout=max(0.1, GRACE + EXIT_BOUND - (time.monotonic() - t0)))
        t_exit = time.monotonic() - t0
    except subprocess.TimeoutExpired:
        code, t_exit = None, None
    # Let the loop read the last bytes and see every socket close.
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and not all(st.eof_at for st in streams):
        time.sleep(0.02)
    shared["stop"] = True
    t_loop.join(timeout=3)
    if loop_error:
        check(False, f"the client loop failed: {loop_error[0]!r}")

    shared["turned_away_how"] = turned_away_how
    return report(streams, drivers, probes, t0, t_ready, ready_retry_after, t_turned_away, code, t_exit,
                  rate_before, shared, figures)


def event_loop(sel, streams, drivers, shared):
    streams_open = len(streams)
    sent = 0
    rotation = 0  # the idle connection served first, in turn, so every connection carries its share
    while not shared["stop"]:
        now = time.monotonic()
        # Pace: RATE events/s from load_started, over idle connections; backlog capped at 50.
        started = shared["load_started"]
        if started is not None:
            due = int((now - started) * RATE) - sent
            if due > 50:
                sent += due - 50
                due = 50
            rotation = (rotation + 1) % len(drivers)
            for d in drivers:
                if d.alive and d.inflight is None and d.must_reconnect:
                    sel.unregister(d.sock)
                    d.sock.close()
                    d.must_reconnect = False
                    d.parser = ResponseParser(on_end=d._end)
                    try:
                        d.connect()
                        d.reconnects += 1
                        sel.register(d.sock, selectors.EVENT_READ, d)
                    except OSError:
                        d.alive = False
                        d.closed_at = now
            for d in drivers[rotation:] + drivers[:rotation]:
                if due <= 0:
                    break
                if d.alive and d.inflight is None:
                    if d.pending_show is not None:
                        sid, d.pending_show = d.pending_show, None
                        d.inflight = (now, sid, {"phase": "show"})
                        d.outbox = request_bytes("POST", f"/sessions/{sid}/show", {})
                        d.flush()
                    else:
                        d.send(now)
                    sent += 1
                    due -= 1
            timeout = max(0.0, (sent + 1) / RATE - (now - started)) if started is not None else 0.05
        else:
            timeout = 0.05
        if streams_open == 0 and not any(d.alive for d in drivers):
            time.sleep(0.01)
            continue
        for key, _ in sel.select(timeout=min(timeout, 0.05)):
            obj = key.data
            how = "EOF"
            try:
                data = key.fileobj.recv(262144)
            except BlockingIOError:
                continue
            except OSError as e:
                data, how = b"", e.__class__.__name__
            t = time.monotonic()
            if isinstance(obj, Stream):
                if data:
                    obj.parser.feed(data)
                else:
                    obj.eof_at = t
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    streams_open -= 1
            else:
                if data:
                    obj.parser.feed(data)
                else:
                    obj.lost(t, how)
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
        for d in drivers:
            if d.alive and d.outbox:
                d.flush()


def report(streams, drivers, probes, t0, t_ready, ready_retry_after, t_turned_away, code, t_exit, rate_before,
           shared, figures) -> int:
    answers = [x for d in drivers for x in d.done]
    unanswered = [x for d in drivers for x in d.unanswered]
    statuses: dict[int, int] = {}
    for sent, got, status, sid, body in answers:
        statuses[status] = statuses.get(status, 0) + 1
    in_grace = [a for a in answers if t0 <= a[0] < t0 + GRACE]
    after_term = [a for a in answers if a[0] >= t0]
    fives = [a for a in answers if a[2] >= 500]
    last_answer = max((a[1] for a in answers), default=t0) - t0
    lat = sorted(a[1] - a[0] for a in answers if a[0] < t0)
    p99 = lat[int(len(lat) * 0.99)] * 1000 if lat else 0

    if rate_before < 0.8 * RATE:
        print(f"  note: {rate_before:.0f} pan/show per second before SIGTERM, under 80% of the {RATE:g} target "
              "(a busy machine: read the figures as a lighter load)")
    print("\nchecks after SIGTERM:")
    # Readiness turns false during the grace, while sheetd still answers: decided on what it answered
    # (how soon after SIGTERM is a figure, which a busy machine decides).
    ready_probe = next((p for p in probes if p[1] == "GET /readyz" and p[2] != 200), None)
    check(t_ready is not None and ready_probe is not None and ready_probe[2] == 503,
          f"readiness false while the listener still answers: /readyz 503 {fmt_ms(t_ready)} after SIGTERM"
          if ready_probe is not None and ready_probe[2] == 503 else
          f"readiness never answered 503 during the grace (first other answer: {ready_probe})")
    check(ready_probe is not None and (ready_probe[2] is None or (ready_probe[2] == 503 and ready_retry_after)),
          f"/readyz during the drain: {ready_probe[2] if ready_probe else '-'}"
          + (" with Retry-After" if ready_retry_after else ""))

    grace_probes = [p for p in probes if p[1] != "GET /readyz" and p[2] is not None]
    creates = [p for p in grace_probes if p[1] in ("POST /sessions", "PUT /sessions/new")]
    bad_creates = [p for p in creates
                   if not (p[2] == 503 and "retry-after" in p[3][0]
                           and p[3][0].get("content-type", "").startswith("application/problem+json")
                           and p[3][1].get("code") == "draining")]
    check((creates or GRACE < 0.2) and not bad_creates,
          f"{len(creates)} new-session requests during the grace: all 503 problem+json `draining` with Retry-After"
          + (f"; not so: {bad_creates[0][1]} at {fmt_ms(bad_creates[0][0])} → {bad_creates[0][2]} "
             f"{bad_creates[0][3]}" if bad_creates else ""))
    others = [p for p in grace_probes if p[1] not in ("POST /sessions", "PUT /sessions/new")]
    bad_others = [p for p in others if p[2] != 200]
    check((others or GRACE < 0.2) and not bad_others,
          f"{len(others)} GETs of an existing session and /healthz on new connections during the grace: all 200"
          + (f"; not so: {bad_others[0]}" if bad_others else ""))
    refused_early = [p for p in probes if p[2] is None and p[0] < GRACE - 0.05]
    check(not refused_early,
          "no new connection turned away during the grace"
          + (f"; turned away at {fmt_ms(refused_early[0][0])}: {refused_early[0][3]}" if refused_early else ""))
    check(t_turned_away is not None and t_turned_away >= GRACE - 0.05,
          f"new connections turned away {fmt_ms(t_turned_away)} after SIGTERM (the listener closes after the "
          f"{GRACE:g} s grace)")

    check(not fives, f"zero 5xx on {len(answers)} pan/show requests"
          + (f"; first: {fives[0][2]} {fives[0][4][:300]!r}" if fives else ""))
    probe_fives = [p for p in probes if p[2] is not None and p[2] >= 500 and p[2] != 503]
    check(not probe_fives, "zero 5xx on the probes other than the documented 503s"
          + (f"; first: {probe_fives[0]}" if probe_fives else ""))
    other_status = {s: n for s, n in statuses.items() if s not in (200, 409)}
    check(not other_status, f"pan/show answers are 200 or 409 only: {dict(sorted(statuses.items()))}")
    check(len(in_grace) > 0 or GRACE < 0.2, f"{len(in_grace)} pan/show requests answered during the grace on keep-alive "
                             "connections (existing sessions keep working)")
    # A request sent in the grace's last moments may reach sheetd after it stopped reading: it got no
    # answer, so it was not run (the check on sheetd's log below), and is the client's to send again.
    # Half a second before the listener closes is hundreds of times what a request takes to be read.
    early_cut = [u for u in unanswered if u[0] < t0 + GRACE - CUT_MARGIN]
    check(not early_cut, f"no request left without an answer that was sent before the grace's last "
                         f"{CUT_MARGIN:g} s ({len(unanswered)} cut at stop, all after that)"
          + (f"; {len(early_cut)} cut, first sent {fmt_ms(early_cut[0][0] - t0)} after SIGTERM" if early_cut else ""))
    # sheetd logs every request it answered (debug): one it answered whose answer never reached the
    # client was cut after it ran, i.e. an in-flight request that did not finish.
    logged: dict[str, int] = {}
    last_logged: dict[str, str] = {}
    try:
        with open(os.path.join(OUT, "sheetd.log"), encoding="utf-8", errors="replace") as f:
            for line in f:
                m = LOG_LINE.search(line)
                if m:
                    logged[m.group(1)] = logged.get(m.group(1), 0) + 1
                    last_logged[m.group(1)] = line.strip()
    except OSError:
        pass
    answered: dict[str, int] = dict(setup_answers)
    for sent, got, status, sid, body in answers:
        answered[sid] = answered.get(sid, 0) + 1
    lost = {sid: n - answered.get(sid, 0) for sid, n in logged.items() if n > answered.get(sid, 0)}
    lost_n = sum(lost.values())
    for sid in list(lost)[:3]:
        cut = [f"{(u[0] - t0) * 1000:.0f} ms ({json.dumps(u[4])}; connection ended by {u[2]} after {u[3]} bytes "
               "of an answer)" for u in unanswered if u[1] == sid]
        detail_lines.append(f"session {sid}: sheetd logged {logged[sid]} pan/show, the client got {answered.get(sid, 0)} "
                            f"answers (setup {setup_answers.get(sid, 0)}); its requests without an answer were sent "
                            f"at {', '.join(cut) or 'none'} after SIGTERM; sheetd's last log line for it: "
                            f"`{last_logged[sid]}`")
    check(logged and not lost,
          f"every pan/show sheetd ran was answered to the client ({sum(logged.values())} in sheetd's log, "
          f"{sum(answered.values())} answers)"
          + (f"; {lost_n} ran but their answer never came (cut at stop), e.g. session {next(iter(lost))}"
             if lost else ""))
    figures_lost.append(lost_n)

    no_closed = [st for st in streams if st.closed_at is None]
    closed_after_eof = [st for st in streams if st.closed_at is not None and st.eof_at is not None
                        and st.closed_at > st.eof_at]
    wrong_reason = [st for st in streams if st.closed_at is not None and st.closed_reason != "draining"]
    got = len(streams) - len(no_closed)
    check(not no_closed, f"{got} of {len(streams)} streams got `event: closed` before their socket closed"
          + (f"; without: {describe(no_closed)}" if no_closed else ""))
    for kind in ("idle", "realtime", "instant"):
        ks = [st for st in streams if st.kind == kind]
        if ks:
            miss = [st for st in ks if st.closed_at is None]
            check(not miss, f"  {kind} streams ({len(ks)}): {len(ks) - len(miss)} got `closed`")
    check(not wrong_reason, "every `closed` says reason \"draining\""
          + (f"; stream {wrong_reason[0].n}: {wrong_reason[0].closed_reason!r}" if wrong_reason else ""))
    check(not closed_after_eof, "no `closed` read after its socket's end")
    after = [st for st in streams if st.after_closed]
    check(not after, "nothing after `closed` on any stream" + (f"; {describe(after)}" if after else ""))
    torn = [st for st in streams if st.problems]
    check(not torn, f"every stream well formed ({sum(st.events for st in streams)} events, "
                    f"{sum(st.frames for st in streams)} frames: ids increasing, JSON data, each animation "
                    "ended by settled/interrupted before the next)"
          + (f"; stream {torn[0].n} ({torn[0].kind}, {torn[0].query}): {torn[0].problems}" if torn else ""))
    clean = sum(1 for st in streams if st.clean_end)
    not_eof = [st for st in streams if st.eof_at is None]
    check(not not_eof, f"every stream's socket closed by the server ({len(streams) - len(not_eof)} of "
                       f"{len(streams)})")

    check(code == 0, f"exit status {code if code is not None else 'none (still running: killed)'}")
    check(t_exit is not None and t_exit <= GRACE + EXIT_BOUND,
          f"exit {fmt_ms(t_exit)} after SIGTERM (bound: grace {GRACE:g} s + {EXIT_BOUND:g} s)")

    closed_times = sorted(st.closed_at - t0 for st in streams if st.closed_at is not None)
    eof_times = sorted(st.eof_at - t0 for st in streams if st.eof_at is not None)
    figures += [
        ("streams (idle / realtime / instant)",
         f"{len(streams)} ({sum(st.kind == 'idle' for st in streams)} / "
         f"{sum(st.kind == 'realtime' for st in streams)} / {sum(st.kind == 'instant' for st in streams)})"),
        ("keep-alive connections driving gestures", f"{len(drivers)}"),
        ("pan/show rate before SIGTERM", f"{rate_before:.0f} /s (target {RATE:g}), p99 {p99:.1f} ms"),
        ("pan/show requests answered (before / after SIGTERM)",
         f"{len(answers) - len(after_term)} / {len(after_term)} ({len(in_grace)} during the grace)"),
        ("answers by status", ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()))),
        ("requests cut when the daemon stopped (of them run by sheetd)",
         f"{len(unanswered)} ({figures_lost[0] if figures_lost else '-'})"),
        ("last pan/show answer after SIGTERM", fmt_ms(last_answer)),
        ("SIGTERM → /readyz 503", fmt_ms(t_ready)),
        ("new-session probes during the grace (503 draining)", f"{len(creates)}"),
        ("SIGTERM → first new connection turned away", f"{fmt_ms(t_turned_away)} ({shared['turned_away_how']})"),
        ("SIGTERM → first / last `closed` on a stream",
         f"{fmt_ms(closed_times[0]) if closed_times else '-'} / {fmt_ms(closed_times[-1]) if closed_times else '-'}"),
        ("streams with `closed` / clean chunked end", f"{len(closed_times)} / {clean} of {len(streams)}"),
        ("SIGTERM → last stream socket closed", fmt_ms(eof_times[-1]) if eof_times else "-"),
        ("SIGTERM → exit", f"{fmt_ms(t_exit)} (bound {GRACE + EXIT_BOUND:g} s), status {code}"),
        ("stream events / frames read", f"{sum(st.events for st in streams)} / {sum(st.frames for st in streams)}"),
    ]
    return finish(figures)


def describe(sts) -> str:
    head = ", ".join(f"#{st.n} {st.kind} {st.query} (events {st.events}, eof "
                     f"{'yes' if st.eof_at else 'no'})" for st in sts[:3])
    return head + (f" and {len(sts) - 3} more" if len(sts) > 3 else "")


def fmt_ms(t) -> str:
    return "-" if t is None else f"{t * 1000:.0f} ms"


def finish(figures) -> int:
    lines = ["| figure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in figures]
    table = "\n".join(lines)
    if figures:
        print("\n" + table + "\n")
    CHECKS.write(os.path.join(OUT, "latest.md"),
                 f"sheetd `{BIN}`, `--drain-grace {GRACE:g}`, {STREAMS} streams, {RATE:g} events/s target, "
                 f"{LOAD_SECONDS:g} s of load before SIGTERM.\n\n{table}\n\n")
    for line in detail_lines:
        print(f"  evidence: {line}")
    print(CHECKS.summary())
    return 0 if CHECKS.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
