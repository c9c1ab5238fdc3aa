"""The instance-crash half of IntegrationTests/fault-test: sheetd instances on the Redis store killed with
SIGKILL, and what the clients' acknowledged work looks like afterwards. Standard library only; every
process is started through testkit/sheetkit/harness.py (redis-server, sheetd, deploy/nginx.conf) on
free loopback ports and stopped by PID; their PIDs are kept in OUT/pids for the driver's cleanup.

Two scenarios (`--scenario ack|cluster|both`):

ack: crash after acknowledgement. One sheetd on `--store redis://…`. Eight clients, each on its own
    keep-alive connection, live N sessions (500; `--long`: 2,000), the steps of their sessions
    interleaved (each client's last four steps held until every client is there, then sent at once):
    created by POST /sessions or PUT /sessions/{id} (client-clock, a random preset,
    geometry and initial detent), a quarter replaced by a second PUT before the drag, dragged
    (`began`, 2-5 `changed`; half released with `ended` and a velocity), then one in ten replaced
    again and one in seven deleted. The client that receives the last answer of the run takes the
    kill instant and sends SIGKILL at once; a new sheetd starts on the same store. Then, per session:
    - the last acknowledged operation a deletion: GET is 404 (else "resurrected");
    - else GET is 200 with the configuration of the last acknowledged POST/PUT (preset, geometry,
      client clock), and its state equals the answer sheetd gave to that creation or to one of the
      events accepted after it: the same `time` (unique per event), state, detent, constant, alpha
      and progress. That event is the prefix the store kept; the accepted events after it are lost,
      and their age is the kill instant minus the instant the first lost event's answer arrived.
    - the state under the snapshot (drag origin, velocity samples, the running animation, the last
      event's time) is that prefix's too: a continuation (a `changed` and an `ended` without a
      velocity when dragging, else `began`, `changed`, `ended`) gets the answers POST /simulate gives
      for the prefix's events followed by the continuation.
cluster: kill -9 of one instance among three behind nginx, under load. redis-server, three sheetd on
    `--store`, deploy/nginx.conf with `--server-params` on each server line. Users (12; `--long`: 24)
    each keep a client-clock session busy through nginx with gestures at 60 Hz in real time
    (`began`, 8-16 `changed`, `ended` with a velocity or, one in four, without (estimated from the
    `changed` events, so that the loss of any of them shows), a pause until the animation ends,
    `show` when a release dismissed the card), every other user following it with a frame stream that reconnects
    like an EventSource (waits `retry:`, sends Last-Event-ID), and one gesture in five a short session
    in between (PUT, one gesture, GET, DELETE). After a warm-up an instance gets SIGKILL (the instant
    taken right before os.kill), and is started again on its port a few seconds later; one kill
    (`--long`: each instance twice). Checks:
    - no acknowledged session lost: no 404 (requests and stream reconnections) for a session created
      and not deleted; every long-lived session there at the end (GET 200, DELETE 204, its stream
      ends with `closed` `deleted`);
    - the state after a kill is the state after a prefix of the session's accepted events: each user's
      first request after a kill is a GET of its sessions, which must equal the answer to one of
      their accepted events (or their creation) as above; the events after it are lost (counted, with
      their age); the session's events from its last rest on, without the lost ones, replay through
      POST /simulate to the very answers sheetd gave, at the end of every gesture;
    - a 409 only on a session that lost events (a gesture whose `began` was lost: counted, and the
      user starts a new gesture); 5xx and transport errors only for requests in flight at a kill
      (sent before it, answered after): 502 from nginx is counted apart from any 5xx sheetd made
      (problem+json), which fails;
    - frame ids strictly increase on every stream whose session lost no events; each killed instance
      is ready again on its port; every instance exits 0 on SIGTERM at the end.
    Figures per kill: the sessions the killed instance served (from nginx's access log), events lost
    and their age, requests in flight and what they got, recovery time (kill → the first 2xx for each
    of those sessions; kill → each dropped stream open again), stream reconnections, down time.

Output: OUT/result.json, OUT/errors.jsonl (each failure with its requests), the logs, and on stdout
a Markdown report ending with `fault-crash: N passed, M failed`.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import random
import re
import signal
import socket
import sys
import threading
import time
import uuid

from sheetkit.harness import HOST, KeepAlive, Proxy, RedisServer, Sheetd, decoded, free_ports
from sheetkit.sse import ResumePoint, StreamBody, open_stream

P = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
P.add_argument("--bin", required=True, help="the sheetd binary")
P.add_argument("--out", required=True, help="folder for logs, result.json, errors.jsonl")
P.add_argument("--long", action="store_true", help="2,000 sessions; 24 users and six kills")
P.add_argument("--scenario", choices=["ack", "cluster", "both"], default="both")
P.add_argument("--server-params", default="max_fails=0", help="nginx's parameters on each server line")
P.add_argument("--access-log", action="store_true", help="the cluster's instances log every answer (sheetd --access-log)")
P.add_argument("--seed", type=int, default=None, help="random seed (printed; default: drawn)")
ARGS = P.parse_args()

SEED = ARGS.seed if ARGS.seed is not None else random.randrange(1 << 30)
random.seed(SEED)
T0 = time.monotonic()
LOCK = threading.Lock()
PRESETS = ["facebook", "twitter", "fluid", "glide"]
# ack: the steps each client keeps for the end, sent by all of them at once right before the kill.
TAIL = 4
# Device geometries (height, safe-area top, bottom), points: phones with and without a notch, a tablet.
GEOMETRIES = [(844, 47, 34), (932, 59, 34), (667, 20, 0), (1024, 24, 20), (740, 24, 0)]
STATE_FIELDS = ("state", "detent", "constant", "dimmerAlpha", "progress")
RESULT_FIELDS = ("phase", "state", "detent", "constant", "dimmerAlpha", "progress")


def now() -> float:
    return time.monotonic() - T0


def close(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-7)
    return a == b


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None


def ms(x):
    return "-" if x is None else f"{x * 1000:.1f}"


# --------------------------------------------------------------------------------------------
# What a run records: failures (each kind counted, the first 20 kept with their context) and checks.


class Record:
    def __init__(self, scenario):
        self.scenario = scenario
        self.errors = collections.Counter()
        self.samples = []
        self.counts = collections.Counter()
        self.checks = []

    def error(self, kind, detail, **context):
        with LOCK:
            self.errors[kind] += 1
            if sum(1 for s in self.samples if s["kind"] == kind) < 20:
                self.samples.append({"scenario": self.scenario, "kind": kind, "t": round(now(), 3),
                                     "detail": detail, **context})

    def count(self, key, n=1):
        with LOCK:
            self.counts[key] += n

    def check(self, ok, text):
        self.checks.append((bool(ok), text))


PIDS: dict[str, int] = {}


def keep_pid(name, proc):
    """OUT/pids: every process alive that this run started, for the driver's cleanup if this one dies."""
    with LOCK:
        if proc is None:
            PIDS.pop(name, None)
        else:
            PIDS[name] = proc.pid
        tmp = os.path.join(ARGS.out, "pids.tmp")
        with open(tmp, "w") as f:
            f.writelines(f"{pid}\n" for pid in PIDS.values())
        os.replace(tmp, os.path.join(ARGS.out, "pids"))


class Reply:
    __slots__ = ("status", "obj", "sent", "recv", "ctype", "raw")

    def __init__(self, status, obj, sent, recv, ctype="", raw=b""):
        self.status, self.obj, self.sent, self.recv, self.ctype, self.raw = status, obj, sent, recv, ctype, raw


