#!/usr/bin/env python3
"""The Dockerfile's checks for IntegrationTests/dockerfile-check (run from the repository's root):
hadolint's verdict (HADOLINT_RC, HADOLINT_OUT) and a reason for every ignored rule; Debian 12 base
images with explicit tags and the builder's Swift version (SWIFT_VERSION); every source COPY takes from
the context exists and gets past .dockerignore; the apt packages exist in bookworm; the runtime stage's
promises (a release build, its resources, a non-root user, SHEETD_HOST). Ends with
`dockerfile-check: N passed, M failed`."""
import fnmatch, json, os, re, subprocess, sys

passed, failed = 0, 0
def check(ok, what):
    global passed, failed
    passed, failed = passed + bool(ok), failed + (not ok)
    print(f"{'ok  ' if ok else 'FAIL'} {what}")

# hadolint
out = os.environ["HADOLINT_OUT"].strip()
check(os.environ["HADOLINT_RC"] == "0" and not out,
      "hadolint: no finding" if not out else "hadolint:\n    " + out.replace("\n", "\n    "))
text = open("Dockerfile").read()
ignores = re.findall(r"^# hadolint ignore=(\S+)", text, re.M)
lines = text.splitlines()
# The reason for an ignored rule: a comment on the line right above the pragma.
unexplained = [f"line {i + 1}" for i, line in enumerate(lines) if line.startswith("# hadolint ignore=")
               and (i == 0 or not lines[i - 1].startswith("#") or lines[i - 1].startswith("# hadolint"))]
check(not unexplained, f"every `hadolint ignore` ({', '.join(sorted(set(ignores))) or 'none'}) has its reason in the "
      "comment above it" + (f"; not: {', '.join(unexplained)}" if unexplained else ""))

# Instructions, continuation lines joined, comments dropped.
instructions, buf = [], ""
for line in lines:
    if not buf and (not line.strip() or line.lstrip().startswith("#")):
        continue
    if buf and line.lstrip().startswith("#"):
        continue
    buf += line.rstrip()
    if buf.endswith("\\"):
        buf = buf[:-1] + " "
        continue
    word, _, rest = buf.strip().partition(" ")
    instructions.append((word.upper(), rest.strip()))
    buf = ""

# Stages.
stages, images = [], []
for word, rest in instructions:
    if word == "FROM":
        parts = rest.split()
        image = parts[0]
        if "--platform" in image:
            image = parts[1]
        name = parts[-1] if len(parts) >= 3 and parts[-2].upper() == "AS" else None
        if image not in stages:
            images.append(image)
        stages.append(name)
for image in images:
    repo, _, tag = image.partition(":")
    check(tag and tag != "latest" and "bookworm" in tag, f"FROM {image}: Debian 12 (bookworm), explicit tag")
builder = next((i for i in images if i.startswith("swift:")), "")
want = os.environ.get("SWIFT_VERSION", "")
check(builder and want and re.match(rf"{re.escape(want)}([.-]|$)", builder.split(":", 1)[1]),
      f"the builder's Swift ({builder or 'no swift image'}) is this machine's Swift {want or '?'}")

# COPY / ADD sources from the context.
tracked = set(subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split("\n")) - {""}
def tracked_under(path):
    path = path.rstrip("/")
    return [f for f in tracked if f == path or f.startswith(path + "/")]

patterns = []
if os.path.exists(".dockerignore"):
    for line in open(".dockerignore"):
        line = line.strip()
        if line and not line.startswith("#"):
            patterns.append((line.startswith("!"), line.lstrip("!").strip("/")))
