"""Locust users for scripts/loadtest: scripted clients that use sheetd the way a front end does.

Each virtual user lives a few sessions in a row. One session's life:

1. `PUT /sessions/{random id}` with a random preset, a random device geometry, sometimes preset
   options and an `initialDetent`, and `"clock": "client"`: every event carries `time`, the user's
   own monotonic seconds, so the session is exactly replayable through `POST /simulate`.
2. `POST /show` (a hidden card is presented; a card created resting is moved to a random detent).
3. 3–6 gestures: `began`, 20–40 `changed` 1/60 s apart whose translations follow an ease curve
   toward a random target with finger noise (fluid sometimes hands off from an inner scroll view;
   one drag in three sends them in batches of 2–6, `{"events": [...]}`, as a client does while a
   request is in flight), then `ended` with a velocity (a quarter without: estimated by sheetd) or, one in ten, `cancelled`.
   One gesture in ten grabs the card mid-animation (`began` at a client time inside the running
   animation); the others start from rest after a pause. A card a release dismissed is shown again.
   One life in five follows the frames of one gesture's animation over SSE
   (`GET /frames?fps=60&pace=realtime&once=true`, raw socket, opened during the drag; kept open
   when the next gesture grabs that animation, so the stream shows `interrupted`), and one in ten
   keeps a stream open for its whole life, as a front end drawing from an EventSource does (it
   must end with `closed` at the DELETE). Every animation on a stream must end with `settled` or
   `interrupted` before the next one's frames. Frame lateness = arrival − (the time the response
   that started the animation arrived + frame.t).
4. Sometimes a snapshot (`GET`), sometimes a tap on the dimmer (`POST /dismiss`), then `DELETE`
   (and sometimes a `GET` of the deleted session, which must be a 404 problem).

Pacing: by default the events are sent in real time: the client clock advances 1/60 s per `changed`
and the user sleeps until that instant (when the load generator falls behind it sends at once and
the lag is reported). With LOADTEST_PACE=fast nothing sleeps and the `time` field alone advances at
60 Hz (grabs then land at client times inside the animation, not in real time).

Checks on every response: the status, the media type, the body against openapi.yaml's schema for
that response (jsonschema, OpenAPI 3.1 = JSON Schema 2020-12, $refs inlined, one cached validator per
schema), the echo of `phase`/`time`, and the replay: after every gesture the events since the card
was last at rest at a non-dismissal detent go to `POST /simulate` with the session's configuration
and `initialDetent` = that detent, and every result must equal what the session answered (the snap
detent first; also state, detent, constant, alpha, progress, snap constant, animation, velocity).
Starting the replay at the last rest point is sound because a card at rest is fully described by
its detent (constant and alpha are the detent's, no drag, no animation), while a grab mid-animation
depends on the animation, which the replayed span then contains. At the end of a life the whole
session since creation is replayed too when it fits in sheetd's 16 KiB body limit. Frames that came
over SSE must equal, index by index, the frames `/simulate` gives for the same animation.

Each process writes what it measured to LOADTEST_OUT (part-<pid>.pkl, run.pkl);
Benchmarks/loadtest_report.py merges them into the report that the bash driver (scripts/loadtest) prints.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import random
import socket
import time
import uuid
from array import array
from collections import Counter, defaultdict
from urllib.parse import urlsplit

# The stream checks are the integration tests' (testkit/sheetkit/sse.py), the same rules.
from sheetkit.presets import names as preset_names
from sheetkit.sse import parse_fields, take_events

import gevent
import gevent.event
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from locust import FastHttpUser, between, events, task
from locust.runners import LocalRunner, MasterRunner, WorkerRunner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = os.environ.get("LOADTEST_SPEC", os.path.join(ROOT, "openapi.yaml"))
OUT = os.environ.get("LOADTEST_OUT", os.path.join(ROOT, ".build", "loadtest"))
PACE = os.environ.get("LOADTEST_PACE", "realtime")
SHEETD_PID = int(os.environ.get("LOADTEST_SHEETD_PID", "0") or 0)
BODY_LIMIT = int(os.environ.get("LOADTEST_BODY_LIMIT", "16384"))
SAMPLES_PER_KIND = 20

# --------------------------------------------------------------------------------------------
# Schemas: openapi.yaml's components, $refs inlined (no recursion in this spec), one validator each.

with open(SPEC, encoding="utf-8") as f:
    _DOC = yaml.safe_load(f)


# Keywords that only annotate (dropped, so a $ref with a description needs no allOf wrapper), and the
# keywords whose value is a map of names to schemas (whose keys are names, never keywords).
ANNOTATIONS = {"description", "default", "examples", "example", "title", "summary", "deprecated"}
NAME_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}


def _resolve(node, seen=(), names=False):
    """The schema with every $ref inlined and annotations dropped; `anyOf: [X, {type: null}]`
    becomes the equivalent `if: {type: null}, else: X`, which jsonschema checks without building
    the error of the branch that fails."""
    if isinstance(node, list):
        return [_resolve(v, seen) for v in node]
    if not isinstance(node, dict):
        return node
    if names:
        return {k: _resolve(v, seen) for k, v in node.items()}
    if "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/") or ref in seen:
            raise ValueError(f"unsupported $ref {ref}")
        target = _DOC
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        inlined = _resolve(target, seen + (ref,))
        siblings = {k: _resolve(v, seen, k in NAME_MAPS) for k, v in node.items() if k != "$ref" and k not in ANNOTATIONS}
        return {"allOf": [inlined], **siblings} if siblings else inlined
    out = {k: _resolve(v, seen, k in NAME_MAPS) for k, v in node.items() if k not in ANNOTATIONS}
    branches = out.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches and not {"if", "then", "else"} & out.keys():
        out.pop("anyOf")
        out["if"], out["else"] = {"type": "null"}, next(b for b in branches if b != {"type": "null"})
    return out


VALIDATORS = {}
for _name in ("Snapshot", "Result", "SimulateResponse", "Problem", "Frame", "PresetsResponse"):
    _schema = _resolve(_DOC["components"]["schemas"][_name])
    Draft202012Validator.check_schema(_schema)
    VALIDATORS[_name] = Draft202012Validator(_schema)
    if _name == "SimulateResponse":
        # The same schema without its arrays' item schemas: the items are checked one by one below,
        # the results through the cache of results already seen valid.
        _shell = json.loads(json.dumps(_schema))
        _items = {k: _shell["properties"][k].pop("items") for k in ("results", "frames")}
        if _items != {"results": _resolve(_DOC["components"]["schemas"]["Result"]),
                      "frames": _resolve(_DOC["components"]["schemas"]["Frame"])}:
            raise ValueError("SimulateResponse's results and frames are no longer arrays of Result and Frame")
        VALIDATORS["SimulateResponse without items"] = Draft202012Validator(_shell)

# Canonical JSON of the results found valid (per process, bounded): a /simulate replay answers the
# same results the session answered, so most of its results are checked already.
_VALID_RESULTS = set()


def _error(v, name, obj, prefix=""):
    if v.is_valid(obj):
        return None
    e = best_match(v.iter_errors(obj))
    path = "/".join(str(p) for p in e.absolute_path)
    return f"{name}: {e.message[:300]} at /{prefix}{path}"


def schema_error(name, obj):
    """None if `obj` is valid against openapi.yaml's components/schemas/`name`, else why not."""
    if name == "Result":
        key = json.dumps(obj, sort_keys=True, separators=(",", ":"))
        if key in _VALID_RESULTS:
            return None
        err = _error(VALIDATORS[name], name, obj)
        if err is None:
            if len(_VALID_RESULTS) > 50000:
                _VALID_RESULTS.clear()
            _VALID_RESULTS.add(key)
        return err
    if name == "SimulateResponse":
        err = _error(VALIDATORS["SimulateResponse without items"], name, obj)
        if err:
            return err
        for i, r in enumerate(obj["results"]):
            err = schema_error("Result", r)
            if err:
                return f"{name}: at /results/{i}: {err}"
        for i, f in enumerate(obj["frames"]):
            err = _error(VALIDATORS["Frame"], "Frame", f)
            if err:
                return f"{name}: at /frames/{i}: {err}"
        return None
    return _error(VALIDATORS[name], name, obj)