class Client:
    """One keep-alive connection; every answer with the monotonic instants its request left and its
    answer was read whole. Status 0: no answer (the connection failed)."""

    def __init__(self, port, timeout=15):
        self.link = KeepAlive(port, timeout=timeout)

    def call(self, method, path, body=None) -> Reply:
        sent = time.monotonic()
        status, raw, headers, error = self.link.request(method, path, body)
        recv = time.monotonic()
        if error:
            return Reply(0, error, sent, recv)
        ctype = headers.get("content-type", "")
        obj = decoded(raw) if raw and "json" in ctype else raw.decode("utf-8", "replace")
        return Reply(status, obj, sent, recv, ctype, raw)

    def close(self):
        self.link.close()


def state_equal(snapshot, answer) -> bool:
    return close(snapshot.get("time"), answer.get("time")) and all(
        close(snapshot.get(k), answer.get(k)) for k in STATE_FIELDS)


def result_diff(got, want) -> list[str]:
    """What differs between a session's answer and /simulate's result for the same event."""
    diff = [k for k in RESULT_FIELDS if not close(got.get(k), want.get(k))]
    if (got.get("snap") or {}).get("detent") != (want.get("snap") or {}).get("detent"):
        diff.append("snap.detent")
    if not close(got.get("velocity"), want.get("velocity")):
        diff.append("velocity")
    ga, wa = got.get("animation") or {}, want.get("animation") or {}
    if not close(ga.get("to"), wa.get("to")) or not close(ga.get("duration"), wa.get("duration")):
        diff.append("animation")
    return diff


def simulate_body(config, events):
    cfg = {k: v for k, v in config.items() if k != "clock"}
    return {"config": cfg, "events": [{"type": "pan", **e} if "phase" in e else e for e in events], "fps": 60}


def start_sheetd(name, store, port=None, log=None):
    flags = ["--log-level", "info", "--store", store]
    sheetd = Sheetd(ARGS.bin, flags, port=port, log=log).launch()
    keep_pid(name, sheetd.proc)
    sheetd.wait_ready(30)
    return sheetd


def visible_detents(port):
    """{preset: its detents but the dismiss target} from GET /presets."""
    r = Client(port).call("GET", "/presets")
    if r.status != 200:
        raise RuntimeError(f"GET /presets: {r.status}")
    return {p["name"]: [d for d in p["detents"] if d != p["dismissTarget"]] for p in r.obj["presets"]}


def random_config(rng, detents, other_than=None):
    preset = rng.choice([p for p in PRESETS if p != other_than] or PRESETS)
    h, top, bottom = rng.choice(GEOMETRIES)
    return {"preset": preset, "geometry": {"height": h, "safeAreaTop": top, "safeAreaBottom": bottom},
            "initialDetent": rng.choice(detents[preset]), "clock": "client"}


# --------------------------------------------------------------------------------------------
# ack: crash after acknowledgement.


class Life:
    """One session of the ack scenario: its planned steps, and what sheetd acknowledged."""

    def __init__(self, n, rng, detents):
        self.n, self.rng = n, rng
        self.sid = f"fc-{uuid.uuid4().hex[:20]}"  # a POST replaces it with sheetd's id
        self.clock = rng.uniform(10, 1000)  # the client's monotonic seconds, 1/60 s per event
        self.all_times = []
        first = random_config(rng, detents)
        self.steps = [("POST" if rng.random() < 0.5 else "PUT", first)]
        if rng.random() < 0.25:
            self.steps.append(("replace", random_config(rng, detents, first["preset"])))
        self.steps.append(("began", None))
        self.steps += [("changed", None)] * rng.randint(2, 5)
        if rng.random() < 0.5:
            self.steps.append(("ended", None))
        r = rng.random()
        if r < 0.10:
            self.steps.append(("replace", random_config(rng, detents)))
        elif r < 0.24:
            self.steps.append(("delete", None))
        self.done = 0
        self.created = False
        self.broken = False
        # The last acknowledged write (creation, replacement: (config, snapshot); deletion: None) and
        # the events accepted after it: dicts with body, answer, recv.
        self.write = None
        self.deleted = False
        self.events = []
        self.target = rng.uniform(-300, 300)

    def next_time(self):
        self.clock = round(self.clock + 1 / 60, 4)
        self.all_times.append(self.clock)
        return self.clock

    def step(self, client, rec):
        kind, cfg = self.steps[self.done]
        self.done += 1
        if kind in ("POST", "PUT", "replace"):
            if kind == "POST":
                r = client.call("POST", "/sessions", cfg)
            else:
                r = client.call("PUT", f"/sessions/{self.sid}", cfg)
            want = 200 if kind == "replace" else 201
            if r.status != want:
                return self.fail(rec, f"{kind} {self.sid}", r, want, cfg)
            if kind == "POST":
                self.sid = r.obj["id"]
            self.created = True
            self.write, self.deleted, self.events = (cfg, r.obj), False, []
            rec.count("creations (POST)" if kind == "POST" else "creations (PUT)" if kind == "PUT" else "replacements")
            return True
        if kind == "delete":
            r = client.call("DELETE", f"/sessions/{self.sid}")
            if r.status != 204:
                return self.fail(rec, f"DELETE {self.sid}", r, 204, None)
            self.write, self.deleted, self.events = None, True, []
            rec.count("deletions")
            return True
        body = {"phase": kind, "time": self.next_time()}
        if kind == "changed":
            k = sum(1 for e in self.events if e["body"]["phase"] == "changed") + 1
            body["translation"] = round(self.target * min(1.0, k / 4) + self.rng.gauss(0, 1.5), 2)
        elif kind == "ended":
            body["velocity"] = round(self.rng.uniform(-1400, 1400), 1)
        r = client.call("POST", f"/sessions/{self.sid}/pan", body)
        if r.status != 200:
            return self.fail(rec, f"POST pan {kind} {self.sid}", r, 200, body)
        self.events.append({"body": body, "answer": r.obj, "sent": r.sent, "recv": r.recv})
        rec.count("events accepted")
        return True

    def fail(self, rec, what, r, want, body):
        rec.error("status", f"{what}: {r.status}, expected {want}", body=json.dumps(body)[:300],
                  response=str(r.obj)[:300])
        self.broken = True
        return False

    def remaining(self):
        return not self.broken and self.done < len(self.steps)


