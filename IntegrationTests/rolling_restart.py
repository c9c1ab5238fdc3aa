"""The client side and the restarts of IntegrationTests/rolling-restart (which starts Redis and the proxy,
then runs this with their ports); Python's standard library only.

What it does:

1. Starts the sheetd instances itself (it restarts them later): `--store URL --drain-grace G` on the
   given loopback ports, each logging to OUT/sheetd-N.log; their PIDs go to OUT/pids for the
   driver's cleanup.
2. Load, through the proxy only: each user creates one long-lived session before any restart
   (`PUT /sessions/{id}`; two users in three on the client clock, so every gesture can be replayed
   through `POST /simulate`), follows it with one frame stream (an EventSource-like client: on
   `closed` other than `deleted`, or when the connection drops, it waits the `retry:` the server
   sent and reconnects through the proxy with `Last-Event-ID`), and performs gestures until the end:
   `began`, 8-16 `changed` at 60 Hz, `ended` with a velocity, a pause until the animation settles
   (a card that a release dismissed is shown again). Between gestures a user sometimes lives a short
   session (create, one gesture, delete), so that creations and deletions also meet the drains.
3. Restarts: after a warm-up, each instance in turn gets SIGTERM; its exit status must be 0; it is
   started again on the same port and must answer GET /readyz 200; then the load goes on for a
   while before the next one.
4. At the end every user checks its long-lived session (GET: 200, at rest where its last animation
   went), deletes it (204), and its stream must end with `closed` (`deleted`).
5. sheet-client.js users (`--js-users`, IntegrationTests/rolling_restart_clients.mjs: the served
   sheet-client.js in Node, through the proxy) run from the start to the end, half numbering their
   events (its default), half not (`numbering: false`). After the restarts and the users above, the
   crash (`--kills`): each instance in turn killed with SIGKILL while Redis holds every write (CLIENT
   PAUSE WRITE) and each sheet-client.js user has had at least one event acknowledged since, so that
   the store lacks acknowledged events of every user whose session was there, as after a crash in
   the write-behind's milliseconds, only certainly; then (Redis writing again) each user reads its
   session and counts what it lacks, and goes on. Then each instance killed once more under the
   users' load, requests in flight. Each killed instance is started again on its port.

Checks (each failure is kept with its context in OUT/errors.jsonl):
- zero sessions lost: no 404 for a session that was created and not deleted, and every long-lived
  session still there at the end;
- zero 5xx seen by a client (requests and stream reconnections), zero transport errors;
- no state lost: no 409 (a `changed`/`ended` whose `began` an instance never saw), and every
  gesture of a client-clock session replays through `POST /simulate` to the same results;
- each stream reconnected at most once per restart (from one SIGTERM to the next), and resumed by
  Last-Event-ID: frame ids `n:k` strictly increase across reconnections (none repeated or out of
  order), and no resumption started with a `snapshot` (which means the instance that took over did
  not know the animation);
- every animation a user started while its stream was connected reached the stream (a stream left on
  an instance that no longer serves the session would miss them);
- each instance exited 0 on SIGTERM and was ready again;
- sheet-client.js users: every one ran to the end and deleted its session; across the kills, the
  numbering ones lost no acknowledged event: every event the store lacked after a kill was sent again
  by the client and applied (the session's next snapshot is at the client's next event), the client
  could send every one again (`acknowledgedLost` 0), and at the end each session's last applied seq
  is the last the client saw acknowledged; no error reached them. The users that opted out lost what
  the store lacked (a figure: their loss, and what they were refused after it).

Figures (OUT/result.json, OUT/js-users.json per sheet-client.js user, and the report on stdout):
requests and their latency (overall and in the seconds around each restart), reconnections and the
gap each left in its stream, drain and restart durations, the requests the proxy sent to a second
instance (from its access log), the sessions that moved; for the sheet-client.js users, by group,
the acknowledged events the store lacked after the kills, those sent again, tries sent again after
a lost answer and the replays that answered them, and the errors that reached them. The last line
is `rolling-restart: N passed, M failed`.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import queue
import random
import re
import socket
import subprocess
import sys
import threading
import time
import uuid

from sheetkit.harness import KeepAlive, Sheetd, decoded
from sheetkit.redis import call
from sheetkit.sse import ResumePoint, StreamBody, open_stream

P = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
P.add_argument("--bin", required=True)
P.add_argument("--ports", required=True, help="the instances' ports, comma-separated")
P.add_argument("--proxy-port", type=int, required=True)
P.add_argument("--proxy", default="nginx")
P.add_argument("--store", default="", help="redis://host:port, or empty for no --store flag")
P.add_argument("--drain-grace", type=float, default=1.0)
P.add_argument("--users", type=int, default=12)
P.add_argument("--warmup", type=float, default=6.0)
P.add_argument("--settle", type=float, default=6.0, help="seconds of load between one instance ready and the next SIGTERM")
P.add_argument("--tail", type=float, default=6.0, help="seconds of load after the last restart")
P.add_argument("--fps", type=int, default=30)
P.add_argument("--access-log", default="")
P.add_argument("--js-users", type=int, default=6, help="sheet-client.js users in Node (half numbering); 0: none")
P.add_argument("--kills", type=int, default=1, choices=(0, 1),
               help="1: after the restarts, each instance killed (SIGKILL) with Redis's writes held, then once more under "
                    "load (needs --store and --js-users)")
P.add_argument("--client-module", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources",
                                                      "SheetService", "Resources", "sheet-client.js"))
P.add_argument("--out", required=True)
ARGS = P.parse_args()

HOST = "127.0.0.1"
PORTS = [int(p) for p in ARGS.ports.split(",")]
T0 = time.monotonic()
STOP = threading.Event()
LOCK = threading.Lock()


def now():
    return time.monotonic() - T0


# --------------------------------------------------------------------------------------------
# What the run records.


class Record:
    def __init__(self):
        self.requests = []  # (t, kind, status, seconds)
        self.errors = collections.Counter()
        self.samples = []
        self.counts = collections.Counter()
        self.reconnects = []  # dicts: stream, t, why, gap, resumed_with
        self.restarts = []  # dicts per instance
        self.kills = []  # dicts per SIGKILL
        self.animations = []  # (sid, n, t_started, duration)
        self.streams = {}  # sid -> Stream
        self.lost = set()  # sessions that answered 404 while they should have existed

    def error(self, kind, detail, **context):
        with LOCK:
            self.errors[kind] += 1
            if sum(1 for s in self.samples if s["kind"] == kind) < 20:
                self.samples.append({"kind": kind, "t": round(now(), 3), "detail": detail, **context})

    def request(self, kind, status, seconds):
        with LOCK:
            self.requests.append((now(), kind, status, seconds))


REC = Record()


# --------------------------------------------------------------------------------------------
# The instances.


class Instance:
    def __init__(self, n, port):
        self.n, self.port, self.sheetd = n, port, None

    @property
    def proc(self):
        return self.sheetd.proc if self.sheetd else None

    def start(self):
        flags = ["--host", HOST, "--log-level", "info", "--drain-grace", str(ARGS.drain_grace)]
        if ARGS.store:
            flags += ["--store", ARGS.store]
        path = os.path.join(ARGS.out, f"sheetd-{self.n}.log")
        with open(path, "a") as log:
            log.write(f"---- started at t={now():.3f}: {' '.join([ARGS.bin] + flags)} --port {self.port}\n")
        self.sheetd = Sheetd(ARGS.bin, flags, port=self.port, log=path).launch()
        write_pids()

    def ready(self, timeout=15.0):
        try:
            self.sheetd.wait_ready(timeout)
            return True
        except RuntimeError:
            return False

    def stop(self, timeout):
        return self.sheetd.stop(timeout)


INSTANCES = [Instance(n, p) for n, p in enumerate(PORTS)]


def write_pids():
    tmp = os.path.join(ARGS.out, "pids.tmp")
    with open(tmp, "w") as f:
        for i in INSTANCES:
            if i.proc is not None and i.proc.poll() is None:
                f.write(f"{i.proc.pid}\n")
    os.replace(tmp, os.path.join(ARGS.out, "pids"))


# --------------------------------------------------------------------------------------------
# HTTP through the proxy: one keep-alive connection per user.


class Client:
    def __init__(self):
        self.link = KeepAlive(ARGS.proxy_port)

    def call(self, method, path, body=None, kind=None):
        # An event that carries `seq` is idempotent (docs/HTTP.md): an answer lost on the way (a
        # 502 from nginx whose instance closed the connection while draining, a transport error)
        # is asked for again with the same body, as sheet-client.js does; sheetd applies it once.
        # So is POST /simulate, which changes nothing (nginx does not resend a POST either).
        again = isinstance(body, dict) and "seq" in body or path == "/simulate"
        for attempt in range(4):
            t = time.perf_counter()
            status, raw, headers, error = self.link.request(method, path, body)
            seconds = time.perf_counter() - t
            lost = bool(error) or status in (502, 503, 504)
            if not (lost and again and attempt < 3):
                break
            with LOCK:
                REC.counts["retried with the same seq" if path != "/simulate" else "simulations asked again"] += 1
            time.sleep(0.1 * (attempt + 1))
        if attempt > 0 and status == 200 and (headers or {}).get("sheetd-replay") == "true":
            with LOCK:
                REC.counts["retries answered as a replay"] += 1
        REC.request(kind or method, status, seconds)
        if error:
            data = "" if body is None else json.dumps(body, separators=(",", ":"))
            REC.error("transport", f"{method} {path}: {error}", body=data[:400])
            return 0, None
        obj = decoded(raw)
        if status >= 500:
            data = "" if body is None else json.dumps(body, separators=(",", ":"))
            REC.error("5xx", f"{method} {path}: {status}", body=data[:400], response=str(obj)[:400])
        return status, obj


# --------------------------------------------------------------------------------------------
# A frame stream that behaves like an EventSource.


class Stream(threading.Thread):
    def __init__(self, sid):
        super().__init__(daemon=True)
        self.sid = sid
        self.at = ResumePoint()  # retry, Last-Event-ID, the last frame
        self.frames = collections.defaultdict(list)  # animation -> [(t, k)]
        self.intervals = []  # [t_open, t_close) while connected
        self.deleted = threading.Event()
        self.opened = threading.Event()
        self.connections = 0
        self.failed_opens = 0

    def run(self):
        while not self.deleted.is_set():
            why, t_end, t_last_event = self.once()
            if self.deleted.is_set() or why == "deleted":
                self.deleted.set()
                return
            if why in ("refused", "status"):
                self.failed_opens += 1
                if self.failed_opens > 10:
                    REC.error("stream", f"{self.sid}: gave up after 10 failed reconnections")
                    return
                time.sleep(self.at.retry)
                continue
            # Like an EventSource: wait `retry`, then reconnect with Last-Event-ID.
            with LOCK:
                REC.reconnects.append({"stream": self.sid, "t": t_end, "why": why, "last_event": t_last_event,
                                       "last_id": self.at.last_id})
            time.sleep(self.at.retry)

    def once(self):
        """One connection; returns (why it ended, when, when its last event arrived)."""
        sock = None
        path = f"/sessions/{self.sid}/frames?fps={ARGS.fps}"
        t_open = now()
        t_last = None
        established = False
        resuming = self.connections > 0
        try:
            sock = socket.create_connection((HOST, ARGS.proxy_port), timeout=5)
            sock.settimeout(25)  # a keep-alive comment comes every 15 s
            opened = open_stream(sock, path, f"{HOST}:{ARGS.proxy_port}", self.at.last_id)
            if opened is None:
                REC.error("stream", f"{self.sid}: connection closed before the response headers")
                return "refused", now(), None
            status, hdrs, raw = opened
            REC.request("GET frames", status, now() - t_open)
            if status != 200:
                kind = "lost" if status == 404 else "5xx" if status >= 500 else "stream"
                if status == 404:
                    REC.lost.add(self.sid)
                REC.error(kind, f"GET {path} (Last-Event-ID {self.at.last_id}): status {status}", response=raw[:300].decode("latin-1"))
                return "status", now(), None
            established = True
            self.connections += 1
            self.failed_opens = 0
            self.opened.set()
            chunked = hdrs.get("transfer-encoding", "").lower() == "chunked"
            interval = [now(), None]
            self.intervals.append(interval)
            body = StreamBody(raw, chunked, lambda: sock.recv(65536))
            try:
                for i, event in enumerate(self.at.events(body)):
                    self.event(event, resuming and i == 0)
                    t_last = now()
                    if event.kind == "closed":
                        return "deleted" if event.reason == "deleted" else f"closed: {event.reason}", now(), t_last
                return "ended without `closed`" if body.end == "ended" else body.end, now(), t_last
            finally:
                interval[1] = now()
        except (OSError, ValueError) as e:
            if self.deleted.is_set():
                return "deleted", now(), t_last
            if not established:
                REC.error("stream", f"{self.sid}: opening the stream: {type(e).__name__}: {e}")
                return "refused", now(), None
            return f"error: {type(e).__name__}", now(), t_last
        finally:
            if sock is not None:
                sock.close()

    def event(self, event, first_after_resume):
        with LOCK:
            REC.counts[f"SSE {event.kind}"] += 1
        if first_after_resume:
            with LOCK:
                REC.counts[f"resumed with {event.kind}"] += 1
            if event.kind == "snapshot":
                REC.error("resume", f"{self.sid}: resumed from Last-Event-ID {self.at.last_id} with a snapshot: "
                          "the instance that took over did not know the animation")
        if event.kind == "frame":
            if event.problem:
                kind = "order" if event.frame else "stream"
                REC.error(kind, f"{self.sid}: {event.problem}" + (" (first after a reconnection)" if first_after_resume else ""))
            if event.frame:
                self.frames[event.frame[0]].append((now(), event.frame[1]))


# --------------------------------------------------------------------------------------------
# A session and its gestures.

PRESETS = ["facebook", "twitter", "fluid", "glide"]
COMPARE = ("phase", "state", "detent", "constant", "dimmerAlpha", "progress")


def close(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-7)
    return a == b


class Session:
    def __init__(self, client, client_clock, long_lived):
        self.c = client
        self.sid = ("rr-" if long_lived else "rs-") + uuid.uuid4().hex[:20]
        self.config = {"preset": random.choice(PRESETS)}
        if client_clock:
            self.config["clock"] = "client"
        self.client_clock = client_clock
        self.seq = 0
        self.vt0 = random.uniform(10, 1000) - time.monotonic()
        self.last_time = -1.0
        self.anim = None  # (detent, dismiss, t_end_monotonic)
        self.hidden = False
        self.rest = None
        self.span = []
        self.live = False
        self.broken = False

    def t(self):
        t = round(time.monotonic() + self.vt0, 4)
        if t <= self.last_time:
            t = round(self.last_time + 0.0001, 4)
        self.last_time = t
        return t

    def expect(self, status, want, what, obj):
        if status == want:
            return True
        if status == 0 or status >= 500:
            pass  # counted by the client
        elif status == 404 and self.live:
            REC.lost.add(self.sid)
            REC.error("lost", f"{what} on {self.sid}: 404 for a session that was created and not deleted", response=str(obj)[:300])
        elif status == 409:
            REC.error("state", f"{what} on {self.sid}: 409 (the instance did not have the session's latest state)",
                      response=str(obj)[:300])
        else:
            REC.error("status", f"{what} on {self.sid}: {status}, expected {want}", response=str(obj)[:300])
        self.broken = True
        return False

    def create(self):
        status, obj = self.c.call("PUT", f"/sessions/{self.sid}", self.config, "PUT session")
        if not self.expect(status, 201, "PUT", obj):
            return False
        self.live = True
        with LOCK:
            REC.counts["sessions created"] += 1
        self.detents = obj["detents"]
        self.hidden = obj.get("state") == "hidden"
        return True

    def event(self, kind, body, name):
        body = dict(body)
        if self.client_clock:
            body["time"] = self.t()
        # Numbered, so a retry of a lost answer is applied once.
        self.seq += 1
        body["seq"] = self.seq
        status, res = self.c.call("POST", f"/sessions/{self.sid}/{kind}", body, name)
        if 0 < status < 500 and status != 200:
            self.seq -= 1  # refused: the seq is not taken, the next request has it (docs/HTTP.md)
        if not self.expect(status, 200, name, res):
            return None
        body.pop("seq")
        ev = dict(body) if kind == "pan" else {"type": kind, **body}
        self.span.append((ev, res))
        a = res.get("animation")
        if a:
            self.anim = (a.get("detent"), bool(a.get("dismiss")), time.monotonic() + a["duration"])
            self.hidden = bool(a.get("dismiss"))
            with LOCK:
                REC.animations.append((self.sid, a.get("id"), now(), a["duration"]))
        return res

    def settle(self):
        """Waits for the running animation to end; a card at rest at a detent starts a new span."""
        if self.anim is not None:
            wait = self.anim[2] - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if not self.anim[1]:
                self.rest, self.span = self.anim[0], []
        time.sleep(random.uniform(0.1, 0.3))

    def gesture(self):
        self.settle()
        if self.hidden:
            # A hidden card (created hidden, or dismissed by the last release) is shown first.
            if self.event("show", {}, "POST show") is None:
                return
            self.settle()
        began = self.event("pan", {"phase": "began"}, "POST pan began")
        if began is None:
            return
        if began.get("state") != "dragging":
            REC.error("state", f"began on {self.sid}: state {began.get('state')!r}")
        values = list(self.detents.values())
        target = random.choice(values) + random.gauss(0, 30) - began["constant"]
        n = random.randint(8, 16)
        tr = 0.0
        for k in range(1, n + 1):
            time.sleep(1 / 60)
            tr = round(target * (k / n) ** 0.8 + random.gauss(0, 1.5), 2)
            if self.event("pan", {"phase": "changed", "translation": tr}, "POST pan changed") is None:
                return
        time.sleep(1 / 60)
        v = round(random.choice([-1, 1]) * random.uniform(0, 1500), 1)
        if self.event("pan", {"phase": "ended", "translation": tr, "velocity": v}, "POST pan ended") is None:
            return
        with LOCK:
            REC.counts["gestures"] += 1
        if self.client_clock:
            self.replay()

    def replay(self):
        config = dict(self.config)
        if self.rest is not None:
            config["initialDetent"] = self.rest
        req = {"config": config, "events": [e for e, _ in self.span], "fps": 60}
        if len(json.dumps(req)) > 15000:
            return
        status, sim = self.c.call("POST", "/simulate", req, "POST simulate")
        if status != 200:
            if 0 < status < 500:
                REC.error("status", f"POST /simulate: {status}", response=str(sim)[:300])
            return
        with LOCK:
            REC.counts["gestures replayed"] += 1
        for i, ((ev, got), want) in enumerate(zip(self.span, sim["results"])):
            diff = [k for k in COMPARE if not close(got.get(k), want.get(k))]
            gs, ws = got.get("snap") or {}, want.get("snap") or {}
            if gs.get("detent") != ws.get("detent"):
                diff.append("snap.detent")
            if diff:
                REC.error("replay", f"{self.sid} event {i} ({ev.get('phase') or ev.get('type')}): "
                          + ", ".join(f"{k} session {got.get(k)!r} /simulate {want.get(k)!r}" for k in diff[:3]),
                          events=json.dumps([e for e, _ in self.span])[:3000])
                break

    def finish(self):
        """The end of a life: the session must still be there, at rest where it was sent; then delete it."""
        self.settle()
        status, snap = self.c.call("GET", f"/sessions/{self.sid}", None, "GET session")
        if self.expect(status, 200, "GET (end)", snap) and self.anim is not None:
            # A client-clock session is sampled at its last event's time: its last animation may
            # still be running there; a server-clock one has settled.
            want = "hidden" if self.hidden else self.anim[0]
            rest = ("resting", "hidden") + (("animating",) if self.client_clock else ())
            if snap.get("detent") != want or snap.get("state") not in rest:
                REC.error("state", f"{self.sid} at the end: {snap.get('state')} at {snap.get('detent')!r}, its last "
                          f"animation went to {want!r}")
        status, obj = self.c.call("DELETE", f"/sessions/{self.sid}", None, "DELETE session")
        self.expect(status, 204, "DELETE", obj)
        self.live = False


def user(k):
    c = Client()
    s = Session(c, client_clock=k % 3 != 0, long_lived=True)
    for _ in range(20):
        if s.create():
            break
        time.sleep(0.5)
    else:
        return
    stream = Stream(s.sid)
    REC.streams[s.sid] = stream
    stream.start()
    stream.opened.wait(5)
    while not STOP.is_set():
        s.broken = False
        s.gesture()
        if s.broken:
            time.sleep(0.5)  # the failure is counted; do not hammer
        if random.random() < 0.2 and not STOP.is_set():
            short = Session(c, client_clock=True, long_lived=False)
            if short.create():
                short.gesture()
                short.finish()
            with LOCK:
                REC.counts["short sessions"] += 1
    s.finish()
    stream.join(5)
    if stream.is_alive():
        REC.error("stream", f"{s.sid}: no `closed` within 5 s of the DELETE")
        stream.deleted.set()


# --------------------------------------------------------------------------------------------
# sheet-client.js users, in Node (IntegrationTests/rolling_restart_clients.mjs), and the kills.


class JSUsers:
    """The Node process of the sheet-client.js users: commands on its stdin, events from its stdout."""

    def __init__(self):
        # sheet-client.js as sheetd serves it, with the extension that makes Node read it as a module.
        module = os.path.join(ARGS.out, "sheet-client.mjs")
        with open(ARGS.client_module, "rb") as src, open(module, "wb") as dst:
            dst.write(src.read())
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rolling_restart_clients.mjs")
        self.log = open(os.path.join(ARGS.out, "js-users.log"), "w")
        self.proc = subprocess.Popen(
            ["node", script, "--module", module, "--base", f"http://{HOST}:{ARGS.proxy_port}/", "--users", str(ARGS.js_users)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1)
        self.events = queue.Queue()
        self.report = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                self.log.write(line)
                continue
            if event.get("event") == "report":
                self.report = event["users"]
            self.events.put(event.get("event"))
        self.events.put(None)

    def send(self, cmd):
        try:
            self.proc.stdin.write(json.dumps({"cmd": cmd}) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass

    def wait(self, event, seconds):
        """Whether `event` came within `seconds` (other events before it are dropped)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                got = self.events.get(timeout=left)
            except queue.Empty:
                return False
            if got == event:
                return True
            if got is None:
                return False
        return False

    def finish(self):
        self.send("stop")
        if self.wait("report", 60):
            with open(os.path.join(ARGS.out, "js-users.json"), "w") as f:
                json.dump(self.report, f, indent=1)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def redis_port():
    return int(ARGS.store[len("redis://"):].rstrip("/").rpartition(":")[2])