def to_regex(p):
    out, i = "", 0
    while i < len(p):
        if p.startswith("**", i):
            out, i = out + ".*", i + 2
        elif p[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif p[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(p[i]), i + 1
    return re.compile(out + "$")
def ignored(path):
    """Docker's rule: the last pattern that matches the path or one of its parents decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    state = False
    for negated, p in patterns:
        rx = to_regex(p)
        if any(rx.match(x) for x in prefixes):
            state = not negated
    return state

copies = 0
for word, rest in instructions:
    if word not in ("COPY", "ADD"):
        continue
    args = rest.split()
    if any(a.startswith("--from") for a in args):
        continue
    args = [a for a in args if not a.startswith("--")]
    if args and args[0].startswith("["):
        args = json.loads(rest[rest.index("["):])
    sources = args[:-1]
    for src in sources:
        copies += 1
        src = src.lstrip("./") if src not in (".", "./") else "."
        if any(c in src for c in "*?["):
            matched = sorted(f for f in tracked if fnmatch.fnmatchcase(f, src))
            others = [x for x in sources if not any(c in x for c in "*?[")]
            check(others, f"{word} {src}: a wildcard (tracked matches: {', '.join(matched) or 'none'}); another "
                  f"source of the same {word} is a plain path, so the copy goes on either way")
            continue
        files = tracked_under(src) if src != "." else sorted(tracked)
        let_through = [f for f in files if not ignored(f)]
        check(files and let_through == files,
              f"{word} {src}: {len(files)} tracked file(s), {len(let_through)} let through by .dockerignore")
check(copies > 0, f"{copies} sources copied from the build context")

# Packages installed with apt-get exist in bookworm.
for word, rest in instructions:
    if word != "RUN" or "apt-get install" not in rest:
        continue
    for cmd in re.split(r"&&|;", rest):
        if "apt-get install" not in cmd:
            continue
        pkgs = [w.split("=")[0] for w in cmd.split("apt-get install", 1)[1].split() if not w.startswith("-")]
        for pkg in pkgs:
            r = subprocess.run(["apt-cache", "show", "--no-all-versions", pkg], capture_output=True, text=True)
            version = re.search(r"^Version: (\S+)", r.stdout, re.M)
            check(r.returncode == 0 and version, f"apt package {pkg} is in bookworm"
                  + (f" ({version.group(1)})" if version else ""))

# The image's promises (the last stage).
last = []
for word, rest in instructions:
    if word == "FROM":
        last = []
    last.append((word, rest))
def final(word):
    return [rest for w, rest in last if w == word]
runs = " ".join(rest for w, rest in instructions if w == "RUN")
check(re.search(r"swift build (.* )?-c release", runs) and "--product sheetd" in runs, "a release build of sheetd")
check("sheetd_SheetService.resources" in runs and any("--from" in c for c in final("COPY")),
      "the resource bundle goes next to the binary, copied from the build stage")
users = final("USER")
check(users and users[-1].split(":")[0] not in ("root", "0"), f"runs as a non-root user ({users[-1] if users else 'no USER'})")
envs = " ".join(final("ENV"))
check(re.search(r"SHEETD_HOST=0\.0\.0\.0", envs), "listens on 0.0.0.0 in the container (SHEETD_HOST)")
check(any("8080" in e.split() for e in final("EXPOSE")) and re.search(r"SHEETD_PORT=8080", envs), "EXPOSE 8080, SHEETD_PORT=8080")
def exec_form(value):
    """The JSON array of an exec-form instruction, or None for the shell form."""
    try:
        v = json.loads(value)
    except ValueError:
        return None
    return v if isinstance(v, list) and v and all(isinstance(x, str) for x in v) else None
ep = final("ENTRYPOINT")
entry = exec_form(ep[-1]) if ep else None
check(entry and entry[0].endswith("/sheetd"), f"exec-form ENTRYPOINT runs sheetd itself ({ep[-1] if ep else 'none'})")
hc = final("HEALTHCHECK")
hc_cmd = hc[-1].split("CMD", 1)[1].strip() if hc and "CMD" in hc[-1] else ""
probe = exec_form(hc_cmd) if hc_cmd else None
check(probe and entry and probe[:2] == [entry[0], "healthcheck"],
      f"HEALTHCHECK runs `sheetd healthcheck` in exec form ({hc_cmd or 'none'})")
print(f"dockerfile-check: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