def scenario_ack(rec, out):
    n_sessions = 2000 if ARGS.long else 500
    workers = 8
    redis = RedisServer(log=open(os.path.join(out, "ack-redis.log"), "wb")).start()
    keep_pid("ack-redis", redis.proc)
    first = second = None
    try:
        first = start_sheetd("ack-sheetd-1", redis.url, log=os.path.join(out, "ack-sheetd-1.log"))
        detents = visible_detents(first.port)
        rng = random.Random(SEED)
        lives = [Life(n, random.Random(rng.random()), detents) for n in range(n_sessions)]
        kill = {"t": None, "wall": None}
        left = [workers]
        tail = threading.Barrier(workers)

        def work(w):
            client = Client(first.port)
            mine = lives[w::workers]
            wr = random.Random(SEED + w)
            active = [lf for lf in mine if lf.remaining()]
            held = True
            while active:
                if held and sum(len(lf.steps) - lf.done for lf in active) <= TAIL:
                    # The clients' last steps leave together, so that the kill finds many of them
                    # answered in its last milliseconds (a client that failed is not waited for).
                    held = False
                    try:
                        tail.wait(timeout=60)
                    except threading.BrokenBarrierError:
                        pass
                lf = wr.choice(active)
                lf.step(client, rec)
                if not lf.remaining():
                    active.remove(lf)
            if held:
                tail.abort()
            with LOCK:
                left[0] -= 1
                last = left[0] == 0
            if last:
                # The last answer of the run has arrived: the kill instant, and SIGKILL at once.
                kill["t"], kill["wall"] = time.monotonic(), time.time()
                os.kill(first.pid, signal.SIGKILL)
            client.close()

        t_start = time.monotonic()
        threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        run_seconds = kill["t"] - t_start
        first.proc.wait()
        killed_status = first.proc.returncode
        keep_pid("ack-sheetd-1", None)
        t_restart = time.monotonic()
        second = start_sheetd("ack-sheetd-2", redis.url, log=os.path.join(out, "ack-sheetd-2.log"))
        ready_after = time.monotonic() - kill["t"]
        restart_took = time.monotonic() - t_restart
        figures = verify_ack(rec, lives, second.port, kill["t"])
        figures.update({
            "sessions": n_sessions, "clients": workers, "seconds of traffic": round(run_seconds, 2),
            "requests/s": round(sum(lf.done for lf in lives) / run_seconds),
            "killed instance's exit": killed_status,
            "kill → new instance ready, s": round(ready_after, 3), "new instance start → ready, s": round(restart_took, 3),
            "counts": dict(rec.counts),
        })
        return figures
    finally:
        for name, proc in (("ack-sheetd-2", second), ("ack-sheetd-1", first)):
            if proc is not None:
                proc.stop(10)
                keep_pid(name, None)
        redis.stop()
        keep_pid("ack-redis", None)


def verify_ack(rec, lives, port, kill_t):
    """Every session read back from the new instance; the figures."""
    lost, resurrected, wrong_config, unmatched = [], [], [], []
    matched = collections.Counter()
    lost_events = []  # (session, count, age s)
    continued = collections.Counter()
    queue = [lf for lf in lives if lf.created]
    lock = threading.Lock()

    def verify(client, lf):
        r = client.call("GET", f"/sessions/{lf.sid}")
        if lf.deleted:
            if r.status == 404:
                matched["deleted (404)"] += 1
            else:
                resurrected.append(lf.sid)
                rec.error("resurrected", f"GET {lf.sid} after its acknowledged DELETE: {r.status}",
                          response=str(r.obj)[:400])
            return
        if r.status != 200:
            lost.append(lf.sid)
            rec.error("lost", f"GET {lf.sid}: {r.status}; its last acknowledged write was a "
                      f"{'replacement' if lf.steps[0][1] is not lf.write[0] else 'creation'}",
                      config=lf.write[0], events=len(lf.events), response=str(r.obj)[:300])
            return
        cfg, created = lf.write
        snap = r.obj
        g = snap.get("geometry") or {}
        if (snap.get("preset") != cfg["preset"] or snap.get("clock") != "client"
                or any(not close(g.get(k), v) for k, v in cfg["geometry"].items())):
            wrong_config.append(lf.sid)
            rec.error("config", f"GET {lf.sid}: preset {snap.get('preset')} geometry {g}, the last acknowledged "
                      f"PUT/POST had {cfg['preset']} {cfg['geometry']}", snapshot=json.dumps(snap)[:600])
            return
        candidates = [created] + [e["answer"] for e in lf.events]
        m = next((i for i, a in enumerate(candidates) if state_equal(snap, a)), None)
        if m is None:
            unmatched.append(lf.sid)
            rec.error("unmatched", f"GET {lf.sid}: {snap.get('state')} at {snap.get('constant')} time "
                      f"{snap.get('time')}, the answer to no accepted event", snapshot=json.dumps(snap)[:800],
                      answers=json.dumps([{k: a.get(k) for k in ("time",) + STATE_FIELDS} for a in candidates])[:3000])
            return
        matched["creation/replacement" if m == 0 else lf.events[m - 1]["body"]["phase"]] += 1
        gone = len(lf.events) - m
        if gone:
            lost_events.append((lf.sid, gone, kill_t - lf.events[m]["recv"], kill_t - lf.events[m]["sent"]))
        prefix = [e["body"] for e in lf.events[:m]]
        continuation(client, lf, snap, prefix, cfg)

    def continuation(client, lf, snap, prefix, cfg):
        t = max(lf.all_times, default=lf.clock) + 0.05
        if snap.get("state") == "dragging":
            cont = [{"phase": "changed", "translation": -40.0, "time": round(t, 4)},
                    {"phase": "ended", "time": round(t + 1 / 60, 4)}]
        else:
            cont = [{"phase": "began", "time": round(t, 4)},
                    {"phase": "changed", "translation": 55.0, "time": round(t + 1 / 60, 4)},
                    {"phase": "ended", "time": round(t + 2 / 60, 4)}]
        answers = []
        for body in cont:
            r = client.call("POST", f"/sessions/{lf.sid}/pan", body)
            if r.status != 200:
                rec.error("continuation", f"POST pan {body['phase']} on {lf.sid} after the restart: {r.status}",
                          prefix=json.dumps(prefix)[:2000], response=str(r.obj)[:300])
                continued["refused"] += 1
                return
            answers.append(r.obj)
        s = client.call("POST", "/simulate", simulate_body(cfg, prefix + cont))
        if s.status != 200:
            rec.error("continuation", f"POST /simulate for {lf.sid}: {s.status}", response=str(s.obj)[:300])
            continued["refused"] += 1
            return
        for i, (got, want) in enumerate(zip(answers, s.obj["results"][len(prefix):])):
            diff = result_diff(got, want)
            if diff:
                continued["differ"] += 1
                rec.error("continuation", f"{lf.sid}: continuation event {i} ({cont[i]['phase']}) after the "
                          f"restart differs from /simulate of the kept prefix ({len(prefix)} events): {diff}",
                          config=cfg, events=json.dumps(prefix + cont)[:3000], got=json.dumps(got)[:600],
                          want=json.dumps(want)[:600])
                return
        continued["equal"] += 1

    def work():
        client = Client(port)
        while True:
            with lock:
                if not queue:
                    break
                lf = queue.pop()
            verify(client, lf)
        client.close()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    acked_live = sum(1 for lf in lives if lf.created and not lf.deleted)
    acked_deleted = sum(1 for lf in lives if lf.deleted)
    events_acc = rec.counts["events accepted"]
    n_lost = sum(x[1] for x in lost_events)
    ages = [x[2] for x in lost_events]
    ages_sent = [x[3] for x in lost_events]
    rec.check(not lost and not wrong_config,
              f"acknowledged creations and replacements survive kill -9: {len(lost)} of {acked_live} sessions lost, "
              f"{len(wrong_config)} with another configuration than the last acknowledged PUT/POST")
    rec.check(not resurrected, f"acknowledged deletions survive kill -9: {len(resurrected)} of {acked_deleted} resurrected")
    rec.check(not unmatched, f"every session's state after the restart is its state after a prefix of its accepted "
              f"events: {acked_live - len(lost) - len(wrong_config) - len(unmatched)} matched, {len(unmatched)} not")
    rec.check(continued["equal"] > 0 and not continued["differ"] and not continued["refused"],
              f"the state under the snapshot is that prefix's: {continued['equal']} continuations equal /simulate, "
              f"{continued['differ']} differ, {continued['refused']} refused")
    rec.check(not rec.errors["status"], f"every request before the kill answered as expected: {rec.errors['status']} did not")
    return {
        "acknowledged": {"live sessions": acked_live, "deletions": acked_deleted, "events": events_acc},
        "sessions lost": len(lost), "deletions resurrected": len(resurrected), "wrong configuration": len(wrong_config),
        "states matched to": dict(matched), "states no prefix explains": len(unmatched),
        "events lost": n_lost, "sessions with events lost": len(lost_events),
        "age of lost events ms (max, p50)": [ms(max(ages, default=None)), ms(percentile(ages, 0.5))],
        "age by request sent ms (max)": ms(max(ages_sent, default=None)),
        "lost events per session": sorted((x[1] for x in lost_events), reverse=True)[:20],
        "continuations": dict(continued),
    }


