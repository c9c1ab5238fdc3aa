#!/usr/bin/env python3
"""The session store's own failures under load: Redis restarted (without and with its append-only
file), unreachable (killed: connection refused; SIGSTOP: accepts and never answers), with a backlog
too small to hold what waits, slow (a delay proxy in front of it), and a replica promoted after the
primary was killed. Standard library only.

    python3 IntegrationTests/store_faults.py --bin BIN --out DIR [--long] [--only NAME,…]

Each fault runs on its own redis-server(s) and two sheetd instances on one store (sheetkit.harness starts
and stops them, by PID), clients talking to both directly:

- users: one long-lived client-clock session each (PUT), gestures at 60 Hz (`began`, 8-16
  `changed`, `ended`), every accepted event's `time` remembered; some follow their session with a
  frame stream (reconnecting like an EventSource, by Last-Event-ID);
- churners: short sessions created (POST, or PUT of a new id), given a batch of events, replaced
  (PUT) and deleted, each step repeated after `Retry-After` while it is 503;
- a loader: sessions created on one instance read on the other (a load on a miss), to and fro;
- a metrics sampler: `sheetd_store_pending_bytes` and the store counters of both, ten times a second.

Verdicts are on what was seen, never on how long anything took (durations are figures): statuses,
Problem codes, `Retry-After`, the sessions and their last event times read from Redis itself over a
raw RESP socket, /metrics, the logs. Per fault (result.json, report.md): sessions lost, events lost,
5xx and 503 store-unavailable apart, stream reconnections, recovery (store back → first creation
acknowledged; → every held session in Redis as held when the store came back), the longest request
while the store was away against --store-deadline, the backlog's peak against --store-backlog,
writes dropped. Failures with their context: errors.jsonl. The last stdout line is
`store-faults: N passed, M failed`; the exit status is 1 when any check failed.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import random
import socket
import sys
import threading
import time
import uuid


from sheetkit import delay_proxy  # noqa: E402
from sheetkit.harness import HOST, KeepAlive, RedisServer, Sheetd, decoded, free_port, free_ports, wait_until  # noqa: E402
from sheetkit.redis import Resp, RespError, SentinelGroup, call, info  # noqa: E402
from sheetkit.sse import ResumePoint, StreamBody, open_stream  # noqa: E402

FAULTS = ["restart-empty", "restart-persistent", "killed", "stopped", "backlog", "slow", "promoted"]
# Redis Sentinel (issue 30): a primary, two replicas, three Sentinels; not in the default list (the
# check sentinel-test runs them: IntegrationTests/fault-test --only sentinel).
SENTINEL_FAULTS = ["sentinel-failover", "sentinel-kill", "sentinel-stop"]
P = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
P.add_argument("--bin", required=True, help="the sheetd binary")
P.add_argument("--out", required=True, help="folder for result.json, errors.jsonl, report.md and the logs")
P.add_argument("--long", action="store_true", help="longer outages, more users")
P.add_argument("--only", default="", help=f"comma-separated faults to run (default: {','.join(FAULTS)}; "
               f"also {','.join(SENTINEL_FAULTS)}, or `sentinel` for the three)")
ARGS = P.parse_args()

LONG = ARGS.long
USERS = 16 if LONG else 6
STREAMS = 8 if LONG else 3
CHURNERS = 4 if LONG else 2
PROBES = 120 if LONG else 40
WARMUP = 8.0 if LONG else 3.0
TAIL = 10.0 if LONG else 4.0
OUTAGE = 30.0 if LONG else 10.0  # the 10 s in the short form too
DEADLINE = 1.0  # --store-deadline, seconds
BULK = 2400 if LONG else 1200  # sessions on one instance in the backlog fault
# A request may wait for the store twice its deadline (a stale connection replaced, and the new one
# stalls too) plus scheduling on 2 shared cores: past this it was not bounded by the deadline.
HELD_BOUND = 2 * DEADLINE + 2.0
KEY = "sheetd:session:"
T0 = time.monotonic()


def now() -> float:
    return time.monotonic() - T0


# --------------------------------------------------------------------------------------------
# Redis, read directly (RESP over a socket): the program's own view of what the store holds.


def stored(port: int, ids) -> dict:
    """id -> ("live", lastTime or None) / ("deleted", None) / None (no key), read with MGET."""
    ids = list(ids)
    found = {}
    r = Resp(port)
    try:
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            for sid, raw in zip(chunk, r.call("MGET", *[KEY + s for s in chunk])):
                if raw is None:
                    found[sid] = None
                    continue
                doc = json.loads(raw)
                if doc.get("deleted"):
                    found[sid] = ("deleted", None)
                else:
                    found[sid] = ("live", (doc.get("sheet") or {}).get("lastTime"))
    finally:
        r.close()
    return found


def all_keys(port: int) -> dict:
    """Every session key in the store: id -> "live" / "deleted"."""
    out, cursor = {}, "0"
    r = Resp(port)
    try:
        while True:
            cursor, keys = r.call("SCAN", cursor, "MATCH", KEY + "*", "COUNT", 1000)
            cursor = cursor.decode()
            if keys:
                for k, raw in zip(keys, r.call("MGET", *keys)):
                    if raw is not None:
                        out[k.decode()[len(KEY):]] = "deleted" if json.loads(raw).get("deleted") else "live"
            if cursor == "0":
                return out
    finally:
        r.close()


# --------------------------------------------------------------------------------------------
# One fault's run: its processes, its clients, what they saw.


class Instance:
    def __init__(self, run: "Run", n: int, port: int):
        self.run, self.n, self.port = run, n, port
        self.sheetd: Sheetd | None = None
        self.gate = threading.Event()  # clients start an operation on this instance only while set
        self.gate.set()
        self.log = os.path.join(ARGS.out, f"{run.name}-sheetd-{n}.log")

    def start(self, store_url: str, backlog_mib: int):
        flags = ["--log-level", "info", "--store", store_url, "--store-deadline", str(DEADLINE),
                 "--store-backlog", str(backlog_mib), "--drain-grace", "0"]
        with open(self.log, "a") as f:
            f.write(f"---- t={now():.3f}: {ARGS.bin} {' '.join(flags)} --port {self.port}\n")
        self.sheetd = Sheetd(ARGS.bin, flags, port=self.port, log=self.log)
        self.sheetd.start()


class Run:
    """What one fault's clients did and saw. Times are seconds since the program started."""

    def __init__(self, name: str, title: str, backlog_mib: int = 64):
        self.name, self.title, self.backlog_mib = name, title, backlog_mib
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.requests = []  # (t0, t1, kind, status, instance, code, retry_after)
        self.errors = collections.Counter()
        self.samples = []
        self.counts = collections.Counter()
        self.instances: list[Instance] = []
        self.store_port = 0  # where the program reads the store (the primary now)
        self.users: list[User] = []
        self.streams: list[Stream] = []
        self.probes: dict[str, int] = {}  # id -> index of the instance holding it
        self.bulk: dict[str, float] = {}  # id -> time of its last accepted event
        self.parked: list[str] = []  # sessions only in the store (their instance exited)
        self.churn_live: dict[str, int] = {}  # acknowledged, not deleted -> instance
        self.churn_deleted: set[str] = set()
        self.away: list[tuple[float, float]] = []  # windows while the store was away
        self.back: list[float] = []  # moments the store came back
        self.metrics = []  # (t, instance, {name: value})
        self.figures: dict = {}
        self.checks: list[tuple[bool, str]] = []
        self.lost: set[str] = set()
        self.transient: list[tuple[float, str]] = []  # (s after the store came back, id): 404 before the write-back
        self.threads: list[threading.Thread] = []

    def error(self, kind: str, detail: str, **context):
        with self.lock:
            self.errors[kind] += 1
            if sum(1 for s in self.samples if s["kind"] == kind) < 20:
                self.samples.append({"fault": self.name, "kind": kind, "t": round(now(), 3), "detail": detail,
                                     **context})

    def check(self, ok: bool, text: str):
        self.checks.append((bool(ok), text))

    def while_away(self, t: float) -> bool:
        return any(a <= t < b for a, b in self.away)


