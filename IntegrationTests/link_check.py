#!/usr/bin/env python3
"""A clone has everything it names (run by IntegrationTests/link-check; standard library only).

Three kinds of check over the repository's files (tracked, and untracked ones git does not ignore; the
fuzz corpus, being data, left out):
- every relative link of a Markdown file ([text](path), [id]: path, src="path") resolves to a file or
  folder, its #anchor aside;
- every repository path a file names (scripts/…, docs/…, Sources/…, Tests/…, deploy/…, fuzz/…,
  Clients/…, IntegrationTests/…, Benchmarks/…) exists, in comments, scripts and docs alike; a path with
  a placeholder or a wildcard (`{`, `<`, `$`, `*`, `…`) is checked up to it;
- no file cites a document outside the repository: ../shared, shared/…, API.md, LIBMICROHTTPD.md, or
  PHYSICS.md other than as docs/PHYSICS.md (a Markdown link that resolves is a link, not a citation).
Each (file, target) pair is one check. Prints each failure as `FAIL file:line: why`, then
`link-check: N passed, M failed`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = ("scripts", "docs", "Sources", "Tests", "deploy", "fuzz", "Clients", "IntegrationTests", "Benchmarks")
# A path: one of the top folders, then path characters. Not inside a longer path or a URL.
PATH = re.compile(r"(?<![A-Za-z0-9_./@~-])(?:" + "|".join(TOP) + r")/[A-Za-z0-9_./*{}<>$…+-]*")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\s*\[[^\]]+\]:\s*(\S+)|\bsrc=\"([^\"]+)\"", re.M)
# Documents outside the repository (the names are split so that this file does not cite them itself).
OUTSIDE = re.compile(r"\.\./shared\b|(?<![A-Za-z0-9_./-])shared/|(?<![A-Za-z0-9_-])API" r"\.md\b"
                     r"|\bLIBMICROHTTPD" r"\.md\b|(?<!docs/)(?<![A-Za-z0-9_-])PHYSICS" r"\.md\b")
SKIP_PREFIXES = ("fuzz/corpus/",)
SELF = os.path.relpath(os.path.abspath(__file__), ROOT)


def files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    return sorted(f for f in set(listed) if f and not f.startswith(SKIP_PREFIXES) and os.path.isfile(os.path.join(ROOT, f)))


def text_of(path: str) -> str | None:
    with open(os.path.join(ROOT, path), "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def exists(path: str) -> bool:
    return os.path.exists(os.path.join(ROOT, path))


def trimmed(found: str) -> str:
    """The path without a placeholder or wildcard and what follows it, and without trailing punctuation."""
    cut = re.split(r"[{<$*…]", found, maxsplit=1)[0]
    cut = cut.rstrip(".,:;)}'\"`")
    if cut != found and not cut.endswith("/"):
        cut = cut[: cut.rfind("/") + 1]  # the folder part of a partly written name
    return cut


def main() -> int:
    passed, failures = 0, []
    tracked = files()
    for name in tracked:
        text = text_of(name)
        if text is None or name == SELF:
            continue
        seen: set[tuple[str, str]] = set()
        resolved_links: set[int] = set()

        def check(kind: str, target: str, ok: bool, offset: int, why: str) -> None:
            nonlocal passed
            if (kind, target) in seen:
                return
            seen.add((kind, target))
            if ok:
                passed += 1
            else:
                failures.append(f"FAIL {name}:{line_of(text, offset)}: {why}")

        if name.endswith(".md"):
            for m in LINK.finditer(text):
                target = next(g for g in m.groups() if g is not None)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue  # a URL or an anchor in the same page
                path = target.split("#", 1)[0]
                resolved = os.path.normpath(os.path.join(os.path.dirname(name), path))
                ok = not resolved.startswith("..") and exists(resolved)
                if ok:
                    resolved_links.add(m.start())
                check("link", target, ok, m.start(), f"the link {target} does not resolve inside the repository")
        for m in PATH.finditer(text):
            path = trimmed(m.group(0))
            if path.rstrip("/") in TOP or not path:
                continue
            check("path", path, exists(path), m.start(), f"{path} does not exist")
        for m in OUTSIDE.finditer(text):
            # A Markdown link to a file that is there is a link, whatever its name.
            if name.endswith(".md") and any(start <= m.start() < start + 300 and text[start:m.start()].count(")") == 0
                                            for start in resolved_links):
                continue
            # ... and so is the text of such a link: "[PHYSICS.md](PHYSICS.md)" inside docs/.
            close = text.find("](", m.end())
            if name.endswith(".md") and close in resolved_links and "[" in text[text.rfind("\n", 0, m.start()) + 1:m.start()] \
                    and "\n" not in text[m.end():close] and "[" not in text[m.end():close]:
                continue
            line = text.splitlines()[line_of(text, m.start()) - 1].strip()
            check("outside", f"{m.group(0)}@{line_of(text, m.start())}", False, m.start(),
                  f"cites {m.group(0)}, which is not in the repository (docs/ holds the references): {line[:120]}")
        if not any(k == "outside" for k, _ in seen):
            passed += 1  # the file cites nothing outside the repository
    for line in failures:
        print(line)
    print(f"link-check: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