# --------------------------------------------------------------------------------------------
# What the run measures; one process, so plain module state.


class Stats:
    def __init__(self):
        self.lat = defaultdict(lambda: array("d"))  # request kind -> seconds
        self.lateness = array("d")  # frame lateness, seconds
        self.lag = array("d")  # how far behind its own 60 Hz schedule a user sent, seconds
        self.errors = Counter()
        self.samples = defaultdict(list)
        self.checked = 0  # HTTP responses checked
        self.failed = 0  # HTTP responses (or replays) with an error
        self.sse_checked = 0  # SSE events checked
        self.sse_failed = 0
        self.counts = Counter()
        self.t_start = None
        self.t_stop = None
        self.cpu0 = 0.0

    def error(self, kind, detail, **context):
        self.errors[kind] += 1
        if len(self.samples[kind]) < SAMPLES_PER_KIND:
            self.samples[kind].append({"kind": kind, "detail": detail, **context})


STATS = Stats()
FOLLOWERS = set()


def close(a, b, rel=1e-9, abs_=1e-7):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# --------------------------------------------------------------------------------------------
# The scenario's inputs.

DEVICES = [  # (height, safeAreaTop, safeAreaBottom) in points
    {"height": 667, "safeAreaTop": 20, "safeAreaBottom": 0},  # iPhone SE
    {"height": 812, "safeAreaTop": 50, "safeAreaBottom": 34},  # iPhone 13 mini
    {"height": 844, "safeAreaTop": 47, "safeAreaBottom": 34},  # iPhone 14
    {"height": 932, "safeAreaTop": 59, "safeAreaBottom": 34},  # iPhone 15 Pro Max
    {"height": 915, "safeAreaTop": 24, "safeAreaBottom": 0},  # Pixel 7
    {"height": 1133, "safeAreaTop": 24, "safeAreaBottom": 20},  # iPad mini
]
FLUID_CUSTOM = {"large": {"fromTop": 30}, "medium": {"fraction": 0.55}, "peek": {"height": 120}}


