#!/usr/bin/env python3
"""scripts/bench's report (markdown, on stdout) from its runs and the memory table.

    python3 Benchmarks/bench_report.py RUNS_JSONL MEMORY_TXT

The run's circumstances come from the environment scripts/bench sets: BENCH_MACHINE, BENCH_LOAD_BEFORE,
BENCH_LOAD_AFTER, BENCH_COMMAND_LINE, BENCH_CONNECTIONS, BENCH_DURATION, BENCH_THREADS, BENCH_ROUNDS.
"""
import os
import json, statistics, sys
command_line = os.environ["BENCH_COMMAND_LINE"]
connections = os.environ["BENCH_CONNECTIONS"]
duration = os.environ["BENCH_DURATION"]
load_after = os.environ["BENCH_LOAD_AFTER"]
load_before = os.environ["BENCH_LOAD_BEFORE"]
machine = os.environ["BENCH_MACHINE"]
rounds = os.environ["BENCH_ROUNDS"]
threads = os.environ["BENCH_THREADS"]
runs = [json.loads(l) for l in open(sys.argv[1])]
memory = [l.rstrip("\n") for l in open(sys.argv[2]) if l.startswith("|")]
med = statistics.median
names = {
    "changed": "`pan changed`, round-robin over 10,000 dragging facebook sessions (`Benchmarks/lua/pan-changed.lua`)",
    "get": "`GET /sessions/{id}`, round-robin over 10,000 resting facebook sessions (`Benchmarks/lua/get-session.lua`)",
    "mix": "gesture mix: `began` to each of 10,000 facebook sessions, then `changed` to each, then `ended` to each, again; a third of the requests are `ended` (`Benchmarks/lua/pan-ended.lua`, MODE=mix)",
    "ended": "pure `ended` (release, snap, animation), one per pre-dragged facebook session (`Benchmarks/lua/pan-ended.lua`, MODE=ended)",
}
targets = {"changed": 0.9, "ended": 0.85, "mix": 0.85}
p = print
p("## The HTTP path against the engine's limit (`scripts/bench`)")
p()
p(f"Machine: {machine}. Load average before / after: {load_before} / {load_after} (other tenants built and")
p(f"benchmarked at the same time). Reproduce: `{command_line}`.")
p()
p(f"Each run: a fresh server, `wrk -t1 -c{connections} -d{duration}s --latency` over keep-alive connections,")
p("the same Lua script for both servers. The C server (`Benchmarks/bench-baseline.c`) is libmicrohttpd with")
p(f"sheetd's flags and threads ({threads}), the body read and dropped, a fixed JSON reply of the size of sheetd's")
p("reply for the scenario (measured with curl); it is the engine's limit here. The C server and sheetd")
p(f"alternate (\"first\": which ran first in the round), {rounds} round(s); ratios are per round, then their")
p("median. CPU µs/req: utime + stime of the server process over the run / requests; CPU %: of one")
p("core, over the run (\"others\": the rest of the machine's 2 cores' busy time, other tenants). Server and")
p("wrk share the cores: when the C server runs, wrk's core is usually the limit (wrk ≈ 100 %).")
p("Latencies in ms.")
summary = []
for s in ["changed", "get", "mix", "ended"]:
    rs = sorted({r["round"] for r in runs if r["scenario"] == s})
    if not rs:
        continue
    by = {(r["round"], r["server"]): r for r in runs if r["scenario"] == s}
    p()
    p(f"### {s}: {names[s]}")
    p()
    body = by[(rs[0], "c")]["reply_body"]
    extra = ""
    if s == "ended":
        counts = ", ".join(format(by[(r, "sheetd")]["sessions"], ",") for r in rs)
        extra = "; sessions per sheetd run: " + counts
    p(f"Reply body {body} B for the C server (bytes per reply as wrk counted them, headers included: C "
      f"{med(by[(r, 'c')]['bytes_per_reply'] for r in rs):.0f}, sheetd {med(by[(r, 'sheetd')]['bytes_per_reply'] for r in rs):.0f}){extra}.")
    p()
    p("| round | first | C req/s | sheetd req/s | ratio | p50 C / sheetd | p99 C / sheetd | p99 ratio | max C / sheetd | CPU µs/req C / sheetd | CPU % in the C run: server · wrk · others | CPU % in the sheetd run: server · wrk · others | non-2xx |")
    p("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    ratios, p99r = [], []
    def cpus(x):
        others = max(0.0, x["machine_cpu_pct"] - x["server_cpu_pct"] - x["wrk_cpu_pct"])
        return f"{x['server_cpu_pct']:.0f} · {x['wrk_cpu_pct']:.0f} · {others:.0f}"
    for r in rs:
        c, w = by[(r, "c")], by[(r, "sheetd")]
        ratio = w["rps"] / c["rps"]
        pr = w["p99_us"] / c["p99_us"]
        ratios.append(ratio); p99r.append(pr)
        errs = sum(w["errors"].values()) + sum(c["errors"].values())
        first = "C" if r % 2 else "sheetd"
        p(f"| {r} | {first} | {c['rps']:,.0f} | {w['rps']:,.0f} | {ratio:.2f} | {c['p50_us']/1e3:.2f} / {w['p50_us']/1e3:.2f} | "
          f"{c['p99_us']/1e3:.2f} / {w['p99_us']/1e3:.2f} | {pr:.2f} | {c['max_us']/1e3:.1f} / {w['max_us']/1e3:.1f} | "
          f"{c['cpu_us_per_req']:.1f} / {w['cpu_us_per_req']:.1f} | {cpus(c)} | {cpus(w)} | {errs} |")
    def m(server, key):
        return med(by[(r, server)][key] for r in rs)
    p(f"| **median** | | **{m('c','rps'):,.0f}** | **{m('sheetd','rps'):,.0f}** | **{med(ratios):.2f}** | "
      f"{m('c','p50_us')/1e3:.2f} / {m('sheetd','p50_us')/1e3:.2f} | {m('c','p99_us')/1e3:.2f} / {m('sheetd','p99_us')/1e3:.2f} | "
      f"**{med(p99r):.2f}** | {m('c','max_us')/1e3:.1f} / {m('sheetd','max_us')/1e3:.1f} | "
      f"**{m('c','cpu_us_per_req'):.1f} / {m('sheetd','cpu_us_per_req'):.1f}** | | | |")
    summary.append((s, med(ratios), min(ratios), max(ratios), med(p99r), m('c', 'cpu_us_per_req'), m('sheetd', 'cpu_us_per_req')))
p()
p("### Against the targets")
p()
p("| scenario | sheetd / C req/s, median of the rounds (min–max) | target | p99 sheetd / C, median | target | CPU µs/req C → sheetd (medians) | C / sheetd CPU per request |")
p("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for s, mr, lo, hi, pr, cc, cw in summary:
    t = targets.get(s)
    tt = f"≥ {t:.2f} {'✓' if mr >= t else '✗'}" if t else "–"
    p(f"| {s} | {mr:.2f} ({lo:.2f}–{hi:.2f}) | {tt} | {pr:.2f} | ≤ 1.20 {'✓' if pr <= 1.2 else '✗'} | {cc:.1f} → {cw:.1f} | {cc / cw:.2f} |")
p()
p("The last column is the ratio sheetd would reach if both servers were bound by their own CPU;")
p("it is the steadier figure when other tenants take the cores (see the \"others\" CPU columns).")
p()
p("### Memory of sessions")
p()
p("A fresh release sheetd (`--max-sessions 1100000`); sessions created with `PUT /sessions/s{i}`")
p('`{"preset":"fluid","initialDetent":"half"}` over 4 keep-alive pipelined connections')
p("(`Benchmarks/bench-memory.py`), RSS (VmRSS) 1 s after each step, the count checked with")
p("`sheetd_sessions_live`. Target: ≤ 1 KiB (1,024 B) per idle session.")
p()
for l in memory:
    p(l)
