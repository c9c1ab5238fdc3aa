#!/usr/bin/env python3
"""deploy/'s dashboard and alert rules against a real Prometheus scraping a live sheetd (see IntegrationTests/deploy-check).

  deploy_check.py --sheetd BINARY

Starts redis-server (so the store's series exist), sheetd on port 0 with --store, and Prometheus
on loopback (free ports) scraping sheetd every second with deploy/prometheus-rules.yml loaded;
puts a short load on sheetd (sessions, gestures, a frame stream with animations, a few 404s);
then asks Prometheus's HTTP API for every query in deploy/grafana-dashboard.json (targets and the
job variable) and every alert's query (its expression without the final threshold): each must
return data. Also checks that Prometheus evaluated every rule without an error. Prints one line
per check and "deploy-check: N passed, M failed". Everything started here is stopped by PID.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from sheetkit.harness import ROOT, Process, RedisServer, Sheetd, free_port, wait_until  # noqa: E402

DASHBOARD = os.path.join(ROOT, "deploy", "grafana-dashboard.json")
RULES = os.path.join(ROOT, "deploy", "prometheus-rules.yml")
JOB = "sheetd"
# What Grafana puts in place of its variables when the dashboard is shown for this job.
VARIABLES = {"$job": JOB, "$__rate_interval": "1m", "${datasource}": "prometheus"}


def http(method, url, body=None, headers=None):
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def dashboard_queries():
    """Every PromQL query of the dashboard: its panels' targets and its query variables."""
    dashboard = json.load(open(DASHBOARD))
    queries = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            queries.append((f"dashboard: {panel['title']} [{target['refId']}]", target["expr"]))
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            # label_values(METRIC, LABEL) is Grafana's: the series of METRIC must exist.
            found = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", variable["definition"])
            queries.append((f"dashboard: variable {variable['name']}", f"count by ({found.group(2)}) ({found.group(1)})"))
    return queries


def rule_queries():
    """Every alert rule's query: its expression without the final `<comparison> <number>`."""
    out = subprocess.run(
        ["python3", "-c", "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)", RULES],
        check=True, capture_output=True, text=True).stdout
    queries = []
    for group in json.loads(out)["groups"]:
        for rule in group["rules"]:
            expr = " ".join(rule["expr"].split())
            found = re.fullmatch(r"(.+?)\s*(?:>|<|>=|<=|==|!=)\s*[0-9.eE+-]+", expr)
            if not found:
                sys.exit(f"deploy-check: {rule.get('alert')}: the expression does not end in a threshold: {expr}")
            queries.append((f"rule: {rule.get('alert') or rule.get('record')}", found.group(1)))
    return queries


def load(port, seconds):
    """Sessions, gestures, show/dismiss animations on a watched session, 404s; for `seconds`."""
    base = f"http://127.0.0.1:{port}"
    json_headers = {"Content-Type": "application/json"}
    stop = time.monotonic() + seconds

    def stream():
        # A realtime frame stream on "watched" for the whole load: frames sent, lateness measured.
        with urllib.request.urlopen(f"{base}/sessions/watched/frames", timeout=seconds + 10) as response:
            while time.monotonic() < stop and response.readline():
                pass

    http("PUT", f"{base}/sessions/watched", b'{"initialDetent": "normal"}', json_headers)
    watcher = threading.Thread(target=stream, daemon=True)
    watcher.start()
    n = 0
    while time.monotonic() < stop:
        n += 1
        http("POST", f"{base}/sessions/watched/{'show' if n % 2 else 'dismiss'}", b"{}", json_headers)
        status, body = http("POST", f"{base}/sessions", b'{"initialDetent": "normal"}', json_headers)
        if status == 201:
            sid = json.loads(body)["id"]
            for event in (b'{"phase": "began"}', b'{"phase": "changed", "translation": -40, "velocity": -300}',
                          b'{"phase": "ended", "translation": -60, "velocity": -900}'):
                http("POST", f"{base}/sessions/{sid}/pan", event, json_headers)
            http("GET", f"{base}/sessions/{sid}")
        http("GET", f"{base}/sessions/missing-{n}")
        time.sleep(0.05)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sheetd", required=True)
    p.add_argument("--load-seconds", type=float, default=12)
    args = p.parse_args()
    processes = []
    scratch = tempfile.mkdtemp(prefix="deploy-check.")
    try:
        redis = RedisServer()
        processes.append(redis)
        redis.start()
        sheetd = Sheetd(args.sheetd, ["--store", redis.url, "--max-sessions", "5000", "--log-format", "json"],
                        log=os.path.join(scratch, "sheetd.log"))
        processes.append(sheetd)
        port = sheetd.start().port
        prometheus_port = free_port()
        config = os.path.join(scratch, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {RULES}\n"
                    f"scrape_configs:\n  - job_name: {JOB}\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{port}']\n")
        processes.append(Process(
            "prometheus", ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={scratch}/data",
                           f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(scratch, "prometheus.log"), "wb")).start())
        api = f"http://127.0.0.1:{prometheus_port}/api/v1"
        try:
            wait_until("prometheus", lambda: http("GET", f"http://127.0.0.1:{prometheus_port}/-/ready")[0] == 200,
                       30, interval=0.2)
        except RuntimeError as error:
            sys.exit(f"deploy-check: {error}")
        load(port, args.load_seconds)
        # The last scrapes and rule evaluations after the load: each query below is asked again
        # until it has series, and the rules until each was evaluated (a deadline that only bounds
        # a failing run: Prometheus scrapes and evaluates every second).
        settle_by = time.monotonic() + 60

        passed = failed = 0

        def check(name, ok, detail=""):
            nonlocal passed, failed
            passed, failed = passed + ok, failed + (not ok)
            print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}")

        for name, query in dashboard_queries() + rule_queries():
            for variable, value in VARIABLES.items():
                query = query.replace(variable, value)
            while True:
                status, body = http("GET", f"{api}/query?" + urllib.parse.urlencode({"query": query}))
                answer = json.loads(body)
                result = answer.get("data", {}).get("result", [])
                if (status == 200 and result) or time.monotonic() > settle_by:
                    break
                time.sleep(0.5)
            check(name, status == 200 and answer.get("status") == "success" and len(result) > 0,
                  f"HTTP {status}, {len(result)} series: {query} → {answer.get('error', body[:200])}")
        while True:
            status, body = http("GET", f"{api}/rules")
            rules = [r for g in json.loads(body)["data"]["groups"] for r in g["rules"]]
            if all(r.get("health") == "ok" for r in rules) or time.monotonic() > settle_by:
                break
            time.sleep(0.5)
        check("rules: every alert loaded", len(rules) == len(rule_queries()), f"{len(rules)} loaded")
        for rule in rules:
            check(f"rules: {rule['name']} evaluates", rule.get("health") == "ok", rule.get("lastError", ""))
        print(f"deploy-check: {passed} passed, {failed} failed")
        sys.exit(1 if failed else 0)
    finally:
        for process in reversed(processes):
            process.stop()
        subprocess.run(["rm", "-rf", scratch])


if __name__ == "__main__":
    main()
