"""Session flood: the cap and the idle TTL hold while clients create sessions as fast as they can.

Started by IntegrationTests/flood-test with a sheetd at --max-sessions CAP --session-ttl TTL. Eight threads,
each on its own keep-alive connection, POST /sessions without pause until sheetd has refused creations
for a second (at most FLOOD_DEADLINE seconds: how fast the machine creates them decides how long that
takes, not the verdict; the TTL, 20 s, leaves the cap within reach of 400 creations a second). Checks:
creations past the cap are 503 session-limit with Retry-After, the live count never passes the cap
(sampled from /metrics during the flood), nothing else but 201/503 is answered, RSS per live
session stays under 1 KiB above the idle RSS, and once the flood stops every session is evicted
within 1.25 TTL + the sweep (the sweeper runs at a quarter of the TTL). Prints a table (also to
.build/flood-test/latest.md) and `flood-test: N passed, M failed`.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import sys
import threading
import time

PORT = int(sys.argv[1])
PID = int(sys.argv[2])
CAP = int(os.environ.get("FLOOD_CAP", "8000"))
TTL = float(os.environ.get("FLOOD_TTL", "20"))
FLOOD_DEADLINE = float(os.environ.get("FLOOD_DEADLINE", "60"))
THREADS = 8
BODIES = [
    b'{"preset": "facebook"}',
    b'{"preset": "twitter", "initialDetent": "open"}',
    b'{"preset": "fluid", "clock": "client"}',
    b'{"preset": "glide", "geometry": {"height": 667, "safeAreaTop": 20, "safeAreaBottom": 0}}',
]

passed = failed = 0
rows: list[tuple[str, str]] = []


def check(ok: bool, what: str) -> None:
    global passed, failed
    passed, failed = passed + ok, failed + (not ok)
    print(("ok   " if ok else "FAIL ") + what)


def rss_kib() -> int:
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def live() -> int:
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    m = re.search(r"^sheetd_sessions_live (\d+)", text, re.M)
    return int(m.group(1)) if m else -1


statuses: dict[int, int] = {}
bad_503 = 0
lock = threading.Lock()
stop = threading.Event()
refusing = threading.Event()  # sheetd has refused a creation: the cap is reached


def flood(n: int) -> None:
    global bad_503
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    local: dict[int, int] = {}
    i = n
    while not stop.is_set():
        body = BODIES[i % len(BODIES)]
        i += 1
        c.request("POST", "/sessions", body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        local[r.status] = local.get(r.status, 0) + 1
        if r.status == 503:
            refusing.set()
            problem = json.loads(data)
            if problem.get("code") != "session-limit" or not r.getheader("Retry-After"):
                with lock:
                    bad_503 += 1
    c.close()
    with lock:
        for k, v in local.items():
            statuses[k] = statuses.get(k, 0) + v


def main() -> int:
    idle = rss_kib()
    threads = [threading.Thread(target=flood, args=(n,)) for n in range(THREADS)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    peak_live = 0
    refused_at = None
    while time.monotonic() - t0 < FLOOD_DEADLINE and (refused_at is None or time.monotonic() - refused_at < 1):
        peak_live = max(peak_live, live())
        if refused_at is None and refusing.is_set():
            refused_at = time.monotonic()
        time.sleep(0.1)
    full_rss = rss_kib()
    at_stop = live()
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    total = sum(statuses.values())
    created = statuses.get(201, 0)
    # Eviction: every session idle from the flood's end is gone, a sweep after 1.25 TTL; the
    # deadline (that plus 30 s) only bounds a failing run, the time it took is a figure.
    t_stop = time.monotonic()
    bound = 1.25 * TTL + min(max(TTL / 4, 0.05), 5)
    while time.monotonic() - t_stop < bound + 30 and live() > 0:
        time.sleep(0.1)
    evicted_after = time.monotonic() - t_stop
    left = live()
    # RSS follows the peak (freed sessions stay in malloc's arenas for reuse), so per peak session.
    per_session = (full_rss - idle) * 1024 / max(peak_live, 1)

    rows.extend([
        ("cap / idle TTL", f"{CAP:,} / {TTL:g} s"),
        ("requests in the flood", f"{total:,} in {elapsed:.1f} s ({total / elapsed:,.0f}/s, {THREADS} connections)"),
        ("answers", ", ".join(f"{k}: {v:,}" for k, v in sorted(statuses.items()))),
        ("live sessions: peak sampled / at the end of the flood", f"{peak_live:,} / {at_stop:,}"),
        ("RSS idle → full", f"{idle / 1024:.1f} → {full_rss / 1024:.1f} MiB ({per_session:.0f} B per session at the peak)"),
        ("all evicted after the flood", f"{evicted_after:.2f} s (the sweeper's bound {bound:.2f} s), {left} left"),
    ])
    check(created >= CAP and statuses.get(503, 0) > 0,
          f"the flood reached the cap ({created:,} created, {statuses.get(503, 0):,} refused, cap {CAP:,})")
    check(set(statuses) <= {201, 503}, f"only 201 and 503 answered: {sorted(statuses)}")
    check(bad_503 == 0, f"every 503 is session-limit with Retry-After ({bad_503} not)")
    check(0 < peak_live <= CAP and at_stop <= CAP, f"the live count never passed the cap (peak {peak_live:,})")
    check(per_session < 1024, f"under 1 KiB of RSS per session at the peak ({per_session:.0f} B)")
    check(left == 0, f"every session evicted after the flood's end ({evicted_after:.2f} s; the sweeper's bound "
                     f"{bound:.2f} s)")

    os.makedirs(".build/flood-test", exist_ok=True)
    with open(".build/flood-test/latest.md", "w") as f:
        f.write("| figure | value |\n|---|---|\n")
        for k, v in rows:
            f.write(f"| {k} | {v} |\n")
    for k, v in rows:
        print(f"  {k}: {v}")
    print(f"flood-test: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
