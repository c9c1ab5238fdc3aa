"""Starting and stopping what the checks and benchmarks run against, on loopback: sheetd, redis-server,
and deploy/'s nginx or haproxy in front of sheetd instances.

Every check, script and benchmark that starts a sheetd does it here, the one way: port 0 and the bound
port found (from sheetd's "listening on" log line when the log is a file and sheetd logs at info or
below, otherwise from the process's listening socket in /proc), the process started with the caller's
flags, environment and an optional prefix command that execs it (taskset, valgrind), readiness (GET
/readyz answers 200, or the process exits: a failure), and a stop by PID (SIGTERM, then SIGKILL after
the timeout) that returns the exit status. Standard library only.

As a module (IntegrationTests/ and Benchmarks/ import it from the kit, testkit/):

    with Sheetd(flags=["--log-level", "warning"]) as sheetd:   # SHEETD_BIN or .build/debug/sheetd
        talk_to(sheetd.port)
    status = sheetd.status                                     # its exit status after the SIGTERM

From a shell (the bash checks), around one command, which they nest:

    python3 -m sheetkit.harness sheetd [--name CHECK] [--bin B] [--log FILE] [--flags "…"] [--count K] \\
        [--exit-status FILE] [--stop-timeout S] COMMAND…

starts sheetd (K instances; --log may hold {n}), runs COMMAND with SHEETD_URL
(http://127.0.0.1:PORT/), SHEETD_PID, SHEETD_LOG, SHEETD_PORTS and SHEETD_PIDS (space-separated) in its
environment (not SHEETD_PORT: sheetd itself reads that one) and `{port}`, `{url}`, `{pid}` and `{ports}`
(comma-separated) in its arguments replaced, then stops each instance by PID, in order, and writes their exit statuses to --exit-status (each a
number, `timeout`, or `died N` when it had exited before COMMAND ended; anything but 0 is also said on
stderr, prefixed with --name); exits with COMMAND's status.

    python3 -m sheetkit.harness redis [--port P] [--log FILE] [--dir D] COMMAND…
    python3 -m sheetkit.harness proxy --kind nginx|haproxy --out DIR --port P --servers P1,P2… \\
        [--server-params "…"] COMMAND…

do the same with a redis-server (REDIS_PORT, REDIS_URL, `{redis_url}`) and with deploy/'s nginx or
haproxy in front of the given instances (PROXY_PORT, PROXY_PID, `{proxy_pid}`).
`python3 -m sheetkit.harness free-ports N` prints N distinct free loopback ports.

From a shell that keeps the server across several commands (the benchmarks, which restart it per run):

    python3 -m sheetkit.harness start [--bin B] [--log FILE] [--flags "…"] [--prefix "…"]

starts one sheetd the same way and prints `PID PORT` once it is ready, leaving it running;
`python3 -m sheetkit.harness stop PID [--stop-timeout S]` stops it by PID (SIGTERM, then SIGKILL).
testkit/kit.sh wraps the two as `sheetd_start` and `sheetd_stop`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from typing import Callable, Sequence

# The repository: the kit lives in testkit/sheetkit/ and is installed editable (the files stay here).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = "127.0.0.1"
# sheetd's info line that names the bound port (Sources/sheetd/Sheetd.swift).
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")
# Log levels at which sheetd prints that line.
PRINTS_PORT = {"trace", "debug", "info"}


def free_ports(count: int, host: str = HOST) -> list[int]:
    """`count` distinct free ports: all bound at once (so that they differ), then released."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def free_port(host: str = HOST) -> int:
    return free_ports(1, host)[0]


def socket_inodes(pid: int) -> set[str]:
    """The inodes of process `pid`'s socket descriptors (/proc/PID/fd links `socket:[N]`)."""
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def tcp_rows() -> list[tuple[str, list[str]]]:
    """Every row of /proc/net/tcp and /proc/net/tcp6, as (table, columns): local_address and
    rem_address are HEXIP:HEXPORT, st (0A: LISTEN) the fourth column, the inode the tenth."""
    rows = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows += [(table, line.split()) for line in f.read().splitlines()[1:]]
        except OSError:
            continue
    return rows


