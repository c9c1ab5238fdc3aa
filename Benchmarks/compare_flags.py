#!/usr/bin/env python3
"""One release sheetd run with different flags, in turn, in the same minutes (see Benchmarks/compare-flags).

  compare_flags.py --binary B [--scenario changed|get] [--rounds N] [--seconds S] [--pin] VARIANT...

Each VARIANT is a string of extra flags ("" for none; "--access-log", "--threads 2", ...). Per run:
a fresh server on 127.0.0.1 port 0 (its log, access lines included, goes to a file, as a
container's would go to a pipe), 10,000 sessions made by Benchmarks/bench-memory.py, then
`wrk -t1 -c64 -dS --latency` with the bench's Lua script; requests/s, p99, and the server's CPU
per request (utime + stime from /proc/PID/stat), and a fresh Redis's and wrk's (its rusage). The
variants rotate which runs first each round. Prints per variant the median req/s, p99 and CPU, the
median of the per-round ratios to the first variant, and the CPU-bound ceiling (the first
variant's CPU of all three per request over this one's: the most its ratio can be when they share
the cores), as markdown. Non-2xx answers fail the comparison.

`put` is PUT replacements round-robin over the sessions (each waits for its store write when there
is a store). A variant's `--store fresh` is a fresh redis-server of its own for each run (no
persistence, stopped after the run), so `compare-flags --scenario put "" "--store fresh"` measures
what the store's wait costs a PUT, in one binary and one run.

--pin runs the server on the last CPU and wrk on the others (taskset): on a 2-core machine the
server then has a core of its own, so its throughput measures its own cost rather than how the
scheduler shares two cores between it and the load generator.
"""
import argparse
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile

from sheetkit.harness import RedisServer, Sheetd  # noqa: E402  (starts and stops sheetd, as the checks do)

SCENARIOS = {
    # Lua script, pan phases each session is left in (Benchmarks/bench-memory.py --then).
    "changed": ("Benchmarks/lua/pan-changed.lua", "began"),
    "get": ("Benchmarks/lua/get-session.lua", ""),
    "put": ("Benchmarks/lua/put-session.lua", ""),
}
SESSIONS = 10_000


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


def milliseconds(text):
    number = float(re.match(r"[0-9.]+", text).group())
    return number / 1000 if text.endswith("us") else number if text.endswith("ms") else number * 1000