class Client:
    """Keep-alive HTTP to the instances, one connection per instance; every request recorded."""

    def __init__(self, run: Run):
        self.run = run
        self.links: dict[int, KeepAlive] = {}

    def call(self, inst: Instance, method: str, path: str, body=None, kind: str = ""):
        """(status, decoded body, headers); status 0 for a transport error."""
        run = self.run
        t0 = now()
        link = self.links.get(inst.n)
        if link is None:
            link = self.links[inst.n] = KeepAlive(inst.port, timeout=20)
        status, raw, hdrs, error = link.request(method, path, body)
        if error:
            with run.lock:
                run.requests.append((t0, now(), kind, 0, inst.n, "", False))
            run.counts["transport errors"] += 1
            return 0, error, {}
        t1 = now()
        obj = decoded(raw)
        code = obj.get("code", "") if isinstance(obj, dict) and status >= 400 else ""
        retry_after = "retry-after" in hdrs
        with run.lock:
            run.requests.append((t0, t1, kind, status, inst.n, code, retry_after))
        if status >= 500:
            if status != 503 or code not in ("store-unavailable", "draining"):
                run.error("5xx", f"{method} {path}: {status} {code}", response=str(obj)[:300])
            elif not retry_after:
                run.error("503 without Retry-After", f"{method} {path}: {code}")
            elif code == "store-unavailable" and method == "POST" and path == "/sessions" \
                    and "did not happen" not in str(obj.get("detail")):
                run.error("503 creation not undone", f"POST /sessions: {obj}")
        return status, obj, hdrs

    def persist(self, inst: Instance, method: str, path: str, body, kind: str, ok: tuple, also=()):
        """Repeats the request while it is 503 (after its Retry-After, at most 1 s) or the connection
        fails, at most 60 times: (status, body, how many 503s it took)."""
        unavailable = 0
        for _ in range(60):
            inst.gate.wait(30)
            status, obj, hdrs = self.call(inst, method, path, body, kind)
            if status in ok or status in also:
                return status, obj, unavailable
            if status == 503:
                unavailable += 1
                time.sleep(min(float(hdrs.get("retry-after", "1")), 1.0))
            elif status == 0:
                time.sleep(0.2)
            else:
                return status, obj, unavailable
            if self.run.stop.is_set() and unavailable > 20:
                break
        return status, obj, unavailable


# --------------------------------------------------------------------------------------------
# The load.


class User(threading.Thread):
    """A long-lived client-clock session on one instance, dragged at 60 Hz until the run stops."""

    def __init__(self, run: Run, k: int, inst: Instance):
        super().__init__(daemon=True)
        self.fault, self.inst = run, inst
        self.sid = f"{run.name}-u{k}-{uuid.uuid4().hex[:8]}"
        self.accepted: list[float] = []  # `time` of every pan event answered 200, in order
        self.clock = 1.0
        self.client = Client(run)
        self.created = threading.Event()
        self.idle = threading.Event()  # between gestures (where a restart may take its instance)
        self.stream = k < STREAMS

    def t(self) -> float:
        self.clock = max(round(self.clock + 0.001, 6), round(now() + 1.0, 6))
        return self.clock

    def run(self):
        run = self.fault
        status, obj, _ = self.client.persist(self.inst, "PUT", f"/sessions/{self.sid}",
                                             {"preset": "facebook", "initialDetent": "normal", "clock": "client"},
                                             "create", ok=(201,))
        if status != 201:
            run.error("status", f"PUT {self.sid}: {status}", response=str(obj)[:300])
            return
        self.created.set()
        if self.stream:
            s = Stream(run, self)
            run.streams.append(s)
            s.start()
        while not run.stop.is_set():
            self.idle.set()
            self.inst.gate.wait(30)
            self.idle.clear()
            self.gesture()
            time.sleep(random.uniform(0.15, 0.35))
        self.idle.set()

    def pan(self, event: dict) -> bool:
        status, obj, _ = self.client.call(self.inst, "POST", f"/sessions/{self.sid}/pan", event, "event")
        if status == 200:
            self.accepted.append(event["time"])
            return True
        if status == 404:
            self.fault.lost.add(self.sid)
            self.fault.error("lost", f"pan on {self.sid}: 404", event=event)
        elif status == 0:
            self.fault.error("transport", f"pan on {self.sid}: {obj}")
        elif status != 503:
            self.fault.error("status", f"pan on {self.sid}: {status}", response=str(obj)[:300], event=event)
        time.sleep(0.2)
        return False

    def gesture(self):
        if not self.pan({"phase": "began", "time": self.t()}):
            return
        n = random.randint(8, 16)
        # From `normal` (398.5): up to 150 pt down and 800 pt/s stay short of the dismissal (693 pt,
        # 1500 pt/s), so every gesture can begin where the last one ended.
        target = random.uniform(-300, 150)
        tr = 0.0
        for k in range(1, n + 1):
            time.sleep(1 / 60)
            tr = round(target * k / n, 2)
            if not self.pan({"phase": "changed", "translation": tr, "time": self.t()}):
                return
        time.sleep(1 / 60)
        v = round(random.uniform(-1200, 800), 1)
        if self.pan({"phase": "ended", "translation": tr, "velocity": v, "time": self.t()}):
            self.fault.counts["gestures"] += 1


class Stream(threading.Thread):
    """A user's frame stream, reconnecting like an EventSource (after `retry:`, with Last-Event-ID)."""

    def __init__(self, run: Run, user: User):
        super().__init__(daemon=True)
        self.fault, self.user = run, user
        self.at = ResumePoint()  # retry, Last-Event-ID, the last frame
        self.frames = 0
        self.reconnects = []  # (t, why)

    def run(self):
        failures = 0
        while not self.fault.stop.is_set():
            why = self.once()
            if self.fault.stop.is_set():
                return
            if why.startswith("status") or why == "refused":
                failures += 1
                if failures > 30:
                    self.fault.error("stream", f"{self.user.sid}: gave up after 30 failed reconnections ({why})")
                    return
            else:
                failures = 0
            self.reconnects.append((now(), why))
            time.sleep(self.at.retry)

    def receive(self, sock: socket.socket) -> bytes | None:
        """The next bytes (b"" when the connection closed), or None once the check stops."""
        while True:
            try:
                return sock.recv(65536)
            except socket.timeout:
                if self.fault.stop.is_set():
                    return None

    def once(self) -> str:
        inst = self.user.inst
        try:
            sock = socket.create_connection((HOST, inst.port), timeout=5)
        except OSError:
            return "refused"
        try:
            sock.settimeout(0.5)  # so that a stopped check is seen while Redis or sheetd is silent
            opened = open_stream(sock, f"/sessions/{self.user.sid}/frames?fps=30", HOST, self.at.last_id,
                                 recv=lambda: self.receive(sock))
            if opened is None:
                return "stopped" if self.fault.stop.is_set() else "refused"
            status, hdrs, pending = opened
            if status != 200:
                if status == 404:
                    self.fault.lost.add(self.user.sid)
                    self.fault.error("lost", f"stream of {self.user.sid}: 404")
                elif status >= 500:
                    kind = "5xx" if status != 503 else "stream 503"
                    self.fault.error(kind, f"stream of {self.user.sid}: {status}", response=pending[:200].decode("latin-1"))
                return f"status {status}"
            body = StreamBody(pending, hdrs.get("transfer-encoding", "").lower() == "chunked", lambda: self.receive(sock))
            for event in self.at.events(body):
                if event.kind == "frame":
                    if event.problem:
                        self.fault.error("order" if event.frame else "stream", f"{self.user.sid}: {event.problem}")
                    if event.frame:
                        self.frames += 1
                elif event.kind == "closed":
                    return f"closed {event.reason}"
            return body.end
        except (OSError, ValueError) as e:
            return f"error {type(e).__name__}"
        finally:
            sock.close()


