"""scripts/test's runner: the checks of a manifest (scripts/checks), each a name, a tier, the builds it
needs, the load it puts on the machine and a command; built once, run side by side where they do not
compete, counted, and closed by one line. Standard library only.

    python3 -m sheetkit.checks MANIFEST [--list] [--tier fast|full] [--fast] [--only NAME…] [--jobs N]

The manifest (docs/TESTING.md), one row a line, `#` starts a comment (at a line's start or after a blank):

    setup  COMMAND                                   run first, in order (installs what is missing)
    build  NAME  LOAD  COMMAND                       run once, when a chosen check needs it
    check  NAME  TIER  NEEDS  LOAD  COMMAND          NEEDS: build names, comma-separated, or -

TIER is `fast` (the developer's few minutes) or `full` (CI runs every tier). LOAD is what the check
asks of the machine's cores: `wait` (mostly sleeping on sockets and timers), `core` (one busy core) or
`all` (every core); a build's LOAD says the same of it (each build has a scratch path of its own,
so two may run side by side). Builds, then checks, start in manifest order as their load fits, a check once
the builds it needs are made (a check whose build failed fails unrun): at most --jobs at once, and
busy ones up to one core more than os.cpu_count() (so two `all` checks never overlap, one `core` check
may run beside an `all` one); each one's output goes to
.build/test/NAME.log, and the runner prints one line when it ends (the tail of its log when it failed).

The closing line counts as scripts/test always did, over the checks' output in manifest order: the
last swift-testing `Test run with N tests` and the last XCTest `Executed N tests` printed (the Swift
suites now print `swift-test: N passed, M failed` instead: sheetkit.swift_tests), every other
`NAME: N passed, 0 failed` line but the load test's, and each load test run as one. A check fails
when its command exits non-zero or prints `NAME: N passed, M failed` with M > 0; then the run says
which, prints `test: N passed, M failed` (M: the failures those lines report, at least one per failed
check) and exits 1.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOADS = {"wait": 0, "core": 1, "all": None}  # cores taken; None: all of them
TIERS = ("fast", "full")

SWIFT_TESTING = re.compile(r"Test run with ([0-9]+) tests")
XCTEST = re.compile(r"Executed ([0-9]+) tests")
SUMMARY = re.compile(r"^([a-z-]+): ([0-9]+) passed, ([0-9]+) failed$")
TRAILING_COMMENT = re.compile(r"\s+#.*$")


@dataclass
class Check:
    name: str
    tier: str
    needs: list[str]
    load: str
    command: str
    line: int
    rc: int | None = None
    seconds: float = 0.0
    cpu: float = 0.0  # user + system seconds of the command and the processes it waited for
    log: str = ""
    proc: subprocess.Popen | None = field(default=None, repr=False)
    started: float = 0.0


@dataclass
class Manifest:
    setup: list[str]
    builds: dict[str, tuple[str, str]]  # name → (load, command)
    checks: list[Check]


def read_manifest(path: str) -> Manifest:
    setup: list[str] = []
    builds: dict[str, tuple[str, str]] = {}
    checks: list[Check] = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            # `#` starts a comment, at the start of a line or after a blank (as in the shell: a row's
            # command may be followed by one, the figures it was measured at).
            text = TRAILING_COMMENT.sub("", raw).strip()
            if not text or text.startswith("#"):
                continue
            kind, _, rest = text.partition(" ")
            rest = rest.strip()
            where = f"{path}:{n}"
            if kind == "setup":
                setup.append(rest)
            elif kind == "build":
                parts = rest.split(None, 2)
                if len(parts) != 3 or parts[0] in builds or parts[1] not in LOADS:
                    sys.exit(f"{where}: `build NAME LOAD COMMAND`, each name once, LOAD one of {tuple(LOADS)}")
                builds[parts[0]] = (parts[1], parts[2])
            elif kind == "check":
                parts = rest.split(None, 4)
                if len(parts) != 5:
                    sys.exit(f"{where}: `check NAME TIER NEEDS LOAD COMMAND`")
                name, tier, needs, load, command = parts
                if tier not in TIERS or load not in LOADS:
                    sys.exit(f"{where}: tier must be one of {TIERS}, load one of {tuple(LOADS)}")
                wanted = [] if needs == "-" else needs.split(",")
                unknown = [b for b in wanted if b not in builds]
                if unknown or any(c.name == name for c in checks):
                    sys.exit(f"{where}: unknown build {unknown} (builds come first) or a second check named {name}")
                checks.append(Check(name, tier, wanted, load, command, n))
            else:
                sys.exit(f"{where}: a row starts with setup, build or check")
    return Manifest(setup, builds, checks)


def counted(text: str) -> dict[str, int]:
    """What the closing line counts in `text`, by kind (the rules scripts/test has always used)."""
    swift = SWIFT_TESTING.findall(text)
    xc = XCTEST.findall(text)
    others = load = 0
    for line in text.splitlines():
        m = SUMMARY.match(line)
        if m and m.group(3) == "0":
            if m.group(1) == "loadtest":
                load += 1
            else:
                others += int(m.group(2))
    return {"swift": int(swift[-1]) if swift else 0, "xctest": int(xc[-1]) if xc else 0,
            "others": others, "load": load}


def failures_reported(text: str) -> int:
    return sum(int(m.group(3)) for m in map(SUMMARY.match, text.splitlines()) if m)


def run_serial(what: str, command: str, log_path: str) -> tuple[int, float]:
    began = time.monotonic()
    print(f"== {what}: {command}", flush=True)
    with open(log_path, "wb") as log:
        rc = subprocess.run(["bash", "-c", command], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL).returncode
    return rc, time.monotonic() - began


def tail(path: str, lines: int = 40) -> str:
    with open(path, "rb") as f:
        return "".join(f.read().decode(errors="replace").splitlines(True)[-lines:])


PR_SET_CHILD_SUBREAPER = 36  # prctl(2)


def become_subreaper() -> bool:
    """Makes this process the one that reaps what a check leaves running when its parent exits (a
    sheetd started by `sheetkit.harness start`, Chromium under chromedriver…), instead of init: its
    CPU time is then counted too, as the check's (by its session) or as `other`. Linux only."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def session_of(pid: int) -> int | None:
    """The session of process `pid` (a zombie's too: /proc/PID/stat stays until it is reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[3])
    except (OSError, ValueError, IndexError):
        return None


def reap() -> list[tuple[int, int, float, int | None]]:
    """Every child that has exited: (pid, wait status, CPU seconds of it and what it reaped, its
    session read before it was reaped)."""
    out = []
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return out
        if info is None:
            return out
        sid = session_of(info.si_pid)
        pid, status, usage = os.wait4(info.si_pid, 0)
        out.append((pid, status, usage.ru_utime + usage.ru_stime, sid))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/test", description="Runs the checks of the manifest.")
    parser.add_argument("manifest")
    parser.add_argument("--list", action="store_true", help="print the checks (name, tier, needs, load, command)")
    parser.add_argument("--tier", choices=TIERS, default="full", help="fast: the fast tier only; full: every check")
    parser.add_argument("--fast", action="store_const", const="fast", dest="tier", help="the same as --tier fast")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these checks only (any tier)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("SHEETD_TEST_JOBS", "6")),
                        help="checks running at once (default 6, or $SHEETD_TEST_JOBS; 1: one after another)")
    args = parser.parse_args(argv)
    manifest = read_manifest(args.manifest)

    if args.list:
        width = max(len(c.name) for c in manifest.checks)
        for c in manifest.checks:
            print(f"{c.name:<{width}}  {c.tier:<4}  {','.join(c.needs) or '-':<13}  {c.load:<4}  {c.command}")
        return 0
    if args.only:
        known = {c.name for c in manifest.checks}
        unknown = [n for n in args.only if n not in known]
        if unknown:
            print(f"test: no check named {', '.join(unknown)} (scripts/test --list)", file=sys.stderr)
            return 2
        selected = [c for c in manifest.checks if c.name in args.only]
    else:
        selected = [c for c in manifest.checks if args.tier == "full" or c.tier == "fast"]
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    out = os.path.join(ROOT, ".build", "test")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.endswith(".log"):
            os.remove(os.path.join(out, name))
    began = time.monotonic()
    timings: list[tuple] = []  # (step, wall seconds, result[, the check, for its CPU seconds])
    subreaper = become_subreaper()

    # 1. Setup, one after the other (apt's lock).
    for n, command in enumerate(manifest.setup):
        rc, seconds = run_serial("setup", command, os.path.join(out, f"setup-{n}.log"))
        timings.append((f"setup {n}", seconds, "ok" if rc == 0 else "FAILED"))
        if rc != 0:
            print(tail(os.path.join(out, f"setup-{n}.log")), end="")
            print(f"test: setup failed ({command}): no check ran\ntest: 0 passed, 1 failed")
            return 1
    # 2. The builds the chosen checks need and the checks, side by side as their loads fit: the
    #    builds in manifest order before the checks; a check starts once its builds are made.
    builds = [Check(f"build-{name}", "-", [], load, command, 0) for name, (load, command) in manifest.builds.items()
              if any(name in c.needs for c in selected)]
    made: list[str] = []    # builds that succeeded
    broken: list[str] = []  # builds that failed: the checks that need them fail unrun
    cores = os.cpu_count() or 1
    pending = builds + list(selected)
    running: list[Check] = []
    by_session: dict[int, Check] = {}  # every check started, by its session (= its pid)
    other_cpu = 0.0  # processes reaped here that belong to no check's session (daemons that left it)

    def taken() -> int:
        return sum(units(c) for c in running)

    def fits(c: Check) -> bool:
        # One core more than the machine has: a busy check is rarely busy all the time, and a core
        # left idle is time lost; two `all` jobs never run together.
        if len(running) >= args.jobs:
            return False
        need = cores if LOADS[c.load] is None else LOADS[c.load]
        return need == 0 or taken() + need <= cores + 1

    def stop_all(signum, _frame) -> None:
        for c in running:
            if c.proc and c.proc.poll() is None:
                os.killpg(c.proc.pid, signal.SIGTERM)
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, stop_all)
    signal.signal(signal.SIGTERM, stop_all)
    print(f"== {len(builds)} builds, {len(selected)} checks ({'--only' if args.only else args.tier}), up to "
          f"{args.jobs} at once on {cores} cores", flush=True)
    def units(c: Check) -> int:
        return cores if LOADS[c.load] is None else LOADS[c.load]

    while pending or running:
        # A busy job that waits for room blocks the busy ones after it, but one: a `core` job may
        # pass a waiting `all` job when no other `core` job runs (an `all` job has room beside one),
        # so that a core is not left idle while the builds and the `all` checks run one by one.
        blocked: int | None = None  # the units the first waiting busy job needs
        for c in list(pending):
            if any(b in broken for b in c.needs):
                pending.remove(c)
                c.log = os.path.join(out, f"{c.name}.log")
                with open(c.log, "w") as log:
                    log.write(f"not run: build {', '.join(b for b in c.needs if b in broken)} failed\n")
                c.rc = 1
                print(f"   FAILED {c.name}: not run, a build it needs failed", flush=True)
                timings.append((c.name, 0.0, "FAILED"))
                continue
            if not all(b in made for b in c.needs):
                continue  # its builds are not made yet
            busy = LOADS[c.load] != 0
            if busy and blocked is not None:
                beside = sum(units(r) for r in running if r.load != "all")
                if c.load == "all" or beside + units(c) > cores + 1 - blocked:
                    continue
            if fits(c):
                pending.remove(c)
                c.log = os.path.join(out, f"{c.name}.log")
                c.started = time.monotonic()
                # The scripts build through kit.sh's sheetd_build, which skips what is made here.
                env = {**os.environ, "SHEETD_BUILT": " ".join(made)}
                with open(c.log, "wb") as log:
                    # A process group of its own: stopped as a whole if this run is interrupted.
                    c.proc = subprocess.Popen(["bash", "-c", c.command], cwd=ROOT, env=env, stdout=log,
                                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                              start_new_session=True)
                running.append(c)
                by_session[c.proc.pid] = c
                print(f"   start {c.name} ({c.load})", flush=True)
            elif busy and blocked is None:
                blocked = units(c)
        time.sleep(0.2)
        # Reaped here, not polled: the CPU time of a check (its command, what it reaped, and what it
        # left to this process) goes to timings.tsv beside its wall time (what its LOAD should say).
        ended = []
        for pid, status, cpu, sid in reap():
            owner = by_session.get(pid) or by_session.get(sid)
            if owner is None:
                other_cpu += cpu
                continue
            owner.cpu += cpu
            if owner.proc.pid == pid:
                owner.proc.returncode = os.waitstatus_to_exitcode(status)
                ended.append(owner)
        for c in ended:
            running.remove(c)
            c.rc, c.seconds = c.proc.returncode, time.monotonic() - c.started
            text = open(c.log, "rb").read().decode(errors="replace")
            reported = failures_reported(text)
            ok = c.rc == 0 and reported == 0
            if c in builds:
                (made if ok else broken).append(c.name[len("build-"):])
            got = counted(text)
            figure = got["others"] + got["load"] + got["swift"] + got["xctest"]
            print(f"   {'ok    ' if ok else 'FAILED'} {c.name} in {c.seconds:.0f} s, {c.cpu:.0f} s CPU ({figure} counted)"
                  + ("" if ok else f": exit {c.rc}, {reported} failures reported; log {c.log}"), flush=True)
            if not ok:
                print("".join("     | " + line for line in tail(c.log).splitlines(True)), end="", flush=True)
            timings.append((c.name, c.seconds, "ok" if ok else "FAILED", c))

    # 3. The count, over the outputs in manifest order, and the verdict.
    whole = ""
    failed_checks = [f"build-{b}" for b in broken]
    failures = len(broken)
    per_check = []
    for c in selected:
        text = open(c.log, "rb").read().decode(errors="replace")
        whole += text if text.endswith("\n") or not text else text + "\n"
        got = counted(text)
        per_check.append((c.name, got))
        reported = failures_reported(text)
        if c.rc != 0 or reported:
            failed_checks.append(c.name)
            failures += max(1, reported)
    total = counted(whole)
    passed = total["swift"] + total["xctest"] + total["others"] + total["load"]
    wall = time.monotonic() - began
    for pid, status, cpu, sid in reap():  # what ended since the last look
        owner = by_session.get(pid) or by_session.get(sid)
        if owner is None:
            other_cpu += cpu
        else:
            owner.cpu += cpu
    with open(os.path.join(out, "timings.tsv"), "w") as f:
        # The fourth column, CPU seconds (user + system; with what the check left running and this
        # run reaped when it could), is new: readers of the first three are unchanged. `other`: the
        # processes reaped here that no check's session owned (daemons that made a session of their
        # own); `total`: the whole run's, setup included.
        # The fifth, `start`: the seconds from the run's start to the step's (the schedule, to see
        # what ran beside what).
        f.write("step\tseconds\tresult\tcpu\tstart\n")
        f.writelines(f"{t[0]}\t{t[1]:.1f}\t{t[2]}\t{t[3].cpu:.1f}\t{t[3].started - began:.1f}\n" if len(t) > 3
                     else f"{t[0]}\t{t[1]:.1f}\t{t[2]}\t\t\n" for t in timings)
        if subreaper:
            f.write(f"other\t\t\t{other_cpu:.1f}\n")
        whole_cpu = os.times()
        f.write(f"total\t{wall:.1f}\t{'ok' if not failed_checks else 'FAILED'}\t"
                f"{whole_cpu.children_user + whole_cpu.children_system:.1f}\n")
    print()
    print("| check | tier | seconds | counted |")
    print("|---|---|---:|---:|")
    for c, (name, got) in zip(selected, per_check):
        print(f"| {name} | {c.tier} | {c.seconds:.0f} | {got['others'] + got['load']}"
              + (f" (+ {got['swift']} swift-testing, {got['xctest']} XCTest)" if got['swift'] or got['xctest'] else "")
              + " |")
    print(f"\ntest: {len(selected)} checks in {wall:.0f} s; logs and timings in .build/test/")
    if failed_checks:
        print(f"test: FAILED: {' '.join(failed_checks)}")
        print(f"test: {passed} passed, {failures} failed")
        return 1
    print(f"test: {passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
