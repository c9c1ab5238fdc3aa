#!/usr/bin/env python3
"""The checks and the report of IntegrationTests/cluster, from what it collected in OUT (metrics before and after, the proxy's access log, the load test's output, latency.txt, the instances' exit statuses). Prints the report and, last, `cluster: N passed, M failed`.

    python3 IntegrationTests/cluster_report.py OUT INSTANCES LOAD_RC PROXY "EXITS" INSTANCE_PORT..."""
import collections, json, os, re, sys
out, k, load_rc, proxy, exits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5].split()
ports = sys.argv[6:]
addr = {f"127.0.0.1:{p}": n for n, p in enumerate(ports)}
passed, failed, lines = 0, 0, []
def check(ok, what):
    global passed, failed
    passed, failed = passed + bool(ok), failed + (not ok)
    lines.append(f"- {'ok  ' if ok else 'FAIL'} {what}")

SKIP = ("/metrics", "/healthz", "/livez", "/readyz")
def metrics(path):
    m = collections.Counter()
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        m[name] = float(value)
    return m
created, requests, by_route = [], [], []
for n in range(k):
    a, b = metrics(f"{out}/metrics-{n}-after.txt"), metrics(f"{out}/metrics-{n}-before.txt")
    created.append(int(a["sheetd_sessions_created_total"] - b["sheetd_sessions_created_total"]))
    routes = collections.Counter()
    for name, v in a.items():
        mm = re.match(r'sheetd_requests_total\{route="([^"]*)",status="([^"]*)"\}', name)
        # Not the scrapes, nor health checks (haproxy asks /healthz on its own, unlogged).
        if mm and mm.group(1) not in SKIP:
            routes[(mm.group(1), mm.group(2))] += int(v - b[name])
    by_route.append(routes)
    requests.append(sum(routes.values()))

# The proxy's log (deploy/nginx.conf's log_format sheetd; deploy/haproxy.cfg logs the same fields):
# msec method uri status key request_time "upstream addresses" "upstream statuses" "upstream times".
LOG = re.compile(r'^(\S+) (\S+) (\S+) (\d+) (\S+) (\S+) "([^"]*)" "([^"]*)" "([^"]*)"')
sent = collections.Counter()
owners = collections.defaultdict(set)
session_reqs, retried, created_at, unparsed = 0, 0, collections.Counter(), 0
deleted, stray_404 = set(), []
for line in open(f"{out}/access-load.log"):
    m = LOG.match(line)
    if not m:
        unparsed += 1
        continue
    method, uri, status, key = m.group(2), m.group(3), m.group(4), m.group(5)
    if uri in SKIP:
        continue
    hops = [u.strip() for u in m.group(7).split(",") if u.strip() not in ("", "-")]
    # nginx lists every instance it tried; haproxy logs the last one and its retries.
    if len(hops) > 1 or (proxy == "haproxy" and m.group(8) not in ("0", "-", "")):
        retried += 1
    if not hops or hops[-1] not in addr:
        continue
    sent[addr[hops[-1]]] += 1
    # POST /sessions is sent on as PUT /sessions/{new id} (nginx logs its internal location).
    if uri.startswith("/sessions/") or uri == "/_sheetd_create" or (uri == "/sessions" and method == "POST"):
        session_reqs += 1
        owners[key].add(addr[hops[-1]])
        if status == "201":
            created_at[addr[hops[-1]]] += 1
        if method == "DELETE" and status == "204":
            deleted.add(key)
        elif status == "404" and key not in deleted:
            stray_404.append(f"{method} {uri}")

lt = open(f"{out}/loadtest.out").read().strip().splitlines()
last = lt[-1] if lt else ""
check(load_rc == 0 and re.match(r"^loadtest: \d+ passed, 0 failed$", last), f"load test through {proxy}: `{last}`")
if proxy == "nginx":  # haproxy's log also has its health-check reports
    check(unparsed == 0, f"nginx's access log: {unparsed} lines not in the expected format")