def churner(run: Run, j: int):
    """Short sessions: created, given events, replaced and deleted, each step repeated while 503."""
    c = Client(run)
    life = 0
    while not run.stop.is_set():
        inst = run.instances[(j + life) % len(run.instances)]
        life += 1
        config = {"preset": "facebook", "initialDetent": "normal", "clock": "client"}
        if life % 2:
            status, obj, waited = c.persist(inst, "POST", "/sessions", config, "create", ok=(201,))
            sid = obj.get("id") if status == 201 else None
        else:
            sid = f"{run.name}-c{j}-{uuid.uuid4().hex[:10]}"
            status, obj, waited = c.persist(inst, "PUT", f"/sessions/{sid}", config, "create", ok=(201,), also=(200,))
            if status not in (200, 201):
                sid = None
        if sid is None:
            if not run.stop.is_set():
                run.error("status", f"creation on instance {inst.n}: {status}", response=str(obj)[:300])
            continue
        with run.lock:
            run.churn_live[sid] = inst.n
        run.counts["short sessions created"] += 1
        t = round(now() + 1.0, 6)
        events = [{"phase": "began", "time": t}, {"phase": "changed", "translation": -40, "time": t + 0.016},
                  {"phase": "ended", "velocity": -500, "time": t + 0.033}]
        status, obj, _ = c.persist(inst, "POST", f"/sessions/{sid}/pan", {"events": events}, "event", ok=(200,))
        if status == 404:
            run.lost.add(sid)
            run.error("lost", f"batch on {sid}: 404")
        status, obj, _ = c.persist(inst, "PUT", f"/sessions/{sid}", {**config, "initialDetent": "expanded"}, "replace", ok=(200,))
        if status == 201 or status == 404:
            # Created afresh: the instance that acknowledged it did not hold it any more.
            run.lost.add(sid)
            run.error("lost", f"PUT over {sid}: {status} (it was acknowledged and not deleted)")
        elif status != 200 and not run.stop.is_set():
            run.error("status", f"PUT over {sid}: {status}", response=str(obj)[:300])
        time.sleep(random.uniform(0.05, 0.2))
        # A DELETE repeated after a 503 may find the session gone already (its tombstone written).
        status, obj, waited = c.persist(inst, "DELETE", f"/sessions/{sid}", None, "delete", ok=(204,))
        if status == 204 or (status == 404 and waited):
            with run.lock:
                run.churn_live.pop(sid, None)
                run.churn_deleted.add(sid)
            run.counts["short sessions deleted"] += 1
        elif not run.stop.is_set():
            run.error("lost" if status == 404 else "status", f"DELETE {sid}: {status}", response=str(obj)[:300])
        time.sleep(random.uniform(0.1, 0.3))


def loader(run: Run):
    """Reads the probe sessions on the instance that does not hold them: each read is a load from
    the store (503 store-unavailable while it is away, never 404)."""
    c = Client(run)
    turn = 0
    while not run.stop.is_set():
        for sid, at in list(run.probes.items()):
            if run.stop.is_set():
                return
            other = run.instances[1 - at]
            if not other.gate.is_set():
                continue
            status, obj, _ = c.call(other, "GET", f"/sessions/{sid}", None, "load")
            if status == 200:
                run.probes[sid] = other.n
            elif status == 404:
                # The store lost it (came back empty) and its holder has not written it back yet: a
                # 404 for a session that exists. Counted apart (`404 before the write-back`), and a
                # session lost all the same if it is not in the store at the end.
                since = now() - max(run.back, default=-1e9)
                if run.instances[at].sheetd.alive() and since < 5:
                    run.transient.append((round(since, 3), sid))
                    run.error("404 before the write-back", f"load of {sid} on instance {other.n}: 404, "
                              f"{since:.3f} s after the store came back; instance {at} holds it")
                else:
                    run.lost.add(sid)
                    run.error("lost", f"load of {sid} on instance {other.n}: 404", away=run.while_away(now()))
            elif status not in (0, 503):
                run.error("status", f"load of {sid}: {status}", response=str(obj)[:300])
            # A creation on either instance in turn: 503 store-unavailable while the store is away.
            inst = run.instances[turn % 2]
            turn += 1
            if inst.gate.is_set():
                status, obj, _ = c.call(inst, "POST", "/sessions", {"preset": "glide"}, "create")
                if status == 201:
                    with run.lock:
                        run.probes[obj["id"]] = inst.n
                elif status not in (0, 503):
                    run.error("status", f"POST /sessions: {status}", response=str(obj)[:300])
            time.sleep(0.15)


METRICS = ("sheetd_store_pending_bytes", "sheetd_store_pending", "sheetd_store_dropped_total",
           "sheetd_store_returns_total", "sheetd_sessions_rewritten_total", "sheetd_store_errors_total")


def read_metrics(inst: Instance) -> dict | None:
    try:
        conn = http.client.HTTPConnection(HOST, inst.port, timeout=3)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
    except (OSError, http.client.HTTPException):
        return None
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in METRICS:
            out[name] = float(value)
    return out


def store_counters(inst: Instance) -> dict:
    """The instance's stale writes and deferred writes by code, from /metrics."""
    try:
        conn = http.client.HTTPConnection(HOST, inst.port, timeout=3)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
    except (OSError, http.client.HTTPException):
        return {}
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == "sheetd_store_stale_total":
            out["stale"] = int(float(value))
        elif name.startswith("sheetd_store_deferred_by_code_total{"):
            out[name.split('"')[1]] = int(float(value))
    return out


def sampler(run: Run):
    while not run.stop.is_set():
        for inst in run.instances:
            m = read_metrics(inst)
            if m is not None:
                with run.lock:
                    run.metrics.append((now(), inst.n, m))
        time.sleep(0.1)


# --------------------------------------------------------------------------------------------
# Starting, stopping, and what is checked after every fault.


def held_requirement(run: Run) -> dict:
    """What the store must hold once it has everything the instances hold now: id -> the last
    accepted event's time (None: the session only has to be there)."""
    need = {u.sid: (u.accepted[-1] if u.accepted else None) for u in run.users if u.created.is_set()}
    need.update({sid: None for sid in run.probes})
    need.update(run.bulk)
    return need


def satisfied(found, need) -> bool:
    if found is None or found[0] != "live":
        return False
    return need is None or (found[1] is not None and found[1] >= need)


def watch_return(run: Run, label: str, back: float):
    """From the store's return: when every session held then is in it as held then (polled every 50 ms,
    for at most 30 s), and how many already were at the first look."""
    need = held_requirement(run)
    first = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            found = stored(run.store_port, need)
        except (OSError, RespError):
            time.sleep(0.05)
            continue
        ok = sum(1 for sid, t in need.items() if satisfied(found.get(sid), t))
        if first is None:
            first = ok
        if ok == len(need):
            run.figures.setdefault("recovery", {})[label] = {
                "held sessions": len(need), "in the store at its first answer": first,
                "every held session in the store (s after the store came back)": round(now() - back, 3)}
            return
        time.sleep(0.05)
    run.figures.setdefault("recovery", {})[label] = {"held sessions": len(need), "in the store at its first answer": first,
                                                     "every held session in the store (s after the store came back)": None}
    run.error("recovery", f"{label}: {len(need) - ok} of {len(need)} held sessions not in the store 30 s after it came back")


def start_load(run: Run):
    for k in range(USERS):
        u = User(run, k, run.instances[k % 2])
        run.users.append(u)
        u.start()
    for u in run.users:
        u.created.wait(10)
    # Probes: on instance 0, server clock; the loader moves them between the instances.
    c = Client(run)
    for i in range(PROBES):
        sid = f"{run.name}-p{i}-{uuid.uuid4().hex[:8]}"
        status, _, _ = c.persist(run.instances[0], "PUT", f"/sessions/{sid}", {"preset": "glide"}, "create", ok=(201,))
        if status == 201:
            run.probes[sid] = 0
    threads = [threading.Thread(target=churner, args=(run, j), daemon=True) for j in range(CHURNERS)]
    threads += [threading.Thread(target=loader, args=(run,), daemon=True),
                threading.Thread(target=sampler, args=(run,), daemon=True)]
    for t in threads:
        t.start()
    run.threads = threads


def park(run: Run, redis_url: str, count: int = 30):
    """Sessions held by no instance: written by a third instance that then exits (drained), as after
    a rolling restart or a scale-down; only the store has them."""
    inst = Instance(run, 9, free_port())
    inst.start(redis_url, 64)
    c = Client(run)
    for i in range(count):
        sid = f"{run.name}-parked{i}-{uuid.uuid4().hex[:8]}"
        if c.call(inst, "PUT", f"/sessions/{sid}", {"initialDetent": "normal"}, "create")[0] == 201:
            run.parked.append(sid)
    inst.sheetd.stop(20)


