#!/usr/bin/env python3
"""The slow-clients driver (run by IntegrationTests/slow-clients under testkit/sheetkit/harness.py, which
started sheetd: SHEETD_URL, SHEETD_PID): the phases, slowhttptest's attacks, the probe from 127.0.0.2
and the sampler of held connections; writes SLOW_OUT/result.json, latest.md and counts.txt."""
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time

OUT = os.environ["SLOW_OUT"]
PORT = int(os.environ["SHEETD_URL"].rstrip("/").rsplit(":", 1)[1])
LONG = os.environ["SLOW_LONG"] == "1"
PER_IP = int(os.environ["SLOW_PER_IP"])
CONN_LIMIT = int(os.environ["SLOW_CONN_LIMIT"])
ATTACKER, PROBE = "127.0.0.1", "127.0.0.2"
BASE = f"http://{ATTACKER}:{PORT}"

# The probe's address must reach sheetd (Linux routes all of 127/8 to lo).
try:
    reach = http.client.HTTPConnection(ATTACKER, PORT, timeout=2, source_address=(PROBE, 0))
    reach.request("GET", "/healthz")
    assert reach.getresponse().status == 200
    reach.close()
except (OSError, AssertionError):
    raise SystemExit("slow-clients: cannot reach sheetd from 127.0.0.2 (is 127.0.0.0/8 routed to lo?)")
print(f"slow-clients: sheetd pid {os.environ['SHEETD_PID']} on 127.0.0.1:{PORT}: {os.environ['SLOW_FLAGS']}",
      file=sys.stderr)

ATTACK_SECONDS = 120 if LONG else 20
PAUSE_SECONDS = 20 if LONG else 5
RATE = 50 if LONG else 40                       # new attacker connections per second
CONNECTIONS = RATE * ATTACK_SECONDS             # slowhttptest -c: keeps opening for the whole attack
ATTACKS = [
    # name, slowhttptest mode and target
    ("slowloris (-H)", ["-H", "-u", f"{BASE}/healthz"]),
    ("slow body (-B)", ["-B", "-t", "POST", "-s", "8192", "-u", f"{BASE}/sessions"]),
]

t0 = time.monotonic()
now = lambda: time.monotonic() - t0
phase = {"name": "baseline"}
stop = threading.Event()
probe_records = []      # (t, phase, operation, seconds or None, error or None)
samples = []            # (t, phase, established peers {host:port}, accept queue)
lock = threading.Lock()


def probe_once(n):
    """One front end's visit on a fresh connection from 127.0.0.2; records each request."""
    conn = None
    try:
        # The timeout only bounds a request that is never served: a busy machine's latency is
        # reported (the phases' table), not judged.
        conn = http.client.HTTPConnection(ATTACKER, PORT, timeout=30, source_address=(PROBE, 0))
        sid = f"probe-{n}"
        steps = [
            ("GET /healthz", "GET", "/healthz", None, 200),
            ("PUT session", "PUT", f"/sessions/{sid}", {"initialDetent": "normal"}, 201),
            ("pan began", "POST", f"/sessions/{sid}/pan", {"phase": "began"}, 200),
            ("pan changed", "POST", f"/sessions/{sid}/pan", {"phase": "changed", "translation": -120}, 200),
            ("pan ended", "POST", f"/sessions/{sid}/pan", {"phase": "ended", "velocity": -800}, 200),
            ("DELETE session", "DELETE", f"/sessions/{sid}", None, 204),
        ]
        for label, method, path, body, want in steps:
            name = phase["name"]
            started = time.monotonic()
            try:
                payload = json.dumps(body).encode() if body is not None else None
                headers = {"Content-Type": "application/json"} if payload is not None else {}
                conn.request(method, path, body=payload, headers=headers)
                response = conn.getresponse()
                data = response.read()
                elapsed = time.monotonic() - started
                error = None
                if response.status != want:
                    error = f"{label}: status {response.status}, wanted {want}: {data[:200]!r}"
                elif want != 204:
                    json.loads(data)
            except Exception as exc:  # noqa: BLE001 - every failure of the probe counts
                elapsed, error = None, f"{label}: {type(exc).__name__}: {exc}"
            with lock:
                probe_records.append((now(), name, label, elapsed, error))
            if error:
                return
    except Exception as exc:  # noqa: BLE001
        with lock:
            probe_records.append((now(), phase["name"], "connect", None, f"connect: {type(exc).__name__}: {exc}"))
    finally:
        if conn is not None:
            conn.close()


def prober():
    n = 0
    while not stop.is_set():
        started = time.monotonic()
        probe_once(n)
        n += 1
        stop.wait(max(0.0, 0.2 - (time.monotonic() - started)))


