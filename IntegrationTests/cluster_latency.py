#!/usr/bin/env python3
"""The proxy's cost and the ring's shares, for IntegrationTests/cluster: one keep-alive client asks GET /sessions/{id} through the proxy and straight to the owning instance, interleaved; then 3,000 more sessions with random ids, counted by each instance. Prints one JSON object (owner, via and direct µs percentiles, ring).

    python3 IntegrationTests/cluster_latency.py PROXY_PORT INSTANCE_PORT..."""
import http.client, json, statistics, sys, time, uuid
proxy, direct = int(sys.argv[1]), [int(p) for p in sys.argv[2:]]
def conn(port): return http.client.HTTPConnection("127.0.0.1", port, timeout=5)
via = conn(proxy)
sid = "lat-" + uuid.uuid4().hex[:16]
via.request("PUT", f"/sessions/{sid}", body=b"{}", headers={"Content-Type": "application/json"}); via.getresponse().read()
owner = None
for p in direct:
    c = conn(p); c.request("GET", f"/sessions/{sid}"); r = c.getresponse(); r.read(); c.close()
    if r.status == 200: owner = p
own = conn(owner)
def once(c):
    t = time.perf_counter(); c.request("GET", f"/sessions/{sid}"); r = c.getresponse(); r.read()
    assert r.status == 200, r.status
    return time.perf_counter() - t
for _ in range(200): once(via); once(own)
a, b = [], []
for _ in range(3000): a.append(once(via)); b.append(once(own))
via.request("DELETE", f"/sessions/{sid}"); via.getresponse().read()
def q(xs, p): xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))] * 1e6
# The ring's shares: 3,000 more sessions with random ids, counted by each instance.
def created(port):
    c = conn(port); c.request("GET", "/metrics"); text = c.getresponse().read().decode(); c.close()
    return next(float(l.split()[1]) for l in text.splitlines() if l.startswith("sheetd_sessions_created_total"))
before = [created(p) for p in direct]
for _ in range(3000):
    via.request("PUT", f"/sessions/ring-{uuid.uuid4().hex[:20]}", body=b"{}", headers={"Content-Type": "application/json"})
    r = via.getresponse(); r.read()
    assert r.status == 201, r.status
ring = [int(created(p) - b) for p, b in zip(direct, before)]
print(json.dumps({"owner": owner, "via": [q(a, .5), q(a, .9), q(a, .99)], "direct": [q(b, .5), q(b, .9), q(b, .99)],
                  "ring": ring}))
