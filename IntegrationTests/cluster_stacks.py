#!/usr/bin/env python3
"""Stacks through the proxy (IntegrationTests/cluster): N stacks, each a root and a sheet named
ROOT~sheet over it, created through the proxy in front of instances that share no store. The
child finds its parent only if the proxy sent it to the root's instance (deploy/'s routers hash the
id up to its first `~`): 201 and a covered root, else 409 parent-not-found.

    cluster_stacks.py PROXY_PORT [N]

Prints one line, `stacks: K of N together`.
"""

import http.client
import json
import sys


def call(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"} if body is not None else {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data) if data else {}


def main() -> int:
    port, n = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 40
    together = 0
    for i in range(n):
        root = f"stack{i}"
        call(port, "PUT", f"/sessions/{root}", {"preset": "fluid", "initialDetent": "half"})
        status, child = call(port, "PUT", f"/sessions/{root}~sheet", {"preset": "fluid", "parent": root,
                                                                      "initialDetent": "full"})
        _, parent = call(port, "GET", f"/sessions/{root}")
        if status == 201 and parent.get("coveredBy") == f"{root}~sheet":
            together += 1
        else:
            print(f"  {root}: child {status} {child.get('code')}, parent coveredBy {parent.get('coveredBy')}")
        for path in (f"/sessions/{root}~sheet", f"/sessions/{root}"):
            call(port, "DELETE", path)
    print(f"stacks: {together} of {n} together")
    return 0


if __name__ == "__main__":
    sys.exit(main())