def sample():
    """Server-side view, one ss snapshot: sheetd's established sockets by peer, and its accept queue."""
    lines = subprocess.run(["ss", "-Htan", f"( sport = :{PORT} )"], capture_output=True, text=True).stdout.splitlines()
    peers, queue = set(), 0
    for line in lines:
        fields = line.split()     # State Recv-Q Send-Q Local Peer
        if len(fields) < 5:
            continue
        if fields[0] == "LISTEN":
            queue = int(fields[1]) if fields[1].isdigit() else 0
        elif fields[0] == "ESTAB":
            peers.add(fields[4])
    return peers, queue


def sampler():
    while not stop.is_set():
        peers, queue = sample()
        with lock:
            samples.append((now(), phase["name"], peers, queue))
        stop.wait(0.5)


def metrics():
    try:
        conn = http.client.HTTPConnection(ATTACKER, PORT, timeout=5, source_address=(PROBE, 0))
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
    except Exception:  # noqa: BLE001
        return {}
    values = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        key, _, value = line.rpartition(" ")
        try:
            values[key] = float(value)
        except ValueError:
            pass
    return values


def counters(before, after, pattern):
    return int(sum(after.get(k, 0) - before.get(k, 0) for k in after if pattern(k)))


threads = [threading.Thread(target=prober, daemon=True), threading.Thread(target=sampler, daemon=True)]
for t in threads:
    t.start()

timeline = []
time.sleep(PAUSE_SECONDS)
timeline.append(("baseline", 0.0, now()))
attacks = []
for name, mode in ATTACKS:
    prefix = os.path.join(OUT, "slowloris" if "-H" in mode else "slowbody")
    args = ["slowhttptest", *mode, "-c", str(CONNECTIONS), "-r", str(RATE), "-i", "2", "-l", str(ATTACK_SECONDS),
            "-p", "3", "-g", "-o", prefix]
    before = metrics()
    phase["name"] = name
    start = now()
    with open(prefix + ".log", "w") as log:
        attacker = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        try:
            status = attacker.wait(timeout=ATTACK_SECONDS + 60)
        except subprocess.TimeoutExpired:
            status = "timed out"
        finally:
            # Stopped by its PID whatever happened (it also stops by itself after -l seconds).
            if attacker.poll() is None:
                attacker.terminate()
                attacker.wait()
    end = now()
    phase["name"] = f"after {name}"
    time.sleep(PAUSE_SECONDS)
    after = metrics()
    timeline.append((name, start, end))
    timeline.append((f"after {name}", end, now()))
    stats = []
    try:
        with open(prefix + ".csv") as f:
            next(f)
            for line in f:
                parts = line.strip().split(",")
                if len(parts) >= 5 and parts[0].isdigit():
                    stats.append([int(p) for p in parts[:5]])
    except (OSError, ValueError):
        pass
    attacks.append({
        "name": name, "command": " ".join(args), "status": status, "start": start, "end": end,
        "slowhttptest": stats,   # seconds, closed, pending, connected, service available (its own probe)
        "cut_off": counters(before, after, lambda k: k.startswith("sheetd_requests_cut_off_total")),
        "timeouts_408": counters(before, after, lambda k: k.startswith("sheetd_requests_total") and 'status="408"' in k),
    })

stop.set()
for t in threads:
    t.join(timeout=10)


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def ms(x):
    return "–" if x is None else f"{x * 1000:.1f}"


phases = [t[0] for t in timeline]
rows, checks, failures_text = [], [], []
for name in phases:
    recs = [r for r in probe_records if r[1] == name]
    lat = [r[3] for r in recs if r[3] is not None]
    bad = [r for r in recs if r[4]]
    rows.append((name, len(recs), len(bad), percentile(lat, 0.5), percentile(lat, 0.99), max(lat) if lat else None))
    ok = len(recs) > 0 and not bad
    checks.append((f"probe served, {name}", ok, f"{len(recs)} requests, {len(bad)} failed"))
    failures_text += [f"{name}: {r[4]}" for r in bad[:5]]

# Held connections: a connection holds a slot when it is established in two samples in a row (0.5 s
# apart); one refused by a limit is accepted and closed within the same instant and never does. Per
# attack: the most the attacker's address held, the most everybody held, and how long each lasted.
for a in attacks:
    window = [s for s in samples if a["start"] - 0.5 <= s[0] <= a["end"] + 1]
    series, since, lifetimes = [], {}, []
    for prev, cur in zip(window, window[1:]):
        held = cur[2] & prev[2]
        mine = {p for p in held if p.rpartition(":")[0] == ATTACKER}
        # Connections still in the accept queue are not sheetd's yet: counted against the attacker.
        queued = min(cur[3], len(mine))
        series.append((round(cur[0] - a["start"], 1), len(mine) - queued, len(held) - len(mine), cur[3]))
        # How long each connection stayed, sample to sample (a peer port reused later is a new one).
        for p in list(since):
            if p not in mine:
                lifetimes.append(prev[0] - since.pop(p))
        for p in mine:
            since.setdefault(p, prev[0])
    lifetimes += [window[-1][0] - t for t in since.values()] if window else []
    a["max_held"] = max((s[1] for s in series), default=0)
    a["max_total"] = max((s[1] + s[2] for s in series), default=0)
    a["longest_hold"] = max(lifetimes, default=0.0)
    a["median_hold"] = statistics.median(lifetimes) if lifetimes else 0.0
    a["distinct_held"] = len(lifetimes)
    a["series"] = series
    a["max_connected_client_view"] = max((row[3] for row in a["slowhttptest"]), default=0)
    checks.append((f"attacker held at most --per-ip-limit {PER_IP}, {a['name']}", a["max_held"] <= PER_IP,
                   f"max {a['max_held']}"))
    checks.append((f"at most --connection-limit {CONN_LIMIT} in all, {a['name']}", a["max_total"] <= CONN_LIMIT,
                   f"max {a['max_total']}"))
    checks.append((f"slowhttptest ran, {a['name']}", bool(a["slowhttptest"]) and a["max_held"] > 0,
                   f"exit {a['status']}, {len(a['slowhttptest'])} seconds of statistics"))

