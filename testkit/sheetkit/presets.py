"""The preset catalog as the checks see it: asked of a running sheetd (GET /presets), never written
again in a check. Standard library only.

    from sheetkit.presets import fetch, names
    catalog = fetch(port)        # [{"name": "facebook", "constraint": …, "detents": […], …}, …]
    names(port)                  # ["facebook", "twitter", …] in the catalog's order

From a shell: `python3 -m sheetkit.presets PORT` prints the names, one a line.
"""

from __future__ import annotations

import http.client
import json
import sys

HOST = "127.0.0.1"


def fetch(port: int, host: str = HOST, timeout: float = 10) -> list[dict]:
    """GET /presets: the presets, each a dict as the catalog serves it; raises when it does not answer 200."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/presets")
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    if response.status != 200:
        raise RuntimeError(f"GET /presets answered {response.status}: {body[:200]!r}")
    presets = json.loads(body)["presets"]
    if not presets or not all(isinstance(p.get("name"), str) for p in presets):
        raise RuntimeError(f"GET /presets: no named presets in {body[:200]!r}")
    return presets


def names(port: int, host: str = HOST) -> list[str]:
    return [p["name"] for p in fetch(port, host)]


def by_name(port: int, host: str = HOST) -> dict[str, dict]:
    return {p["name"]: p for p in fetch(port, host)}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m sheetkit.presets PORT")
    print("\n".join(names(int(sys.argv[1]))))