def finish(run: Run, state_lost: bool = False):
    """Stops the load, lets the writers empty, and reads what the store holds against what the
    clients were told."""
    run.stop.set()
    for u in run.users:
        u.join(15)
    for t in run.threads:
        t.join(15)
    for s in run.streams:
        s.join(5)
    # The write-behind empties (events accepted last are written within a linger).
    pending_ok = True
    try:
        wait_until("the writers to empty", lambda: all((read_metrics(i) or {}).get("sheetd_store_pending", 1) == 0
                                                        for i in run.instances), 20, 0.1)
    except RuntimeError:
        pending_ok = False
    run.check(pending_ok, "the write-behind of both instances emptied after the load stopped")

    keys = all_keys(run.store_port)
    users = {u.sid: u for u in run.users if u.created.is_set()}
    known_live = set(users) | set(run.probes) | set(run.bulk) | set(run.churn_live)
    missing = sorted(s for s in known_live if keys.get(s) != "live")
    lost = run.lost | set(missing)
    found = stored(run.store_port, list(users) + list(run.bulk))
    events_lost = 0
    sessions_behind = 0
    for sid, u in users.items():
        f = found.get(sid)
        last = f[1] if f and f[0] == "live" else None
        behind = sum(1 for t in u.accepted if last is None or t > last)
        events_lost += behind
        sessions_behind += behind > 0
    bulk_behind = sum(1 for sid, t in run.bulk.items() if not satisfied(found.get(sid), t))
    orphans = sorted(s for s, state in keys.items()
                     if state == "live" and s not in known_live and s not in run.parked)
    resurrected = sorted(s for s in run.churn_deleted if keys.get(s) == "live")
    for sid in missing[:10]:
        run.error("lost", f"{sid} is not in the store at the end (it is {keys.get(sid)!r})")
    for sid in orphans[:10]:
        run.error("orphan", f"{sid} is live in the store but no client was told it exists")
    for sid in resurrected[:10]:
        run.error("resurrected", f"{sid} was deleted (204) and is live in the store again")

    reqs = run.requests
    n5 = [r for r in reqs if r[3] >= 500]
    unavailable = [r for r in n5 if r[3] == 503 and r[5] == "store-unavailable"]
    draining = [r for r in n5 if r[3] == 503 and r[5] == "draining"]
    other5 = len(n5) - len(unavailable) - len(draining)
    by_kind = collections.Counter(r[2] for r in unavailable)
    run.figures.update({
        "requests": len(reqs), "gestures": run.counts["gestures"],
        "events accepted (users)": sum(len(u.accepted) for u in users.values()),
        "short sessions created / deleted": [run.counts["short sessions created"], run.counts["short sessions deleted"]],
        "sessions known live at the end": len(known_live),
        "sessions lost": len(lost), "events lost (accepted, not in the store at the end)": events_lost,
        "sessions with events lost": sessions_behind, "bulk sessions behind": bulk_behind,
        "5xx other than 503 store-unavailable/draining": other5,
        "503 store-unavailable": len(unavailable), "503 store-unavailable by request": dict(by_kind),
        "503 draining": len(draining), "transport errors": run.counts["transport errors"],
        "503 without Retry-After": run.errors["503 without Retry-After"],
        "orphans (live in the store, unknown to clients)": len(orphans),
        "deleted sessions live again": len(resurrected),
        "stream reconnections": sum(len(s.reconnects) for s in run.streams),
        "stream reconnection causes": dict(collections.Counter(w for s in run.streams for _, w in s.reconnects)),
        "frames": sum(s.frames for s in run.streams),
        # Writes of a copy that another instance's newer write had overtaken (a session moving:
        # the loader takes its sessions over from the instance that holds them).
        "stale writes refused, per instance (sheetd_store_stale_total)":
            [store_counters(i).get("stale") for i in run.instances],
    })
    run.check(other5 == 0, f"no 5xx but 503 store-unavailable (or draining): {other5} others of {len(reqs)} requests")
    run.check(run.errors["503 without Retry-After"] == 0 and run.errors["503 creation not undone"] == 0,
              f"every 503 carried Retry-After ({run.errors['503 without Retry-After']} did not), every refused POST "
              f"said it did not happen ({run.errors['503 creation not undone']} did not)")
    run.check(not lost, f"no session lost: {len(lost)} of {len(known_live)} (404 while acknowledged, or not in the store at the end)")
    run.check(orphans == [] and resurrected == [],
              f"the store holds only what clients were told: {len(orphans)} unknown live sessions, "
              f"{len(resurrected)} deleted sessions live again")
    run.figures["404 for a held session before its holder wrote it back (loads; s after the return)"] = \
        [len(run.transient), max((t for t, _ in run.transient), default=None)]
    run.check(not run.transient, f"no load answered 404 for a session another instance held while the store was "
              f"refilled: {len(run.transient)}" + (f" (up to {max(t for t, _ in run.transient):.3f} s after the return)"
                                                    if run.transient else ""))
    if state_lost:
        # Sessions loaded from a store that lacked their last animations number new ones again.
        run.figures["frames whose id a stream had seen already (state lost)"] = run.errors["order"]
    run.check(run.errors["status"] == 0 and run.errors["stream"] == 0 and (state_lost or run.errors["order"] == 0),
              f"no unexpected status or stream failure: {run.errors['status']} statuses, {run.errors['stream']} stream "
              f"failures, {run.errors['order']} frames out of order")
    return events_lost, bulk_behind


def away_figures(run: Run, label: str, a: float, b: float):
    """Requests that overlapped [a, b): the longest of each kind, and what they got."""
    during = [r for r in run.requests if r[0] < b and r[1] > a and r[3] != 0]
    longest = {}
    for r in during:
        longest[r[2]] = max(longest.get(r[2], 0), r[1] - r[0])
    peaks = {}
    for t, n, m in run.metrics:
        if a - 0.5 <= t <= b + 5:
            peaks[n] = max(peaks.get(n, 0), m.get("sheetd_store_pending_bytes", 0))
    inside = [r for r in during if r[0] >= a + 0.1 and r[1] <= b]  # wholly while the store was away
    acked = [r for r in inside if r[2] == "create" and 200 <= r[3] < 300]
    events = [r for r in inside if r[2] == "event"]
    loads = [r for r in inside if r[2] == "load"]
    worst = max(during, key=lambda r: r[1] - r[0], default=None)
    fig = {
        "seconds": round(b - a, 2),
        "longest request s, by kind": {k: round(v, 3) for k, v in sorted(longest.items())},
        "longest request (kind, status, s, started s after the window opened)":
            None if worst is None else [worst[2], worst[3], round(worst[1] - worst[0], 3), round(worst[0] - a, 3)],
        "requests": len(during),
        "events answered 200 / other": [sum(1 for r in events if r[3] == 200), sum(1 for r in events if r[3] != 200)],
        "creations acknowledged while away": len(acked),
        "creations 503": sum(1 for r in inside if r[2] == "create" and r[3] == 503),
        "loads 503 / 200 / 404": [sum(1 for r in loads if r[3] == 503), sum(1 for r in loads if r[3] == 200),
                                  sum(1 for r in loads if r[3] == 404)],
        "pending bytes peak per instance": peaks,
    }
    run.figures.setdefault("away", {})[label] = fig
    return fig, during, acked, events, loads


def first_creation_after(run: Run, back: float):
    ts = [r[1] for r in run.requests if r[2] == "create" and 200 <= r[3] < 300 and r[1] > back]
    return round(min(ts) - back, 3) if ts else None


def check_away(run: Run, label: str, a: float, b: float, expect_held_events=True):
    fig, during, acked, events, loads = away_figures(run, label, a, b)
    worst = max((r[1] - r[0] for r in during), default=0)
    run.check(worst <= HELD_BOUND, f"{label}: no request held past the deadline twice over ({HELD_BOUND:g} s): "
              f"longest {worst:.3f} s, --store-deadline {DEADLINE:g} s")
    run.check(not acked, f"{label}: no creation acknowledged while the store could not have it: {len(acked)}")
    run.check(fig["creations 503"] > 0, f"{label}: creations were refused 503 store-unavailable: {fig['creations 503']}")
    run.check(fig["loads 503 / 200 / 404"][2] == 0 and fig["loads 503 / 200 / 404"][0] > 0,
              f"{label}: loads on a miss answered 503 (never 404): 503 / 200 / 404 = {fig['loads 503 / 200 / 404']}")
    if expect_held_events:
        run.check(fig["events answered 200 / other"][0] > 0 and fig["events answered 200 / other"][1] == 0,
                  f"{label}: events on held sessions went on: 200 / other = {fig['events answered 200 / other']}")