def listening_port(pid: int) -> int | None:
    """The TCP port process `pid` listens on (its first listening socket): the inodes of its socket
    descriptors, looked up among the listening sockets of TCP's tables. None while it listens on none."""
    inodes = socket_inodes(pid)
    for _table, cols in tcp_rows():
        if len(cols) > 9 and cols[3] == "0A" and cols[9] in inodes:
            return int(cols[1].rsplit(":", 1)[1], 16)
    return None


def default_binary(config: str = "debug") -> str:
    """$SHEETD_BIN, else the build's sheetd (.build/debug or .build/release; under scripts/test, whose
    release build is the container image's, .build-image/release: kit.sh's sheetd_build)."""
    if config == "release" and "release" in os.environ.get("SHEETD_BUILT", "").split():
        return os.environ.get("SHEETD_BIN") or os.path.join(ROOT, ".build-image", "release", "sheetd")
    return os.environ.get("SHEETD_BIN") or os.path.join(ROOT, ".build", config, "sheetd")


def wait_until(what: str, ready: Callable[[], bool], seconds: float = 10, interval: float = 0.05,
               alive: Callable[[], bool] = lambda: True) -> None:
    """Polls `ready` (an OSError counts as not yet) until it holds; raises when `alive` fails or time is up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except OSError:
            pass
        if not alive():
            raise RuntimeError(f"{what} exited before it was ready")
        time.sleep(interval)
    raise RuntimeError(f"{what} was not ready within {seconds:g} s")


class KeepAlive:
    """One keep-alive HTTP/1.1 connection to a port, as a client with a connection pool of one holds
    it: opened on first use, dropped after a transport error or an answer with `Connection: close`,
    and opened again by the next request."""

    def __init__(self, port: int, host: str = HOST, timeout: float = 15) -> None:
        self.port, self.host, self.timeout = port, host, timeout
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body=None) -> tuple[int, bytes, dict[str, str], str]:
        """Sends `body` as JSON (when given): (status, body bytes, headers with lower-cased names,
        the transport error). Status 0 and the error's text when there was no answer."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return 0, b"", {}, f"{type(e).__name__}: {e}"
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        if answer_headers.get("connection", "").lower() == "close":
            self.close()
        return response.status, raw, answer_headers, ""

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def decoded(raw: bytes):
    """A body as JSON, or as text when it is not JSON; None when empty."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def answers(port: int, path: str = "/readyz", host: str = HOST) -> bool:
    """GET `path` on a new connection answers 200."""
    conn = http.client.HTTPConnection(host, port, timeout=1)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status == 200
    finally:
        conn.close()


class Process:
    """A child process stopped by its PID: SIGTERM, then SIGKILL after `timeout` seconds. `command` and
    `popen` (subprocess.Popen's keywords) say how to start it; Sheetd and RedisServer know their own."""

    def __init__(self, name: str, command: Sequence[str] = (), **popen) -> None:
        self.name = name
        self.command = list(command)
        self.popen = popen
        self.proc: subprocess.Popen | None = None
        self.status: int | str | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10) -> int | str:
        """The exit status after SIGTERM, or "timeout" when it had to be killed."""
        if self.proc is None:
            return "not started"
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.status = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.status = "timeout"
        elif self.status is None:
            self.status = self.proc.returncode
        return self.status

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self):
        self.proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, **self.popen)
        return self


