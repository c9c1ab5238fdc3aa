"""Merges what Benchmarks/loadtest_locustfile.py's processes measured into the load test's report.

    python Benchmarks/loadtest_report.py OUT_DIR

Reads OUT_DIR/run.pkl (duration, users, sheetd's CPU and RSS) and OUT_DIR/part-*.pkl (one per
process with users: latencies, frame lateness, checks, errors); prints a compact table, writes
OUT_DIR/latest.md, OUT_DIR/errors.jsonl (every error sample, with the request that shows it) and
OUT_DIR/result.json; the last line printed is `loadtest: N passed, M failed` (N: HTTP responses and
SSE events checked). Exits 1 if anything failed or nothing was checked.
"""

import glob
import json
import math
import os
import pickle
import sys
from array import array
from collections import Counter, defaultdict

ORDER = ["PUT session", "POST show", "POST pan began", "POST pan changed", "POST pan ended", "POST pan cancelled",
         "POST dismiss", "POST simulate (gesture)", "POST simulate (session)", "GET session", "DELETE session",
         "GET deleted session", "GET frames (to head)"]
KINDS = ["status", "schema", "mismatch", "replay-diff", "contract", "sse", "transport", "client"]


def pct(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, math.ceil(p / 100 * len(sorted_values)) - 1))
    return sorted_values[k]


def ms(x):
    if x != x:
        return "-"
    return f"{x * 1000:.2f}" if abs(x) < 0.1 else f"{x * 1000:.1f}"