# --------------------------------------------------------------------------------------------
# cluster: kill -9 of one instance among three behind nginx, under load.


class Cluster:
    def __init__(self, out, redis_url, ports, proxy_port):
        self.out, self.redis_url, self.ports, self.proxy_port = out, redis_url, ports, proxy_port
        self.instances = [None] * len(ports)
        self.kills = []  # dicts: instance, port, t (monotonic), wall, ready_t, ...
        self.stop = threading.Event()

    def start(self, n):
        path = os.path.join(self.out, f"sheetd-{n}.log")
        with open(path, "a") as log:
            log.write(f"---- started at t={now():.3f}\n")
        flags = ["--log-level", "info", "--store", self.redis_url] + (["--access-log"] if ARGS.access_log else [])
        self.instances[n] = Sheetd(ARGS.bin, flags,
                                   port=self.ports[n], log=path).launch()
        keep_pid(f"sheetd-{n}", self.instances[n].proc)

    def ready(self, n):
        try:
            self.instances[n].wait_ready(30)
            return True
        except RuntimeError:
            return False

    def kill(self, n):
        inst = self.instances[n]
        k = {"instance": n, "port": self.ports[n]}
        # The kill instant, taken right before the signal: what the clients' answers are measured against.
        k["t"], k["wall"] = time.monotonic(), time.time()
        os.kill(inst.pid, signal.SIGKILL)
        with LOCK:
            self.kills.append(k)
        inst.proc.wait()
        # Gone (reaped): a request sent before this may still have met the dying process (its
        # connections reset), and nginx does not send a POST on after a reset: 502.
        k["dead"] = time.monotonic()
        keep_pid(f"sheetd-{n}", None)
        k["exit"] = inst.proc.returncode
        return k


class Stream(threading.Thread):
    """A frame stream that behaves like an EventSource: on a dropped connection or a `closed` other than
    `deleted` it waits `retry:` and reconnects through the proxy with Last-Event-ID."""

    def __init__(self, user, sid):
        super().__init__(daemon=True)
        self.user, self.sid = user, sid
        self.at = ResumePoint()  # retry, Last-Event-ID, the last frame
        self.reconnects = []  # dicts: t, why, reopened (monotonic)
        self.order_errors = []  # frames not after the last one: dicts t, problem
        self.resumed = collections.Counter()
        self.deleted = threading.Event()
        self.opened = threading.Event()
        self.frames = 0
        self.ended_with = None

    def run(self):
        rec = self.user.rec
        failures = 0
        while not self.deleted.is_set():
            why, t_end = self.once()
            if why == "deleted" or self.deleted.is_set():
                self.ended_with = why
                return
            if why == "status":
                failures += 1
                if failures > 10:
                    rec.error("stream", f"{self.sid}: gave up after 10 failed reconnections")
                    return
            else:
                failures = 0
            with LOCK:
                self.reconnects.append({"t": t_end, "why": why, "reopened": None})
            time.sleep(self.at.retry)

    def once(self):
        cl = self.user.cluster
        sock = None
        sent = time.monotonic()
        try:
            sock = socket.create_connection((HOST, cl.proxy_port), timeout=5)
            sock.settimeout(25)  # a keep-alive comment comes every 15 s
            opened = open_stream(sock, f"/sessions/{self.sid}/frames?fps=30", f"{HOST}:{cl.proxy_port}", self.at.last_id)
            if opened is None:
                return "refused", time.monotonic()
            status, hdrs, raw = opened
            self.user.note(self.sid, Reply(status, raw[:300].decode("latin-1"), sent, time.monotonic(),
                                           hdrs.get("content-type", "")), "GET frames")
            if status == 204 and self.deleted.is_set():
                return "deleted", time.monotonic()
            if status in (404, 204) and not self.deleted.is_set():
                self.user.rec.error("lost", f"GET /sessions/{self.sid}/frames (Last-Event-ID {self.at.last_id}): {status} "
                                    "for a session created and not deleted")
            if status != 200:
                return "status", time.monotonic()
            with LOCK:
                if self.reconnects and self.reconnects[-1]["reopened"] is None:
                    self.reconnects[-1]["reopened"] = time.monotonic()
            self.opened.set()
            resuming = self.at.last_id is not None
            body = StreamBody(raw, hdrs.get("transfer-encoding", "").lower() == "chunked", lambda: sock.recv(65536))
            for i, event in enumerate(self.at.events(body)):
                self.event(event, resuming and i == 0)
                if event.kind == "closed":
                    return "deleted" if event.reason == "deleted" else f"closed {event.reason}", time.monotonic()
            return "ended without closed" if body.end == "ended" else body.end, time.monotonic()
        except (OSError, ValueError) as e:
            if self.deleted.is_set():
                return "deleted", time.monotonic()
            return f"error {type(e).__name__}", time.monotonic()
        finally:
            if sock is not None:
                sock.close()

    def event(self, event, first_after_resume):
        if first_after_resume:
            self.resumed[event.kind] += 1
        if event.kind == "frame":
            self.frames += 1
            if event.frame is None:
                self.user.rec.error("stream", f"{self.sid}: {event.problem}")
            elif event.problem:
                self.order_errors.append({"t": now(), "problem": event.problem})


class CSession:
    """A client-clock session behind the proxy, as one user lives it: every accepted event with its
    answer; the rest points (where the card was at rest, from which /simulate replays); what was lost."""

    def __init__(self, user, long_lived):
        self.user = user
        rng = user.rng
        self.sid = ("fk-" if long_lived else "fs-") + uuid.uuid4().hex[:20]
        self.config = random_config(rng, user.detents)
        self.vt0 = rng.uniform(10, 1000) - time.monotonic()
        self.last_time = -1.0
        self.acc = []  # accepted events: {"body", "res", "sent", "recv", "kept"}
        self.rests = []  # (index into acc where a span starts, the detent the card rests at)
        self.anim = None  # (detent, dismiss, end instant, monotonic)
        self.hidden = False
        self.live = False
        self.created = None  # the creation's answer (its snapshot)
        self.lost_any = False  # the probe after a kill found events lost: a 409 is then explained
        self.unverified = False  # events were lost since the last replay that matched

    def t(self):
        t = round(time.monotonic() + self.vt0, 4)
        if t <= self.last_time:
            t = round(self.last_time + 0.0001, 4)
        self.last_time = t
        return t

    def kept(self):
        return [i for i, e in enumerate(self.acc) if e["kept"]]


