#!/usr/bin/env python3
"""What deploy/nginx.conf and deploy/haproxy.cfg send a second time, checked on the real proxies
(see IntegrationTests/proxy-retries).

    proxy_retries.py [--out DIR] [--kind nginx|haproxy|both]

A retried request that an instance had already applied is applied twice (issue 30): a duplicate
`began` throws away the drag's velocity samples, a duplicate `changed` adds a sample, a duplicate
`show` starts another animation. The rule the configs follow: a request is sent to a second
instance when it is idempotent (GET, PUT, DELETE; a creation, which the proxy turns into a PUT of an
id it drew; an event numbered by its `Sheetd-Seq` field, which sheetd answers once), or when it
never reached the first one (the connection failed). An unnumbered event (a POST to a session)
that reached an instance is never sent to another: its 502 or 503 goes to the client, who alone
can tell (sheetd's 503 says nothing was done).

Each proxy runs its file from deploy/ itself (sheetkit.harness.Proxy) in front of two recording
upstreams on loopback, which answer as the request's `X-Retry-Test` header tells them: `ok`;
`empty` (read the request, close the connection without an answer, as an instance killed
mid-request does); `empty-first` and `503-first` (the first upstream to see the request fails it
so, the next one answers). A third proxy of each kind has a dead upstream (a port nobody listens on)
before a live one. Verdicts are on what the upstreams received (how many times, which method and
path) and what the client got; nothing is timed. Prints one line per check and
`proxy-retries: N passed, M failed`. Everything is stopped by PID.
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import os
import sys
import threading
import uuid

from sheetkit.checklist import Checklist
from sheetkit.harness import HOST, ROOT, Proxy, free_ports


class Recorder:
    """What the upstreams received: (upstream, method, path, test id), in arrival order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[int, str, str, str]] = []

    def add(self, upstream: int, method: str, path: str, test: str) -> int:
        """Records one arrival; how many upstreams had received this test's request before."""
        with self.lock:
            before = sum(1 for s in self.seen if s[3] == test)
            self.seen.append((upstream, method, path, test))
            return before

    def of(self, test: str) -> list[tuple[int, str, str, str]]:
        with self.lock:
            return [s for s in self.seen if s[3] == test]