def read_metrics(path):
    """Prometheus text -> {(name, sorted label pairs): value}; {} when the file is missing."""
    out = {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        if not line or line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        name, _, labels = key.partition("{")
        pairs = tuple(sorted(tuple(kv.split("=", 1)) for kv in labels.rstrip("}").split(",") if "=" in kv))
        try:
            out[(name, tuple((k, v.strip('"')) for k, v in pairs))] = float(value)
        except ValueError:
            pass
    return out


def server_view(out):
    """sheetd's own counters over the run (the difference of /metrics after and before)."""
    before, after = read_metrics(os.path.join(out, "metrics-before.txt")), read_metrics(os.path.join(out, "metrics-after.txt"))
    if not after:
        return [], 0
    d = {k: v - before.get(k, 0.0) for k, v in after.items()}
    routes = []
    for (name, labels), count in sorted(d.items()):
        if name != "sheetd_request_duration_seconds_count" or count <= 0:
            continue
        route = dict(labels)["route"]
        if route == "/metrics":
            continue
        total = d.get(("sheetd_request_duration_seconds_sum", labels), 0.0)
        buckets = sorted((float(dict(lb)["le"]), v) for (n, lb), v in d.items()
                         if n == "sheetd_request_duration_seconds_bucket" and dict(lb).get("route") == route)
        p99 = next((le for le, v in buckets if v >= 0.99 * count), float("inf"))
        routes.append(f"{route} {int(count)}: mean {total / count * 1000:.3f} ms, p99 <= {p99 * 1000:g} ms")
    fivexx = sum(v for (n, lb), v in d.items() if n == "sheetd_requests_total" and dict(lb).get("status", "").startswith("5"))
    frames = ", ".join(f"{k} {int(d.get((f'sheetd_frames_{k}_total', ()), 0))}" for k in ("sent", "skipped", "dropped"))
    lines = ["sheetd's own view (/metrics, this run): time per request by route: " + "; ".join(routes),
             f"sheetd frames: {frames}; 5xx answered: {int(fivexx)}"]
    return lines, int(fivexx)


def main(out, extra_failures=0):
    with open(os.path.join(out, "run.pkl"), "rb") as f:
        run = pickle.load(f)
    parts = []
    for path in sorted(glob.glob(os.path.join(out, "part-*.pkl"))):
        with open(path, "rb") as f:
            parts.append(pickle.load(f))
    lat = defaultdict(lambda: array("d"))
    lateness, lag = array("d"), array("d")
    errors, counts = Counter(), Counter()
    samples = defaultdict(list)
    checked = failed = sse_checked = sse_failed = 0
    gen_cpu = 0.0 if run["local"] else run["master_cpu"]  # a lone process wrote its CPU in its part too
    for p in parts:
        for k, v in p["lat"].items():
            lat[k].extend(v)
        lateness.extend(p["lateness"])
        lag.extend(p["lag"])
        errors.update(p["errors"])
        counts.update(p["counts"])
        for k, v in p["samples"].items():
            samples[k].extend(v)
        checked += p["checked"]
        failed += p["failed"]
        sse_checked += p["sse_checked"]
        sse_failed += p["sse_failed"]
        gen_cpu += p["cpu"]
    dur = max(1e-9, run["t_stop"] - run["t_start"])
    if run.get("gone"):
        errors["transport"] += 1
        samples["transport"].append({"kind": "transport", "detail": "sheetd had no /proc entry at the end of the run"})
        failed += 1
    requests = sum(len(v) for k, v in lat.items() if not k.startswith("GET frames"))
    c = counts
    passed = checked - failed + sse_checked - sse_failed
    total_failed = failed + sse_failed + extra_failures + (1 if checked == 0 else 0)

    rows = []
    for name in ORDER + sorted(set(lat) - set(ORDER)):
        v = sorted(lat.get(name, ()))
        if v:
            rows.append((name, len(v), ms(pct(v, 50)), ms(pct(v, 95)), ms(pct(v, 99)), ms(v[-1])))
    late = sorted(lateness)
    late_row = ("frame lateness", len(late), ms(pct(late, 50)), ms(pct(late, 95)), ms(pct(late, 99)),
                ms(late[-1]) if late else "-")
    if run.get("pid") and "cpu1" in run:
        cpu = 100 * (run["cpu1"] - run["cpu0"]) / dur
        server = (f"sheetd (pid {run['pid']}): CPU {cpu:.0f}% of one core on average, peak {run.get('peak_cpu', 0):.0f}% "
                  f"(1 s); RSS {run['rss0'] / 1024:.1f} MiB at start, {run['rss1'] / 1024:.1f} MiB at end, "
                  f"peak {run['hwm'] / 1024:.1f} MiB")
    else:
        server = "sheetd CPU and RSS: not measured (a server this run did not start: --host)"
    lag_sorted = sorted(lag)
    pacing = f"pace {run['pace']}"
    if run["pace"] == "realtime" and lag_sorted:
        late = sum(1 for x in lag_sorted if x > 0.004)
        pacing += (f"; steps of the 60 Hz schedule reached over 4 ms late: {late} of {len(lag_sorted)} "
                   f"(max {ms(lag_sorted[-1])} ms)")
    head = [
        f"users {run['users']} (spawn {run['spawn_rate']:g}/s), {dur:.1f} s against {run['host']}",
        f"sessions {c['sessions']}, gestures {c['gestures']} ({c['gestures'] / dur:.1f}/s: {c['cancelled']} cancelled, "
        f"{c['grabs mid-animation']} grabs mid-animation, {c['velocity estimated']} with velocity estimated), "
        f"requests {requests} ({requests / dur:.0f}/s)",
        f"SSE: {c['SSE streams']} streams, {c['frames received']} frames ({c['frames skipped']} skipped by the pacer), "
        f"{c['SSE interrupted']} interrupted by a grab",
        server,
        f"load generator ({len(parts)} process{'es' if len(parts) != 1 else ''}): CPU {100 * gen_cpu / dur:.0f}% of one "
        f"core; {pacing}",
    ]
    head += [f"{k}: {v}" for k, v in sorted(c.items()) if k.startswith("replays skipped")]
    server_lines, fivexx = server_view(out)
    head += server_lines
    if fivexx and not errors.get("status"):
        # sheetd answered 5xx that no check saw (a request of this run that was cut short).
        errors["status"] += fivexx
        total_failed += fivexx
    errs = ", ".join(f"{k} {errors.get(k, 0)}" for k in KINDS)
    if extra_failures:
        errs += f", driver {extra_failures}"
    check_line = (f"checked {checked} responses ({failed} failed) and {sse_checked} SSE events "
                  f"({sse_failed} failed)")

    txt = ["", "== loadtest", *head, "",
           f"{'request':<25}{'count':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}"]
    txt += [f"{r[0]:<25}{r[1]:>8}{r[2]:>9}{r[3]:>9}{r[4]:>9}{r[5]:>9}" for r in rows + [late_row]]
    txt += ["", f"errors (target: zero): {errs}", check_line]
    for kind, ss in samples.items():
        for s in ss[:3]:
            txt.append(f"  {kind}: {s['detail'][:400]}")
            if s.get("request"):
                txt.append(f"    {s['request']} {(s.get('body') or '')[:300]}")
    md = ["# sheetd load test", "", *[f"- {h}" for h in head], "",
          "| request | count | p50 ms | p95 ms | p99 ms | max ms |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    md += [f"| {' | '.join(str(x) for x in r)} |" for r in rows + [late_row]]
    md += ["", "Frame lateness = arrival − (arrival of the response that started the animation + frame.t).", "",
           f"Errors (target: zero): {errs}.", "", f"{check_line[0].upper()}{check_line[1:]}: {passed} passed, "
           f"{total_failed} failed.", ""]
    with open(os.path.join(out, "latest.txt"), "w") as f:
        f.write("\n".join(txt) + "\n")
    with open(os.path.join(out, "latest.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out, "errors.jsonl"), "w") as f:
        for ss in samples.values():
            for s in ss:
                f.write(json.dumps(s) + "\n")
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump({"passed": passed, "failed": total_failed, "errors": dict(errors), "counts": dict(c),
                   "duration": dur}, f)
    print("\n".join(txt))
    print(f"report: {out}/latest.md" + (f"; errors with their requests: {out}/errors.jsonl" if samples else ""))
    print(f"loadtest: {passed} passed, {total_failed} failed")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0))
