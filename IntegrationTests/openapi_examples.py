#!/usr/bin/env python3
"""The examples of openapi.yaml that a live sheetd answers deterministically, checked against it.

    python3 IntegrationTests/openapi_examples.py BASE_URL [--write]

Each row of EXAMPLES names a request example, the route it is sent to and the response example
that must be exactly what the service answers (a simulation runs on the client clock, so its answer
is the same on every run). Numbers are compared as the service wrote them, the sign of zero
included (`-0` is negative zero, written `-0.0` in YAML). --write replaces each response example's
`value:` in openapi.yaml with the live answer instead of checking it, so examples are generated,
never typed. Prints one line per example and last `openapi-examples: N passed, M failed`.
"""

from __future__ import annotations

import json
import math
import sys
import urllib.request
from pathlib import Path

import yaml

SPEC = Path(__file__).resolve().parent.parent / "openapi.yaml"

# (request example, method and path, response example)
EXAMPLES = [
    ("SimulateRequestFacebook", "POST /simulate", "SimulateResponseFacebook"),
]


def exact_json(text: str):
    """JSON with negative zero kept (Python's json reads `-0` as the integer 0)."""
    return json.loads(text, parse_int=lambda s: -0.0 if s == "-0" else int(s))


def same(a, b, path="") -> list[str]:
    """Where `a` (the spec's) and `b` (the service's) differ: keys, lengths, values, signs of zero."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k}: only in the spec" for k in a.keys() - b.keys()]
        out += [f"{path}/{k}: only in the answer" for k in b.keys() - a.keys()]
        for k in a.keys() & b.keys():
            out += same(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items in the spec, {len(b)} in the answer"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in same(x, y, f"{path}[{i}]")]
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        if a == b and math.copysign(1, a) == math.copysign(1, b):
            return []
        return [f"{path}: {a!r} in the spec, {b!r} in the answer"]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} in the spec, {b!r} in the answer"]


def answer(base: str, route: str, body) -> object:
    method, path = route.split(" ", 1)
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return exact_json(response.read().decode())


def replace_value(text: str, name: str, value) -> str:
    """openapi.yaml with the `value:` of components/examples/`name` replaced by `value` (YAML,
    leaf collections in flow style), the rest of the file untouched."""
    lines = text.split("\n")
    start = lines.index(f"    {name}:")
    at = next(i for i in range(start + 1, len(lines)) if lines[i] == "      value:")
    end = next(i for i in range(at + 1, len(lines)) if lines[i].strip() and not lines[i].startswith("       "))
    dumped = yaml.safe_dump(value, default_flow_style=None, sort_keys=False, width=120, allow_unicode=True)
    block = ["        " + line for line in dumped.rstrip("\n").split("\n")]
    return "\n".join(lines[: at + 1] + block + lines[end:])


def main() -> int:
    base = sys.argv[1].rstrip("/")
    write = "--write" in sys.argv[2:]
    text = SPEC.read_text()
    examples = yaml.safe_load(text)["components"]["examples"]
    passed = failed = 0
    for request, route, response in EXAMPLES:
        live = answer(base, route, examples[request]["value"])
        if write:
            text = replace_value(text, response, live)
            print(f"openapi-examples: {response} written from {route}")
            continue
        differences = same(examples[response]["value"], live)
        if differences:
            failed += 1
            print(f"FAIL {response} is not what {route} answers to {request}: " + "; ".join(differences[:5]))
        else:
            passed += 1
            print(f"ok   {response} is what {route} answers to {request}")
    if write:
        SPEC.write_text(text)
        return 0
    print(f"openapi-examples: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