class User:
    def __init__(self, k, cluster, rec, detents):
        self.k, self.cluster, self.rec, self.detents = k, cluster, rec, detents
        self.rng = random.Random(SEED * 31 + k)
        self.client = Client(cluster.proxy_port)
        self.kills_seen = 0
        self.sessions = []  # live CSessions (the long-lived one, a short one while it lives)
        self.stream = None
        self.first_2xx_after = {}  # (kill index, sid) -> recv instant of the first 2xx after the kill
        self.first_2xx_latency = {}  # (kill index, sid) -> that request's own latency, s
        self.inflight = []  # requests in flight at a kill: (kill index, what, status, content type)

    # Every answer goes through here: failures by kind, in-flight requests at a kill, recovery instants.
    def note(self, sid, r, what):
        rec = self.rec
        rec.count("requests")
        kills = self.cluster.kills
        inflight_at = next((i for i, k in enumerate(kills) if at_kill(r, k)), None)
        if inflight_at is not None:
            with LOCK:
                self.inflight.append((inflight_at, what, r.status, r.ctype))
        if 200 <= r.status < 300 and kills:
            key = (len(kills) - 1, sid)
            if r.recv > kills[-1]["t"] and key not in self.first_2xx_after:
                self.first_2xx_after[key] = r.recv
                self.first_2xx_latency[key] = r.recv - r.sent
        if kills and r.sent > kills[-1]["t"] and self.kills_seen < len(kills) and sid != "-" and what != "GET frames":
            rec.count("requests sent after a kill before the user's probe")
        if r.status == 0:
            if inflight_at is None:
                rec.error("transport", f"{what} {sid}: {r.obj}")
            else:
                rec.count("transport errors in flight at a kill")
        elif r.status >= 500:
            from_sheetd = "problem+json" in r.ctype
            if from_sheetd:
                rec.error("5xx sheetd", f"{what} {sid}: {r.status}", response=str(r.obj)[:300])
            elif inflight_at is None:
                rec.error("5xx proxy", f"{what} {sid}: {r.status} from nginx, not in flight at a kill",
                          response=str(r.obj)[:200])
            else:
                rec.count(f"{r.status} from nginx in flight at a kill")

    def call(self, s, method, path, body, what):
        r = self.client.call(method, path, body)
        self.note(s.sid if s else "-", r, what)
        return r

    # After a kill: the user's first request is a GET of each of its sessions.
    def probe(self):
        kills = self.cluster.kills
        if self.kills_seen == len(kills):
            return
        self.kills_seen = len(kills)
        kill = kills[-1]
        for s in list(self.sessions):
            r = self.call(s, "GET", f"/sessions/{s.sid}", None, "GET probe")
            if r.status == 404:
                self.rec.error("lost", f"GET {s.sid} after kill {len(kills)}: 404 for a session created and not deleted",
                               response=str(r.obj)[:300])
                s.live = False
                continue
            if r.status != 200:
                self.rec.count("probes without an answer")
                continue
            self.rec.count("probes")
            snap = r.obj
            kept = s.kept()
            cands = [(-1, s.created)] + [(i, s.acc[i]["res"]) for i in kept]
            m = next((i for i, a in reversed(cands) if state_equal(snap, a)), None)
            if m is None:
                self.rec.error("unmatched", f"GET {s.sid} after kill {len(kills)}: {snap.get('state')} at "
                               f"{snap.get('constant')} time {snap.get('time')}, the answer to no accepted event",
                               snapshot=json.dumps(snap)[:800],
                               answers=json.dumps([{k: a.get(k) for k in ("time",) + STATE_FIELDS}
                                                   for _, a in cands[-30:]])[:3000])
                s.unverified = True
                continue
            gone = [i for i in kept if i > m]
            if gone:
                for i in gone:
                    s.acc[i]["kept"] = False
                s.lost_any = s.unverified = True
                # A rest point reached through a lost event is no longer one.
                s.rests = [(start, d) for start, d in s.rests if start <= m + 1]
                age = kill["t"] - s.acc[gone[0]]["recv"]
                with LOCK:
                    kill.setdefault("lost", []).append({"sid": s.sid, "events": len(gone), "age": age,
                                                        "age sent": kill["t"] - s.acc[gone[0]]["sent"],
                                                        "phases": [s.acc[i]["body"].get("phase", s.acc[i]["body"].get("type")) for i in gone],
                                                        # The evidence: the GET after the kill, the event it
                                                        # matched, the events lost (times relative to the kill).
                                                        "probe": {k2: snap.get(k2) for k2 in ("time",) + STATE_FIELDS},
                                                        "probe sent": round(r.sent - kill["t"], 4),
                                                        "matched": None if m < 0 else {"time": s.acc[m]["body"]["time"], "phase": s.acc[m]["body"].get("phase")},
                                                        "lost": [{"body": s.acc[i]["body"], "sent": round(s.acc[i]["sent"] - kill["t"], 4),
                                                                  "recv": round(s.acc[i]["recv"] - kill["t"], 4),
                                                                  "answer": {k2: s.acc[i]["res"].get(k2) for k2 in ("time",) + STATE_FIELDS}}
                                                                 for i in gone]})
                # What the client believes follows the server: a lost `ended` leaves the card dragging,
                # a lost `began` leaves it where it was.
                s.anim = None
                s.hidden = snap.get("state") == "hidden"

    def event(self, s, kind, body, what):
        self.probe()
        if not s.live:
            return None
        body = dict(body)
        body["time"] = s.t()
        path = f"/sessions/{s.sid}/{kind}"
        r = self.call(s, "POST", path, body, what)
        if r.status == 200:
            ev = body if kind == "pan" else {"type": kind, **body}
            s.acc.append({"body": ev, "res": r.obj, "sent": r.sent, "recv": r.recv, "kept": True})
            a = r.obj.get("animation")
            if a:
                s.anim = (a.get("detent"), bool(a.get("dismiss")), time.monotonic() + a["duration"])
                s.hidden = bool(a.get("dismiss"))
            return r.obj
        if r.status == 409:
            if s.lost_any:
                self.rec.count("409 after lost events")
            else:
                self.rec.error("409", f"{what} on {s.sid}: 409 on a session that lost no events",
                               body=json.dumps(body), response=str(r.obj)[:300])
            self.resync(s)
        elif r.status == 404 and s.live:
            self.rec.error("lost", f"{what} on {s.sid}: 404 for a session created and not deleted",
                           response=str(r.obj)[:300])
            s.live = False
        elif 0 < r.status < 500:
            self.rec.error("status", f"{what} on {s.sid}: {r.status}", body=json.dumps(body), response=str(r.obj)[:300])
        return None

    def resync(self, s):
        """After a 409: the card as sheetd has it (a real client would do the same)."""
        r = self.call(s, "GET", f"/sessions/{s.sid}", None, "GET resync")
        if r.status == 200:
            s.hidden = r.obj.get("state") == "hidden"
            a = r.obj.get("animation")
            s.anim = None if not a else (a.get("detent"), bool(a.get("dismiss")), time.monotonic() + a["duration"])

    def create(self, s):
        self.probe()
        r = self.call(s, "PUT", f"/sessions/{s.sid}", s.config, "PUT session")
        # A PUT in flight at a kill that nginx sent on to the next instance after the first had
        # written it: 200 (replaced) rather than 201.
        if r.status not in (200, 201):
            if 0 < r.status < 500:
                self.rec.error("status", f"PUT {s.sid}: {r.status}", response=str(r.obj)[:300])
            return False
        s.live, s.created = True, r.obj
        s.rests = [(0, s.config["initialDetent"])]
        self.sessions.append(s)
        self.rec.count("sessions created")
        return True

    def settle(self, s):
        self.probe()
        if s.anim is not None:
            wait = s.anim[2] - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self.probe()
            if s.anim is not None and s.acc and s.acc[-1]["kept"] and not s.unverified:
                s.rests.append((len(s.acc), s.anim[0]))
                s.anim = None
        time.sleep(self.rng.uniform(0.1, 0.3))

    def gesture(self, s):
        self.settle(s)
        if s.hidden:
            if self.event(s, "show", {}, "POST show") is None:
                return
            self.settle(s)
        began = self.event(s, "pan", {"phase": "began"}, "POST pan began")
        if began is None:
            return
        target = self.rng.choice(list(s.created["detents"].values())) + self.rng.gauss(0, 30) - began["constant"]
        n = self.rng.randint(8, 16)
        tr = 0.0
        for k in range(1, n + 1):
            time.sleep(1 / 60)
            tr = round(target * (k / n) ** 0.8 + self.rng.gauss(0, 1.5), 2)
            if self.event(s, "pan", {"phase": "changed", "translation": tr}, "POST pan changed") is None:
                return
        time.sleep(1 / 60)
        # A quarter of the releases without a velocity: sheetd estimates it from the drag's last
        # `changed` events, so a `changed` lost anywhere shows in the replay.
        end = {"phase": "ended", "translation": tr}
        if self.rng.random() < 0.75:
            end["velocity"] = round(self.rng.choice([-1, 1]) * self.rng.uniform(0, 1500), 1)
        if self.event(s, "pan", end, "POST pan ended") is None:
            return
        self.rec.count("gestures")
        self.replay(s)

    def replay(self, s):
        """The kept events from the last rest point on, through /simulate: the very answers sheetd gave."""
        start, detent = s.rests[-1]
        idx = [i for i in s.kept() if i >= start]
        cfg = dict(s.config, initialDetent=detent)
        req = simulate_body(cfg, [s.acc[i]["body"] for i in idx])
        if not idx or len(json.dumps(req)) > 15000:
            self.rec.count("replays skipped (too long)")
            return
        r = self.call(None, "POST", "/simulate", req, "POST simulate")
        if r.status != 200:
            if 0 < r.status < 500:
                self.rec.error("status", f"POST /simulate: {r.status}", response=str(r.obj)[:300])
            return
        self.rec.count("replays")
        if s.unverified:
            self.rec.count("replays across lost events")
        for i, want in zip(idx, r.obj["results"]):
            diff = result_diff(s.acc[i]["res"], want)
            if diff:
                self.rec.error("replay", f"{s.sid} event {i} ({s.acc[i]['body'].get('phase') or s.acc[i]['body'].get('type')}): "
                               f"{diff}: session {json.dumps({k: s.acc[i]['res'].get(k) for k in RESULT_FIELDS})} "
                               f"/simulate {json.dumps({k: want.get(k) for k in RESULT_FIELDS})}",
                               lost=s.lost_any, events=json.dumps(req)[:4000])
                return
        s.unverified = False

    def finish(self, s):
        self.settle(s)
        if not s.live:
            return
        r = self.call(s, "GET", f"/sessions/{s.sid}", None, "GET session")
        if r.status == 404:
            self.rec.error("lost", f"GET {s.sid} at its end: 404 for a session created and not deleted")
        r = self.call(s, "DELETE", f"/sessions/{s.sid}", None, "DELETE session")
        if r.status == 404 and any(at_kill(r, k) for k in self.cluster.kills):
            self.rec.count("DELETE in flight at a kill answered 404 (written by the killed instance)")
        elif r.status == 404:
            self.rec.error("lost", f"DELETE {s.sid}: 404 for a session created and not deleted")
        elif r.status != 204 and 0 < r.status < 500:
            self.rec.error("status", f"DELETE {s.sid}: {r.status}", response=str(r.obj)[:300])
        s.live = False
        self.sessions.remove(s)

    def run(self):
        s = CSession(self, long_lived=True)
        for _ in range(20):
            if self.create(s):
                break
            time.sleep(0.5)
        else:
            self.rec.error("status", f"user {self.k}: could not create its session")
            return
        if self.k % 2 == 0:
            self.stream = Stream(self, s.sid)
            self.stream.start()
            self.stream.opened.wait(5)
        while not self.cluster.stop.is_set() and s.live:
            self.gesture(s)
            if self.rng.random() < 0.2 and not self.cluster.stop.is_set():
                short = CSession(self, long_lived=False)
                if self.create(short):
                    self.gesture(short)
                    self.finish(short)
                self.rec.count("short sessions")
        self.long_session = s
        self.finish(s)
        if self.stream is not None:
            self.stream.deleted.set()
            self.stream.join(5)


