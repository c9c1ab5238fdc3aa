#!/usr/bin/env python3
"""The soak: a release sheetd under the load test's mix plus frame streams opened at a steady rate,
for a long time, sampled every 10 s; the verdict is zero errors and flat RSS and descriptors.

Used by Benchmarks/soak (which installs what is missing and passes every flag); standard library
only, 127.0.0.1 only:

    soak.py --bin B --out DIR [--minutes M] [--users N] [--streams-per-second R]
            [--store memory|redis] [--warmup S]

1. sheetd (and with --store redis a redis-server) started by testkit/sheetkit/harness.py on a free
   loopback port.
2. The load: Benchmarks/loadtest_locustfile.py run by Locust from the kit's venv, this Python's (the same
   command as scripts/loadtest, plus --csv-full-history so that its history file carries the last
   10 s's percentiles), its files in DIR/loadtest; every response and SSE event it checks.
3. Frame streams: one opened every 1/R s, each a front end with its own session for 10–60 s
   (`PUT`, `GET /frames?fps=60`, a show or dismiss every 0.5–3 s once the last one settled, then
   `DELETE`). Each stream must get frames for every animation it started, each animation ended by
   `settled` whose constant is its last frame's, and at the DELETE `closed` (reason deleted) and the
   chunked body's end; testkit/sheetkit/sse.py checks every event block.
4. Every 10 s, a sample: sheetd's RSS (/proc/PID/status VmRSS), descriptors (entries of
   /proc/PID/fd; sockets among them), threads, CPU over the interval (utime + stime of
   /proc/PID/stat), requests and p99 latency over the interval (deltas of /metrics' request
   histogram, /metrics itself left out), Locust's p99 over its last 10 s, streams open (sheetd's
   gauge and ours), sessions live, errors so far.
5. After the load: descriptors must come back to the pre-load count (when they do not, the verdict
   names the sockets sheetd still holds: TCP state, queues, the process holding the peer's end);
   then SIGTERM, exit status 0.

Verdicts (docs/RELIABILITY.md, "Soak"): the samples from --warmup to the end of the load are cut
in thirds by time; RSS is flat if the last third's median is within max(4 MiB, 5 %) of the first
third's, descriptors if within max(10, 15 %), and after the load they must come back to the
pre-load count exactly; plus zero errors: the load test's checks, every
stream, no 5xx, nothing logged at error or critical, exit 0. p99 and CPU are figures, not verdicts
(the machine is shared). Writes DIR/samples.csv and .md (the table), DIR/summary.md, DIR/soak.svg
(the plot), DIR/stream-errors.jsonl; the last line printed is `soak: N passed, M failed`.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import math
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from sheetkit.harness import HOST, RedisServer, Sheetd, socket_inodes, tcp_rows
from sheetkit.presets import names as preset_names
from sheetkit.sse import StreamCheck, parse_fields, take_events  # noqa: E402

INTERVAL = 10.0  # seconds between samples
FPS = 60  # the streams' frame rate, as a front end's display
HOLD = (10.0, 60.0)  # seconds a stream is kept open, uniform
GAP = (0.5, 3.0)  # seconds between an animation's `settled` and the next show/dismiss
SETTLE_SLACK = 3.0  # seconds past an animation's duration for its `settled` to arrive
CLOSE_WITHIN = 3.0  # seconds from the DELETE's answer to `closed` and the body's end
MAX_STREAMS = 400  # the opener's bound: no more open at once, whatever the server does
COOL_DOWN = 45.0  # seconds after the load for descriptors to come back (idle streams: ≤ 15 s keep-alive)
MIB = 1024 * 1024


TCP_STATES = {"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
              "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING"}


def tcp_address(hex_address: str) -> str:
    """127.0.0.1:8080 from /proc/net/tcp's 0100007F:1F90 (IPv4 only: sheetd listens on 127.0.0.1)."""
    host, port = hex_address.split(":")
    return ".".join(str(int(host[i:i + 2], 16)) for i in (6, 4, 2, 0)) + f":{int(port, 16)}"


def socket_owners(inodes: set[str]) -> dict[str, str]:
    """Which process (pid and command) holds each socket inode, for the peers of sheetd's sockets."""
    owners = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        command = " ".join(f.read().decode(errors="replace").split("\0"))
                    command = " ".join(command.split())[:80]
                    owners[link[8:-1]] = f"pid {pid} ({command})"
        except OSError:
            continue  # a process that ended, or one we may not read
    return owners


def describe_sockets(pid: int) -> list[str]:
    """sheetd's sockets as TCP sees them: its end, state, the peer's address and which process holds
    the peer's end (none: the client has gone). Said when descriptors do not come back after the load."""
    ours = socket_inodes(pid)
    rows = tcp_rows()
    by_local = {(cols[1], cols[2]): cols[9] for table, cols in rows if table.endswith("tcp")}
    found, peers = [], {}
    for table, cols in rows:
        if cols[9] in ours:
            peer_inode = by_local.get((cols[2], cols[1])) if table.endswith("tcp") else None
            found.append((cols, peer_inode))
            if peer_inode:
                peers[peer_inode] = None
    owners = socket_owners(set(peers))
    out = []
    for cols, peer_inode in found:
        state = TCP_STATES.get(cols[3], cols[3])
        if state == "LISTEN":
            continue
        local = tcp_address(cols[1]) if ":" in cols[1] and len(cols[1]) == 13 else cols[1]
        remote = tcp_address(cols[2]) if ":" in cols[2] and len(cols[2]) == 13 else cols[2]
        holder = owners.get(peer_inode or "", "no process (the client's end is closed)")
        out.append(f"{local} ↔ {remote} {state}, queues {cols[4]}; peer held by {holder}")
    unix = len(ours) - len(found)
    if unix:
        out.append(f"{unix} socket(s) not in TCP's tables (Unix sockets or pipes' kin)")
    return out