def kill(i):
    """SIGKILL of instance i; waits for it to be gone."""
    i.proc.kill()
    i.proc.wait()
    write_pids()


def restart(i, r):
    time.sleep(1.0)  # the instance down a while: its sessions go to the others meanwhile
    i.start()
    r["ready_ok"] = i.ready()
    r["ready"] = now()
    time.sleep(2.0)  # the users' sessions back on it before the next kill


def crashes(js):
    """Each instance killed with Redis's writes held and every user's events held with them (each
    user's session lacks at least one acknowledged event), then each killed once more under load."""
    for i in INSTANCES:
        r = {"instance": i.n, "kind": "held"}
        call(redis_port(), "CLIENT", "PAUSE", "10000", "WRITE")
        js.send("hold")
        r["held"] = js.wait("held", 15)
        r["killed"] = now()
        kill(i)
        call(redis_port(), "CLIENT", "UNPAUSE")
        js.send("killed")
        r["measured"] = js.wait("measured", 20)
        restart(i, r)
        REC.kills.append(r)
        print(f"rolling-restart: instance {i.n}: SIGKILL with the store's writes held "
              f"({'every user held' if r['held'] else 'NOT every user held'}), ready again", file=sys.stderr)
    for i in INSTANCES:
        r = {"instance": i.n, "kind": "live", "held": True, "measured": True, "killed": now()}
        kill(i)
        restart(i, r)
        REC.kills.append(r)
        print(f"rolling-restart: instance {i.n}: SIGKILL under load, ready again", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# The run.


def redis_dbsize(url):
    try:
        host, _, port = url[len("redis://"):].rstrip("/").rpartition(":")
        with socket.create_connection((host or HOST, int(port)), timeout=2) as s:
            s.sendall(b"DBSIZE\r\n")
            return int(s.recv(64).decode().strip().lstrip(":"))
    except (OSError, ValueError):
        return "?"


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None


def main():
    os.makedirs(ARGS.out, exist_ok=True)
    for i in INSTANCES:
        i.start()
    for i in INSTANCES:
        if not i.ready():
            print(f"rolling-restart: instance {i.n} (port {i.port}) did not become ready; see {ARGS.out}/sheetd-{i.n}.log",
                  file=sys.stderr)
            for j in INSTANCES:
                if j.proc.poll() is None:
                    j.stop(5)
            print("rolling-restart: 0 passed, 1 failed")
            return 1
    if ARGS.proxy == "haproxy":
        time.sleep(1.5)  # its health checks (every 500 ms) see the instances up
    js = JSUsers() if ARGS.js_users > 0 else None
    if js is not None and not js.wait("ready", 30):
        REC.error("js", f"the sheet-client.js users did not all create their sessions; see {ARGS.out}/js-users.log")
    users = [threading.Thread(target=user, args=(k,), daemon=True) for k in range(ARGS.users)]
    for u in users:
        u.start()
        time.sleep(0.05)
    print(f"rolling-restart: {ARGS.users} users through {ARGS.proxy} :{ARGS.proxy_port}; warm-up {ARGS.warmup:.0f} s",
          file=sys.stderr)
    time.sleep(ARGS.warmup)
    for i in INSTANCES:
        r = {"instance": i.n, "port": i.port, "sigterm": now()}
        rc = i.stop(ARGS.drain_grace + 20)
        r["exited"] = now()
        r["exit"] = rc
        i.start()
        r["ready_ok"] = i.ready()
        r["ready"] = now()
        REC.restarts.append(r)
        print(f"rolling-restart: instance {i.n}: SIGTERM, exit {rc} after {r['exited'] - r['sigterm']:.2f} s, "
              f"ready again {r['ready'] - r['exited']:.2f} s later", file=sys.stderr)
        time.sleep(ARGS.settle if i is not INSTANCES[-1] else ARGS.tail)
    STOP.set()
    for u in users:
        u.join(30)
    if js is not None:
        if ARGS.kills and ARGS.store.startswith("redis://"):
            crashes(js)
        js.finish()
    exits = []
    for i in INSTANCES:
        exits.append(i.stop(ARGS.drain_grace + 20))
    write_pids()
    return report(exits, js.report if js is not None else None)


def js_figures(users, check):
    """The sheet-client.js users' checks and figures, by group (numbering or not)."""
    if users is None:
        if ARGS.js_users > 0:
            check(False, f"the sheet-client.js users reported (see {ARGS.out}/js-users.log)")
        return {}
    held = [k for k in REC.kills if k["kind"] == "held"]
    if REC.kills:
        check(all(k["held"] and k["measured"] and k.get("ready_ok") for k in REC.kills),
              f"each SIGKILL: {len(held)} with every sheet-client.js user's events held and measured, "
              f"{len(REC.kills) - len(held)} under load; each instance ready again after it: "
              + ", ".join(f"{k['instance']} ({k['kind']}): {'ok' if k['held'] and k['measured'] and k.get('ready_ok') else 'no'}"
                          for k in REC.kills))
    failed = [u for u in users if "failed" in u or not u.get("deleted")]
    check(not failed, f"sheet-client.js users: {len(users) - len(failed)} of {len(users)} ran to the end and deleted "
          "their session" + (f"; {failed[0].get('failed', failed[0].get('errorSamples'))}" if failed else ""))
    out = {"lines": []}
    for numbering in (True, False):
        group = [u for u in users if u.get("numbering") == numbering and "failed" not in u]
        if not group:
            continue
        stats = collections.Counter()
        errors = collections.Counter()
        for u in group:
            stats.update(u["stats"])
            errors.update(u["errors"])
        kills = [k for u in group for k in u["kills"]]
        lacking = sum(k["lacking"] for k in kills)
        figures = {"users": len(group), "gestures": sum(u["gestures"] for u in group),
                   "events acknowledged": sum(u["acknowledged"] for u in group),
                   "acknowledged events the store lacked after the held kills": lacking,
                   "users whose session lacked some": sum(1 for u in group if any(k["lacking"] for k in u["kills"])),
                   "errors that reached the client": dict(errors), **{k: v for k, v in stats.items()}}
        name = "numbering" if numbering else "not numbering"
        out[name] = figures
        if numbering:
            resent = sum(k["resent"] or 0 for k in kills)
            unrecovered = [f"{u['id']}: lacked {k['lacking']}, sent again {k['resent']}, state at its next event {k['state']}"
                           for u in group for k in u["kills"] if k["resent"] != k["lacking"] or k["state"] is not True]
            mismatched = [f"{u['id']}: client {u['lastSeq']['acknowledged']}, session {u['lastSeq']['session']}"
                          for u in group if u["lastSeq"]["session"] != u["lastSeq"]["acknowledged"]]
            if held:
                check(all(any(k["lacking"] for k in u["kills"]) for u in group),
                      f"numbering sheet-client.js users: every session lacked acknowledged events after the kill of its "
                      f"instance ({lacking} events in all, {figures['users whose session lacked some']} of {len(group)} "
                      "users)")
            check(not unrecovered and stats["acknowledgedLost"] == 0 and not mismatched,
                  f"numbering sheet-client.js users: 0 acknowledged events lost across {len(REC.kills)} SIGKILLs: the "
                  f"{lacking} the store lacked were sent again ({resent}) and applied (the session at the client's next "
                  f"event), none the client could not send again ({stats['acknowledgedLost']}), every session's last "
                  f"applied seq the last one acknowledged ({len(group) - len(mismatched)} of {len(group)})"
                  + (f"; {(unrecovered + mismatched)[:3]}" if unrecovered or mismatched else ""))
            check(not errors, f"numbering sheet-client.js users: no error reached them ({sum(errors.values())}); "
                  f"{stats['retried']} tries sent again, {stats['replays']} answered as a replay, "
                  f"{stats['renumbered']} renumbered")
            out["lines"].append(
                f"sheet-client.js, numbering (default): {len(group)} users, {figures['events acknowledged']} events "
                f"acknowledged; the held kills left {lacking} acknowledged events out of the store, all {resent} sent "
                f"again and applied: 0 lost; {stats['retried']} tries sent again after a lost answer, {stats['replays']} "
                f"answered as replays, {stats['resent']} requests resent in all, errors {dict(errors) or 0}")
        else:
            out["lines"].append(
                f"sheet-client.js, numbering off: {len(group)} users, {figures['events acknowledged']} events "
                f"acknowledged; the held kills left {lacking} acknowledged events out of the store, all lost; errors "
                f"that reached them {dict(errors) or 0}")
    return out


def report(final_exits, js_users):
    t_end = now()
    checks = []

    def check(ok, text):
        checks.append((bool(ok), text))

    e = REC.errors
    reqs = REC.requests
    n5 = sum(1 for r in reqs if r[2] >= 500)
    lost = e["lost"]
    check(REC.restarts and all(r["exit"] == 0 for r in REC.restarts),
          "each instance exited 0 on SIGTERM under load: " + ", ".join(f"{r['instance']}: {r['exit']}" for r in REC.restarts))
    check(all(r["ready_ok"] for r in REC.restarts), "each instance was ready again on its port: "
          + ", ".join(f"{r['instance']}: {r['ready'] - r['exited']:.2f} s" for r in REC.restarts))
    long_lost = sum(1 for sid in REC.lost if sid.startswith("rr-"))
    check(lost == 0, f"zero sessions lost: {len(REC.lost)} of {REC.counts['sessions created']} sessions answered 404 "
          f"while they existed ({long_lost} of the {len(REC.streams)} long-lived ones; {lost} requests)")
    check(n5 == 0, f"zero 5xx seen by clients: {n5} of {len(reqs)} requests "
          f"({REC.counts['retried with the same seq']} lost answers asked for again with the same seq, "
          f"{REC.counts['retries answered as a replay']} of them answered as a replay)")
    check(e["transport"] == 0, f"zero transport errors: {e['transport']}")
    check(e["state"] == 0 and e["replay"] == 0,
          f"no state lost: {e['state']} 409s or wrong states, {e['replay']} gestures that /simulate replays differently "
          f"({REC.counts['gestures replayed']} of {REC.counts['gestures']} gestures replayed)")
    check(e["status"] == 0 and e["stream"] == 0, f"no other unexpected status or stream failure: {e['status']} statuses, "
          f"{e['stream']} stream failures")

    # Reconnections per stream and restart window (one SIGTERM to the next).
    bounds = [r["sigterm"] for r in REC.restarts] + [math.inf]
    per = collections.Counter()
    before = 0
    for rc in REC.reconnects:
        w = next((j for j in range(len(REC.restarts)) if bounds[j] <= rc["t"] < bounds[j + 1]), None)
        if w is None:
            before += 1
        per[(rc["stream"], w)] += 1
    worst = max(per.values(), default=0)
    check(worst <= 1 and before == 0,
          f"each stream reconnected at most once per restart: {len(REC.reconnects)} reconnections of "
          f"{len(REC.streams)} streams, at most {worst} for one stream in one restart, {before} outside any restart")
    check(e["order"] == 0 and e["resume"] == 0,
          f"streams resumed by Last-Event-ID: {e['order']} frames repeated or out of order, {e['resume']} resumptions "
          f"that began with a snapshot; first event after a reconnection: "
          + (", ".join(f"{k[len('resumed with '):]} {v}" for k, v in REC.counts.items() if k.startswith("resumed with ")) or "none"))

    # Animations started while the session's stream was connected must reach it.
    expected = seen = 0
    missed = []
    for sid, n, t, dur in REC.animations:
        st = REC.streams.get(sid)
        if st is None or n is None:
            continue
        horizon = t + min(dur, 0.15) + 0.05
        if not any(a <= t and (b is None or b >= horizon) for a, b in st.intervals):
            continue
        expected += 1
        if st.frames.get(n):
            seen += 1
        else:
            missed.append(f"{sid} animation {n} at t={t:.2f}")
    check(expected and seen == expected, f"streams followed every animation started while connected: {seen} of {expected}"
          + (f"; missed {', '.join(missed[:3])}" if missed else ""))
    check(all(x == 0 for x in final_exits), f"each instance exited 0 at the end: {final_exits}")
    js = js_figures(js_users, check)

    # The proxy's view: requests sent to a second instance, sessions that moved.
    retried = moved = 0
    proxy_5xx = collections.Counter()
    if ARGS.access_log and os.path.exists(ARGS.access_log):
        owners = collections.defaultdict(set)
        # deploy/nginx.conf's log_format sheetd (deploy/haproxy.cfg logs the same fields).
        pattern = re.compile(r'^(\S+) (\S+) (\S+) (\d+) (\S+) (\S+) "([^"]*)"')
        for line in open(ARGS.access_log):
            m = pattern.match(line)
            if not m:
                continue
            uri, status, key = m.group(3), m.group(4), m.group(5)
            ups = [u.strip() for u in m.group(7).split(",") if u.strip() not in ("", "-")]
            if len(ups) > 1:
                retried += 1
            if status.startswith("5"):
                proxy_5xx[status] += 1
            if uri.startswith("/sessions/") and ups:
                owners[key].add(ups[-1])
        moved = sum(1 for s in owners.values() if len(s) > 1)

    lat = [r[3] for r in reqs if r[1] != "GET frames" and r[2]]
    near = [r[3] for r in reqs if r[1] != "GET frames" and r[2]
            and any(x["sigterm"] - 0.5 <= r[0] <= x["ready"] + 2 for x in REC.restarts)]
    gaps = []
    for rc in REC.reconnects:
        st = REC.streams.get(rc["stream"])
        after = [a for a, b in st.intervals if a > rc["t"]] if st else []
        if rc["last_event"] is not None and after:
            gaps.append(after[0] - rc["last_event"])
    ms = lambda x: "-" if x is None else f"{x * 1000:.1f}"
    sec = lambda x: None if x is None else round(x, 3)
    figures = {
        "requests": len(reqs), "5xx": n5, "gestures": REC.counts["gestures"],
        "short sessions": REC.counts["short sessions"], "streams": len(REC.streams),
        "reconnections": len(REC.reconnects),
        "reconnection causes": dict(collections.Counter(r["why"] for r in REC.reconnects)),
        "requests the proxy sent to a second instance": retried, "sessions that reached more than one instance": moved,
        "proxy 5xx": dict(proxy_5xx),
        "latency ms p50/p99/max": [ms(percentile(lat, .5)), ms(percentile(lat, .99)), ms(max(lat, default=0))],
        "latency ms p50/p99/max around restarts": [ms(percentile(near, .5)), ms(percentile(near, .99)), ms(max(near, default=0))],
        "stream gap s p50/max (last event to reopened)": [sec(percentile(gaps, .5)), sec(max(gaps, default=None))],
        "restarts": [{"instance": r["instance"], "exit": r["exit"], "drain s": round(r["exited"] - r["sigterm"], 3),
                      "down s": round(r["ready"] - r["exited"], 3)} for r in REC.restarts],
        "errors": dict(e), "counts": dict(REC.counts), "seconds": round(t_end, 1),
        "kills": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in REC.kills],
        "sheet-client.js users": js,
    }
    with open(os.path.join(ARGS.out, "result.json"), "w") as f:
        json.dump(figures, f, indent=1)
    with open(os.path.join(ARGS.out, "errors.jsonl"), "w") as f:
        for s in REC.samples:
            f.write(json.dumps(s) + "\n")
    print(f"\n# rolling restart: {len(INSTANCES)} sheetd behind {ARGS.proxy}, store {ARGS.store or 'none (in memory)'}, "
          f"drain grace {ARGS.drain_grace:g} s, {ARGS.users} users, {t_end:.0f} s\n")
    for r in figures["restarts"]:
        print(f"- instance {r['instance']}: exit {r['exit']}, drained in {r['drain s']:.2f} s, ready {r['down s']:.2f} s later")
    print(f"- {len(reqs)} requests, {REC.counts['gestures']} gestures ({REC.counts['gestures replayed']} replayed), "
          f"{REC.counts['short sessions']} short sessions, {len(REC.streams)} streams, "
          f"{sum(len(v) for s in REC.streams.values() for v in s.frames.values())} frames")
    print(f"- latency (ms, p50 / p99 / max): all {' / '.join(figures['latency ms p50/p99/max'])}; "
          f"from 0.5 s before each SIGTERM to 2 s after ready {' / '.join(figures['latency ms p50/p99/max around restarts'])}")
    print(f"- reconnections: {len(REC.reconnects)} {figures['reconnection causes']}; gap in the stream (s, p50 / max): "
          f"{figures['stream gap s p50/max (last event to reopened)'][0]} / {figures['stream gap s p50/max (last event to reopened)'][1]}")
    print(f"- {ARGS.proxy}: {retried} requests sent on to a second instance, {moved} sessions served by more than one "
          f"instance, 5xx it answered: {dict(proxy_5xx) or 0}")
    for line in js.get("lines", []):
        print(f"- {line}")
    if REC.samples:
        print(f"- errors {dict(e)}; the first ones (all in {ARGS.out}/errors.jsonl):")
        for s in REC.samples[:8]:
            print(f"    t={s['t']}: [{s['kind']}] {s['detail'][:300]}")
    if ARGS.store.startswith("redis://"):
        print(f"- Redis keys left at the end (every session was deleted): {redis_dbsize(ARGS.store)}")
    print()
    for ok, text in checks:
        print(f"- {'ok  ' if ok else 'FAIL'} {text}")
    passed = sum(ok for ok, _ in checks)
    print(f"rolling-restart: {passed} passed, {len(checks) - passed} failed")
    return 0 if passed == len(checks) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        for inst in INSTANCES:
            if inst.proc is not None and inst.proc.poll() is None:
                inst.proc.kill()
                inst.proc.wait()
        write_pids()
