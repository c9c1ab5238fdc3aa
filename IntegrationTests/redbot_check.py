#!/usr/bin/env python3
"""REDbot (the HTTP linter, `redbot` on PyPI) over every route of sheetd (run by
IntegrationTests/redbot-check, which builds and starts sheetd and gives SHEETD_URL).

Every path of openapi.yaml is fetched as REDbot fetches (GET, with its own conditional, ranged and
compressed follow-up requests); a session is made first so that its paths answer 200. Each warning
or error note REDbot makes must be one of the explained notes below (the route, the note's summary
text, and why it stands); any other fails. Prints one line per route and closes with
`redbot-check: N passed, M failed`.
"""

import json
import os
import re
import subprocess
import sys
import urllib.request

import yaml

API = os.environ["SHEETD_URL"].rstrip("/")
SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "openapi.yaml")

# (path pattern, pattern of the note's id and summary, why it stands): a warning REDbot gives that
# sheetd answers otherwise on purpose. None today: every route answers with no warning (a session's
# state and every dynamic answer `no-store`; the static files with a strong ETag, 304, gzip and a
# lifetime each). A row added here says why, as a comment, or the check is the place that fails.
EXPLAINED: list[tuple[str, str, str]] = []


def lint(url):
    """REDbot's notes on `url` (its command line, HAR output: one process a URL, as a user runs it):
    the status, and (level, note id, summary) of every warning and error."""
    out = subprocess.run(["redbot", "-o", "har", url], capture_output=True, text=True, timeout=120)
    try:
        entry = json.loads(out.stdout)["log"]["entries"][0]
    except (ValueError, KeyError, IndexError):
        return None, [("BAD", "-", f"no answer REDbot could read: {out.stdout[:200]} {out.stderr[:200]}")]
    found = {(m["level"], m["note_id"], m["summary"]) for m in entry.get("_red_messages", []) if m["level"] in ("WARN", "BAD")}
    return entry["response"]["status"], sorted(found)


def main():
    spec = yaml.safe_load(open(SPEC, encoding="utf-8"))
    # A session of its own, so that /sessions/{id}/… answer as for a real client.
    req = urllib.request.Request(f"{API}/sessions/redbot", data=json.dumps({"preset": "fluid", "initialDetent": "half"}).encode(),
                                 method="PUT", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()
    passed = failed = 0
    for path in sorted(spec["paths"]):
        if path == "/sessions/{id}/frames":
            # An event stream stays open while the session lives: REDbot would wait on it for ever.
            # Its headers are checked by FrameStreamTests (Cache-Control: no-cache, X-Accel-Buffering).
            print(f"skip {path}: an open event stream (FrameStreamTests checks its headers)")
            continue
        concrete = path.replace("{id}", "map.html" if path.startswith("/examples/") else "redbot")
        status, notes = lint(API + concrete)
        unexplained = [(level, note, text) for level, note, text in notes
                       if not any(re.search(p, path) and re.search(n, f"{note} {text}") for p, n, _ in EXPLAINED)]
        explained = [text for level, note, text in notes if (level, note, text) not in unexplained]
        if unexplained:
            failed += 1
            print(f"FAIL {path} ({status}): " + "; ".join(f"{level} {note}: {text}" for level, note, text in unexplained))
        else:
            passed += 1
            print(f"ok   {path} ({status}): no unexplained warning" + (f" (explained: {'; '.join(explained)})" if explained else ""))
    print(f"redbot-check: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