def scenario_cluster(rec, out):
    users_n = 24 if ARGS.long else 12
    # The short form kills the instance that serves the most live sessions then (None), so that its one
    # kill meets as many sessions and streams as the ring gives any instance; the long form each in turn.
    plan = [0, 1, 2, 0, 1, 2] if ARGS.long else [None]
    warmup, down, between, tail = 5.0, 3.0, 8.0, 5.0
    nginx_out = os.path.join(out, "nginx")
    ports = free_ports(4)
    proxy_port = ports[3]
    if os.path.exists(nginx_out):
        for f in ("access.log", "error.log"):
            if os.path.exists(os.path.join(nginx_out, f)):
                os.remove(os.path.join(nginx_out, f))
    redis = RedisServer(log=open(os.path.join(out, "cluster-redis.log"), "wb")).start()
    keep_pid("cluster-redis", redis.proc)
    cl = Cluster(out, redis.url, ports[:3], proxy_port)
    proxy = None
    users = []
    restarts = []
    final_exits = []
    try:
        for n in range(3):
            cl.start(n)
        for n in range(3):
            if not cl.ready(n):
                raise RuntimeError(f"instance {n} did not become ready; see {out}/sheetd-{n}.log")
        proxy = Proxy("nginx", nginx_out, proxy_port, ports[:3], ARGS.server_params).start()
        keep_pid("nginx", proxy.proc)
        detents = visible_detents(ports[0])
        users = [User(k, cl, rec, detents) for k in range(users_n)]
        threads = [threading.Thread(target=u.run, daemon=True) for u in users]
        for t in threads:
            t.start()
            time.sleep(0.05)
        print(f"fault-crash: cluster: {users_n} users through nginx :{proxy_port} ({ARGS.server_params}); "
              f"warm-up {warmup:g} s", file=sys.stderr)
        time.sleep(warmup)
        for j, n in enumerate(plan):
            if n is None:
                n = busiest(nginx_out, ports[:3], {s.sid for u in users for s in list(u.sessions)})
            k = cl.kill(n)
            # The sessions alive at the kill (a short session already deleted is not at stake).
            k["live"] = {s.sid for u in users for s in list(u.sessions)}
            time.sleep(down)
            cl.start(n)
            k["ready_ok"] = cl.ready(n)
            k["ready_t"] = time.monotonic()
            restarts.append(k)
            print(f"fault-crash: cluster: kill {j + 1}: instance {n} SIGKILL (exit {k['exit']}), started again "
                  f"{down:g} s later, ready after {k['ready_t'] - k['t']:.2f} s", file=sys.stderr)
            time.sleep(between if j < len(plan) - 1 else tail)
        cl.stop.set()
        for t in threads:
            t.join(30)
        for n in range(3):
            final_exits.append(cl.instances[n].stop(10))
            keep_pid(f"sheetd-{n}", None)
        proxy.stop()
        keep_pid("nginx", None)
        return report_cluster(rec, cl, users, final_exits, redis.url, nginx_out)
    finally:
        cl.stop.set()
        for n, inst in enumerate(cl.instances):
            if inst is not None and inst.alive():
                inst.stop(5)
            keep_pid(f"sheetd-{n}", None)
        if proxy is not None:
            proxy.stop()
            keep_pid("nginx", None)
        redis.stop()
        keep_pid("cluster-redis", None)