def stop_instances(run: Run) -> list:
    exits = []
    for inst in run.instances:
        if inst.sheetd is not None:
            exits.append(inst.sheetd.stop(20))
    return exits


def setup(run: Run, store_url: str, backlog_mib: int = 64):
    run.instances = [Instance(run, n, p) for n, p in enumerate(free_ports(2))]
    for inst in run.instances:
        inst.start(store_url, backlog_mib)


# --------------------------------------------------------------------------------------------
# The faults.


def redis_log(run: Run, tag: str = ""):
    return open(os.path.join(ARGS.out, f"{run.name}-redis{tag}.log"), "ab")


def fault_restart(run: Run, persistent: bool):
    folder = os.path.join(ARGS.out, f"{run.name}-redis")
    os.makedirs(folder, exist_ok=True)
    kw = {"appendfsync": "always", "directory": folder} if persistent else {}
    redis = RedisServer(log=redis_log(run), **kw).start()
    run.store_port = redis.port
    try:
        setup(run, redis.url)
        park(run, redis.url)
        start_load(run)
        time.sleep(WARMUP)
        before = call(redis.port, "DBSIZE")
        t_fault = now()
        redis.kill()
        redis = RedisServer(port=redis.port, log=redis_log(run), **kw).start()
        t_back = now()
        run.away.append((t_fault, t_back))
        run.back.append(t_back)
        after = call(redis.port, "DBSIZE")
        parked = stored(redis.port, run.parked)
        parked_kept = sum(1 for s in run.parked if parked.get(s) and parked[s][0] == "live")
        watch_return(run, "restart", t_back)
        time.sleep(TAIL)
        run.figures["store keys before the kill / when it answered again"] = [before, after]
        run.figures["down s (kill -9 to accepting again)"] = round(t_back - t_fault, 3)
        run.figures["parked sessions (held by no instance) still in the store"] = f"{parked_kept} of {len(run.parked)}"
        run.figures["first creation acknowledged after the return (s)"] = first_creation_after(run, t_back)
        events_lost, _ = finish(run)
        run.check(events_lost == 0, f"no accepted event lost: {events_lost}")
        run.check(run.errors["recovery"] == 0, "every held session was back in the store after the restart")
        if persistent:
            run.check(parked_kept == len(run.parked) and run.parked,
                      f"the append-only file kept the sessions no instance holds: {parked_kept} of {len(run.parked)}")
        else:
            # Not a verdict: what no persistence means for sessions held by no instance.
            run.figures["parked sessions lost (no persistence)"] = len(run.parked) - parked_kept
        run.figures["instance exits"] = stop_instances(run)
        run.check(all(x == 0 for x in run.figures["instance exits"]), f"instances exited 0: {run.figures['instance exits']}")
    finally:
        stop_instances(run)
        redis.stop()


def fault_away(run: Run, how: str, seconds: float, backlog_mib: int = 64):
    """The store away for `seconds`: killed (connection refused; it comes back empty, no persistence)
    or SIGSTOPped (accepts, never answers; comes back with what it had)."""
    redis = RedisServer(log=redis_log(run)).start()
    run.store_port = redis.port
    try:
        setup(run, redis.url, backlog_mib)
        if backlog_mib < 64:
            make_bulk(run)
        start_load(run)
        time.sleep(WARMUP)
        t_fault = now()
        if how == "killed":
            redis.kill()
        else:
            redis.pause()
        if run.bulk:
            time.sleep(0.5)
            feed_bulk(run)
        time.sleep(max(0.0, seconds - (now() - t_fault)))
        if how == "killed":
            redis = RedisServer(port=redis.port, log=redis_log(run)).start()
        else:
            redis.resume()
        t_back = now()
        run.away.append((t_fault, t_back))
        run.back.append(t_back)
        watch_return(run, how, t_back)
        time.sleep(TAIL)
        run.figures["first creation acknowledged after the return (s)"] = first_creation_after(run, t_back)
        check_away(run, f"{how} {seconds:g} s", t_fault, t_back)
        events_lost, bulk_behind = finish(run)
        run.check(events_lost == 0 and bulk_behind == 0,
                  f"no accepted event lost: {events_lost} (users), {bulk_behind} bulk sessions behind")
        run.check(run.errors["recovery"] == 0, "every held session was back in the store after the outage")
        last = {n: m for _, n, m in run.metrics}
        dropped = sum(m.get("sheetd_store_dropped_total", 0) for m in last.values())
        peak = max((m.get("sheetd_store_pending_bytes", 0) for _, _, m in run.metrics), default=0)
        run.figures["pending bytes peak (either instance) / --store-backlog"] = [int(peak), backlog_mib << 20]
        run.figures["sheetd_store_dropped_total (both)"] = int(dropped)
        run.figures["sheetd_sessions_rewritten_total (both)"] = int(sum(m.get("sheetd_sessions_rewritten_total", 0)
                                                                        for m in last.values()))
        logged = sum(1 for inst in run.instances for line in open(inst.log, errors="replace") if "writes dropped" in line)
        run.figures["log lines about dropped writes"] = logged
        # The writer keeps newer writes of a key already waiting: the bound can be passed by what one
        # session's state grows (a few KB), never by whole sessions.
        run.check(peak <= (backlog_mib << 20) * 1.01 + 65536,
                  f"the backlog stayed within --store-backlog: peak {int(peak)} B of {backlog_mib << 20} B")
        if backlog_mib < 64:
            run.check(dropped > 0 and logged > 0,
                      f"writes over the backlog were dropped, counted in /metrics ({int(dropped)}) and logged ({logged} lines)")
        else:
            run.check(dropped == 0, f"nothing dropped with the default backlog: {int(dropped)}")
        run.figures["instance exits"] = stop_instances(run)
        run.check(all(x == 0 for x in run.figures["instance exits"]), f"instances exited 0: {run.figures['instance exits']}")
    finally:
        stop_instances(run)
        redis.stop()


