#!/usr/bin/env python3
"""deploy/kubernetes/ checked offline (see IntegrationTests/k8s-check).

    k8s_check.py --sheetd BINARY [--write-router-config]

Renders the kustomization as `kubectl apply -k` would for these files (its resources in order, its
labels added to every object's metadata; the files use nothing else of kustomize), validates every
object against the Kubernetes OpenAPI schemas of two versions (kubernetes-validate, strict: an
unknown field is an error), then checks the invariants between the files, one row each, and runs
the sheetd binary with the manifest's environment. `--write-router-config` writes
router-config.yaml from deploy/nginx.conf (the ConfigMap must hold that file verbatim).
Prints one line per check and `k8s-check: N passed, M failed`.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import subprocess
import sys
import time

import kubernetes_validate
import yaml

from sheetkit.checklist import Checklist
from sheetkit.harness import ROOT, Sheetd, wait_until

DIR = os.path.join(ROOT, "deploy", "kubernetes")
NGINX_CONF = os.path.join(ROOT, "deploy", "nginx.conf")
ROUTER_CONFIG = os.path.join(DIR, "router-config.yaml")
# Two versions a cluster runs today (the oldest one still supported upstream, and the newest).
VERSIONS = ["1.32.0", "1.37.0"]
# What a session can cost at worst (docs/RELIABILITY.md: 16 detents of 32-byte names), and what
# the process needs besides (RSS of an idle release sheetd is about 30 MiB; twice that).
WORST_SESSION_BYTES = 12_300
PROCESS_BYTES = 64 << 20
# From the end of --drain-grace to the exit: streams closed, answers in flight, the last write to
# Redis; measured at most 5.1 s against a primary that had died (docs/RELIABILITY.md). The grace
# must cover it with this much.
DRAIN_TAIL_SECONDS = 10


def render() -> list[dict]:
    kustomization = yaml.safe_load(open(os.path.join(DIR, "kustomization.yaml")))
    labels = {}
    for entry in kustomization.get("labels", []):
        labels.update(entry.get("pairs", {}))
    objects = []
    for resource in kustomization["resources"]:
        for doc in yaml.safe_load_all(open(os.path.join(DIR, resource))):
            if doc is None:
                continue
            doc.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
            doc["_file"] = resource
            objects.append(doc)
    return objects


def router_config_text() -> str:
    """router-config.yaml as it must be: deploy/nginx.conf verbatim, the upstream lines of the
    per-instance Services, the listen line."""
    conf = open(NGINX_CONF).read()
    statefulset = next(d for d in yaml.safe_load_all(open(os.path.join(DIR, "sheetd.yaml")))
                       if d and d["kind"] == "StatefulSet")
    upstreams = "".join(f"server sheetd-{n}:8080 max_fails=0;\n" for n in range(statefulset["spec"]["replicas"]))
    indent = lambda text: "".join("    " + line if line.strip() else "\n" for line in text.splitlines(True))
    return ("# Written by IntegrationTests/k8s_check.py --write-router-config: deploy/nginx.conf verbatim,\n"
            "# with the two files it includes. Do not edit here: edit deploy/nginx.conf, or the StatefulSet's\n"
            "# replicas in sheetd.yaml (one upstream line per instance, each the Service of that instance;\n"
            "# max_fails=0 as docs/DEPLOYMENT.md advises with the store), and write this file again.\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sheetd-router\ndata:\n"
            f"  nginx.conf: |\n{indent(conf)}"
            f"  sheetd-upstreams.conf: |\n{indent(upstreams)}"
            "  sheetd-listen.conf: |\n    listen 8080;\n")


def containers(obj: dict) -> list[dict]:
    spec = obj.get("spec", {}).get("template", {}).get("spec", {})
    return spec.get("initContainers", []) + spec.get("containers", [])


def env_of(container: dict) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def memory_bytes(quantity: str) -> int:
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1000, "M": 10**6, "G": 10**9}
    found = re.fullmatch(r"(\d+)([A-Za-z]*)", quantity)
    return int(found.group(1)) * units.get(found.group(2), 1)


def get(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sheetd", required=True)
    parser.add_argument("--write-router-config", action="store_true")
    args = parser.parse_args()
    if args.write_router_config:
        with open(ROUTER_CONFIG, "w") as f:
            f.write(router_config_text())
        print(f"wrote {os.path.relpath(ROUTER_CONFIG, ROOT)}")
        return 0
    checks = Checklist("k8s-check")
    objects = render()
    by = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    listed = set(yaml.safe_load(open(os.path.join(DIR, "kustomization.yaml")))["resources"])
    on_disk = {f for f in os.listdir(DIR) if f.endswith(".yaml") and f != "kustomization.yaml"}
    checks.check(listed == on_disk, "every manifest in deploy/kubernetes/ is in kustomization.yaml, and only those",
                 f"listed {sorted(listed)}, on disk {sorted(on_disk)}")

    # 1. The schemas (strict: a misspelt field is an error, not ignored).
    for version in VERSIONS:
        for o in objects:
            doc = {k: v for k, v in o.items() if k != "_file"}
            try:
                kubernetes_validate.validate(doc, version, strict=True)
                ok, detail = True, ""
            except Exception as e:  # ValidationError, or a kind the version does not know
                ok, detail = False, f"{type(e).__name__}: {str(e)[:500]}"
            checks.check(ok, f"Kubernetes {version} schema: {o['kind']} {o['metadata']['name']} ({o['_file']})", detail)

    sts = by[("StatefulSet", "sheetd")]
    sheetd = next(c for c in containers(sts) if c["name"] == "sheetd")
    env = env_of(sheetd)
    pod = sts["spec"]["template"]["spec"]

    # 2. Probes: liveness on /livez, readiness on /readyz, on the container's port.
    checks.check(sheetd["livenessProbe"]["httpGet"]["path"] == "/livez"
                 and sheetd["readinessProbe"]["httpGet"]["path"] == "/readyz",
                 "sheetd: liveness probes GET /livez, readiness GET /readyz (the instance drains with readiness 503)")
    port_names = {p["name"]: p["containerPort"] for p in sheetd["ports"]}
    probe_ports = [sheetd[p]["httpGet"]["port"] for p in ("livenessProbe", "readinessProbe", "startupProbe") if p in sheetd]
    checks.check(all(p in port_names or p in port_names.values() for p in probe_ports) and 8080 in port_names.values(),
                 "sheetd: probes on the container's port, 8080 (the Dockerfile's SHEETD_PORT)", f"{probe_ports}, {port_names}")

    # 3. The grace covers the drain.
    grace = float(env.get("SHEETD_DRAIN_GRACE", "5"))
    period = pod.get("terminationGracePeriodSeconds", 30)
    checks.check(period >= grace + DRAIN_TAIL_SECONDS,
                 f"terminationGracePeriodSeconds {period} ≥ SHEETD_DRAIN_GRACE {grace:g} + {DRAIN_TAIL_SECONDS} s "
                 "(streams closed, answers in flight, the last write to Redis)")

    # 4. Flags: every SHEETD_* variable and every flag in the manifest is one `sheetd --help` names.
    help_text = subprocess.run([args.sheetd, "serve", "--help"], capture_output=True, text=True).stdout
    unknown = [k for k in env if k.startswith("SHEETD_") and f"({k}" not in help_text and f"{k}=" not in help_text]
    flags = [a.split("=")[0] for a in sheetd.get("args", []) if a.startswith("--")]
    unknown += [f for f in flags if f not in help_text]
    checks.check(not unknown and all(k.startswith("SHEETD_") for k in env),
                 f"sheetd: the manifest's {len(env)} variables and {len(flags)} flags are all in `sheetd --help`", str(unknown))

    # 5. Security: non-root, read-only root, no privilege escalation, no capabilities, everywhere.
    dockerfile_user = re.search(r"^USER (\d+)", open(os.path.join(ROOT, "Dockerfile")).read(), re.M).group(1)
    checks.check(pod["securityContext"].get("runAsUser") == int(dockerfile_user),
                 f"sheetd runs as the Dockerfile's USER ({dockerfile_user})")
    for o in objects:
        if o["kind"] not in ("StatefulSet", "Deployment"):
            continue
        pod_security = o["spec"]["template"]["spec"].get("securityContext", {})
        for c in containers(o):
            sc = c.get("securityContext", {})
            ok = (pod_security.get("runAsNonRoot") is True and sc.get("readOnlyRootFilesystem") is True
                  and sc.get("allowPrivilegeEscalation") is False and sc.get("capabilities", {}).get("drop") == ["ALL"]
                  and pod_security.get("seccompProfile", {}).get("type") == "RuntimeDefault")
            checks.check(ok, f"{o['kind']} {o['metadata']['name']}/{c['name']}: non-root, read-only root file system, "
                             "no privilege escalation, no capabilities, RuntimeDefault seccomp", f"{pod_security} {sc}")
            limits = c.get("resources", {}).get("limits", {})
            checks.check("cpu" in limits and "memory" in limits,
                         f"{o['kind']} {o['metadata']['name']}/{c['name']}: CPU and memory limits", str(c.get("resources")))
        checks.check(o["spec"]["template"]["spec"].get("automountServiceAccountToken") is False,
                     f"{o['kind']} {o['metadata']['name']}: no service account token (nothing here talks to the API)")

    # 6. Memory: the session cap at its worst, the backlog and the process fit the limit.
    limit = memory_bytes(sheetd["resources"]["limits"]["memory"])
    need = (int(env.get("SHEETD_MAX_SESSIONS", "100000")) * WORST_SESSION_BYTES
            + (int(env.get("SHEETD_STORE_BACKLOG", "64")) << 20) + PROCESS_BYTES)
    checks.check(need <= limit, f"sheetd: SHEETD_MAX_SESSIONS × {WORST_SESSION_BYTES:,} B + the backlog + "
                                f"{PROCESS_BYTES >> 20} MiB = {need / (1 << 20):.0f} MiB ≤ the limit, {limit >> 20} MiB")

    # 7. Selectors: every Service and PodDisruptionBudget selects pods of a workload here.
    workloads = [o for o in objects if o["kind"] in ("StatefulSet", "Deployment")]
    for o in objects:
        if o["kind"] not in ("Service", "PodDisruptionBudget"):
            continue
        selector = o["spec"]["selector"]
        selector = selector.get("matchLabels", selector) if o["kind"] == "PodDisruptionBudget" else selector
        pod_name = selector.get("statefulset.kubernetes.io/pod-name")
        plain = {k: v for k, v in selector.items() if k != "statefulset.kubernetes.io/pod-name"}
        matches = [w for w in workloads if plain.items() <= w["spec"]["template"]["metadata"]["labels"].items()]
        ok = len(matches) == 1
        if ok and pod_name:
            w = matches[0]
            ok = w["kind"] == "StatefulSet" and re.fullmatch(rf"{w['metadata']['name']}-(\d+)", pod_name) is not None \
                and int(pod_name.rsplit("-", 1)[1]) < w["spec"]["replicas"]
        if ok and o["kind"] == "Service":
            names = {p["name"] for c in containers(matches[0]) for p in c.get("ports", [])}
            ok = all(p["targetPort"] in names for p in o["spec"]["ports"])
        checks.check(ok, f"{o['kind']} {o['metadata']['name']} selects the pods of exactly one workload"
                         + (f" (pod {pod_name})" if pod_name else "") + " on a port they name", str(selector))

    # 8. The router: deploy/nginx.conf verbatim; one upstream per instance, each that instance's
    #    Service, which publishes a draining (not ready) pod; the StatefulSet's PDB takes one at a time.
    config = by[("ConfigMap", "sheetd-router")]["data"]
    checks.check(config.get("nginx.conf") == open(NGINX_CONF).read(),
                 "router: the ConfigMap's nginx.conf is deploy/nginx.conf byte for byte "
                 "(k8s_check.py --write-router-config writes it)")
    checks.check(open(ROUTER_CONFIG).read() == router_config_text(),
                 "router: router-config.yaml is as --write-router-config writes it (upstreams from the replicas)")
    upstreams = re.findall(r"^server (\S+):(\d+)(.*);$", config.get("sheetd-upstreams.conf", ""), re.M)
    replicas = sts["spec"]["replicas"]
    services = [by.get(("Service", host)) for host, _, _ in upstreams]
    checks.check(len(upstreams) == replicas and all(s is not None for s in services)
                 and [h for h, _, _ in upstreams] == [f"sheetd-{n}" for n in range(replicas)],
                 f"router: one upstream per instance ({replicas}), each the Service of that instance",
                 f"{upstreams}")
    checks.check(all(s is not None and s["spec"].get("publishNotReadyAddresses") is True
                     and s["spec"].get("clusterIP") != "None" for s in services),
                 "router: each instance's Service keeps a ClusterIP (stable while the pod restarts: nginx resolves "
                 "names once) and publishes a draining pod (it keeps its sessions during its grace)")
    checks.check(all("max_fails=0" in params for _, _, params in upstreams),
                 "router: max_fails=0 on every upstream (docs/DEPLOYMENT.md: with the store, a draining instance "
                 "keeps its sessions)")
    checks.check(config.get("sheetd-listen.conf", "").strip() == "listen 8080;"
                 and by[("Service", "sheetd-router")]["spec"]["ports"][0]["targetPort"] == "http",
                 "router: listens on 8080 (not root: no port under 1024), its Service sends there")
    router = by[("Deployment", "sheetd-router")]["spec"]["template"]["spec"]
    mounts = {m["mountPath"] for c in router["containers"] for m in c.get("volumeMounts", [])}
    nginx_args = " ".join(router["containers"][0].get("args", []))
    checks.check("/etc/sheetd-router" in mounts and "-c /etc/sheetd-router/nginx.conf" in nginx_args
                 and "-p /var/run/sheetd-router/" in nginx_args and "/var/run/sheetd-router" in mounts,
                 "router: nginx reads the ConfigMap's nginx.conf, its prefix (logs, temporary files) is writable")
    pdb = by[("PodDisruptionBudget", "sheetd")]["spec"]
    checks.check(pdb.get("maxUnavailable") == 1 and replicas >= 2,
                 f"sheetd: a PodDisruptionBudget lets one of the {replicas} instances go at a time")

    # 9. The store: SHEETD_STORE names the three Sentinels of redis.yaml and the group they monitor.
    redis_sts = by[("StatefulSet", "redis")]
    script = by[("ConfigMap", "redis")]["data"]["configure.sh"]
    group = re.search(r"sentinel monitor (\S+) \S+ 6379 (\d+)", script)
    store = env.get("SHEETD_STORE", "")
    want = "redis+sentinel://" + ",".join(f"redis-{n}.redis:26379" for n in range(redis_sts["spec"]["replicas"])) \
        + f"/{group.group(1)}"
    checks.check(store == want, f"sheetd: SHEETD_STORE names every Sentinel of redis.yaml and its group: {want}", store)
    quorum = int(group.group(2))
    sentinels = redis_sts["spec"]["replicas"]
    checks.check(sentinels // 2 < quorum <= sentinels and sentinels >= 3,
                 f"redis: quorum {quorum} of {sentinels} Sentinels (a majority: one partition cannot fail over alone)")
    sentinel_container = next(c for c in containers(redis_sts) if c["name"] == "sentinel")
    checks.check(any(m["mountPath"] == "/conf" for m in sentinel_container["volumeMounts"])
                 and "dir /conf" in script and "sentinel announce-hostnames yes" in script
                 and "replica-announce-ip" in script,
                 "redis: each Sentinel can rewrite its file (/conf is writable); servers and Sentinels announce "
                 "DNS names, not pod IPs")
    # The fence: a write carries the store deadline (SHEETD_STORE_DEADLINE, sheetd's default 1 s), and
    # a primary stopped past it refuses the write when it wakes. That holds only while no replica can
    # be promoted first: the Sentinels wait down-after-milliseconds before they call it down.
    down_after = re.search(r"sentinel down-after-milliseconds \S+ (\d+)", script)
    deadline_ms = float(env.get("SHEETD_STORE_DEADLINE", "1")) * 1000
    checks.check(down_after is not None and deadline_ms < int(down_after.group(1)),
                 f"sheetd: SHEETD_STORE_DEADLINE ({deadline_ms:.0f} ms) is below the Sentinels' "
                 f"down-after-milliseconds ({down_after.group(1) if down_after else 'not set'}): a write a stopped "
                 "primary held is past its deadline before a replica can be promoted")
    # The init script itself, parsed by the shell.
    ok = subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0
    checks.check(ok, "redis: configure.sh parses (sh -n)")

    # 10. The manifest's sheetd: the binary with its environment (the store swapped for memory,
    #     loopback and a free port): /livez and /readyz 200; after SIGTERM /readyz 503 and /livez
    #     200 (draining), as the probes expect.
    run_env = {k: v for k, v in env.items() if k != "SHEETD_STORE"}
    run_env.update({"SHEETD_STORE": "memory"})
    s = Sheetd(args.sheetd, ["--log-level", "warning"], env=run_env)
    try:
        s.start()
        before = (get(s.port, "/livez"), get(s.port, "/readyz"))
        s.proc.send_signal(signal.SIGTERM)
        wait_until("readiness 503", lambda: get(s.port, "/readyz") == 503, 10)
        during = (get(s.port, "/livez"), get(s.port, "/readyz"))
        checks.check(before == (200, 200) and during == (200, 503),
                     f"sheetd with the manifest's environment: /livez, /readyz {before[0]}, {before[1]}; draining "
                     f"{during[0]}, {during[1]}", f"{before} {during}")
    except RuntimeError as error:
        checks.check(False, "sheetd with the manifest's environment started", str(error))
    finally:
        if s.alive():
            s.proc.kill()
            s.proc.wait()
    out = os.path.join(ROOT, ".build", "k8s-check")
    os.makedirs(out, exist_ok=True)
    checks.write(os.path.join(out, "latest.md"), f"deploy/kubernetes/, {len(objects)} objects, schemas {VERSIONS}.\n\n")
    print(checks.summary())
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