# Variations the load test knows for some presets: options other than the defaults, and the detents
# a card with those options may be created resting at. A preset the catalog serves without a row here
# is used with its defaults (no options, no initialDetent).
OPTION_VARIANTS = {
    "facebook": lambda: {"expandedOffset": random.choice([10, 30, 64])},
    "twitter": lambda: {"cardHeightRatio": random.choice([0.5, 0.6, 0.9])},
    "glide": lambda: random.choice(
        [{"segmented": False, "concreteDimension": random.choice(["half", "oneThird", {"custom": 420}])},
         {"segmentHeights": {"open": 560, "compressed": 300, "closed": 100}}]),
    "transition": lambda: {"finishThreshold": random.choice([None, 0.6]), "completionSpeed": 1.0},
    "swipeCell": lambda: {"swipeDistance": random.choice([60, 120])},
    "fluid": lambda: {"detents": FLUID_CUSTOM, "hideable": random.random() < 0.5,
                      "skipDetents": random.random() < 0.5, "dampingRatio": random.choice([0.7, 1.0])},
}
STARTS = {
    "facebook": lambda options: ["expanded", "normal"], "twitter": lambda options: ["open"],
    "glide": lambda options: ["open", "closed"], "transition": lambda options: ["mini", "large"],
    "swipeCell": lambda options: ["initial", "top"],
    "fluid": lambda options: list((options or {}).get("detents", {"full": 0, "half": 0, "tip": 0})),
}
_CATALOG: list[str] = []


def preset_catalog(host_url: str) -> list[str]:
    """The presets sheetd serves (GET /presets), asked once per Locust process."""
    if not _CATALOG:
        u = urlsplit(host_url)
        _CATALOG.extend(preset_names(u.port or 80, u.hostname))
    return _CATALOG


def random_config(presets: list[str]):
    preset = random.choice(presets)
    config = {"preset": preset, "geometry": dict(random.choice(DEVICES)), "clock": "client"}
    options = None
    if preset in OPTION_VARIANTS and random.random() < 0.3:
        options = OPTION_VARIANTS[preset]()
        config["options"] = options
    # Detents a card may be created resting at (the known names for these options).
    if preset in STARTS and random.random() < 0.3:
        config["initialDetent"] = random.choice(STARTS[preset](options))
    return config


EASES = [
    lambda x: x * x * (3 - 2 * x),  # ease in-out (smoothstep)
    lambda x: 1 - (1 - x) ** 3,  # ease out: a decisive flick that slows
    lambda x: 1 - (1 - x) ** 2,
    lambda x: x * x,  # accelerating toward a throw
]


# --------------------------------------------------------------------------------------------
# SSE: one raw HTTP/1.1 connection per follower, timestamps at arrival.