def make_bulk(run: Run):
    """BULK client-clock sessions on instance 0, each with six animations (≈ 1.6 KB in the store)."""
    inst = run.instances[0]

    def work(part):
        c = Client(run)
        for i in part:
            sid = f"{run.name}-b{i}-{uuid.uuid4().hex[:6]}"
            if c.call(inst, "PUT", f"/sessions/{sid}", {"initialDetent": "normal", "clock": "client"}, "bulk")[0] != 201:
                run.error("status", f"bulk PUT {sid} refused")
                continue
            events, t = [], 1.0
            for g in range(6):
                events += [{"phase": "began", "time": t}, {"phase": "changed", "translation": -50 - g, "time": t + 0.02},
                           {"phase": "ended", "velocity": 300 if g % 2 else -300, "time": t + 0.04}]
                t += 0.5
            if c.call(inst, "POST", f"/sessions/{sid}/pan", {"events": events}, "bulk")[0] == 200:
                with run.lock:
                    run.bulk[sid] = events[-1]["time"]

    parts = [range(k, BULK, 4) for k in range(4)]
    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def feed_bulk(run: Run):
    """One more batch for every bulk session while the store is away: each queues a write."""
    inst = run.instances[0]
    ids = list(run.bulk)

    def work(part):
        c = Client(run)
        for sid in part:
            t = run.bulk[sid] + 1.0
            events = [{"phase": "began", "time": t}, {"phase": "changed", "translation": 20, "time": t + 0.02},
                      {"phase": "ended", "velocity": 100, "time": t + 0.04}]
            status = c.call(inst, "POST", f"/sessions/{sid}/pan", {"events": events}, "bulk")[0]
            if status == 200:
                with run.lock:
                    run.bulk[sid] = t + 0.04
            else:
                run.error("status", f"bulk batch on {sid} while the store was away: {status}")

    threads = [threading.Thread(target=work, args=(ids[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def fault_slow(run: Run):
    """Redis behind a delay proxy: a round trip well under the deadline, then one over it."""
    redis = RedisServer(log=redis_log(run)).start()
    proxy = delay_proxy.start((HOST, redis.port), rtt_ms=0)
    run.store_port = redis.port
    stages = [(200, 6.0 if not LONG else 15.0), (2500, 6.0 if not LONG else 15.0)]
    try:
        setup(run, f"redis://{HOST}:{proxy.port}")
        start_load(run)
        time.sleep(WARMUP)
        windows = []
        for rtt, seconds in stages:
            a = now()
            proxy.proxy.delay = rtt / 2000
            time.sleep(seconds)
            windows.append((rtt, a, now()))
        proxy.proxy.delay = 0
        t_back = now()
        run.back.append(t_back)
        # Over the deadline the store is away as far as sheetd can tell.
        run.away.append((windows[1][1], t_back))
        watch_return(run, "round trip back to 0", t_back)
        time.sleep(TAIL)
        for rtt, a, b in windows:
            fig, during, *_ = away_figures(run, f"round trip +{rtt} ms", a, b)
            lat = collections.defaultdict(list)
            for r in during:
                lat[r[2]].append(r[1] - r[0])
            fig["latency ms p50 / max, by kind"] = {
                k: [round(sorted(v)[len(v) // 2] * 1000, 1), round(max(v) * 1000, 1)] for k, v in sorted(lat.items())}
        check_away(run, "round trip +2500 ms", windows[1][1], windows[1][2])
        fig = run.figures["away"]["round trip +200 ms"]
        run.check(fig["creations acknowledged while away"] > 0,
                  f"a round trip under the deadline: creations still acknowledged ({fig['creations acknowledged while away']})")
        run.figures["first creation acknowledged after the return (s)"] = first_creation_after(run, t_back)
        events_lost, _ = finish(run)
        run.check(events_lost == 0, f"no accepted event lost: {events_lost}")
        run.check(run.errors["recovery"] == 0, "every held session was in the store after the round trip came back")
        run.figures["instance exits"] = stop_instances(run)
        run.check(all(x == 0 for x in run.figures["instance exits"]), f"instances exited 0: {run.figures['instance exits']}")
    finally:
        stop_instances(run)
        proxy.stop()
        redis.stop()


def fault_promoted(run: Run):
    """Primary and replica; the primary killed -9, the replica promoted (REPLICAOF NO ONE), the
    instances restarted one by one with --store pointing at it."""
    # Each in a folder of its own: a replica writes the snapshot it syncs from into its folder.
    folders = [os.path.join(ARGS.out, f"{run.name}-{role}") for role in ("primary", "replica")]
    for folder in folders:
        os.makedirs(folder, exist_ok=True)
    primary = RedisServer(log=redis_log(run, "-primary"), directory=folders[0]).start()
    replica = RedisServer(log=redis_log(run, "-replica"), replica_of=primary.port, directory=folders[1]).start()
    run.store_port = primary.port
    try:
        wait_until("the replica to sync", lambda: info(replica.port, "replication").get("master_link_status") == "up", 15)
        setup(run, primary.url)
        start_load(run)
        time.sleep(WARMUP)
        p_off = int(info(primary.port, "replication")["master_repl_offset"])
        r_off = int(info(replica.port, "replication")["master_repl_offset"])
        snapshot = {u.sid: (u.accepted[-1] if u.accepted else None) for u in run.users}
        t_fault = now()
        primary.kill()
        time.sleep(2.0)
        call(replica.port, "REPLICAOF", "NO", "ONE")
        t_promote = now()
        run.store_port = replica.port
        behind = stored(replica.port, snapshot)
        run.figures["replication bytes the replica lacked at the kill"] = p_off - r_off
        run.figures["user sessions whose last event before the kill the replica lacked"] = sum(
            1 for sid, t in snapshot.items() if not satisfied(behind.get(sid), t))
        time.sleep(1.0)
        restarts = []
        t_end_away = None
        for inst in run.instances:
            inst.gate.clear()
            mine = [u for u in run.users if u.inst is inst]
            for u in mine:
                u.idle.wait(5)
            time.sleep(0.3)  # a churner's step in flight ends
            last = {u.sid: (u.accepted[-1] if u.accepted else None) for u in mine}
            accepted = {u.sid: list(u.accepted) for u in mine}
            t_term = now()
            status = inst.sheetd.stop(30)
            t_exit = now()
            if t_end_away is None:
                t_end_away = t_term  # instance 1 stays on the dead primary: only instance 0's window counts
            inst.start(replica.url, 64)
            t_ready = now()
            run.back.append(t_ready)
            found = stored(replica.port, last)
            lost_here = [sid for sid in last if not found.get(sid) or found[sid][0] != "live"]
            events_lost = 0
            for sid, times in accepted.items():
                f = found.get(sid)
                t = f[1] if f and f[0] == "live" else None
                events_lost += sum(1 for x in times if t is None or x > t)
            inst.gate.set()
            restarts.append({"instance": inst.n, "exit": status, "SIGTERM to exit s": round(t_exit - t_term, 3),
                             "exit to ready s": round(t_ready - t_exit, 3),
                             "its users' sessions lost": len(lost_here),
                             "its users' accepted events not on the new primary": events_lost,
                             "its users' events accepted since the kill": sum(
                                 1 for times in accepted.values() for x in times if x - 1.0 > t_fault)})
            time.sleep(1.5)
        run.away.append((t_fault, t_end_away))
        run.figures["restarts"] = restarts
        time.sleep(TAIL)
        for r, back in zip(restarts, run.back):
            r["first creation acknowledged after ready (s)"] = first_creation_after(run, back)
        fig, during, acked, events, loads = away_figures(run, "primary dead, instance 0 on it", t_fault, t_end_away)
        run.figures["promoted s after the kill"] = round(t_promote - t_fault, 3)
        run.check(not acked, f"no creation acknowledged while the primary was dead: {len(acked)}")
        run.check(fig["events answered 200 / other"][0] > 0, f"events on held sessions went on while the primary was dead: "
                  f"200 / other = {fig['events answered 200 / other']}")
        events_lost, _ = finish(run, state_lost=True)
        run.figures["events lost at the end (after the restarts: what the restarts lost is above)"] = events_lost
        run.figures["instance exits"] = stop_instances(run)
    finally:
        stop_instances(run)
        replica.stop()
        primary.stop()


def unavailable_windows(run: Run) -> dict:
    """Per kind of request: the longest stretch from a failed request (a 5xx or no answer) to the
    next request of that kind answered 2xx (s), and how many such stretches there were."""
    out = {}
    for kind in sorted({r[2] for r in run.requests}):
        reqs = sorted((r for r in run.requests if r[2] == kind), key=lambda r: r[0])
        opened, longest, count = None, 0.0, 0
        for t0, t1, _k, status, *_ in reqs:
            if status == 0 or status >= 500:
                if opened is None:
                    opened, count = t0, count + 1
            elif 200 <= status < 300 and opened is not None:
                longest, opened = max(longest, t1 - opened), None
        if opened is not None:
            longest = max(longest, now() - opened)
        out[kind] = [round(longest, 3), count]
    return out


def read_back(run: Run) -> tuple[int, int, list]:
    """Every session a client was told exists, read over HTTP from each instance in turn (the one
    that does not hold it loads it from the store): (sessions, reads that did not find its last
    acknowledged state, examples). A user's session must answer with the `time` of its last
    accepted event (client clock); the others must answer 200."""
    users = {u.sid: u for u in run.users if u.created.is_set()}
    live = set(users) | set(run.probes) | set(run.churn_live)
    c = Client(run)
    bad, examples = 0, []
    for k, sid in enumerate(sorted(live)):
        for inst in (run.instances[k % 2], run.instances[1 - k % 2]):
            status, obj, _ = c.persist(inst, "GET", f"/sessions/{sid}", None, "final read", ok=(200,))
            ok = status == 200
            u = users.get(sid)
            if ok and u is not None and u.accepted:
                ok = isinstance(obj, dict) and abs(float(obj.get("time", -1)) - u.accepted[-1]) < 1e-6
            if not ok:
                bad += 1
                if len(examples) < 10:
                    examples.append({"id": sid, "instance": inst.n, "status": status,
                                     "time": obj.get("time") if isinstance(obj, dict) else str(obj)[:200],
                                     "last accepted": u.accepted[-1] if u is not None and u.accepted else None})
    return len(live), bad, examples


class RecordedGroup(SentinelGroup):
    """A SentinelGroup whose servers keep every write they execute: an append-only file never
    compacted (`aof-disable-auto-gc`, no automatic rewrite), in a folder of its own for each start of
    a server (`folder`), so that a primary killed and started again empty has a second record. What a
    server executed is read back afterwards (`executed_writes`), whatever became of its data (a
    demoted primary's dataset is replaced by the new primary's on its first sync; its files stay).
    Scripts may run a minute (`busy-reply-threshold`): the stop fault's marker script spans the stop.

    Configured as deploy/kubernetes/redis.yaml configures the store (docs/DEPLOYMENT.md): a primary
    takes writes only while a replica acknowledged it within 5 s (`min-replicas-to-write 1`,
    `min-replicas-max-lag 5`), and the Sentinels judge a server down after 1.5 s without an answer,
    longer than sheetd's --store-deadline (1 s): a write a stopped primary held is past its deadline
    before a replica can be promoted."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.starts: collections.Counter = collections.Counter()
        self.folder: dict[int, str] = {}  # server number -> folder of its current start

    def server(self, n: int, port: int | None = None, replica_of: int | None = None) -> RedisServer:
        self.starts[n] += 1
        folder = os.path.join(self.out, f"redis-{n}-{self.starts[n]}")
        os.makedirs(folder, exist_ok=True)
        self.folder[n] = folder
        log = open(os.path.join(self.out, f"redis-{n}.log"), "ab")
        extra = ["--repl-diskless-sync-delay", "0", "--appendonly", "yes", "--appendfsync", "no",
                 "--aof-disable-auto-gc", "yes", "--auto-aof-rewrite-percentage", "0",
                 "--busy-reply-threshold", "60000", "--min-replicas-to-write", "1", "--min-replicas-max-lag", "5"]
        server = RedisServer(port=port, log=log, directory=folder, replica_of=replica_of, extra=extra).start()
        server.folder = folder
        return server


def executed_writes(folder: str) -> list[tuple[bytes, ...]]:
    """Every data-changing command the server started in `folder` executed, in order, as its
    append-only file recorded it (script effects as the commands they ran; SELECT, MULTI and EXEC
    left out): the incremental files of its manifest and its history, by sequence number."""
    directory = os.path.join(folder, "appendonlydir")
    if not os.path.isdir(directory):
        return []
    names = [f for f in os.listdir(directory) if f.endswith(".incr.aof")]
    names.sort(key=lambda f: int(f.split(".")[-3]))
    out: list[tuple[bytes, ...]] = []
    for name in names:
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        i = 0
        while i < len(data) and data[i:i + 1] == b"*":
            end = data.find(b"\r\n", i)
            if end < 0:
                break
            count, i, args = int(data[i + 1:end]), end + 2, []
            for _ in range(count):
                end = data.find(b"\r\n", i)
                if end < 0 or data[i:i + 1] != b"$":
                    break
                size = int(data[i + 1:end])
                args.append(data[end + 2:end + 2 + size])
                i = end + 2 + size + 2
            if len(args) < count:
                break  # a command still being written
            if args[0].upper() not in (b"SELECT", b"MULTI", b"EXEC"):
                out.append(tuple(args))
    return out


# Run on the primary just before SIGSTOP: it writes the marker (a record in the append-only file
# before anything the server executes after the stop) and keeps the server busy until 0.5 s have
# passed by its clock, so that the stop lands inside it and nothing runs between the marker and the
# stop. Returns the microseconds it ran: over a second, the stop landed inside.
STOP_MARKER_SCRIPT = """
redis.call('SET', KEYS[1], ARGV[1])
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
local now = start
while now - start < 500000 do
  t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
return now - start
"""
STOP_MARKER = "fault-test:stopped"


def old_primary_only(run: Run, old_folder: str, new_folder: str, after: tuple | None = None) -> list:
    """The writes the old primary executed that the new primary never executed (its append-only
    file against the new one's), from `after` (a record of the old one's) on: writes made to a
    primary after it was demoted, lost with its data. Session records are told apart by their
    version (each write of a session has its own), so a write is the same on both only if it is
    the same write."""
    old = executed_writes(old_folder)
    if after is not None:
        run.check(after in old, f"the old primary's append-only file has the fault's marker")
        old = old[old.index(after) + 1:] if after in old else old
    new = set(executed_writes(new_folder))
    return [w for w in old if w not in new]


def describe_write(w: tuple) -> str:
    """A write for the report: its command, key and, for a session record, its version."""
    text = " ".join(a.decode(errors="replace") for a in w[:2])
    if len(w) > 2 and w[2][:1] == b"{":
        try:
            text += f" version {json.loads(w[2]).get('version')}"
        except ValueError:
            text += " (not JSON)"
    return text


def fault_sentinel(run: Run, how: str):
    """A primary, two replicas and three Sentinels; both instances on `redis+sentinel://`, none
    restarted. `failover`: SENTINEL FAILOVER (the old primary stays up and is demoted later);
    `kill`: the primary killed -9, started again empty at its address 3 s after the switch (the old
    primary coming back); `stop`: the primary SIGSTOPped until the Sentinels have switched, then
    SIGCONT (it wakes up as a primary with its old data and whatever was sent to it). Every
    acknowledged creation and every accepted event must be there at the end, read from Redis and
    from either instance; and the old primary must have executed no write the new primary lacks
    (after the stop's marker, for a stopped one; in its second life, for a killed one), by the
    servers' own append-only files."""
    group = RecordedGroup(os.path.join(ARGS.out, f"{run.name}-group"), replicas=2, sentinels=3, down_after_ms=1500)
    try:
        group.start()
        old = group.servers[0]
        old_folder = old.folder
        run.store_port = old.port
        setup(run, group.url)
        start_load(run)
        time.sleep(WARMUP)
        replication = info(old.port, "replication")
        offsets = [int(info(r.port, "replication").get("master_repl_offset", 0)) for r in group.servers[1:]]
        run.figures["replication bytes the best replica lacked at the fault"] = \
            int(replication["master_repl_offset"]) - max(offsets)
        marker = None
        t_fault = now()
        if how == "failover":
            group.failover()
        elif how == "kill":
            old.kill()
        else:
            ran = {}

            def mark():
                try:
                    ran["us"] = call(old.port, "EVAL", STOP_MARKER_SCRIPT, 1, STOP_MARKER, run.name, timeout=120)
                except (OSError, RespError) as e:
                    ran["error"] = repr(e)

            marking = threading.Thread(target=mark, daemon=True)
            marking.start()
            time.sleep(0.1)
            old.pause()
            marker = (b"SET", STOP_MARKER.encode(), run.name.encode())
        # The switch, as the Sentinels tell it (any of them: each announces it once it knows).
        wait_until("the Sentinels to name a new primary",
                   lambda: any(group.primary_port(k) != old.port for k in range(len(group.sentinel_ports))),
                   60, interval=0.02)
        t_switch = now()
        new_port = next(p for p in (group.primary_port(k) for k in range(len(group.sentinel_ports))) if p != old.port)
        new_folder = group.by_port(new_port).folder
        run.store_port = new_port
        run.back.append(t_switch)
        run.away.append((t_fault, t_switch))
        run.figures["fault → Sentinels name the new primary (s)"] = round(t_switch - t_fault, 3)
        # From the switch on: when the new primary has every session the instances held then.
        recovery = threading.Thread(target=watch_return, args=(run, how, t_switch), daemon=True)
        recovery.start()
        if how == "kill":
            time.sleep(3.0)
            old = group.server(0, port=old.port)  # a folder of its own: empty, and a record of its own
            old_folder = old.folder
            group.servers[0] = old
            t_old_back = now()
        elif how == "stop":
            old.resume()
            t_old_back = now()
            marking.join(60)
            stopped = ran.get("us", 0) / 1e6
            run.figures["the stop marker's script ran (s, by the server's clock)"] = round(stopped, 3)
            run.check(stopped > 1.0, f"the stop landed inside the marker script (it ran {stopped:.3f} s; "
                                     f"{ran.get('error', 'no error')})")
        else:
            t_old_back = t_switch
        demoted_at = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if info(old.port, "replication")["role"] != "master":
                    demoted_at = now()
                    break
            except (OSError, RespError):
                pass
            time.sleep(0.02)
        run.figures["old primary back / switch → old primary a replica (s)"] = [
            round(t_old_back - t_fault, 3), None if demoted_at is None else round(demoted_at - t_switch, 3)]
        run.check(demoted_at is not None, "the Sentinels made the old primary a replica")
        recovery.join(35)
        time.sleep(TAIL)
        run.figures["first creation acknowledged after the switch (s)"] = first_creation_after(run, t_switch)
        fig, during, acked, events, loads = away_figures(run, "fault → switch", t_fault, t_switch)
        events_lost, _ = finish(run)
        run.check(events_lost == 0, f"no accepted event lost: {events_lost}")
        run.check(run.errors["recovery"] == 0, "every held session was on the new primary after the switch")
        sessions, bad, examples = read_back(run)
        for e in examples:
            run.error("final read", f"{e}")
        run.figures["sessions read back from both instances / reads without their last acknowledged state"] = \
            [sessions, bad]
        run.check(bad == 0, f"every acknowledged session read back at its last acknowledged state from both "
                            f"instances: {bad} of {2 * sessions} reads were not")
        run.figures["answers by status and code"] = dict(sorted(collections.Counter(
            f"{r[3]} {r[5]}".strip() if r[3] else "no answer" for r in run.requests).items()))
        run.figures["longest unavailable s / stretches, by request kind"] = unavailable_windows(run)
        switches = {}
        for inst in run.instances:
            m = read_metrics(inst) or {}
            switches[inst.n] = m.get("sheetd_store_returns_total")
        run.figures["sheetd_store_returns_total per instance"] = switches
        run.figures["store counters per instance (stale, deferred by code)"] = {
            inst.n: store_counters(inst) for inst in run.instances}
        # What the old primary refused (its own count of error replies by code): a fenced write
        # that reached it past its deadline (EXPIRED), writes it took with no replica (NOREPLICAS),
        # or as a replica (READONLY).
        refused = {k[len("errorstat_"):]: int(v.split("=")[1]) for k, v in info(old.port, "errorstats").items()
                   if k.startswith("errorstat_")}
        run.figures["calls the old primary refused (its errorstats; the killed one's second life)"] = refused
        run.figures["instance exits"] = stop_instances(run)
        run.check(all(x == 0 for x in run.figures["instance exits"]), f"instances exited 0: {run.figures['instance exits']}")
        # Decided on what the servers recorded (their append-only files, once nothing writes any
        # more), never on when the test looked: a write the old primary executed and the new one
        # never did was made to a primary the Sentinels had replaced, and is lost with its data.
        stray = old_primary_only(run, old_folder, new_folder, after=marker)
        for w in stray[:10]:
            run.error("old primary", describe_write(w))
        run.figures["writes executed by the old primary only (its append-only file against the new primary's)"] = \
            len(stray)
        run.check(not stray, f"no write executed by the demoted primary: {len(stray)} "
                             f"({', '.join(describe_write(w) for w in stray[:3])})")
    finally:
        stop_instances(run)
        group.stop()


# --------------------------------------------------------------------------------------------
# The report.


def table(fig: dict) -> list[str]:
    out = ["| figure | value |", "|---|---|"]
    for k, v in fig.items():
        if isinstance(v, dict) and k in ("away", "recovery"):
            continue
        if isinstance(v, list) and v and isinstance(v[0], dict):
            v = "; ".join(", ".join(f"{a} {b}" for a, b in d.items()) for d in v)
        out.append(f"| {k} | {v} |")
    for section in ("away", "recovery"):
        for label, d in (fig.get(section) or {}).items():
            for k, v in d.items():
                out.append(f"| {section}: {label}: {k} | {v} |")
    return out


def main() -> int:
    os.makedirs(ARGS.out, exist_ok=True)
    chosen = [f for f in (ARGS.only.replace("sentinel", ",".join(SENTINEL_FAULTS)) if ARGS.only == "sentinel"
                          else ARGS.only).split(",") if f] or FAULTS
    plan = {
        "restart-empty": ("Redis restarted without persistence (kill -9, same port, empty)",
                          lambda r: fault_restart(r, False), 64),
        "restart-persistent": ("Redis restarted with appendonly yes, appendfsync always (kill -9, same port and folder)",
                               lambda r: fault_restart(r, True), 64),
        "killed": (f"Redis killed for {OUTAGE:g} s (connection refused), back empty",
                   lambda r: fault_away(r, "killed", OUTAGE), 64),
        "stopped": (f"Redis SIGSTOPped for {OUTAGE:g} s (accepts, never answers), then SIGCONT",
                    lambda r: fault_away(r, "stopped", OUTAGE), 64),
        "backlog": (f"Redis killed for {6 if not LONG else 15} s with --store-backlog 1 (MiB) and {BULK} sessions "
                    "changed meanwhile", lambda r: fault_away(r, "killed", 6.0 if not LONG else 15.0, 1), 1),
        "slow": ("Redis behind a delay proxy: +200 ms round trip, then +2500 ms (over the 1 s deadline)", fault_slow, 64),
        "promoted": ("Replica promoted: primary kill -9, REPLICAOF NO ONE, instances restarted onto it", fault_promoted, 64),
        "sentinel-failover": ("Sentinel: SENTINEL FAILOVER under load, no instance restarted",
                              lambda r: fault_sentinel(r, "failover"), 64),
        "sentinel-kill": ("Sentinel: primary kill -9 under load, back empty at its address after the switch",
                          lambda r: fault_sentinel(r, "kill"), 64),
        "sentinel-stop": ("Sentinel: primary SIGSTOPped until the switch, then SIGCONT (wakes as a primary)",
                          lambda r: fault_sentinel(r, "stop"), 64),
    }
    runs = []
    for name in chosen:
        title, fn, backlog = plan[name]
        run = Run(name, title, backlog)
        print(f"store-faults: {name}: {title}", file=sys.stderr, flush=True)
        t = now()
        try:
            fn(run)
        except Exception as e:  # a fault that could not run is a failure, with why
            import traceback
            run.error("harness", f"{type(e).__name__}: {e}", trace=traceback.format_exc()[-2000:])
            run.check(False, f"the fault ran to its end: {type(e).__name__}: {e}")
        run.figures["seconds"] = round(now() - t, 1)
        runs.append(run)
        passed = sum(ok for ok, _ in run.checks)
        print(f"store-faults: {name}: {passed} passed, {len(run.checks) - passed} failed ({run.figures['seconds']} s)",
              file=sys.stderr, flush=True)

    result = {r.name: {"title": r.title, "figures": r.figures, "errors": dict(r.errors),
                       "checks": [{"ok": ok, "check": text} for ok, text in r.checks]} for r in runs}
    result["_settings"] = {"long": LONG, "users": USERS, "streams": STREAMS, "churners": CHURNERS, "probes": PROBES,
                           "store-deadline s": DEADLINE, "outage s": OUTAGE}
    with open(os.path.join(ARGS.out, "result.json"), "w") as f:
        json.dump(result, f, indent=1, default=str)
    with open(os.path.join(ARGS.out, "errors.jsonl"), "w") as f:
        for r in runs:
            for s in r.samples:
                f.write(json.dumps(s, default=str) + "\n")
    lines = [f"# Store faults ({'long' if LONG else 'short'} form)", "",
             f"Two sheetd instances on one store, {USERS} users ({STREAMS} with a frame stream), {CHURNERS} churners, "
             f"a loader over {PROBES} sessions; --store-deadline {DEADLINE:g} s. Times are figures, not verdicts.", ""]
    for r in runs:
        lines += [f"## {r.name}: {r.title}", ""] + table(r.figures) + [""]
        lines += [f"- {'ok  ' if ok else 'FAIL'} {text}" for ok, text in r.checks] + [""]
    report = "\n".join(lines)
    with open(os.path.join(ARGS.out, "report.md"), "w") as f:
        f.write(report)
    print(report)
    passed = sum(ok for r in runs for ok, _ in r.checks)
    failed = sum(not ok for r in runs for ok, _ in r.checks)
    print(f"store-faults: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