def run(binary, flags, scenario, seconds, scratch, pin=False):
    lua, then = SCENARIOS[scenario]
    cpus = sorted(os.sched_getaffinity(0))
    server_cpus, client_cpus = ([str(cpus[-1])], [",".join(map(str, cpus[:-1]))]) if pin and len(cpus) > 1 else ([], [])
    log_path = os.path.join(scratch, "server.log")
    open(log_path, "wb").close()
    words = shlex.split(flags)
    redis = None
    if "--store" in words and words[words.index("--store") + 1] == "fresh":
        redis = RedisServer().start()
        words[words.index("--store") + 1] = redis.url
    server = Sheetd(binary, ["--log-level", "info", "--max-sessions", "2000000", "--session-ttl", "3600"]
                    + words, log=log_path, prefix=["taskset", "-c"] + server_cpus if server_cpus else [])
    try:
        try:
            port = str(server.start().port)
        except RuntimeError as error:
            sys.exit(f"compare-flags: the server with {flags!r} did not start: {error}")
        populate = ["python3", "Benchmarks/bench-memory.py", "populate", "--port", port, "--count", str(SESSIONS),
                    "--preset", "facebook", "--detent", "normal"] + (["--then", then] if then else [])
        subprocess.run(populate, check=True, stdout=subprocess.DEVNULL)
        before = cpu_ticks(server.pid)
        redis_before = cpu_ticks(redis.pid) if redis is not None else 0
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            (["taskset", "-c"] + client_cpus if client_cpus else []) + ["wrk", "-t1", "-c64", f"-d{seconds}s", "--latency", "-s", lua, f"http://127.0.0.1:{port}"],
            check=True, capture_output=True, text=True,
            env=dict(os.environ, SESSIONS=str(SESSIONS), MODE="mix")).stdout
        after = cpu_ticks(server.pid)
        redis_after = cpu_ticks(redis.pid) if redis is not None else 0
        children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wrk_seconds = (children_after.ru_utime - children.ru_utime) + (children_after.ru_stime - children.ru_stime)
    finally:
        server.stop()
        if redis is not None:
            redis.stop()
    log_bytes = os.path.getsize(log_path)
    os.remove(log_path)
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    p99 = milliseconds(re.search(r"^\s*99%\s+(\S+)", out, re.M).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    ticks = os.sysconf("SC_CLK_TCK")
    return {"rps": requests / seconds, "p99": p99, "cpu_us": (after - before) * 1e6 / ticks / requests,
            "redis_us": (redis_after - redis_before) * 1e6 / ticks / requests, "wrk_us": wrk_seconds * 1e6 / requests,
            "bad": int(bad.group(1)) if bad else 0, "log_bytes": log_bytes}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--scenario", default="changed", choices=sorted(SCENARIOS))
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--pin", action="store_true")
    # The variants are flags themselves ("--access-log"): everything after the options, in order.
    argv = sys.argv[1:]
    options = []
    while argv and argv[0] in ("--binary", "--scenario", "--rounds", "--seconds", "--pin"):
        take = 1 if argv[0] == "--pin" else 2
        options += argv[:take]
        argv = argv[take:]
    args = p.parse_args(options)
    args.variants = argv
    if not args.variants:
        p.error("give at least one set of flags")
    runs = {v: [] for v in args.variants}
    with tempfile.TemporaryDirectory(prefix="compare-flags.") as scratch:
        for r in range(args.rounds):
            # Rotate the order: each variant runs first as often as the others.
            order = args.variants[r % len(args.variants):] + args.variants[:r % len(args.variants)]
            for v in order:
                result = run(args.binary, v, args.scenario, args.seconds, scratch, args.pin)
                runs[v].append(result)
                print(f"compare-flags: round {r + 1} [{v or 'no flags'}]: {result['rps']:,.0f} req/s, "
                      f"p99 {result['p99']:.2f} ms, {result['cpu_us']:.2f} µs/req, "
                      f"log {result['log_bytes'] / max(result['rps'] * args.seconds, 1):.0f} B/req, "
                      f"non-2xx {result['bad']}", file=sys.stderr)
    base = args.variants[0]
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    pinned = ", server and wrk pinned to separate cores" if args.pin else ""
    print(f"`{args.scenario}`, {args.rounds} rounds × {args.seconds} s, wrk -t1 -c64, {os.cpu_count()} cores{pinned}, "
          f"load average after: {load} (`Benchmarks/compare-flags --scenario {args.scenario} --rounds {args.rounds} "
          f"--seconds {args.seconds}{' --pin' if args.pin else ''} " + " ".join(shlex.quote(v) for v in args.variants) + "`)")
    print()
    # Every process the requests cost (the server, a fresh Redis, wrk), per request: on a machine
    # whose cores they share, the throughput of a variant can be at most the base's times the
    # inverse ratio of these (`CPU-bound ceiling`).
    def all_us(x):
        return x["cpu_us"] + x["redis_us"] + x["wrk_us"]

    base_all = statistics.median(all_us(x) for x in runs[base])
    print(f"| flags | req/s (median) | ÷ `{base or 'no flags'}` per round | median ratio | p99 ms (median) | CPU µs/req "
          "| Redis µs/req | wrk µs/req | all µs/req | CPU-bound ceiling |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for v in args.variants:
        ratios = [a["rps"] / b["rps"] for a, b in zip(runs[v], runs[base])]
        print(f"| `{v or 'no flags'}` | {statistics.median(x['rps'] for x in runs[v]):,.0f} "
              f"| {' '.join(f'{x:.2f}' for x in ratios)} | **{statistics.median(ratios):.2f}** "
              f"| {statistics.median(x['p99'] for x in runs[v]):.2f} "
              f"| {statistics.median(x['cpu_us'] for x in runs[v]):.2f} "
              f"| {statistics.median(x['redis_us'] for x in runs[v]):.2f} "
              f"| {statistics.median(x['wrk_us'] for x in runs[v]):.2f} "
              f"| {statistics.median(all_us(x) for x in runs[v]):.2f} "
              f"| {base_all / statistics.median(all_us(x) for x in runs[v]):.2f} |")
    bad = sum(x["bad"] for v in runs for x in runs[v])
    if bad:
        sys.exit(f"compare-flags: {bad} non-2xx answers: the runs are not comparable")


if __name__ == "__main__":
    main()