def last_upstreams(nginx_out):
    """From nginx's access log (deploy/nginx.conf's log_format sheetd): per session, the instance that
    served its last request, and the log's fields line by line."""
    path = os.path.join(nginx_out, "access.log")
    pattern = re.compile(r'^(\S+) (\S+) (\S+) (\d+) (\S+) (\S+) "([^"]*)"')
    rows = []
    if os.path.exists(path):
        for line in open(path):
            m = pattern.match(line)
            if m:
                ups = [u.strip() for u in m.group(7).split(",") if u.strip() not in ("", "-")]
                rows.append((float(m.group(1)), m.group(3), m.group(4), m.group(5), ups))
    return rows


def busiest(nginx_out, ports, live):
    """The instance whose sessions are the most among the live ones, by their last request."""
    last = {}
    for _, uri, _, key, ups in last_upstreams(nginx_out):
        if uri.startswith("/sessions/") and ups and key in live:
            last[key] = ups[-1]
    counts = [sum(1 for up in last.values() if up.endswith(f":{p}")) for p in ports]
    return counts.index(max(counts))


def at_kill(r, k) -> bool:
    """Whether request `r` was in flight while kill `k` took effect: answered after the signal, and
    sent before the process was gone (reaped; not yet, while it is dying). The signal's instant alone
    missed a request sent in the millisecond the process took to die, whose connection the kill
    reset (a POST nginx then answered 502, counted as unexplained)."""
    return r.recv >= k["t"] and r.sent <= k.get("dead", math.inf)


def owners_at_kills(nginx_out, kills):
    """From nginx's access log: per kill, the sessions alive at it whose last request before it was
    served by the killed instance, and the requests nginx sent on to another instance or answered 5xx itself."""
    last = [dict() for _ in kills]  # sid -> the instance that served its last request before the kill
    retried = [0 for _ in kills]
    proxy_5xx = collections.Counter()
    for msec, uri, status, key, ups in last_upstreams(nginx_out):
        if status.startswith("5"):
            proxy_5xx[status] += 1
        for j, k in enumerate(kills):
            if len(ups) > 1 and ups[0].endswith(f":{k['port']}") and k["wall"] <= msec:
                retried[j] += 1
            if uri.startswith("/sessions/") and ups and msec < k["wall"]:
                last[j][key] = ups[-1]
    owned = [{sid for sid, up in last[j].items() if up.endswith(f":{k['port']}") and sid in k.get("live", ())}
             for j, k in enumerate(kills)]
    return owned, retried, proxy_5xx


def report_cluster(rec, cl, users, final_exits, redis_url, nginx_out):
    kills = cl.kills
    owned, retried, proxy_5xx = owners_at_kills(nginx_out, kills)
    streams = [u.stream for u in users if u.stream is not None]
    per_kill = []
    all_ages = []
    for j, k in enumerate(kills):
        nxt = kills[j + 1]["t"] if j + 1 < len(kills) else math.inf
        lost = k.get("lost", [])
        ages = [x["age"] for x in lost]
        ages_sent = [x["age sent"] for x in lost]
        all_ages += ages
        rec_times = [u.first_2xx_after[(j, sid)] - k["t"] for u in users for sid in owned[j]
                     if (j, sid) in u.first_2xx_after]
        first_lat = [u.first_2xx_latency[(j, sid)] for u in users for sid in owned[j] if (j, sid) in u.first_2xx_latency]
        recs = [rc for st in streams for rc in st.reconnects if k["t"] <= rc["t"] < nxt]
        reopen = [rc["reopened"] - k["t"] for rc in recs if rc["reopened"] is not None
                  and rc["t"] - k["t"] < 1.0]
        inflight = collections.Counter()
        for u in users:
            for (i, what, status, ctype) in u.inflight:
                if i == j:
                    inflight["no answer" if status == 0 else f"{status}" + ("" if status < 500 or "problem" in ctype else " nginx")] += 1
        per_kill.append({
            "instance": k["instance"], "exit": k["exit"], "ready again s": round(k.get("ready_t", k["t"]) - k["t"], 3),
            "sessions it served": len(owned[j]), "events lost": sum(x["events"] for x in lost),
            "sessions with events lost": len(lost),
            "lost phases": dict(collections.Counter(p for x in lost for p in x["phases"])),
            "age of lost events ms (max)": ms(max(ages, default=None)),
            "age by request sent ms (max)": ms(max(ages_sent, default=None)),
            "requests in flight": dict(inflight),
            "requests nginx sent on to another instance": retried[j],
            "recovery ms p50/max (kill → first 2xx per session it served)": [ms(percentile(rec_times, 0.5)), ms(max(rec_times, default=None))],
            "recovered sessions": len(rec_times),
            "latency of that first answer ms p50/max": [ms(percentile(first_lat, 0.5)), ms(max(first_lat, default=None))],
            "stream reconnections": len(recs),
            "reconnection causes": dict(collections.Counter(rc["why"] for rc in recs)),
            "stream reopened ms p50/max (kill → open again, streams it dropped)": [ms(percentile(reopen, 0.5)), ms(max(reopen, default=None))],
        })
    e = rec.errors
    c = rec.counts
    lost_sids = {x["sid"] for k in kills for x in k.get("lost", [])}
    order_bad = [(st.sid, o) for st in streams for o in st.order_errors if st.sid not in lost_sids]
    order_explained = sum(len(st.order_errors) for st in streams if st.sid in lost_sids)
    worst = 0
    for j, k in enumerate(kills):
        nxt = kills[j + 1]["t"] if j + 1 < len(kills) else math.inf
        for st in streams:
            worst = max(worst, sum(1 for rc in st.reconnects if k["t"] <= rc["t"] < nxt))
    before_any = sum(1 for st in streams for rc in st.reconnects if not kills or rc["t"] < kills[0]["t"])
    rec.check(kills and all(k["exit"] == -signal.SIGKILL for k in kills),
              f"each kill was a SIGKILL: exits {[k['exit'] for k in kills]}")
    rec.check(kills and all(k.get("ready_ok") for k in kills),
              "each killed instance was ready again on its port: " + ", ".join(
                  f"{p['ready again s']:.2f} s after the kill" for p in per_kill))
    rec.check(e["lost"] == 0, f"no acknowledged session lost: {e['lost']} answers 404 for a session created and not "
              f"deleted ({c['sessions created']} sessions created)")
    rec.check(e["unmatched"] == 0, f"after each kill every session's state is its state after a prefix of its accepted "
              f"events: {c['probes']} probes, {e['unmatched']} states that no accepted event's answer explains")
    rec.check(e["replay"] == 0 and c["replays"] > 0,
              f"the kept events replay through /simulate to sheetd's answers: {c['replays']} replays "
              f"({c['replays across lost events']} across lost events), {e['replay']} differ")
    rec.check(e["409"] == 0, f"409 only after lost events: {c['409 after lost events']} after lost events "
              f"(a gesture whose began was lost; the user started a new one), {e['409']} otherwise")
    rec.check(e["5xx sheetd"] == 0 and e["5xx proxy"] == 0 and e["transport"] == 0,
              f"no 5xx from sheetd ({e['5xx sheetd']}); 5xx from nginx and transport errors only for requests in "
              f"flight at a kill: {e['5xx proxy']} and {e['transport']} otherwise")
    rec.check(e["status"] == 0 and e["stream"] == 0,
              f"no other unexpected status or stream failure: {e['status']} statuses, {e['stream']} stream failures")
    rec.check(not order_bad, f"frame ids strictly increase on streams whose session lost no events: {len(order_bad)} "
              f"out of order ({order_explained} on streams of sessions that lost events)")
    rec.check(worst <= 2 and before_any == 0,
              f"each stream reconnected at most twice per kill (the kill, then its session moving back to the "
              f"restarted instance): at most {worst}; {before_any} before the first kill")
    rec.check(len(final_exits) == 3 and all(x == 0 for x in final_exits), f"each instance exited 0 on SIGTERM at the end: {final_exits}")
    rec.check(all(st.ended_with == "deleted" for st in streams),
              f"every stream ended with `closed` deleted: {sum(st.ended_with == 'deleted' for st in streams)} of {len(streams)}")
    return {
        "users": len(users), "streams": len(streams), "server params": ARGS.server_params,
        "requests": c["requests"], "gestures": c["gestures"], "short sessions": c["short sessions"],
        "sessions created": c["sessions created"],
        "events lost": sum(p["events lost"] for p in per_kill),
        "age of lost events ms (max)": ms(max(all_ages, default=None)),
        "5xx from sheetd": e["5xx sheetd"], "5xx from nginx": dict(proxy_5xx),
        "stream reconnections": sum(len(st.reconnects) for st in streams),
        "stream frames": sum(st.frames for st in streams),
        "resumed with": dict(sum((st.resumed for st in streams), collections.Counter())),
        "kills": per_kill, "errors": dict(e), "counts": dict(c),
        "lost events": [dict(x, kill=j + 1) for j, k in enumerate(kills) for x in k.get("lost", [])],
    }