class Sheetd(Process):
    """One sheetd on loopback. `port=None`: port 0 read back from the log when sheetd prints it there,
    else a free port; `log`: a path (appended to), None (inherit this process's output) or a file object."""

    def __init__(self, binary: str | None = None, flags: Sequence[str] = (), port: int | None = None,
                 log=None, env: dict[str, str] | None = None, ready_seconds: float = 30,
                 prefix: Sequence[str] = ()) -> None:
        super().__init__("sheetd")
        self.prefix = list(prefix)  # a command that execs the rest (taskset -c N): the PID stays sheetd's
        self.binary = binary or default_binary()
        self.flags = list(flags)
        self.port = port
        self.log = log
        self.env = env
        self.ready_seconds = ready_seconds

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def _log_level(self) -> str:
        for i, flag in enumerate(self.flags):
            if flag == "--log-level" and i + 1 < len(self.flags):
                return self.flags[i + 1]
            if flag.startswith("--log-level="):
                return flag.split("=", 1)[1]
        return os.environ.get("SHEETD_LOG_LEVEL", "info")

    def start(self) -> "Sheetd":
        """Launches sheetd and waits until it is ready; stops it and raises RuntimeError if it is not."""
        self.launch()
        self.wait_ready()
        return self

    def launch(self) -> "Sheetd":
        """Starts the process only (wait_ready waits for it)."""
        self._log_path = self.log if isinstance(self.log, str) else None
        # Port 0 unless told (here or in the flags): the bound port is read from the log line, or
        # else from /proc.
        self._find_port = self.port is None
        self._read_log = self._find_port and self._log_path is not None and self._log_level() in PRINTS_PORT
        command = self.prefix + [self.binary] + self.flags
        if "--host" not in self.flags:
            command += ["--host", HOST]
        if "--port" not in self.flags:
            command += ["--port", "0" if self._find_port else str(self.port)]
        self.command = command
        env = None if self.env is None else {**os.environ, **self.env}
        if self._log_path is not None:
            with open(self._log_path, "ab") as out:
                self._offset = out.tell()
                self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env=env)
        else:
            out = self.log
            self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT if out else None,
                                         stdin=subprocess.DEVNULL, env=env)
        return self

    def wait_ready(self, seconds: float | None = None) -> None:
        seconds = self.ready_seconds if seconds is None else seconds
        try:
            if self._find_port:
                def bound() -> bool:
                    if self._read_log:
                        with open(self._log_path, "rb") as f:
                            f.seek(self._offset)
                            found = LISTENING.search(f.read().decode(errors="replace"))
                        self.port = int(found.group(1)) if found else None
                    else:
                        self.port = listening_port(self.pid)
                    return self.port is not None
                wait_until("sheetd", bound, seconds, alive=self.alive)
            wait_until("sheetd", lambda: answers(self.port), seconds, interval=0.02, alive=self.alive)
        except RuntimeError as error:
            self.stop()
            tail = ""
            if self._log_path is not None:
                with open(self._log_path, "rb") as f:
                    tail = f.read()[-2000:].decode(errors="replace")
            raise RuntimeError(f"{error}: {' '.join(self.command)}\n{tail}") from None


class RedisServer(Process):
    """A redis-server on a free loopback port, nothing saved to disk unless told: `appendfsync`
    ("always" or "everysec") turns the append-only file on, in `directory` (which a restart on the
    same port and folder reads back); `replica_of` (a port on loopback) starts it as that server's
    replica. `kill`, `pause` and `resume` are the store's faults (SIGKILL, SIGSTOP, SIGCONT)."""

    def __init__(self, port: int | None = None, log=subprocess.DEVNULL, extra: Sequence[str] = (), *,
                 appendfsync: str | None = None, directory: str | None = None,
                 replica_of: int | None = None) -> None:
        super().__init__("redis-server")
        self.port = port or free_port()
        self.log = log
        self.extra = list(extra)
        # Later arguments win in redis-server's command line: these override the defaults below.
        if appendfsync is not None:
            self.extra += ["--appendonly", "yes", "--appendfsync", appendfsync]
        if directory is not None:
            self.extra += ["--dir", directory]
        if replica_of is not None:
            self.extra += ["--replicaof", HOST, str(replica_of)]

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is saved on the way out; returns once it has exited."""
        if self.alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
            self.status = "killed"

    def pause(self) -> None:
        """SIGSTOP: the kernel still accepts connections and takes requests; nothing answers."""
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after `pause`."""
        self.proc.send_signal(signal.SIGCONT)

    def stop(self, timeout: float = 10) -> int | str:
        # A paused server would keep SIGTERM pending until the timeout's SIGKILL.
        if self.alive():
            self.proc.send_signal(signal.SIGCONT)
        return super().stop(timeout)

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}"

    def start(self) -> "RedisServer":
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", HOST, "--save", "", "--appendonly", "no"]
            + self.extra, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        # Ready once it answers PING: with an append-only file or a snapshot to load it accepts
        # connections at once but answers every command `-LOADING` until the data is in memory.
        wait_until("redis-server", self.answers_ping, 30, alive=self.alive)
        return self

    def answers_ping(self) -> bool:
        with socket.create_connection((HOST, self.port), 1) as s:
            s.settimeout(5)
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")


