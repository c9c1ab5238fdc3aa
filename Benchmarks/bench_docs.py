#!/usr/bin/env python3
"""Puts scripts/bench's report (REPORT) between the <!-- bench:begin --> and <!-- bench:end --> lines of DOCS (scripts/bench --write-docs).

    python3 Benchmarks/bench_docs.py DOCS REPORT"""
import sys
path, new = sys.argv[1], open(sys.argv[2]).read()
text = open(path).read()
begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
    sys.exit(f"bench: {path} needs one '{begin}' line and one '{end}' line after it; nothing written")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n" + new.rstrip("\n") + "\n" + end + tail)
print(f"bench: replaced the bench section of {path}", file=sys.stderr)