# --------------------------------------------------------------------------------------------
# The report.


def print_ack(f):
    print("\n## Crash after acknowledgement (one sheetd, kill -9 right after the last answer, restart on the same store)\n")
    a = f["acknowledged"]
    rows = [
        ("sessions / clients / seconds of traffic", f"{f['sessions']} / {f['clients']} / {f['seconds of traffic']} s ({f['requests/s']} requests/s)"),
        ("acknowledged: live sessions, deletions, events", f"{a['live sessions']}, {a['deletions']}, {a['events']}"),
        ("creations (POST / PUT), replacements", f"{f['counts'].get('creations (POST)', 0)} / {f['counts'].get('creations (PUT)', 0)}, {f['counts'].get('replacements', 0)}"),
        ("**sessions lost** (404, or another configuration)", f"{f['sessions lost']} + {f['wrong configuration']}"),
        ("**deletions resurrected**", f['deletions resurrected']),
        ("states no prefix of accepted events explains", f["states no prefix explains"]),
        ("states matched to (last kept step)", ", ".join(f"{k} {v}" for k, v in sorted(f["states matched to"].items()))),
        ("**events lost** / sessions with events lost", f"{f['events lost']} / {f['sessions with events lost']}"),
        ("lost events per session (largest first)", f["lost events per session"] or "-"),
        ("**age of the lost events** (kill − first lost answer received), max / p50", f"{f['age of lost events ms (max, p50)'][0]} / {f['age of lost events ms (max, p50)'][1]} ms"),
        ("kill − first lost request sent, max (the bound on when it was accepted)", f"{f['age by request sent ms (max)']} ms"),
        ("continuations equal to /simulate of the kept prefix", f"{f['continuations'].get('equal', 0)} (differ {f['continuations'].get('differ', 0)}, refused {f['continuations'].get('refused', 0)})"),
        ("kill → new instance ready", f"{f['kill → new instance ready, s']} s"),
    ]
    print("| figure | measured |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")


def print_cluster(f):
    print(f"\n## kill -9 of one instance among three behind nginx, under load (`{f['server params']}`)\n")
    print(f"{f['users']} users, {f['streams']} frame streams, {f['requests']} requests, {f['gestures']} gestures, "
          f"{f['short sessions']} short sessions, {f['sessions created']} sessions created; 5xx from sheetd "
          f"{f['5xx from sheetd']}, 5xx from nginx {f['5xx from nginx'] or 0}; {f['stream reconnections']} stream "
          f"reconnections, first event after one: {f['resumed with'] or '-'}.\n")
    print("| kill | sessions it served | events lost (sessions) | lost phases | age max, by answer (by request) | in flight: answers | "
          "nginx sent on | recovery p50 / max | streams: reconnections, reopened p50 / max | ready again |")
    print("|---|---:|---|---|---:|---|---:|---|---|---:|")
    for j, p in enumerate(f["kills"]):
        r = p["recovery ms p50/max (kill → first 2xx per session it served)"]
        so = p["stream reopened ms p50/max (kill → open again, streams it dropped)"]
        print(f"| {j + 1}: instance {p['instance']} | {p['sessions it served']} | {p['events lost']} ({p['sessions with events lost']}) | "
              f"{p['lost phases'] or '-'} | {p['age of lost events ms (max)']} ({p['age by request sent ms (max)']}) ms | {p['requests in flight'] or '-'} | "
              f"{p['requests nginx sent on to another instance']} | {r[0]} / {r[1]} ms ({p['recovered sessions']}; its latency "
              f"{p['latency of that first answer ms p50/max'][0]} / {p['latency of that first answer ms p50/max'][1]} ms) | "
              f"{p['stream reconnections']} {p['reconnection causes'] or ''}, {so[0]} / {so[1]} ms | {p['ready again s']} s |")


def main():
    os.makedirs(ARGS.out, exist_ok=True)
    results = {"seed": SEED, "long": ARGS.long}
    records = []
    print(f"# fault-crash: kill -9 of sheetd instances on the Redis store ({'long' if ARGS.long else 'short'} form, seed {SEED})")
    for name, run, show in (("ack", scenario_ack, print_ack), ("cluster", scenario_cluster, print_cluster)):
        if ARGS.scenario not in (name, "both"):
            continue
        rec = Record(name)
        records.append(rec)
        try:
            figures = run(rec, ARGS.out)
            results[name] = figures
            show(figures)
        except (RuntimeError, OSError) as error:
            rec.check(False, f"{name}: the scenario could not run: {error}")
        if rec.samples:
            print(f"\n{name}: errors {dict(rec.errors)}; the first ones (all in {ARGS.out}/errors.jsonl):")
            for s in rec.samples[:8]:
                print(f"    t={s['t']}: [{s['kind']}] {s['detail'][:300]}")
    with open(os.path.join(ARGS.out, "result.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(ARGS.out, "errors.jsonl"), "w") as f:
        for rec in records:
            for s in rec.samples:
                f.write(json.dumps(s) + "\n")
    print()
    checks = [(rec.scenario, ok, text) for rec in records for ok, text in rec.checks]
    for scenario, ok, text in checks:
        print(f"- {'ok  ' if ok else 'FAIL'} {scenario}: {text}")
    passed = sum(ok for _, ok, _ in checks)
    print(f"fault-crash: {passed} passed, {len(checks) - passed} failed")
    return 0 if checks and passed == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