def upstream(n: int, port: int, recorder: Recorder) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def handle_any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            test = self.headers.get("X-Test-Id", "")
            mode = self.headers.get("X-Retry-Test", "ok")
            if not test:  # HAProxy's health checks, anything else: answered, not recorded
                return self.answer(200, {"status": "ok"})
            before = recorder.add(n, self.command, self.path, test)
            if mode == "empty" or (mode == "empty-first" and before == 0):
                self.close_connection = True  # nothing written: the proxy sees the connection close
                return
            if mode == "503-first" and before == 0:
                return self.answer(503, {"code": "draining", "status": 503}, {"Retry-After": "1"})
            self.answer(201 if self.command == "PUT" else 200, {"upstream": n})

        def answer(self, status: int, body: dict, headers: dict | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = handle_any

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request, client_address) -> None:
            pass  # a proxy closing its kept-alive connection to us: nothing to report

    server = Server((HOST, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def send(port: int, method: str, path: str, mode: str, body: bytes | None = b"{}",
         extra: dict | None = None) -> tuple[int, str]:
    """One request through the proxy on a new connection: (status, test id); status 0 if no answer."""
    test = uuid.uuid4().hex
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    headers = {"X-Test-Id": test, "X-Retry-Test": mode, **(extra or {})}
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=body if body is not None else None, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, test
    except (OSError, http.client.HTTPException):
        return 0, test
    finally:
        conn.close()


# What each request must get, behind both proxies, as (name, method, path, mode, client's status,
# how many upstreams receive it, the rule).
ROWS = [
    ("GET, first instance closes without an answer", "GET", "/sessions/s-get", "empty-first", 200, 2,
     "an idempotent request is sent on to the next instance after an empty answer"),
    ("PUT, first instance answers 503", "PUT", "/sessions/s-put", "503-first", 201, 2,
     "an idempotent request is sent on after a 503 (sheetd's 503: nothing done)"),
    ("DELETE, first instance closes without an answer", "DELETE", "/sessions/s-del", "empty-first", 200, 2,
     "a DELETE is idempotent: sent on"),
    ("POST /sessions, first instance answers 503", "POST", "/sessions", "503-first", 201, 2,
     "a creation is a PUT of an id the proxy drew: sent on, the same PUT"),
    ("POST /sessions, first instance closes without an answer", "POST", "/sessions", "empty-first", 201, 2,
     "a creation is a PUT of an id the proxy drew: sent on, the same PUT"),
    ("POST pan event, instance closes without an answer", "POST", "/sessions/s-ev/pan", "empty", 502, 1,
     "an event that reached an instance is never sent to another (it may have been applied)"),
    ("POST pan event, first instance answers 503", "POST", "/sessions/s-ev503/pan", "503-first", 503, 1,
     "an event's 503 goes to the client, who retries it (the proxy cannot tell a 503 from sheetd apart)"),
    ("POST show, instance closes without an answer", "POST", "/sessions/s-show/show", "empty", 502, 1,
     "a duplicate show would start another animation: never sent twice"),
    ("POST pan event, answered", "POST", "/sessions/s-ok/pan", "ok", 200, 1,
     "an event answered reaches one instance once"),
    # Numbered events (`Sheetd-Seq`, as sheet-client.js sends them): the instance that gets one again
    # answers it as the first was and applies nothing twice, so the proxy may send it on.
    ("POST pan event with Sheetd-Seq, first instance closes without an answer", "POST",
     "/sessions/s-num/pan?frames=30", "empty-first", 200, 2,
     "a numbered event is sent on after an empty answer, to the same path and query"),
    ("POST show with Sheetd-Seq, first instance answers 503", "POST", "/sessions/s-num503/show", "503-first", 200, 2,
     "a numbered event is sent on after a 503"),
    ("POST pan event with Sheetd-Seq, answered", "POST", "/sessions/s-numok/pan", "ok", 200, 1,
     "a numbered event answered reaches one instance once"),
]
# The rows whose request is numbered.
NUMBERED = {"/sessions/s-num/pan?frames=30", "/sessions/s-num503/show", "/sessions/s-numok/pan"}
# Behind a proxy whose first choice for some sessions is a port nobody listens on.
DEAD_SESSIONS = 24


def run_kind(kind: str, out: str, checks: Checklist, recorder: Recorder) -> None:
    p1, p2, dead, proxy_port, dead_proxy_port = free_ports(5)
    servers = [upstream(1, p1, recorder), upstream(2, p2, recorder)]
    # max_fails=0 (nginx) and no health checks (haproxy) on the dead port: every request is tried
    # on the instance the ring gives it, whatever happened to the previous ones, so the rows do not
    # depend on each other or on a health check's timing.
    proxies = []
    try:
        proxies.append(Proxy(kind, os.path.join(out, kind), proxy_port, [p1, p2], "max_fails=0").start())
        for name, method, path, mode, want_status, want_seen, rule in ROWS:
            numbered = path in NUMBERED
            status, test = send(proxy_port, method, path, mode, extra={"Sheetd-Seq": "7"} if numbered else None)
            seen = recorder.of(test)
            paths = {(m, p) for _, m, p, _ in seen}
            ok = status == want_status and len(seen) == want_seen
            if numbered:
                # Every try is the client's request: its method, path and query, nothing rewritten.
                ok = ok and paths == {(method, path)}
            if method == "POST" and path == "/sessions":
                # The same PUT /sessions/{id} each time: one id drawn by the proxy, kept on a retry.
                ok = ok and len(paths) == 1 and next(iter(paths))[0] == "PUT"
            checks.check(ok, f"{kind}: {name}: {want_status}, received {want_seen}× ({rule})",
                         f"client got {status}; upstreams received {seen}")
        proxies.append(Proxy(kind, os.path.join(out, kind + "-dead"), dead_proxy_port, [dead, p1], "max_fails=0",
                             haproxy_server_params="no-check").start())
        statuses, received, upstreams_tried = [], [], 0
        for k in range(DEAD_SESSIONS):
            status, test = send(dead_proxy_port, "POST", f"/sessions/dead-{k}/pan", "ok")
            statuses.append(status)
            received.append(len(recorder.of(test)))
        log = open(os.path.join(out, kind + "-dead", "access.log"), errors="replace").read()
        if kind == "nginx":
            # "$upstream_addr": "dead, live" when the first try failed.
            upstreams_tried = sum(1 for line in log.splitlines() if f"127.0.0.1:{dead}," in line)
        else:
            # The log's "%rc" field (retries) is nonzero when the first server failed.
            upstreams_tried = sum(1 for line in log.splitlines() if "/pan" in line and '"0"' not in line.split()[-2])
        checks.check(all(s == 200 for s in statuses) and all(r == 1 for r in received) and upstreams_tried > 0,
                     f"{kind}: POST pan events whose first instance refuses the connection: all 200, each received "
                     f"once, {upstreams_tried} of {DEAD_SESSIONS} sent on from the dead port (a request never sent "
                     "is safe to send elsewhere)",
                     f"statuses {statuses}; received {received}; sent on {upstreams_tried}")
    finally:
        for p in proxies:
            p.stop()
        for s in servers:
            s.shutdown()
            s.server_close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, ".build", "proxy-retries"))
    parser.add_argument("--kind", choices=["nginx", "haproxy", "both"], default="both")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    checks = Checklist("proxy-retries")
    recorder = Recorder()
    for kind in (["nginx", "haproxy"] if args.kind == "both" else [args.kind]):
        print(f"{kind} (deploy/{'nginx.conf' if kind == 'nginx' else 'haproxy.cfg'}):", flush=True)
        try:
            run_kind(kind, args.out, checks, recorder)
        except RuntimeError as error:
            checks.check(False, f"{kind}: the proxy ran", str(error))
    checks.write(os.path.join(args.out, "latest.md"), "deploy/'s proxies against recording upstreams.\n\n")
    print(checks.summary())
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