# --------------------------------------------------------------------------------------------
# sheetd as /proc and /metrics see it.


def read_process(pid: int) -> dict:
    """RSS (bytes), threads, CPU seconds (user + system), descriptors and sockets among them."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                out["rss"] = int(line.split()[1]) * 1024
            elif line.startswith("Threads:"):
                out["threads"] = int(line.split()[1])
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    out["cpu"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    fds = sockets = 0
    for name in os.listdir(f"/proc/{pid}/fd"):
        fds += 1
        try:
            sockets += os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:")
        except OSError:
            pass  # closed between the listing and the readlink
    out["fds"], out["sockets"] = fds, sockets
    return out


def scrape(port: int) -> str:
    conn = http.client.HTTPConnection(HOST, port, timeout=5)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        body = response.read().decode()
        if response.status != 200:
            raise OSError(f"/metrics answered {response.status}")
        return body
    finally:
        conn.close()


def parse_metrics(text: str) -> dict:
    """Prometheus text → {(name, ((label, value), …)): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        name, _, labels = key.partition("{")
        pairs = tuple(sorted((k, v.strip('"')) for k, _, v in
                             (kv.partition("=") for kv in labels.rstrip("}").split(",") if "=" in kv)))
        try:
            out[(name, pairs)] = float(value)
        except ValueError:
            pass
    return out


def served(metrics: dict) -> tuple[float, dict[float, float], float]:
    """Requests answered, the request-duration histogram's buckets summed over routes ({le: count}),
    and 5xx answered, all cumulative; /metrics itself left out (this script's own scrapes)."""
    count, buckets, fivexx = 0.0, {}, 0.0
    for (name, labels), value in metrics.items():
        lab = dict(labels)
        if lab.get("route") == "/metrics":
            continue
        if name == "sheetd_request_duration_seconds_count":
            count += value
        elif name == "sheetd_request_duration_seconds_bucket":
            le = math.inf if lab["le"] == "+Inf" else float(lab["le"])
            buckets[le] = buckets.get(le, 0.0) + value
        elif name == "sheetd_requests_total" and lab.get("status", "").startswith("5"):
            fivexx += value
    return count, buckets, fivexx


def histogram_quantile(q: float, buckets: dict[float, float]) -> float | None:
    """The q-quantile of cumulative buckets {le: count}, interpolated linearly inside its bucket
    (as Prometheus' histogram_quantile); None without observations; the largest finite bound when
    it lies in +Inf."""
    bounds = sorted(buckets)
    total = buckets.get(math.inf, buckets[bounds[-1]] if bounds else 0.0)
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for le in bounds:
        if buckets[le] >= rank:
            if math.isinf(le):
                return lower
            inside = buckets[le] - below
            return lower + (le - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = le, buckets[le]
    return lower


def locust_now(history_path: str) -> dict:
    """Locust's newest Aggregated row in its stats history: p99 over its last 10 s (ms; with
    --csv-full-history the percentiles are the current window's), requests and failures so far."""
    try:
        with open(history_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 32768))
            lines = f.read().decode(errors="replace").splitlines()
        with open(history_path, newline="") as f:
            header = next(csv.reader(f))
    except (OSError, StopIteration):
        return {}
    for line in reversed(lines):
        row = next(csv.reader([line]))
        if len(row) == len(header) and row[header.index("Name")] == "Aggregated":
            row = dict(zip(header, row))
            p99 = row.get("99%", "N/A")
            return {"p99_ms": None if p99 in ("N/A", "0") else float(p99),
                    "requests": int(row["Total Request Count"]), "failures": int(row["Total Failure Count"])}
    return {}


# --------------------------------------------------------------------------------------------
# Frame streams: front ends that keep one open for a while.


class Tally:
    """What the streams did, shared by their threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.opened = self.open = self.passed = self.failed = 0
        self.animations = self.frames = self.skipped = self.requests = 0
        self.errors: list[dict] = []

    def add(self, **counts) -> None:
        with self.lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)


class FrameStream:
    """One front end: a session of a random preset, its frame stream held `hold` seconds while the
    card is moved (show or dismiss, the next once the last one's `settled` arrived), then the
    DELETE, which must close the stream. Two threads: this one sends, `_read` reads."""

    def __init__(self, port: int, hold: float, tally: Tally, rng: random.Random, presets: list[str]) -> None:
        self.port, self.hold, self.tally, self.rng, self.presets = port, hold, tally, rng, presets
        self.sid = "soak-" + uuid.uuid4().hex[:20]
        self.path = f"/sessions/{self.sid}/frames?fps={FPS}"
        self.check = StreamCheck(self.sid, FPS)
        self.problems: list[str] = []
        self.cond = threading.Condition()
        self.head_ok: bool | None = None
        self.settled: dict[int, float] = {}  # animation → its settled constant
        self.last_frame: dict[int, dict] = {}  # animation → its last frame so far
        self.closed_reason = None
        self.ended = False  # the chunked body's last chunk came
        self.done = False  # the reader stopped
        self.sock: socket.socket | None = None

    def problem(self, what: str) -> None:
        if len(self.problems) < 5:
            self.problems.append(what)

    def request(self, conn, method: str, path: str, body, expect: int):
        data = None if body is None else json.dumps(body)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.tally.add(requests=1)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            text = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.problem(f"{method} {path}: {type(error).__name__}: {error}")
            return None
        if response.status != expect:
            self.problem(f"{method} {path}: status {response.status}, expected {expect}: {text[:200]!r}")
            return None
        return json.loads(text) if text else {}

    def run(self) -> None:
        self.tally.add(opened=1, open=1)
        conn = http.client.HTTPConnection(HOST, self.port, timeout=10)
        reader = None
        try:
            until = time.monotonic() + self.hold
            preset = self.rng.choice(self.presets)
            snap = self.request(conn, "PUT", f"/sessions/{self.sid}", {"preset": preset}, 201)
            if snap is None:
                return
            reader = threading.Thread(target=self._read, name=f"read {self.sid}", daemon=True)
            reader.start()
            with self.cond:
                self.cond.wait_for(lambda: self.head_ok is not None or self.done, 5)
            if self.head_ok is None:
                self.problem("the stream's head did not come within 5 s")
            if not self.head_ok:
                return  # the reader said why
            detent, hidden = snap["detent"], snap["state"] == "hidden"
            names = [d for d in snap["detents"] if d != "hidden"]
            while time.monotonic() < until and not self.problems:
                others = [d for d in names if hidden or d != detent]
                if others:
                    result = self.request(conn, "POST", f"/sessions/{self.sid}/show",
                                          {"detent": self.rng.choice(others)}, 200)
                else:
                    result = self.request(conn, "POST", f"/sessions/{self.sid}/dismiss", {}, 200)
                if result is None:
                    break
                animation = result.get("animation")
                if animation is None:
                    self.problem(f"a move to another detent started no animation: {json.dumps(result)[:200]}")
                    break
                n = animation["id"]
                detent, hidden = animation["detent"], bool(animation["dismiss"])
                with self.cond:
                    if not self.cond.wait_for(lambda: n in self.settled or self.done,
                                              animation["duration"] + SETTLE_SLACK):
                        self.problem(f"animation {n} ({animation['duration']} s): no `settled` within its "
                                     f"duration + {SETTLE_SLACK:g} s")
                        break
                    if n not in self.settled:
                        self.problem(f"the stream ended before animation {n} settled")
                        break
                    frames = self.check.frames_by_animation.get(n, [])
                    last = self.last_frame.get(n)
                if not frames:
                    self.problem(f"animation {n}: `settled` without frames")
                elif last is not None and abs(last["constant"] - self.settled[n]) > 1e-9:
                    self.problem(f"animation {n}: settled at {self.settled[n]}, last frame {last['index']} "
                                 f"at {last['constant']}")
                top = max((f["index"] for f in frames), default=-1)
                self.tally.add(animations=1, frames=len(frames), skipped=top + 1 - len(frames))
                time.sleep(min(self.rng.uniform(*GAP), max(0.0, until - time.monotonic())))
            if self.request(conn, "DELETE", f"/sessions/{self.sid}", None, 204) is None:
                return
            with self.cond:
                if not self.cond.wait_for(lambda: self.done, CLOSE_WITHIN):
                    self.problem(f"the stream did not end within {CLOSE_WITHIN:g} s of the DELETE")
            if self.closed_reason != "deleted":
                self.problem(f"`closed` reason {self.closed_reason!r}, expected 'deleted'")
            if not self.ended:
                self.problem("the chunked body did not end with its last chunk")
            if self.check.after_closed:
                self.problem(f"{self.check.after_closed} events after `closed`")
        except Exception as error:  # noqa: BLE001 - a bug here is this stream's failure, reported
            self.problem(f"{type(error).__name__}: {error}")
        finally:
            conn.close()
            if self.sock is not None:
                try:
                    self.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            if reader is not None:
                reader.join(5)
            problems = [p for p in self.problems + self.check.problems if p]
            if problems:
                self.tally.add(failed=1, open=-1)
                with self.tally.lock:
                    if len(self.tally.errors) < 200:
                        self.tally.errors.append({"session": self.sid, "path": self.path, "hold": round(self.hold, 1),
                                                  "problems": problems, "at": time.time()})
            else:
                self.tally.add(passed=1, open=-1)

    def _read(self) -> None:
        try:
            self.sock = socket.create_connection((HOST, self.port), timeout=20)
            self.sock.sendall(f"GET {self.path} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\n"
                              f"Accept: text/event-stream\r\n\r\n".encode())
            raw = b""
            while b"\r\n\r\n" not in raw:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise OSError("closed before the response head")
                raw += chunk
            head, pending = raw.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            ok = lines[0].split(" ")[1:2] == ["200"] and headers.get("content-type", "").startswith("text/event-stream")
            chunked = headers.get("transfer-encoding", "").lower() == "chunked"
            if not ok or not chunked:
                self.problem(f"stream head {lines[0]!r}, Content-Type {headers.get('content-type')!r}, "
                             f"Transfer-Encoding {headers.get('transfer-encoding')!r}")
            with self.cond:
                self.head_ok = ok and chunked
                self.cond.notify_all()
            if not self.head_ok:
                return
            text, ended = "", False
            while not ended:
                blocks, text, pending, ended = take_events(text, pending, True)
                with self.cond:
                    for block in blocks:
                        self._event(block)
                    self.ended = ended
                    self.cond.notify_all()
                if ended:
                    break
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise OSError("connection closed inside the chunked body")
                pending += chunk
        except (OSError, ValueError) as error:
            if not self.ended:
                self.problem(f"stream: {type(error).__name__}: {error}")
        finally:
            with self.cond:
                if self.head_ok is None:
                    self.head_ok = False
                self.done = True
                self.cond.notify_all()
            if self.sock is not None:
                self.sock.close()

    def _event(self, block: str) -> None:
        self.check.event(block)
        fields = parse_fields(block)
        name = fields.get("event", [""])[0]
        try:
            data = json.loads(fields["data"][0]) if fields.get("data") else None
        except ValueError:
            return  # StreamCheck counted the torn line
        if name == "frame" and isinstance(data, dict):
            self.last_frame[data.get("animation")] = data
        elif name == "settled" and isinstance(data, dict):
            n = int(fields.get("id", ["-1:0"])[0].split(":")[0])
            self.settled[n] = data.get("constant")
        elif name == "closed" and isinstance(data, dict):
            self.closed_reason = data.get("reason")


def open_streams(port: int, rate: float, start: float, stop: float, tally: Tally, threads: list, seed: int) -> None:
    """Opens one FrameStream every 1/rate s (on a fixed schedule, so the rate stays steady when a
    start is late) from `start` to `stop`, the end of the load. Holds are not cut at `stop`: the
    number open stays steady to the end of the judged window, and winds down within HOLD[1] after."""
    rng = random.Random(seed)
    presets = preset_names(port)  # the catalog, as sheetd serves it
    k = 0
    while True:
        due = start + k / rate
        if due >= stop:
            return
        time.sleep(max(0.0, due - time.monotonic()))
        k += 1
        if tally.open >= MAX_STREAMS:
            continue
        hold = rng.uniform(*HOLD)
        stream = FrameStream(port, hold, tally, random.Random(rng.random()), presets)
        thread = threading.Thread(target=stream.run, name=f"stream {stream.sid}", daemon=True)
        thread.start()
        threads.append(thread)


# --------------------------------------------------------------------------------------------
# The run.


COLUMNS = ["t_s", "phase", "rss_mib", "fds", "sockets", "threads", "cpu_pct", "requests", "req_per_s",
           "server_p99_ms", "locust_p99_ms", "streams_open", "soak_streams_open", "sessions_live", "errors"]


class Sampler:
    """Takes a sample every INTERVAL s; keeps the previous one for the interval's deltas."""

    def __init__(self, sheetd: Sheetd, tally: Tally, locust_history: str, csv_path: str) -> None:
        self.sheetd, self.tally, self.locust_history = sheetd, tally, locust_history
        self.rows: list[dict] = []
        self.prev = None
        self.t0 = time.monotonic()
        self.csv = open(csv_path, "w", newline="")
        self.writer = csv.DictWriter(self.csv, COLUMNS)
        self.writer.writeheader()
        self.fivexx = 0.0

    def take(self, phase: str, keep: bool = True) -> dict:
        now = time.monotonic()
        proc = read_process(self.sheetd.pid)
        metrics = parse_metrics(scrape(self.sheetd.port))
        count, buckets, self.fivexx = served(metrics)
        locust = locust_now(self.locust_history)
        row = {"t_s": round(now - self.t0), "phase": phase, "rss_mib": round(proc["rss"] / MIB, 2),
               "fds": proc["fds"], "sockets": proc["sockets"], "threads": proc["threads"],
               "streams_open": int(metrics.get(("sheetd_streams_open", ()), 0)),
               "soak_streams_open": self.tally.open,
               "sessions_live": int(metrics.get(("sheetd_sessions_live", ()), 0)),
               "errors": self.tally.failed + locust.get("failures", 0) + int(self.fivexx),
               "locust_p99_ms": locust.get("p99_ms") if phase in ("warm-up", "soak") else None}
        # Rates need an interval: CPU time comes in 10 ms clock ticks, so one tick over the few ms
        # between the last wind-down sample and the "after" one would read as tens of percent.
        if self.prev is not None and now - self.prev[0] >= 1.0:
            p_now, p_proc, p_count, p_buckets = self.prev
            dt = now - p_now
            row["cpu_pct"] = round(100 * (proc["cpu"] - p_proc["cpu"]) / dt, 1)
            row["requests"] = int(count - p_count)
            row["req_per_s"] = round((count - p_count) / dt, 1)
            p99 = histogram_quantile(0.99, {le: v - p_buckets.get(le, 0.0) for le, v in buckets.items()})
            row["server_p99_ms"] = None if p99 is None else round(p99 * 1000, 3)
        if keep:
            self.prev = (now, proc, count, buckets)
            self.rows.append(row)
            self.writer.writerow(row)
            self.csv.flush()
        return row


def median_of(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def slope_per_minute(rows: list[dict], key: str) -> float:
    """Least-squares slope of `key` against time, per minute."""
    xs, ys = [r["t_s"] / 60 for r in rows], [r[key] for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0


def flatness(rows: list[dict], key: str, scale: float, floor: float, share: float) -> dict:
    """The judged samples in thirds by time: the last third's median against the first's, within
    max(floor, share × first median)."""
    thirds = [rows[i * len(rows) // 3:(i + 1) * len(rows) // 3] for i in range(3)]
    first, last = median_of(thirds[0], key) * scale, median_of(thirds[2], key) * scale
    tolerance = max(floor, share * first)
    return {"first": first, "last": last, "moved": last - first, "relative": (last - first) / first if first else 0.0,
            "tolerance": tolerance, "ok": abs(last - first) <= tolerance,
            "min": min(r[key] for r in rows) * scale, "max": max(r[key] for r in rows) * scale,
            "slope": slope_per_minute(rows, key) * scale,
            "span": (thirds[0][0]["t_s"], thirds[0][-1]["t_s"], thirds[2][0]["t_s"], thirds[2][-1]["t_s"])}


def fmt(value, digits=1) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


ERRORS_NOTE = ("CPU, requests and p99 are over the 10 s before the sample; errors are counted so far: Locust's failed "
               "responses, failed soak streams and 5xx answers (the load test's SSE checks count at its end).")


def samples_markdown(rows: list[dict], every: int = 1) -> list[str]:
    head = ["t (s)", "phase", "RSS MiB", "fds (sockets)", "threads", "CPU %", "requests", "p99 ms sheetd",
            "p99 ms Locust", "streams open (soak's)", "sessions live", "errors"]
    out = ["| " + " | ".join(head) + " |", "| ---: | --- | " + " | ".join(["---:"] * (len(head) - 2)) + " |"]
    for i, r in enumerate(rows):
        if i % every and i != len(rows) - 1 and r["phase"] not in ("before", "after"):
            continue
        out.append("| " + " | ".join([
            str(r["t_s"]), r["phase"], fmt(r["rss_mib"], 2), f"{r['fds']} ({r['sockets']})", str(r["threads"]),
            fmt(r.get("cpu_pct")), fmt(r.get("requests")), fmt(r.get("server_p99_ms"), 2),
            fmt(r.get("locust_p99_ms"), 0), f"{r['streams_open']} ({r['soak_streams_open']})",
            str(r["sessions_live"]), str(r["errors"])]) + " |")
    return out


def plot_svg(rows: list[dict], warmup: float, end: float, path: str) -> None:
    """Panels against minutes (RSS, descriptors, CPU, p99 of sheetd and of Locust), the warm-up
    shaded, the end of the load dashed, and on RSS and descriptors the medians of the first and last
    judged thirds: a hand-drawn SVG, so that the soak needs nothing but the standard library."""
    panels = [("RSS (MiB)", [("rss_mib", "#1f77b4")]),
              ("descriptors (green), sheetd's open streams (grey)", [("fds", "#2ca02c"), ("streams_open", "#aaaaaa")]),
              ("CPU (% of one core, per 10 s)", [("cpu_pct", "#d62728")]),
              ("p99 (ms) per 10 s, sheetd's histogram", [("server_p99_ms", "#9467bd")]),
              ("p99 (ms) per 10 s, Locust (client side)", [("locust_p99_ms", "#ff7f0e")])]
    judged = [r for r in rows if r["phase"] == "soak"]
    thirds = [judged[i * len(judged) // 3:(i + 1) * len(judged) // 3] for i in range(3)] if len(judged) >= 3 else []
    width, ph, left, right, top, gap = 780, 110, 60, 20, 24, 44
    height = top + len(panels) * (ph + gap) + 10
    xmax = max(r["t_s"] for r in rows) / 60 or 1
    step = next(s for s in (1, 2, 5, 10, 15, 30, 60, 120) if xmax / s <= 12)

    def x(t: float) -> float:
        return left + (width - left - right) * (t / 60) / xmax

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for i, (title, series) in enumerate(panels):
        y0 = top + i * (ph + gap)
        values = [r[k] for k, _ in series for r in rows if r.get(k) is not None]
        svg.append(f'<text x="{left}" y="{y0 - 5}" font-weight="bold">{title}</text>')
        svg.append(f'<rect x="{x(0):.1f}" y="{y0}" width="{x(warmup) - x(0):.1f}" height="{ph}" fill="#eeeeee"/>')
        svg.append(f'<line x1="{x(end):.1f}" y1="{y0}" x2="{x(end):.1f}" y2="{y0 + ph}" stroke="#888" stroke-dasharray="4,3"/>')
        svg.append(f'<rect x="{left}" y="{y0}" width="{width - left - right}" height="{ph}" fill="none" stroke="#888"/>')
        for m in range(0, int(xmax) + 1, step):
            svg.append(f'<text x="{x(m * 60):.1f}" y="{y0 + ph + 13}" text-anchor="middle">{m} min</text>')
        if not values:
            continue
        lo, hi = min(0.0, min(values)), max(values) * 1.1 or 1.0

        def y(v: float) -> float:
            return y0 + ph - ph * (v - lo) / (hi - lo)  # noqa: B023 - used within this iteration

        for v in (lo, (lo + hi) / 2, hi):
            svg.append(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,.{0 if hi >= 20 else 2}f}</text>')
        for key, colour in series:
            points = " ".join(f"{x(r['t_s']):.1f},{y(r[key]):.1f}" for r in rows if r.get(key) is not None)
            svg.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        if thirds and series[0][0] in ("rss_mib", "fds"):
            key = series[0][0]
            for third in (thirds[0], thirds[2]):
                m = median_of(third, key)
                svg.append(f'<line x1="{x(third[0]["t_s"]):.1f}" y1="{y(m):.1f}" x2="{x(third[-1]["t_s"]):.1f}" '
                           f'y2="{y(m):.1f}" stroke="black" stroke-width="2"/>')
                svg.append(f'<text x="{x(third[-1]["t_s"]):.1f}" y="{y(m) - 4:.1f}" text-anchor="end">median {m:,.{0 if key == "fds" else 2}f}</text>')
    svg.append(f'<text x="{width / 2}" y="{height - 4}" text-anchor="middle" fill="#555">grey: warm-up (not judged); '
               f'dashed: end of the load; black: medians of the first and last thirds after warm-up</text></svg>')
    with open(path, "w") as f:
        f.write("\n".join(svg) + "\n")


def run_locust(args, url: str, pid: int, out: str, seconds: int) -> subprocess.Popen:
    """The load test's Locust command (scripts/loadtest's run_load), its files in `out`."""
    env = {**os.environ, "LOADTEST_OUT": out, "LOADTEST_PACE": "realtime", "LOADTEST_SHEETD_PID": str(pid),
           "LOADTEST_SPEC": os.path.join(ROOT, "openapi.yaml")}
    command = [os.path.join(sys.prefix, "bin", "locust"), "-f", os.path.join(ROOT, "Benchmarks", "loadtest_locustfile.py"),
               "--headless", "--only-summary", "--loglevel", "WARNING", "-u", str(args.users), "-r", str(args.users),
               "-t", f"{seconds}s", "--host", url.rstrip("/"), "--csv", os.path.join(out, "locust"), "--csv-full-history"]
    log = open(os.path.join(out, "locust.log"), "wb")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=ROOT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--users", type=int, default=15)
    parser.add_argument("--streams-per-second", type=float, default=1.0)
    parser.add_argument("--store", choices=["memory", "redis"], default="memory")
    parser.add_argument("--warmup", type=float, default=300)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seconds = round(args.minutes * 60)
    if not 0 <= args.warmup <= seconds / 2:
        sys.exit("soak: --warmup must leave at least half of the run to judge")
    out = os.path.abspath(args.out)
    loadtest_out = os.path.join(out, "loadtest")
    os.makedirs(loadtest_out, exist_ok=True)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)

    redis = None
    flags = ["--log-level", "info"]
    if args.store == "redis":
        redis = RedisServer(log=open(os.path.join(out, "redis.log"), "wb")).start()
        flags += ["--store", redis.url]
    sheetd = Sheetd(args.bin, flags, log=os.path.join(out, "sheetd.log"))
    try:
        sheetd.start()
    except RuntimeError as error:
        if redis:
            redis.stop()
        print(f"soak: {error}", file=sys.stderr)
        print("soak: 0 passed, 1 failed")
        return 1
    print(f"soak: sheetd pid {sheetd.pid} on {sheetd.url} ({args.store} store); {args.users} Locust users, "
          f"{args.streams_per_second:g} streams/s held {HOLD[0]:g}-{HOLD[1]:g} s, {seconds} s, warm-up {args.warmup:g} s, "
          f"seed {seed}", file=sys.stderr, flush=True)

    tally = Tally()
    sampler = Sampler(sheetd, tally, os.path.join(loadtest_out, "locust_stats_history.csv"), os.path.join(out, "samples.csv"))
    stream_threads: list[threading.Thread] = []
    locust = None
    interrupted = False
    left_open: list[str] = []  # sheetd's sockets when descriptors did not come back after the load
    failures: list[str] = []

    def stop_on_signal(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop_on_signal)
    try:
        with open(os.path.join(loadtest_out, "metrics-before.txt"), "w") as f:
            f.write(scrape(sheetd.port))
        time.sleep(1)  # so that sheetd has closed that scrape's connection (and the harness's readiness probe)
        sampler.t0 = time.monotonic()
        before = sampler.take("before")
        sampler.t0 = time.monotonic()  # t = 0: the load starts
        locust = run_locust(args, sheetd.url, sheetd.pid, loadtest_out, seconds)
        start = sampler.t0
        stop = start + seconds
        opener = threading.Thread(target=open_streams, daemon=True,
                                  args=(sheetd.port, args.streams_per_second, start, stop, tally, stream_threads, seed))
        opener.start()
        k = 1
        while start + k * INTERVAL <= stop + 0.5:
            time.sleep(max(0.0, start + k * INTERVAL - time.monotonic()))
            if not sheetd.alive():
                failures.append("sheetd exited during the soak")
                break
            row = sampler.take("warm-up" if k * INTERVAL <= args.warmup else "soak")
            print(f"soak: {row['t_s']:>5} s  RSS {row['rss_mib']:.1f} MiB  fds {row['fds']}  CPU {fmt(row.get('cpu_pct'))} %  "
                  f"{fmt(row.get('req_per_s'))} req/s  p99 {fmt(row.get('server_p99_ms'), 2)} ms (Locust {fmt(row.get('locust_p99_ms'), 0)})  "
                  f"streams {row['streams_open']}  sessions {row['sessions_live']}  errors {row['errors']}",
                  file=sys.stderr, flush=True)
            k += 1
        # The load ends by itself: Locust at -t, the streams opened last within HOLD[1] (+ their
        # last animation and the DELETE); sampled on while they wind down, not judged.
        opener.join(5)
        wind_down_until = stop + HOLD[1] + 30
        while any(t.is_alive() for t in stream_threads) and time.monotonic() < wind_down_until and sheetd.alive():
            time.sleep(max(0.0, start + k * INTERVAL - time.monotonic()))
            row = sampler.take("wind-down")
            print(f"soak: {row['t_s']:>5} s  wind-down: RSS {row['rss_mib']:.1f} MiB  fds {row['fds']}  "
                  f"streams {row['streams_open']}  sessions {row['sessions_live']}  errors {row['errors']}",
                  file=sys.stderr, flush=True)
            k += 1
        try:
            locust.wait(max(5.0, stop + 120 - time.monotonic()))
        except subprocess.TimeoutExpired:
            failures.append("Locust did not end within 120 s of its duration (stopped)")
            locust.terminate()
            locust.wait(10)
        for thread in stream_threads:
            thread.join(max(0.1, wind_down_until - time.monotonic()))
        if any(t.is_alive() for t in stream_threads):
            failures.append(f"{sum(t.is_alive() for t in stream_threads)} frame streams still running after the load")
        if sheetd.alive():
            with open(os.path.join(loadtest_out, "metrics-after.txt"), "w") as f:
                f.write(scrape(sheetd.port))
            # Descriptors back to the pre-load count once the clients are gone (an idle stream whose
            # client left is found at its next keep-alive, ≤ 15 s).
            settle_until = time.monotonic() + COOL_DOWN
            while time.monotonic() < settle_until:
                row = sampler.take("after", keep=False)
                if row["fds"] <= before["fds"] and row["streams_open"] == 0:
                    break
                time.sleep(1)
            sampler.take("after")
            if sampler.rows[-1]["fds"] > before["fds"]:
                left_open = describe_sockets(sheetd.pid)
    except KeyboardInterrupt:
        interrupted = True
        failures.append("interrupted")
    finally:
        if locust is not None and locust.poll() is None:
            locust.terminate()
            try:
                locust.wait(10)
            except subprocess.TimeoutExpired:
                locust.kill()
        alive = sheetd.alive()
        status = sheetd.stop(10)
        if redis:
            redis.stop()
        sampler.csv.close()
    if not alive:
        failures.append(f"sheetd had exited before the SIGTERM (status {status})")

    # The load test's own report: every response and SSE event it checked.
    report = subprocess.run([sys.executable, os.path.join(ROOT, "Benchmarks", "loadtest_report.py"),
                             loadtest_out, "0"], capture_output=True, text=True)
    with open(os.path.join(out, "loadtest-report.txt"), "w") as f:
        f.write(report.stdout + report.stderr)
    try:
        with open(os.path.join(loadtest_out, "result.json")) as f:
            load = json.load(f)
    except (OSError, ValueError):
        load = {"passed": 0, "failed": 1, "errors": {"report": "no result.json"}, "counts": {}}
    if locust is not None and locust.returncode not in (0, 1):
        failures.append(f"Locust exited {locust.returncode} (see {loadtest_out}/locust.log)")

    with open(os.path.join(out, "stream-errors.jsonl"), "w") as f:
        for e in tally.errors:
            f.write(json.dumps(e) + "\n")
    with open(os.path.join(out, "sheetd.log"), errors="replace") as f:
        logged = [line.rstrip() for line in f if " error " in line or " critical " in line]

    rows = sampler.rows
    judged = [r for r in rows if r["phase"] == "soak"]
    verdicts = []  # (passed, text)
    summary = [f"- sheetd {os.path.relpath(args.bin, ROOT)} ({args.store} store), pid {sheetd.pid}; "
               f"{args.users} Locust users (pace realtime) and {args.streams_per_second:g} frame streams/s held "
               f"{HOLD[0]:g}–{HOLD[1]:g} s, for {seconds / 60:g} min; a sample every {INTERVAL:g} s, warm-up "
               f"{args.warmup:g} s excluded; seed {seed}"]
    if len(judged) >= 6:
        rss = flatness(judged, "rss_mib", 1.0, 4.0, 0.05)
        fds = flatness(judged, "fds", 1.0, 10.0, 0.15)
        served_requests = sum(r.get("requests", 0) for r in judged) * 2 / 3  # between the thirds' centres
        leak_floor = rss["tolerance"] * MIB / served_requests if served_requests else math.nan
        judged_seconds = judged[-1]["t_s"] - judged[0]["t_s"] + INTERVAL
        streams_between = args.streams_per_second * judged_seconds * 2 / 3
        sessions = flatness(judged, "sessions_live", 1.0, 0.0, 0.0)
        a, b, c, d = rss["span"]
        summary += [
            f"- RSS: median {rss['first']:.2f} MiB in the first post-warm-up third ({a}–{b} s), {rss['last']:.2f} MiB in "
            f"the last ({c}–{d} s): moved {rss['moved']:+.2f} MiB ({100 * rss['relative']:+.1f} %), tolerance "
            f"±{rss['tolerance']:.2f} MiB; range {rss['min']:.2f}–{rss['max']:.2f} MiB; least-squares slope "
            f"{1024 * rss['slope']:+.1f} KiB/min (a leak of {leak_floor:.0f} B per request served, or of "
            f"{rss['tolerance'] * 1024 / streams_between:.1f} KiB per soak stream, would have exceeded the tolerance)",
            f"- descriptors: median {fds['first']:.0f} → {fds['last']:.0f} (moved {fds['moved']:+.0f}, "
            f"{100 * fds['relative']:+.1f} %), tolerance ±{fds['tolerance']:.0f}; range {fds['min']:.0f}–{fds['max']:.0f}; "
            f"slope {fds['slope']:+.2f}/min; {before['fds']} before the load, {rows[-1]['fds']} after it",
            f"- sessions live: median {sessions['first']:.0f} → {sessions['last']:.0f}, range "
            f"{sessions['min']:.0f}–{sessions['max']:.0f}; {rows[-1]['sessions_live']} after the load (Locust's users "
            f"stopped mid-life; the idle TTL evicts them)",
            f"- threads: {before['threads']} before, {min(r['threads'] for r in judged)}–{max(r['threads'] for r in judged)} "
            f"during, {rows[-1]['threads']} after",
        ]
        verdicts += [(rss["ok"], f"RSS flat after warm-up: {rss['moved']:+.2f} MiB ({100 * rss['relative']:+.1f} %) "
                                 f"within ±{rss['tolerance']:.2f} MiB"),
                     (fds["ok"], f"descriptors flat after warm-up: {fds['moved']:+.0f} ({100 * fds['relative']:+.1f} %) "
                                 f"within ±{fds['tolerance']:.0f}")]
        cpu = [r["cpu_pct"] for r in judged]
        p99 = [r["server_p99_ms"] for r in judged if r.get("server_p99_ms") is not None]
        lp99 = [r["locust_p99_ms"] for r in judged if r.get("locust_p99_ms") is not None]
        rps = [r["req_per_s"] for r in judged]
        summary += [f"- figures after warm-up (median, max): CPU {statistics.median(cpu):.1f} %, {max(cpu):.1f} % of one core; "
                    f"{statistics.median(rps):.0f} req/s; p99 sheetd {statistics.median(p99):.2f} ms, {max(p99):.2f} ms "
                    f"(from its histogram, interpolated in its buckets); p99 Locust "
                    + (f"{statistics.median(lp99):.0f} ms, {max(lp99):.0f} ms (client side, 10-s windows)" if lp99 else "–")]
    else:
        verdicts.append((False, f"only {len(judged)} samples after warm-up (at least 6 needed to judge)"))
    last = rows[-1] if rows else {}
    if last.get("phase") == "after":
        verdicts.append((last["fds"] <= before["fds"] and last["streams_open"] == 0,
                         f"after the load: descriptors {last['fds']} (before it: {before['fds']}), streams open "
                         f"{last['streams_open']}" + "".join(f"\n  - {x}" for x in left_open)))
    else:
        verdicts.append((False, "no sample after the load"))
    fivexx = int(sampler.fivexx)
    verdicts += [(fivexx == 0, f"5xx answered: {fivexx}"),
                 (not logged, f"sheetd log lines at error or critical: {len(logged)}"),
                 (status == 0, f"sheetd's exit status after SIGTERM: {status}")]
    verdicts += [(False, f) for f in failures]
    lc = load.get("counts", {})
    summary += [
        f"- load test: {load['passed']:,} responses and SSE events checked and passed, {load['failed']} failed "
        f"(sessions {lc.get('sessions', 0):,}, gestures {lc.get('gestures', 0):,}, its SSE streams "
        f"{lc.get('SSE streams', 0):,}); errors by kind: {json.dumps(load.get('errors', {}))}",
        f"- soak streams: {tally.opened:,} opened, {tally.passed:,} passed, {tally.failed} failed; "
        f"{tally.animations:,} animations, {tally.frames:,} frames ({tally.skipped} skipped by the pacer), "
        f"{tally.requests:,} requests",
        f"- sheetd's exit status after SIGTERM: {status}",
    ]
    own = os.times()
    generator = next((line for line in report.stdout.splitlines() if line.startswith("load generator")), "")
    summary.append(f"- load on this machine: this script (streams, sampler) {100 * (own.user + own.system) / max(1.0, seconds):.1f} % "
                   f"of one core; Locust's {generator or 'load generator: not reported'}")
    passed = load["passed"] + tally.passed + sum(ok for ok, _ in verdicts)
    failed = load["failed"] + tally.failed + sum(not ok for ok, _ in verdicts)
    summary = [s for s in summary if s]
    check_lines = [f"- {'ok' if ok else 'FAILED'}: {text}" for ok, text in verdicts]
    every = max(1, len(rows) // 40)
    md = ["# sheetd soak", "", *summary, "", "Verdicts:", "", *check_lines, "",
          f"Samples (every {every * INTERVAL:g} s shown; all in samples.md and samples.csv; the plot: soak.svg):", "",
          *samples_markdown(rows, every), "", ERRORS_NOTE, "",
          f"soak: {passed:,} passed, {failed} failed (checks: the load test's responses and SSE events, "
          "each soak stream, and the verdicts above)", ""]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out, "samples.md"), "w") as f:
        f.write("\n".join(["# sheetd soak: every sample", "", *samples_markdown(rows), "", ERRORS_NOTE, ""]))
    if rows:
        plot_svg(rows, args.warmup, seconds, os.path.join(out, "soak.svg"))
    print("\n".join(["", "== soak", *summary, "", *check_lines, "", *samples_markdown(rows, every), ""]))
    for e in tally.errors[:5]:
        print(f"  stream {e['session']}: {'; '.join(e['problems'])[:400]}")
    if logged:
        print("  sheetd logged:", *logged[:5], sep="\n    ")
    print(f"report: {out}/summary.md; samples: {out}/samples.md, samples.csv; plot: {out}/soak.svg; "
          f"load test: {out}/loadtest-report.txt")
    print(f"soak: {passed} passed, {failed} failed")
    return 1 if failed or interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
