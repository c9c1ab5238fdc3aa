"""The Swift test suites run as a few processes side by side (scripts/test's `swift-test`, and
IntegrationTests/tsan's runs), each process a group of suites, from the test product built already.

    python3 -m sheetkit.swift_tests [--name swift-test] [--scratch-path .build] [--logs DIR] [--without REGEX]

Why processes: swift-testing runs a process's tests on Swift's cooperative pool, which has one
thread per core (two here). A test that blocks its thread (a socket read, a redis-server it stops
and starts, a server's drain) holds one of the two, and the serialized store suites hold one for
minutes: in one process, `swift test` took 134–165 s of wall time for 87 s of CPU. Groups in
processes of their own block only themselves, and the kernel shares the cores between them.

The groups partition the suites, and the run checks that they do: the tests every group ran add
up to the tests the product lists (`--list-tests`), less those `--without` names (a regular
expression over test ids, skipped in every group), or the run fails (a new test target must be put
in a group). Serialized suites stay whole within their group (RedisIntegration, StoreIntegration).

Each group's output goes to DIR/NAME-GROUP.log; standard output gets one line per group (its
tests, failures and seconds), every failed test's line, the tail of a failed group's log, and last
`NAME: N passed, M failed` (N: tests passed in all groups; M: tests failed plus groups that ran
no test or exited non-zero with no failed test). Environment variables given to this process
(TSAN_OPTIONS, LD_PRELOAD) reach every group.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (group, --filter, --skip): the regular expressions swift-testing matches against a test's id,
# `Target.Suite/Nested/test(…)`. Longest first: the groups start in this order.
GROUPS: list[tuple[str, str, str | None]] = [
    # SheetServiceTests over sockets and in process, and MicroHTTP's own: the most tests.
    ("service", r"^(SheetServiceTests|MicroHTTPTests)\.", r"/StoreIntegration/"),
    # Every RedisClient test, one at a time (RedisIntegration is serialized: each starts, stops,
    # pauses a redis-server of its own).
    ("redis", r"^RedisClientTests\.", None),
    # sheetd with a real redis-server, one at a time (StoreIntegration is serialized).
    ("store", r"^SheetServiceTests\.ServiceIntegration/StoreIntegration/", None),
    # The engine: pure, the property tests' CPU.
    ("physics", r"^SheetPhysicsTests\.", None),
]

NICENESS = {"physics": 10}  # nice(2) increments by group; the others run at the runner's own

RUN_LINE = re.compile(r"Test run with ([0-9]+) tests?")
FAILED_TEST = re.compile(r"^✘ Test (?!run ).* failed after")


def listed(binary: str) -> list[str]:
    """The ids of the tests the product holds (`Target.Suite/…/test(…)`)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # a listing needs no preloaded shim
    out = subprocess.run([binary, "--testing-library", "swift-testing", "--list-tests"], cwd=ROOT,
                         capture_output=True, text=True, check=True, env={**env, "NO_COLOR": "1"})
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sheetkit.swift_tests", description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="swift-test", help="the name of the closing line and of the logs")
    parser.add_argument("--scratch-path", default=".build", help="SwiftPM's scratch path holding debug/")
    parser.add_argument("--logs", default=".build/test", help="the folder of the groups' logs")
    parser.add_argument("--without", metavar="REGEX", help="skip the tests whose ids this matches, in every group")
    parser.add_argument("--summary", metavar="FILE",
                        help="also write the counts as JSON: {\"passed\", \"failed\", \"groups\": {name: "
                             "{\"tests\", \"failed\", \"exit\", \"seconds\", \"log\"}}} (what a caller reads, "
                             "not the closing line)")
    args = parser.parse_args(argv)

    binary = os.path.join(ROOT, args.scratch_path, "debug", "sheetdPackageTests.xctest")
    if not os.access(binary, os.X_OK):
        print(f"{args.name}: no test product at {binary} (swift build --build-tests first)")
        print(f"{args.name}: 0 passed, 1 failed")
        return 1
    logs = os.path.join(ROOT, args.logs)
    os.makedirs(logs, exist_ok=True)
    ids = listed(binary)
    left_out = {i for i in ids if args.without and re.search(args.without, i)}
    expected = len(ids) - len(left_out)

    began = time.monotonic()
    running = []
    for group, include, exclude in GROUPS:
        mine = [i for i in ids if re.search(include, i) and not (exclude and re.search(exclude, i)) and i not in left_out]
        if not mine:  # every test of the group left out (--without): nothing to start
            print(f"{args.name}: {group}: every test left out, not started")
            continue
        command = [binary, "--testing-library", "swift-testing", "--filter", include]
        skips = [x for x in (exclude, args.without) if x]
        if skips:
            command += ["--skip", "|".join(f"(?:{x})" for x in skips)]
        path = os.path.join(logs, f"{args.name}-{group}.log")
        log = open(path, "wb")
        # The engine's group is CPU alone (pure property tests): it runs at a lower priority, so that
        # on a busy machine the groups that wait on sockets, redis-servers and deadlines get the
        # cores when they need them (the Redis turn test's 0.15 s of slack was once not enough).
        niceness = NICENESS.get(group, 0)
        proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "NO_COLOR": "1"},
                                preexec_fn=(lambda: os.nice(niceness)) if niceness else None)
        running.append((group, proc, path, log, time.monotonic()))

    ended: dict[str, float] = {}  # a group's seconds, taken when it ends (the report keeps GROUPS' order)
    while len(ended) < len(running):
        for group, proc, _, _, started in running:
            if group not in ended and proc.poll() is not None:
                ended[group] = time.monotonic() - started
        time.sleep(0.1)
    passed = failed = ran = 0
    groups: dict[str, dict] = {}
    for group, proc, path, log, started in running:
        rc = proc.returncode
        seconds = ended[group]
        log.close()
        text = open(path, "rb").read().decode(errors="replace")
        totals = RUN_LINE.findall(text)
        total = int(totals[-1]) if totals else 0
        failing = [line for line in text.splitlines() if FAILED_TEST.match(line)]
        ran += total
        passed += total - len(failing)
        failed += len(failing)
        groups[group] = {"tests": total, "failed": len(failing), "exit": rc, "seconds": round(seconds, 1), "log": path}
        print(f"{args.name}: {group}: {total} tests, {len(failing)} failed, exit {rc}, {seconds:.0f} s; log {path}")
        for line in failing:
            print(f"  {line}")
        if total == 0 or (rc != 0 and not failing):
            failed += 1
            print(f"{args.name}: {group} ran no test or exited {rc} with no failed test; the end of its log:")
            print("".join("  | " + line for line in text.splitlines(True)[-30:]), end="")
    if ran != expected:
        failed += 1
        print(f"{args.name}: the groups ran {ran} tests where the product lists {expected}: "
              "a test in no group, or in two (sheetkit/swift_tests.py GROUPS)")
    if left_out:
        print(f"{args.name}: {len(left_out)} tests left out (--without): {', '.join(sorted(left_out))}")
    print(f"{args.name}: {len(running)} processes in {time.monotonic() - began:.0f} s")
    print(f"{args.name}: {passed} passed, {failed} failed")
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump({"passed": passed, "failed": failed, "groups": groups}, f, indent=1)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
