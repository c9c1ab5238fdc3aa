#!/usr/bin/env python3
"""One run of scripts/bench (a runs.jsonl line on stdin): its summary line on stderr, and for a sheetd
run `SCENARIO CPU_US_PER_REQUEST` on stdout (scripts/bench keeps the cheapest of the rounds)."""
import json, sys
r = json.load(sys.stdin)
e = r["errors"]
line = "bench: round %d %-7s %-6s: %9s req/s  p50 %.2f p99 %.2f max %.1f ms  %.1f us/req  server %.0f%% wrk %.0f%% machine %.0f%%  %.0f B/reply" % (
    r["round"], r["scenario"], r["server"], format(round(r["rps"]), ","), r["p50_us"] / 1e3, r["p99_us"] / 1e3, r["max_us"] / 1e3,
    r["cpu_us_per_req"], r["server_cpu_pct"], r["wrk_cpu_pct"], r["machine_cpu_pct"], r["bytes_per_reply"])
if sum(e.values()):
    line += "  ERRORS " + json.dumps(e)
print(line, file=sys.stderr)
if r["server"] == "sheetd":
    print(r["scenario"], r["cpu_us_per_req"])