alive = True
try:
    os.kill(int(os.environ["SHEETD_PID"]), 0)
except OSError:
    alive = False
checks.append(("sheetd alive after the attacks", alive, "" if alive else "it died"))

deadline = os.environ["SLOW_DEADLINE"]
lines = [
    "## Slow clients" + (" (long)" if LONG else ""),
    "",
    f"sheetd `{os.path.basename(os.environ['SLOW_BIN'])}` ({os.environ['SLOW_BIN']}) with "
    f"`{os.environ['SLOW_FLAGS']}`; attacker 127.0.0.1 (slowhttptest, {RATE} new connections/s for "
    f"{ATTACK_SECONDS} s, a follow-up every 2 s), probe 127.0.0.2 (a new connection 5×/s: GET /healthz, PUT, "
    f"pan began/changed/ended, DELETE; 5 s timeout). Latencies in ms.",
    "",
    "| phase | probe requests | failed | p50 | p99 | max |",
    "|---|---:|---:|---:|---:|---:|",
]
lines += [f"| {n} | {c} | {b} | {ms(p50)} | {ms(p99)} | {ms(mx)} |" for n, c, b, p50, p99, mx in rows]
lines += [
    "",
    "| attack | connections opened | max held by attacker (server) | max established, all clients | "
    "held connections | hold median / longest (s) | slowhttptest max connected | cut off at deadline | 408 |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
]
for a in attacks:
    closed = max((row[1] for row in a["slowhttptest"]), default=0)
    lines.append(f"| {a['name']} | {closed + a['max_connected_client_view']} | {a['max_held']} (limit {PER_IP}) | "
                 f"{a['max_total']} (limit {CONN_LIMIT}) | {a['distinct_held']} | {a['median_hold']:.1f} / {a['longest_hold']:.1f} | "
                 f"{a['max_connected_client_view']} | "
                 f"{a['cut_off']} | {a['timeouts_408']} |")
step = 10 if LONG else 2
for a in attacks:
    lines += ["", f"Held connections over time, {a['name']} (slowhttptest's statistics and the server side):", "",
              "| s | slowhttptest connected | pending | closed | held by attacker (server) | others (server) |",
              "|---:|---:|---:|---:|---:|---:|"]
    series = a["series"]
    for row in a["slowhttptest"]:
        if row[0] % step:
            continue
        near = [s for s in series if abs(s[0] - row[0]) <= 0.5]
        held = max((s[1] for s in near), default="–")
        others = max((s[2] for s in near), default="–")
        lines.append(f"| {row[0]} | {row[3]} | {row[2]} | {row[1]} | {held} | {others} |")
if deadline and any(a["longest_hold"] > float(deadline) + 2 for a in attacks):
    slow = [a["name"] for a in attacks if a["longest_hold"] > float(deadline) + 2]
    lines += ["", f"Note: {', '.join(slow)} held connections longer than --body-deadline {deadline} s "
              "(a request head that never completes is not cut off by the deadline; the per-IP limit bounds it)."]
lines += ["", "| check | result | detail |", "|---|---|---|"]
lines += [f"| {name} | {'pass' if ok else '**FAIL**'} | {detail} |" for name, ok, detail in checks]
if failures_text:
    lines += ["", "Probe failures (first of each phase):", ""] + [f"- {t}" for t in failures_text]
report = "\n".join(lines) + "\n"
with open(os.path.join(OUT, "latest.md"), "w") as f:
    f.write(report)
with open(os.path.join(OUT, "result.json"), "w") as f:
    json.dump({"checks": checks, "phases": rows, "attacks": attacks, "timeline": timeline,
               "probe": probe_records}, f, indent=1, default=str)
print(report)
passed = sum(1 for c in checks if c[1])
failed = len(checks) - passed
with open(os.path.join(OUT, "counts.txt"), "w") as f:
    f.write(f"{passed} {failed}\n")
