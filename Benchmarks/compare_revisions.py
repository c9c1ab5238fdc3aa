#!/usr/bin/env python3
"""The table of Benchmarks/compare-revisions: each round's two runs (ROWS), their ratios per round, then the medians.

    python3 Benchmarks/compare_revisions.py ROWS SCENARIO COMMIT "OPTIONS" (as given to compare-revisions)"""
import statistics
import sys

path, scenario, commit, options = sys.argv[1:]
runs = {}
for line in open(path):
    round_, name, rps, p99, cpu, bad = line.split()
    runs.setdefault(int(round_), {})[name] = (float(rps), float(p99), float(cpu), int(bad))
ratios = [runs[r]["new"][0] / runs[r]["old"][0] for r in sorted(runs)]
def median(name, k):
    return statistics.median(runs[r][name][k] for r in runs)
rounds = len(runs)
print(f"## `{scenario}`: the working tree against {commit} (`Benchmarks/compare-revisions {commit} {options}`)")
print()
print("| rounds | new ÷ old req/s, per round | median | req/s old → new | CPU µs/req old → new | p99 ms old → new |")
print("|---:|---|---:|---:|---:|---:|")
print(f"| {rounds} | {' '.join(f'{x:.2f}' for x in ratios)} | **{statistics.median(ratios):.2f}** "
      f"| {median('old', 0):,.0f} → {median('new', 0):,.0f} | {median('old', 2):.1f} → {median('new', 2):.1f} "
      f"| {median('old', 1):.2f} → {median('new', 1):.2f} |")
bad = sum(runs[r][n][3] for r in runs for n in runs[r])
if bad:
    print(f"\ncompare-revisions: {bad} non-2xx answers: the runs are not comparable", file=sys.stderr)
    sys.exit(1)