split = [sid for sid, s in owners.items() if len(s) > 1]
check(owners and not split, f"affinity: {len(owners)} sessions, {session_reqs} session requests; "
      f"{len(split)} sessions reached more than one instance{(': ' + ', '.join(split[:5])) if split else ''}")
nf = sum(v for (route, st), v in sum(by_route, collections.Counter()).items() if st == "404" and route.startswith("/sessions/"))
check(not stray_404, f"no session was missing where its requests went: {nf} 404s on session routes, "
      f"{nf - len(stray_404)} of them for sessions already deleted (the load test asks on purpose)"
      + (f"; others: {', '.join(stray_404[:3])}" if stray_404 else ""))
check(requests == [sent[n] for n in range(k)],
      f"requests add up: each instance counted {requests}, {proxy} sent {[sent[n] for n in range(k)]}")
check(created == [created_at[n] for n in range(k)],
      f"sessions created per instance {created} (metrics) = {[created_at[n] for n in range(k)]} (201s in {proxy}'s log)")
total = sum(created)
fair = total / k if k else 0
lo = min(created) if created else 0
# A load test's few dozen sessions vary by chance; the ring's shares are measured below on 3,000.
check(total >= k and lo >= 1,
      f"spread: every instance got sessions of the load test: {created} of {total} (fair share {fair:.1f}, "
      f"smallest {lo / fair:.0%} of it)" if fair else "spread: no sessions")
err = open(f"{out}/error.log").read() if os.path.exists(f"{out}/error.log") else ""
upstream_errors = [l for l in err.splitlines() if "upstream" in l or "connect()" in l]
if proxy == "nginx":
    check(not upstream_errors, f"nginx logged {len(upstream_errors)} upstream errors" + (f": {upstream_errors[0][:200]}" if upstream_errors else ""))
check(retried == 0, f"{retried} requests were retried on another instance (none expected: no instance left)")
check(all(e == "0" for e in exits), f"each instance exited 0 on SIGTERM (exit statuses {' '.join(exits)})")
lat = json.load(open(f"{out}/latency.txt")) if os.path.getsize(f"{out}/latency.txt") else None
ring = lat["ring"] if lat else []
check(ring and min(ring) >= 0.6 * sum(ring) / k and max(ring) <= 1.4 * sum(ring) / k,
      f"the ring's shares, {sum(ring)} sessions with random ids: {ring} "
      f"({', '.join(f'{x / sum(ring):.1%}' for x in ring) if ring else '-'}; each within 40% of a fair share)")

stacks = open(os.path.join(out, "stacks.txt")).read() if os.path.exists(os.path.join(out, "stacks.txt")) else ""
together = re.search(r"stacks: (\d+) of (\d+) together", stacks)
check(together and together.group(1) == together.group(2) and int(together.group(2)) > 0,
      f"stacks through {proxy}: {together.group(0) if together else 'not run'} (a sheet named ROOT~NAME lands where its root does)")

report = [f"# cluster: {k} sheetd behind {proxy}", "",
          f"| instance | sessions created | requests | 2xx | 4xx | 5xx |", "| --- | --- | --- | --- | --- | --- |"]
for n in range(k):
    c = collections.Counter()
    for (route, st), v in by_route[n].items():
        c[st[0] + "xx" if st[0].isdigit() else st] += v
    report.append(f"| {n} (:{ports[n]}) | {created[n]} | {requests[n]} | {c['2xx']} | {c['4xx']} | {c['5xx']} |")
report.append("")
if lat:
    report.append(f"GET /sessions/{{id}}, one keep-alive client, 3,000 each, interleaved (µs, p50 / p90 / p99): "
                  f"through {proxy} {lat['via'][0]:.0f} / {lat['via'][1]:.0f} / {lat['via'][2]:.0f}, "
                  f"straight to the owner {lat['direct'][0]:.0f} / {lat['direct'][1]:.0f} / {lat['direct'][2]:.0f} "
                  f"(the hop adds {lat['via'][0] - lat['direct'][0]:.0f} µs at the median)")
    report.append("")
report += lines
open(f"{out}/report.md", "w").write("\n".join(report) + "\n")
print("\n".join(report))
print(f"cluster: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
