"""A check's results as the Python checks record and report them: one line per check on stdout as it
runs, then OUT/latest.md (a heading, the figures, each result, the evidence of failures) and the closing
`NAME: N passed, M failed` line that scripts/test counts. Standard library only."""

from __future__ import annotations

import time


class Checklist:
    def __init__(self, name: str) -> None:
        self.name = name
        self.results: list[tuple[bool, str]] = []
        self.evidence: list[str] = []  # what a failure showed, written under "Evidence"

    def check(self, ok: bool, what: str, detail: str | None = None) -> bool:
        """Records one check and prints it; a failure's detail is printed and kept as evidence."""
        self.results.append((bool(ok), what))
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok and detail:
            self.evidence.append(f"{what}: {detail}")
            print(f"       {detail}", flush=True)
        return bool(ok)

    @property
    def passed(self) -> int:
        return sum(1 for ok, _ in self.results if ok)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    def summary(self) -> str:
        return f"{self.name}: {self.passed} passed, {self.failed} failed"

    def write(self, path: str, preamble: str) -> None:
        """latest.md: `# NAME, date`, the preamble (what ran, the figures), each result, the evidence."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"# {self.name}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n\n{preamble}")
            for ok, what in self.results:
                f.write(f"- {'ok' if ok else 'FAIL'}: {what}\n")
            if self.evidence:
                f.write("\nEvidence:\n\n" + "".join(f"- {e}\n" for e in self.evidence))
            f.write(f"\n{self.summary()}\n")