class Proxy(Process):
    """deploy/nginx.conf or deploy/haproxy.cfg itself, in front of sheetd instances on loopback: the
    per-run files it includes (upstream servers, listen address) written into `out`, the config checked
    (nginx -t, haproxy -c), nginx in the foreground with its prefix, logs and temporary files in `out`,
    haproxy's access log its stdout (out/access.log). Up once it accepts a connection (no request: with
    no instance up yet, a request would mark them all failed)."""

    def __init__(self, kind: str, out: str, port: int, servers: Sequence[int], server_params: str = "",
                 haproxy_server_params: str = "") -> None:
        super().__init__(kind)
        self.kind, self.out, self.port = kind, os.path.abspath(out), port
        self.servers, self.server_params = list(servers), server_params
        # Words appended to each haproxy server line (`no-check`): server_params are nginx's.
        self.haproxy_server_params = haproxy_server_params

    def start(self) -> "Proxy":
        out = self.out
        os.makedirs(os.path.join(out, "temp"), exist_ok=True)
        if self.kind == "nginx":
            # deploy/nginx.conf through a symlink: its includes are read from the link's directory.
            link = os.path.join(out, "nginx.conf")
            if not os.path.islink(link):
                os.symlink(os.path.join(ROOT, "deploy", "nginx.conf"), link)
            with open(os.path.join(out, "sheetd-upstreams.conf"), "w") as f:
                f.writelines(f"server {HOST}:{p} {self.server_params};\n" for p in self.servers)
            with open(os.path.join(out, "sheetd-listen.conf"), "w") as f:
                f.write(f"listen {HOST}:{self.port};\n")
            args = ["-p", out + "/", "-c", link, "-e", os.path.join(out, "error.log"),
                    "-g", f"daemon off; pid {out}/nginx.pid;"]
            if subprocess.run(["nginx", "-t", "-q"] + args).returncode != 0:
                raise RuntimeError("nginx -t rejected deploy/nginx.conf")
            self.proc = subprocess.Popen(["nginx"] + args, stdout=open(os.path.join(out, "nginx.out"), "wb"),
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        else:
            # deploy/haproxy.cfg itself, plus the backend's server list.
            with open(os.path.join(out, "servers.cfg"), "w") as f:
                f.write("backend sheetd from sheetd-backend\n")
                f.writelines(f"    server s{n} {HOST}:{p} {self.haproxy_server_params}".rstrip() + "\n"
                             for n, p in enumerate(self.servers))
            args = ["-f", os.path.join(ROOT, "deploy", "haproxy.cfg"), "-f", os.path.join(out, "servers.cfg")]
            env = {**os.environ, "SHEETD_LISTEN": f"{HOST}:{self.port}"}
            if subprocess.run(["haproxy", "-c", "-q"] + args, env=env).returncode != 0:
                raise RuntimeError("haproxy -c rejected deploy/haproxy.cfg")
            self.proc = subprocess.Popen(["haproxy", "-db"] + args, env=env, stdin=subprocess.DEVNULL,
                                         stdout=open(os.path.join(out, "access.log"), "wb"),
                                         stderr=open(os.path.join(out, "haproxy.out"), "wb"))
        try:
            wait_until(self.kind, lambda: socket.create_connection((HOST, self.port), 1).close() or True, 10,
                       alive=self.alive)
        except RuntimeError:
            self.stop()
            raise
        return self


# --------------------------------------------------------------------------------------------
# The command line, for the bash checks.


def stop_pid(pid: int, timeout: float = 10) -> bool:
    """Stops a process this one did not start (`start` left it running): SIGTERM, then SIGKILL after
    `timeout` seconds; True when SIGTERM was enough. Its exit status is its parent's to read."""
    def gone() -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has exited
        except OSError:
            return True
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone():
            return True
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return False


def run_command(command: Sequence[str], env: dict[str, str], fill: dict[str, str]) -> int:
    """COMMAND with `fill`'s placeholders replaced, its environment extended; its exit status.
    SIGINT/SIGTERM to this process are passed on to it (what this process started is stopped after)."""
    if not command:
        sys.exit("harness: no command to run")
    words = []
    for word in command:
        for key, value in fill.items():
            word = word.replace(key, value)
        words.append(word)
    child = subprocess.Popen(words, env={**os.environ, **env})
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    return child.wait()


def run_with_sheetd(args: argparse.Namespace) -> int:
    logs = [args.log.replace("{n}", str(n)) if args.log else None for n in range(args.count)]
    instances = [Sheetd(args.bin, shlex.split(args.flags), log=log) for log in logs]
    try:
        for sheetd in instances:
            sheetd.launch()
        for sheetd in instances:
            sheetd.wait_ready()
    except RuntimeError as error:
        for sheetd in instances:
            sheetd.stop()
        sys.exit(f"{args.name}: {error}")
    first = instances[0]
    env = {"SHEETD_URL": first.url, "SHEETD_PID": str(first.pid),
           "SHEETD_LOG": logs[0] or "", "SHEETD_PORTS": " ".join(str(i.port) for i in instances),
           "SHEETD_PIDS": " ".join(str(i.pid) for i in instances)}
    fill = {"{port}": str(first.port), "{url}": first.url.rstrip("/"), "{pid}": str(first.pid),
            "{ports}": ",".join(str(i.port) for i in instances)}
    rc = run_command(args.command, env, fill)
    statuses = []
    # One after the other, in order: each must drain on SIGTERM.
    for sheetd, log in zip(instances, logs):
        died = not sheetd.alive()
        status = sheetd.stop(args.stop_timeout)
        if died:
            print(f"{args.name}: sheetd died during the run; its log:", file=sys.stderr)
            if log:
                with open(log, "rb") as f:
                    sys.stderr.write("".join(f.read().decode(errors="replace").splitlines(True)[-30:]))
        elif status == "timeout":
            print(f"{args.name}: sheetd did not exit within {args.stop_timeout:g} s of SIGTERM", file=sys.stderr)
        elif status != 0:
            print(f"{args.name}: sheetd exited with status {status} after SIGTERM", file=sys.stderr)
        statuses.append(f"{'died ' if died else ''}{status}")
    if args.exit_status:
        with open(args.exit_status, "w") as f:
            f.write(" ".join(statuses) + "\n")
    return rc


def run_with_redis(args: argparse.Namespace) -> int:
    log = open(args.log, "ab") if args.log else subprocess.DEVNULL
    extra = ["--dir", args.dir] if args.dir else []
    redis = RedisServer(args.port, log=log, extra=extra)
    try:
        redis.start()
    except RuntimeError as error:
        sys.exit(f"{args.name}: {error}")
    try:
        return run_command(args.command, {"REDIS_PORT": str(redis.port), "REDIS_URL": redis.url},
                           {"{redis_url}": redis.url, "{redis_port}": str(redis.port)})
    finally:
        redis.stop()


def run_with_proxy(args: argparse.Namespace) -> int:
    servers = [int(p) for p in args.servers.replace(",", " ").split()]
    proxy = Proxy(args.kind, args.out, args.port, servers, args.server_params)
    try:
        proxy.start()
    except RuntimeError as error:
        sys.exit(f"{args.name}: {error}")
    try:
        return run_command(args.command, {"PROXY_PORT": str(args.port), "PROXY_PID": str(proxy.pid)},
                           {"{proxy_pid}": str(proxy.pid)})
    finally:
        proxy.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    run = sub.add_parser("sheetd", help="run a command against a sheetd started (and stopped) here")
    run.add_argument("--bin", default=None, help="the sheetd binary (default: $SHEETD_BIN or .build/debug/sheetd)")
    run.add_argument("--log", default=None, help="sheetd's output, appended (default: this process's)")
    run.add_argument("--flags", default="", help="sheetd's flags, one string (shell words)")
    run.add_argument("--exit-status", default=None, help="file for sheetd's exit status after SIGTERM")
    run.add_argument("--stop-timeout", type=float, default=10, help="seconds from SIGTERM to SIGKILL")
    run.add_argument("--name", default="harness", help="the check's name, for its messages")
    run.add_argument("--count", type=int, default=1, help="how many instances (--log may hold {n})")
    run.add_argument("command", nargs=argparse.REMAINDER)
    redis = sub.add_parser("redis", help="run a command against a redis-server started (and stopped) here")
    redis.add_argument("--port", type=int, default=None)
    redis.add_argument("--log", default=None)
    redis.add_argument("--dir", default=None, help="redis-server's working folder")
    redis.add_argument("--name", default="harness")
    redis.add_argument("command", nargs=argparse.REMAINDER)
    proxy = sub.add_parser("proxy", help="run a command behind deploy/'s nginx or haproxy started (and stopped) here")
    proxy.add_argument("--kind", choices=["nginx", "haproxy"], default="nginx")
    proxy.add_argument("--out", required=True, help="the folder for its files and logs")
    proxy.add_argument("--port", type=int, required=True)
    proxy.add_argument("--servers", required=True, help="the instances' ports, comma- or space-separated")
    proxy.add_argument("--server-params", default="", help="nginx's parameters on each server line")
    proxy.add_argument("--name", default="harness")
    proxy.add_argument("command", nargs=argparse.REMAINDER)
    ports = sub.add_parser("free-ports", help="print N distinct free loopback ports")
    ports.add_argument("count", type=int)
    start = sub.add_parser("start", help="start one sheetd, print `PID PORT` once it is ready, leave it running")
    start.add_argument("--bin", default=None, help="the sheetd binary (default: $SHEETD_BIN or .build/debug/sheetd)")
    start.add_argument("--log", default=None, help="sheetd's output, appended (default: /dev/null)")
    start.add_argument("--flags", default="", help="sheetd's flags, one string (shell words)")
    start.add_argument("--prefix", default="", help="a command that execs sheetd (taskset -c 1, valgrind …)")
    start.add_argument("--ready-seconds", type=float, default=30)
    start.add_argument("--name", default="harness")
    stop = sub.add_parser("stop", help="stop a process by PID: SIGTERM, then SIGKILL after the timeout")
    stop.add_argument("pid", type=int)
    stop.add_argument("--stop-timeout", type=float, default=10)
    args = parser.parse_args(argv)
    if args.what == "free-ports":
        print(" ".join(str(p) for p in free_ports(args.count)))
        return 0
    if args.what == "start":
        sheetd = Sheetd(args.bin, shlex.split(args.flags), log=args.log or subprocess.DEVNULL,
                        ready_seconds=args.ready_seconds, prefix=shlex.split(args.prefix))
        try:
            sheetd.start()
        except RuntimeError as error:
            sys.exit(f"{args.name}: {error}")
        print(sheetd.pid, sheetd.port, flush=True)
        return 0
    if args.what == "stop":
        return 0 if stop_pid(args.pid, args.stop_timeout) else 1
    return {"sheetd": run_with_sheetd, "redis": run_with_redis, "proxy": run_with_proxy}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