class FrameFollower:
    """Reads `GET /sessions/{id}/frames?fps=60&pace=realtime[&once=true]` in its own greenlet.

    With once, until the first `settled`; without, until `closed` (the session deleted)."""

    def __init__(self, host, port, sid, once=True):
        self.host, self.port, self.sid, self.once = host, port, sid, once
        self.current = None  # the animation being streamed and not yet settled or interrupted
        self.ready = gevent.event.Event()
        self.frames = []  # (arrival, animation, index, frame dict)
        self.interrupted = set()
        self.interrupt_snaps = []
        self.error = None
        self.error_counted = False
        self.settled = False
        self.closed = False
        self.first_byte = None
        self.path = f"/sessions/{sid}/frames?fps=60&pace=realtime" + ("&once=true" if once else "")
        self.greenlet = None

    def start(self):
        FOLLOWERS.add(self)
        self.greenlet = gevent.spawn(self._run)
        return self.ready.wait(5)

    def stop(self):
        if self.greenlet is not None:
            self.greenlet.kill(block=True, timeout=2)
        FOLLOWERS.discard(self)

    def join(self, timeout):
        if self.greenlet is not None:
            self.greenlet.join(timeout)
        done = self.greenlet is None or self.greenlet.dead
        self.stop()
        return done

    def _fail(self, msg, counted=False):
        if self.error is None:
            self.error, self.error_counted = msg, counted

    def _run(self):
        sock = None
        t0 = time.perf_counter()
        try:
            sock = socket.create_connection((self.host, self.port), timeout=15)
            sock.sendall(
                f"GET {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"Accept: text/event-stream\r\n\r\n".encode())
            raw = b""
            while b"\r\n\r\n" not in raw:
                chunk = sock.recv(65536)
                if not chunk:
                    return self._fail("connection closed before the response headers")
                raw += chunk
            head, raw = raw.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            status = lines[0].split(" ")
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            if len(status) < 2 or status[1] != "200":
                return self._fail(f"status line {lines[0]!r}")
            for name, want in (("content-type", "text/event-stream"), ("cache-control", "no-cache"),
                               ("x-accel-buffering", "no")):
                if not headers.get(name, "").startswith(want):
                    return self._fail(f"header {name}: {headers.get(name)!r}, want {want!r}")
            chunked = headers.get("transfer-encoding", "").lower() == "chunked"
            # The stream is registered with its session before its head is sent.
            self.first_byte = time.perf_counter() - t0
            self.ready.set()
            self._read_body(sock, raw, chunked, t0)
        except (OSError, ValueError) as e:
            self._fail(f"{type(e).__name__}: {e}")
        finally:
            self.ready.set()
            if sock is not None:
                sock.close()

    def _read_body(self, sock, raw, chunked, t0):
        text = ""
        pending = raw  # undecoded transfer bytes
        ended = False
        deadline = time.perf_counter() + (20 if self.once else 900)
        while not ended:
            arrival = time.perf_counter()
            blocks, text, pending, ended = take_events(text, pending, chunked)
            for block in blocks:
                self._event(block, arrival, t0)
            if ended or self.closed or (self.once and self.settled and not chunked):
                return
            if time.perf_counter() > deadline:
                return self._fail("the stream did not end in time")
            chunk = sock.recv(65536)
            if not chunk:
                if chunked:
                    return self._fail("connection closed inside the chunked body")
                return
            pending += chunk

    def _event(self, block, arrival, t0):
        fields = parse_fields(block)
        if not fields:
            return
        STATS.sse_checked += 1
        err = self._check(fields, arrival, t0)
        if err:
            STATS.sse_failed += 1
            self._fail(err, counted=True)

    def _check(self, fields, arrival, t0):
        if "data" not in fields:
            return f"a block without data (retry: travels with an event): {fields!r}"
        if "retry" in fields and fields["retry"] != ["1000"]:
            return f"retry {fields['retry']!r}"
        kind = (fields.get("event") or ["message"])[0]
        data_text = "\n".join(fields.get("data", []))
        try:
            data = json.loads(data_text) if data_text else None
        except ValueError:
            return f"event {kind}: data is not JSON: {data_text[:200]!r}"
        if kind == "frame":
            err = schema_error("Frame", data)
            if err:
                return f"frame: {err}"
            want = f"{data['animation']}:{data['index']}"
            if fields.get("id") != [want]:
                return f"frame id {fields.get('id')!r}, data says {want}"
            n = data["animation"]
            if self.current is not None and self.current != n:
                prev = [k for _, a, k, _ in self.frames if a == self.current]
                bad = (f"animation {self.current}: its frames stopped at index {prev[-1] if prev else '?'} with "
                       f"neither `settled` nor `interrupted`, and animation {n}'s frames began")
                self.current = n
                self.frames.append((arrival, n, data["index"], data))
                return bad
            self.current = n
            self.frames.append((arrival, n, data["index"], data))
        elif kind in ("settled", "interrupted", "snapshot"):
            err = schema_error("Snapshot", data)
            if err:
                return f"{kind}: {err}"
            if kind in ("settled", "interrupted"):
                self.current = None
            if kind == "settled":
                self.settled = True
                if data["state"] not in ("resting", "hidden") or data["animation"] is not None:
                    return f"settled: state {data['state']!r}, animation {data['animation']!r}"
                if self.frames and not close(data["constant"], self.frames[-1][3]["constant"]):
                    return (f"settled: constant {data['constant']!r}, the last frame "
                            f"{self.frames[-1][1]}:{self.frames[-1][2]} has {self.frames[-1][3]['constant']!r}")
            elif kind == "interrupted":
                self.interrupt_snaps.append(data)
                if self.frames:
                    self.interrupted.add(self.frames[-1][1])
        elif kind == "closed":
            self.closed = True
            if self.current is not None:
                self.interrupted.add(self.current)  # the session ended mid-animation: cut short, rightly
                self.current = None
        else:
            return f"unknown event {kind!r}"
        return None


# --------------------------------------------------------------------------------------------
# The user.


class SheetUser(FastHttpUser):
    wait_time = between(0.2, 1.0)
    network_timeout = 15.0
    connection_timeout = 5.0

    def on_start(self):
        u = urlsplit(self.host)
        self.sock_host = u.hostname
        self.sock_port = u.port or 80

    # ---- clock and pacing

    def advance_to(self, t):
        """Moves the client clock to t (never back) and, when pacing in real time, sleeps until then."""
        self.vt = max(self.vt, t)
        if PACE != "realtime":
            return
        due = self.anchor + (self.vt - self.vt_anchor)
        now = time.perf_counter()
        # One entry per step, 0 when on time, so that the report can say how many of them were late.
        if due > now:
            gevent.sleep(due - now)
            STATS.lag.append(0.0)
        else:
            STATS.lag.append(now - due)

    def now(self):
        return round(self.vt, 4)

    # ---- one request, checked

    def call(self, method, path, body, kind, expect, schema, context=None):
        """Sends a request and checks it; returns (parsed body or None, arrival time)."""
        data = None if body is None else json.dumps(body, separators=(",", ":"))
        headers = {"Content-Type": "application/json"} if data is not None else None
        t0 = time.perf_counter()
        with self.client.request(method, path, data=data, headers=headers, name=kind, catch_response=True) as r:
            t1 = time.perf_counter()
            STATS.lat[kind].append(t1 - t0)
            STATS.checked += 1
            problem = None
            obj = None
            try:
                text = r.text or ""
            except (AttributeError, UnicodeDecodeError, TypeError):
                text = ""
            repro = {"request": f"{method} {path}", "body": data, "status": r.status_code, "response": text[:600]}
            if context:
                repro.update(context)
            if not r.status_code:
                problem = ("transport", f"{kind}: {r.error!r}")
            elif r.status_code != expect:
                problem = ("status", f"{kind}: status {r.status_code}, expected {expect}")
            elif expect == 204:
                if r.content:
                    problem = ("schema", f"{kind}: 204 with a body")
            else:
                ctype = (r.headers.get("content-type") or "").split(";")[0].strip()
                want = "application/problem+json" if expect >= 400 else "application/json"
                try:
                    obj = json.loads(text)
                except ValueError:
                    problem = ("schema", f"{kind}: body is not JSON")
                if problem is None and ctype != want:
                    problem = ("schema", f"{kind}: Content-Type {ctype!r}, expected {want}")
                if problem is None:
                    err = schema_error(schema, obj)
                    if err:
                        problem = ("schema", f"{kind}: {err}")
            if problem:
                STATS.failed += 1
                STATS.error(problem[0], problem[1], **repro)
                r.failure(problem[1])
                return None, t1
            r.success()
            return obj, t1

    # ---- session events

    def event(self, kind, body, name):
        """A pan, show or dismiss event on the session at the current client time."""
        body = dict(body)
        body["time"] = self.now()
        path = f"/sessions/{self.sid}/{kind}"
        res, arrived = self.call("POST", path, body, name, 200, "Result")
        if res is None:
            self.broken = True
            return None
        bad = None
        if kind == "pan" and res.get("phase") != body["phase"]:
            bad = f"{name}: phase {res.get('phase')!r}"
        elif res.get("time") != body["time"]:
            bad = f"{name}: time {res.get('time')!r}, sent {body['time']!r}"
        if bad:
            STATS.failed += 1
            STATS.error("contract", bad, request=f"POST {path}", body=json.dumps(body), response=json.dumps(res)[:600])
        sim = {"type": kind, **{k: v for k, v in body.items()}}
        if kind == "pan":
            del sim["type"]  # the default
        self.span.append((sim, res))
        self.history.append((sim, res))
        if res.get("animation"):
            a = res["animation"]
            self.anim = a
            self.answered[a["id"]] = arrived
            STATS.counts["animations"] += 1
        return res

    def batch(self, bodies, name):
        """Several `changed` events in one request, as a client sends what accumulated while its
        request was in flight: each keeps its own time; the answer is the last one's result, with
        `batch.count` and `batch.settles` (what earlier events started)."""
        path = f"/sessions/{self.sid}/pan"
        res, arrived = self.call("POST", path, {"events": bodies}, name, 200, "Result")
        if res is None:
            self.broken = True
            return None
        last = bodies[-1]
        bad = None
        if res.get("phase") != last["phase"] or res.get("time") != last["time"]:
            bad = f"{name}: phase/time {res.get('phase')!r}/{res.get('time')!r}, the last event {last['phase']!r}/{last['time']!r}"
        elif (res.get("batch") or {}).get("count") != len(bodies):
            bad = f"{name}: batch {res.get('batch')!r} for {len(bodies)} events"
        if bad:
            STATS.failed += 1
            STATS.error("contract", bad, request=f"POST {path}", body=json.dumps({"events": bodies}),
                        response=json.dumps(res)[:600])
        settles = {s["index"]: s for s in (res.get("batch") or {}).get("settles", [])}
        for i, b in enumerate(bodies):
            # The replay compares the last event's result in full, an earlier one's snap if it had one.
            got = res if i == len(bodies) - 1 else ({"settle": settles[i]} if i in settles else None)
            self.span.append((dict(b), got))
            self.history.append((dict(b), got))
        for a in [s["animation"] for _, s in sorted(settles.items())] + ([res["animation"]] if res.get("animation") else []):
            self.anim = a
            self.answered[a["id"]] = arrived
            STATS.counts["animations"] += 1
        STATS.counts["changed events sent in batches"] += len(bodies)
        return res

    def anim_end(self):
        return self.anim["startTime"] + self.anim["duration"] if self.anim else -math.inf

    def maybe_rest(self):
        """Before a began or show at the current client time: if the card is at rest at a detent
        that is not a dismissal, the replay span restarts there."""
        if self.anim is None:
            return  # still in the state the session was created in: the span starts at creation
        if self.vt >= self.anim_end() and not self.anim["dismiss"]:
            self.rest = self.anim["detent"]
            self.span = []

    def hidden_now(self):
        return self.anim is not None and self.anim["dismiss"] and self.vt >= self.anim_end()

    # ---- replay through /simulate

    def replay(self, rest, span, kind):
        config = {k: v for k, v in self.config.items() if k != "initialDetent"}
        if rest is not None:
            config["initialDetent"] = rest
        req = {"config": config, "events": [e for e, _ in span], "fps": 60}
        body = json.dumps(req, separators=(",", ":"))
        if len(body) > BODY_LIMIT - 64:
            STATS.counts[f"replays skipped (body over {BODY_LIMIT} B)"] += 1
            return None
        sim, _ = self.call("POST", "/simulate", req, kind, 200, "SimulateResponse")
        if sim is None:
            return None
        results = sim["results"]
        diffs = []
        snap_diff = False
        if len(results) != len(span):
            diffs.append(f"{len(results)} results for {len(span)} events")
        for i, ((ev, got), want) in enumerate(zip(span, results)):
            if got is None:
                continue  # an event inside a batch: its state is in the batch's last result
            if "settle" in got:
                s, ws = got["settle"], want.get("snap") or {}
                d = [] if s["snap"]["detent"] == ws.get("detent") and close(s["animation"]["from"], (want.get("animation") or {}).get("from")) else [
                    f"snap.detent session {s['snap']['detent']!r} (batch.settles) simulate {ws.get('detent')!r}"]
            else:
                d = self.compare(got, want)
            if d:
                snap_diff = snap_diff or d[0].startswith("snap.detent")
                diffs.append(f"events[{i}] ({ev.get('phase') or ev.get('type')}): " + "; ".join(d))
                if len(diffs) >= 3:
                    break
        if diffs:
            STATS.failed += 1
            STATS.error(
                "mismatch" if snap_diff else "replay-diff",
                f"{kind}: " + " | ".join(diffs),
                request="POST /simulate", body=body,
                session_results=json.dumps([r for _, r in span])[:4000],
                simulate_results=json.dumps(results)[:4000])
        return sim

    @staticmethod
    def compare(got, want):
        out = []
        gs, ws = got.get("snap") or {}, want.get("snap") or {}
        if (got.get("snap") is None) != (want.get("snap") is None) or gs.get("detent") != ws.get("detent"):
            out.append(f"snap.detent session {gs.get('detent')!r} simulate {ws.get('detent')!r}")
        for k in ("phase", "state", "detent", "constant", "dimmerAlpha", "progress", "velocity",
                  "velocitySource", "consumer", "time"):
            if not close(got.get(k), want.get(k)):
                out.append(f"{k} session {got.get(k)!r} simulate {want.get(k)!r}")
        for k in ("constant", "dismiss"):
            if not close(gs.get(k), ws.get(k)):
                out.append(f"snap.{k} session {gs.get(k)!r} simulate {ws.get(k)!r}")
        ga, wa = got.get("animation") or {}, want.get("animation") or {}
        for k in ("curve", "duration", "from", "to", "fromAlpha", "toAlpha", "startTime", "detent", "velocity"):
            if not close(ga.get(k), wa.get(k)):
                out.append(f"animation.{k} session {ga.get(k)!r} simulate {wa.get(k)!r}")
        return out

    # ---- a gesture

    def gesture(self, grab, follow):
        # When the finger comes down.
        running = self.anim is not None and self.anim_end() - self.vt > 0.06
        if self.follower is not None and not (grab and running):
            self.finish_follow()  # a followed animation a grab does not interrupt plays to its end
        if grab and running:
            lo = max(self.vt, self.anim["startTime"])
            self.advance_to(lo + random.uniform(0.15, 0.85) * (self.anim_end() - lo))
            STATS.counts["grabs mid-animation"] += 1
        else:
            self.advance_to(max(self.vt, self.anim_end()) + random.uniform(0.15, 0.6))
            if self.hidden_now():
                self.maybe_rest()
                if self.event("show", {}, "POST show") is None:
                    return
                self.advance_to(self.anim_end() + random.uniform(0.15, 0.4))
        self.maybe_rest()
        if PACE == "realtime":
            # A finger does not hurry: a user that fell behind its schedule starts this gesture now.
            now = time.perf_counter()
            if now > self.anchor + (self.vt - self.vt_anchor):
                self.anchor, self.vt_anchor = now, self.vt
        began = self.event("pan", {"phase": "began"}, "POST pan began")
        if began is None:
            return
        if follow and self.follower is None:
            # Opened during the drag, so the stream's first animation is this gesture's.
            follower = FrameFollower(self.sock_host, self.sock_port, self.sid)
            if follower.start():
                self.follower = follower
            else:
                follower.stop()
                STATS.sse_failed += 1
                STATS.error("sse", "the frame stream did not open within 5 s", request=f"GET {follower.path}")
        c0 = began["constant"]
        lo, hi = min(self.detents.values()), max(self.detents.values())
        if random.random() < 0.5:
            target = random.choice(list(self.detents.values())) + random.gauss(0, 25)
        else:
            target = random.uniform(lo - 60, hi + 60)
        distance = target - c0
        n = random.randint(20, 40)
        ease = random.choice(EASES)
        scroll = self.config["preset"] == "fluid" and random.random() < 0.2
        scroll_from = random.uniform(20, 120)
        jitter = 0.0
        tr = prev = 0.0
        # A third of the drags send their `changed` events in batches of 2–6, as a client does
        # while a request is in flight.
        batching, pending, size = random.random() < 1 / 3, [], random.randint(2, 6)
        for k in range(1, n + 1):
            self.advance_to(self.vt + 1 / 60)
            jitter = 0.6 * jitter + random.gauss(0, 1.2)
            prev, tr = tr, round(distance * ease(k / n) + jitter, 2)
            body = {"phase": "changed", "translation": tr}
            if scroll:
                body["scrollOffset"] = round(max(0.0, scroll_from * (1 - 2 * k / n)), 2)
            if batching:
                body["time"] = self.now()
                pending.append(body)
                if len(pending) >= size or k == n:
                    if self.batch(pending, "POST pan batch") is None:
                        return
                    pending, size = [], random.randint(2, 6)
            elif self.event("pan", body, "POST pan changed") is None:
                return
        self.advance_to(self.vt + 1 / 60)
        if random.random() < 0.1:
            body = {"phase": "cancelled", "translation": tr}
            name = "POST pan cancelled"
            STATS.counts["cancelled"] += 1
        else:
            body = {"phase": "ended", "translation": tr}
            name = "POST pan ended"
            if random.random() < 0.75:
                v = (tr - prev) * 60 + random.gauss(0, 120)
                if random.random() < 0.2:
                    v = math.copysign(random.uniform(800, 3000), distance)  # a flick
                body["velocity"] = round(v, 1)
            else:
                STATS.counts["velocity estimated"] += 1
        if self.event("pan", body, name) is None:
            return
        STATS.counts["gestures"] += 1
        # Replay what the card did since it was last at rest.
        sim = self.replay(self.rest, list(self.span), "POST simulate (gesture)")
        if sim and (self.follower or self.watcher) and sim.get("frames"):
            # The last animation the span started: an event answered in full names it in `animation`,
            # an earlier event of a batch in its `settle` (a transition completes mid-drag, so the
            # event that starts the animation is often not the batch's last).
            started = (r.get("animation") or (r.get("settle") or {}).get("animation") for _, r in reversed(self.span) if r)
            last = next((a["id"] for a in started if a), None)
            if last is not None:
                self.sim_frames[last] = sim["frames"]

    def finish_follow(self, watcher=False):
        """Ends and checks the once-stream of one animation, or (watcher) the stream of the whole
        life, which the DELETE just answered must have closed."""
        if watcher:
            follower, self.watcher = self.watcher, None
        else:
            follower, self.follower = self.follower, None
        if follower is None:
            return
        STATS.counts["SSE streams"] += 1
        # Wait for the followed animation to finish playing (bounded), then check its frames.
        done = follower.join(timeout=max(0.5, self.anim_end() - self.vt) + 3 if self.anim and not watcher else 3)
        if follower.first_byte is not None:
            STATS.lat["GET frames (to head)"].append(follower.first_byte)
        counted = follower.error if follower.error_counted else None  # counted against its event already
        problem = counted
        if problem is None and not done:
            problem = ("no `closed` within 3 s of the DELETE" if watcher else
                       "the stream did not settle within its animation's duration + 3 s")
        if problem is None and not watcher and not follower.settled and not follower.closed:
            problem = "the stream ended without `settled`"
        if problem is None and watcher and not follower.closed:
            problem = "the stream ended without `closed` after the DELETE"
        for snap in follower.interrupt_snaps:
            STATS.counts["SSE interrupted"] += 1
            began = next((r for e, r in self.history if e.get("phase") == "began" and e["time"] == snap["time"]), None)
            if began is None:
                problem = problem or f"interrupted at time {snap['time']!r}: no began was sent then"
            elif not close(began["constant"], snap["constant"]) or snap["state"] != "dragging":
                problem = problem or (f"interrupted: state {snap['state']!r} constant {snap['constant']!r}, "
                                      f"the began at {snap['time']!r} answered {began['constant']!r}")
        by_anim = defaultdict(list)
        for arrival, n, k, fr in follower.frames:
            by_anim[n].append((arrival, k, fr))
        for n, frames in by_anim.items():
            STATS.counts["frames received"] += len(frames)
            answered = self.answered.get(n)
            if answered is not None:
                for arrival, k, fr in frames:
                    STATS.lateness.append(arrival - (answered + fr["t"]))
            ks = [k for _, k, _ in frames]
            if ks != sorted(set(ks)):
                problem = problem or f"animation {n}: frame indices out of order {ks[:20]}"
            if n not in follower.interrupted and ks:
                top = max(ks)
                STATS.counts["frames skipped"] += top + 1 - len(ks)
            want = self.sim_frames.get(n)
            if want is not None:
                if n not in follower.interrupted and len(frames) and frames[-1][1] != len(want) - 1:
                    problem = problem or f"animation {n}: last frame index {frames[-1][1]}, /simulate has {len(want) - 1}"
                for _, k, fr in frames:
                    if k >= len(want):
                        problem = problem or f"animation {n}: frame {k} beyond /simulate's {len(want)} frames"
                        break
                    diff = [f for f in ("t", "constant", "dimmerAlpha", "progress", "velocity")
                            if not close(fr[f], want[k][f])]
                    if diff:
                        problem = problem or (f"animation {n} frame {k}: {diff[0]} SSE {fr[diff[0]]!r} "
                                              f"/simulate {want[k][diff[0]]!r}")
                        break
        if problem:
            if problem is not counted:
                STATS.sse_failed += 1
            STATS.error("sse", problem, request=f"GET {follower.path}", session=self.sid,
                        body=json.dumps(self.config), events=json.dumps([e for e, _ in self.history])[:6000],
                        stream=[f"{a}:{k}" for _, a, k, _ in follower.frames][:400])

    # ---- a life

    @task
    def life(self):
        self.sid = "lt-" + uuid.uuid4().hex[:20]
        self.config = random_config(preset_catalog(self.host))
        self.vt = random.uniform(1.0, 5000.0)  # this user's monotonic clock
        self.anchor, self.vt_anchor = time.perf_counter(), self.vt
        self.anim = None
        self.answered = {}
        self.sim_frames = {}
        self.follower = None
        self.watcher = None
        self.broken = False
        self.rest = None
        self.span, self.history = [], []
        snap, _ = self.call("PUT", f"/sessions/{self.sid}", self.config, "PUT session", 201, "Snapshot")
        if snap is None:
            return
        STATS.counts["sessions"] += 1
        self.rest = self.config.get("initialDetent")
        if snap.get("id") != self.sid or snap.get("clock") != "client" or snap.get("preset") != self.config["preset"]:
            STATS.failed += 1
            STATS.error("contract", f"PUT snapshot id/clock/preset {snap.get('id')!r}/{snap.get('clock')!r}/"
                        f"{snap.get('preset')!r}", request=f"PUT /sessions/{self.sid}", body=json.dumps(self.config))
        self.detents = snap["detents"]
        if random.random() < 0.1:
            # A front end that draws from the stream: one EventSource for every animation of the life.
            watcher = FrameFollower(self.sock_host, self.sock_port, self.sid, once=False)
            if watcher.start():
                self.watcher = watcher
            else:
                watcher.stop()
                STATS.sse_failed += 1
                STATS.error("sse", "the frame stream did not open within 5 s", request=f"GET {watcher.path}")
        # Show the card: the preset's default, or a detent other than hidden.
        self.advance_to(self.vt + random.uniform(0.05, 0.3))
        visible = [d for d in self.detents if d != "hidden"]
        body = {"detent": random.choice(visible)} if random.random() < 0.5 or snap["state"] != "hidden" else {}
        if self.event("show", body, "POST show") is None:
            return self.delete()
        gestures = random.randint(3, 6)
        follow_at = random.randrange(gestures) if random.random() < 0.2 else -1
        for g in range(gestures):
            if self.broken:
                break
            # Right after a followed animation, grab more often, so that streams see `interrupted`.
            self.gesture(grab=random.random() < (0.3 if self.follower else 0.1), follow=g == follow_at)
        self.finish_follow()
        if not self.broken and random.random() < 0.3:
            self.advance_to(self.vt + random.uniform(0.05, 0.5))
            got, _ = self.call("GET", f"/sessions/{self.sid}", None, "GET session", 200, "Snapshot")
            if got is not None and (got.get("id") != self.sid or got.get("time") != self.history[-1][0]["time"]):
                STATS.failed += 1
                STATS.error("contract", f"GET snapshot id {got.get('id')!r} time {got.get('time')!r}, last event "
                            f"time {self.history[-1][0]['time']!r}", request=f"GET /sessions/{self.sid}")
        if not self.broken and random.random() < 0.15:
            self.advance_to(max(self.vt, self.anim_end()) + random.uniform(0.1, 0.4))
            if not self.hidden_now():
                self.maybe_rest()
                self.event("dismiss", {}, "POST dismiss")
        if not self.broken and len(self.history) > len(self.span):
            # The whole session since creation, when it fits in one request body.
            self.replay(self.config.get("initialDetent"), self.history, "POST simulate (session)")
        self.delete()

    def delete(self):
        self.finish_follow()
        self.call("DELETE", f"/sessions/{self.sid}", None, "DELETE session", 204, None)
        self.finish_follow(watcher=True)
        if random.random() < 0.1:
            self.call("GET", f"/sessions/{self.sid}", None, "GET deleted session", 404, "Problem")


# --------------------------------------------------------------------------------------------
# At the end each process writes what it measured to LOADTEST_OUT/part-<pid>.pkl; the process that
# runs the clock (the master, or the only process) also samples sheetd's CPU and RSS from /proc and
# writes run.pkl. Benchmarks/loadtest_report.py merges them into the report.


def _proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _sampler(run):
    last_t, last_c = time.perf_counter(), _proc_cpu(SHEETD_PID)
    while True:
        gevent.sleep(1.0)
        try:
            t, c = time.perf_counter(), _proc_cpu(SHEETD_PID)
            run["peak_cpu"] = max(run.get("peak_cpu", 0.0), 100 * (c - last_c) / (t - last_t))
            run["peak_rss"] = max(run.get("peak_rss", 0), _proc_kib(SHEETD_PID, "VmRSS"))
            last_t, last_c = t, c
        except OSError:
            return


@events.user_error.add_listener
def _on_user_error(user_instance, exception, tb, **_):
    # An exception in the scenario itself: a bug of this file, or a response it could not handle.
    STATS.failed += 1
    STATS.error("client", f"{type(exception).__name__}: {exception}"[:400],
                session=getattr(user_instance, "sid", None))


RUN = {}
_SAMPLER = []


def _has_users(environment):
    return not isinstance(environment.runner, MasterRunner)


def _runs_clock(environment):
    return not isinstance(environment.runner, WorkerRunner)


@events.test_start.add_listener
def _on_start(environment, **_):
    STATS.t_start = time.perf_counter()
    STATS.cpu0 = sum(os.times()[:2])
    if _runs_clock(environment):
        RUN.update(t_start=time.time(), pid=SHEETD_PID)
        if SHEETD_PID:
            RUN.update(cpu0=_proc_cpu(SHEETD_PID), rss0=_proc_kib(SHEETD_PID, "VmRSS"))
            _SAMPLER.append(gevent.spawn(_sampler, RUN))


@events.test_stop.add_listener
def _on_stop(environment, **_):
    for f in list(FOLLOWERS):
        f.stop()
    STATS.t_stop = time.perf_counter()
    os.makedirs(OUT, exist_ok=True)
    if _runs_clock(environment):
        RUN["t_stop"] = time.time()
        if SHEETD_PID:
            try:
                RUN.update(cpu1=_proc_cpu(SHEETD_PID), rss1=_proc_kib(SHEETD_PID, "VmRSS"),
                           hwm=_proc_kib(SHEETD_PID, "VmHWM"))
            except OSError:
                RUN["gone"] = True
            for g in _SAMPLER:
                g.kill(block=False)
        opts = environment.parsed_options
        RUN.update(host=environment.host, users=opts.num_users, spawn_rate=opts.spawn_rate, pace=PACE,
                   local=isinstance(environment.runner, LocalRunner), master_cpu=sum(os.times()[:2]) - STATS.cpu0)
        _dump("run.pkl", RUN)
    if _has_users(environment):
        part = {k: getattr(STATS, k) for k in ("lateness", "lag", "errors", "checked", "failed", "sse_checked",
                                              "sse_failed", "counts")}
        part["lat"] = dict(STATS.lat)
        part["samples"] = dict(STATS.samples)
        part["cpu"] = sum(os.times()[:2]) - STATS.cpu0
        part["seconds"] = STATS.t_stop - STATS.t_start
        _dump(f"part-{os.getpid()}.pkl", part)


def _dump(name, obj):
    tmp = os.path.join(OUT, name + ".tmp")
    with open(tmp, "wb") as f:
        pickle.dump(obj, f)
    os.replace(tmp, os.path.join(OUT, name))
