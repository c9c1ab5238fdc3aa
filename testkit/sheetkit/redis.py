"""Redis as the checks see it: RESP over a plain socket (the program's own view of what the store
holds, independent of sheetd's client), and a replicated group watched by Sentinels on loopback.
Standard library only.

    from sheetkit.redis import Resp, RespError, call, info, SentinelGroup

    call(port, "GET", "sheetd:session:x")          # one command on a connection of its own
    r = Resp(port); r.call("MGET", …); r.close()   # several on one connection
    info(port, "replication")["role"]               # INFO's section as a dict

    with SentinelGroup(replicas=2, sentinels=3, out=DIR) as group:   # started, stopped by PID
        group.url                                   # redis+sentinel://127.0.0.1:p1,…/sheetd
        group.primary_port()                        # what the Sentinels say the primary is now

Replies: simple strings as str, errors raised as RespError, integers as int, bulk strings as bytes
(None for a null), arrays as lists.
"""

from __future__ import annotations

import os
import socket

from .harness import HOST, Process, RedisServer, free_ports, wait_until


class RespError(Exception):
    """An error reply (`-ERR …`, `-READONLY …`): its text."""


class Resp:
    """One connection to a redis-server (or a Sentinel); `call` sends a command and reads its reply."""

    def __init__(self, port: int, timeout: float = 3.0, host: str = HOST) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.file = self.sock.makefile("rb")

    def call(self, *args):
        out = [f"*{len(args)}\r\n".encode()]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(f"${len(b)}\r\n".encode() + b + b"\r\n")
        self.sock.sendall(b"".join(out))
        return self.reply()

    def reply(self):
        line = self.file.readline()
        if not line:
            raise OSError("redis closed the connection")
        kind, body = line[:1], line[1:-2]
        if kind == b"+":
            return body.decode()
        if kind == b"-":
            raise RespError(body.decode())
        if kind == b":":
            return int(body)
        if kind == b"$":
            n = int(body)
            return None if n < 0 else self.file.read(n + 2)[:-2]
        if kind == b"*":
            n = int(body)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise OSError(f"unexpected RESP reply {line!r}")

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Resp":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def call(port: int, *args, timeout: float = 3.0):
    """One command on a connection of its own: its reply (an error reply raises RespError)."""
    with Resp(port, timeout) as r:
        return r.call(*args)


def info(port: int, section: str, timeout: float = 3.0) -> dict[str, str]:
    """`INFO section` as name -> value."""
    text = call(port, "INFO", section, timeout=timeout).decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


# Commands that change data, as INFO commandstats names them (cmdstat_NAME): what sheetd's writer,
# its scripts and its notices send. A primary demoted by a failover must see none of them from
# sheetd once the Sentinels have switched.
WRITE_COMMANDS = ("set", "setex", "psetex", "del", "unlink", "eval", "evalsha", "mset", "expire", "pexpire",
                  "exec", "incr", "getset", "setnx")


def write_calls(port: int) -> int:
    """How many data-changing commands (WRITE_COMMANDS) the server has executed since it started."""
    total = 0
    for name, value in info(port, "commandstats").items():
        if name.startswith("cmdstat_") and name[8:] in WRITE_COMMANDS:
            fields = dict(kv.split("=", 1) for kv in value.split(","))
            total += int(fields.get("calls", 0))
    return total


class SentinelGroup:
    """A primary, `replicas` replicas and `sentinels` Sentinels (`redis-server FILE --sentinel`) on
    free loopback ports, as Tests/SheetdTesting/RedisSentinels.swift sets them up: group `name`,
    quorum 2, a server judged down after `down_after_ms` without an answer, failovers timed out after
    `failover_timeout_ms`. Every server keeps its files in a folder of its own under `out` (a replica
    writes the snapshot it syncs from there); logs beside them. Stopped by PID."""

    def __init__(self, out: str, replicas: int = 2, sentinels: int = 3, name: str = "sheetd",
                 down_after_ms: int = 1000, failover_timeout_ms: int = 10000) -> None:
        self.out, self.name = os.path.abspath(out), name
        self.down_after_ms, self.failover_timeout_ms = down_after_ms, failover_timeout_ms
        os.makedirs(self.out, exist_ok=True)
        self.servers: list[RedisServer] = []
        self.sentinels: list[Process] = []
        self.replica_count, self.sentinel_count = replicas, sentinels
        self.sentinel_ports: list[int] = []

    def server(self, n: int, port: int | None = None, replica_of: int | None = None) -> RedisServer:
        """Server n (0 is the first primary), started on `port` (its old one when it comes back)."""
        folder = os.path.join(self.out, f"redis-{n}")
        os.makedirs(folder, exist_ok=True)
        log = open(os.path.join(self.out, f"redis-{n}.log"), "ab")
        # The primary syncs a replica at once, not after its default 5 s wait for more replicas.
        return RedisServer(port=port, log=log, directory=folder, replica_of=replica_of,
                           extra=["--repl-diskless-sync-delay", "0"]).start()

    def start(self) -> "SentinelGroup":
        primary = self.server(0)
        self.servers = [primary] + [self.server(n + 1, replica_of=primary.port) for n in range(self.replica_count)]
        for replica in self.servers[1:]:
            wait_until("a replica to sync", lambda: info(replica.port, "replication").get("master_link_status") == "up",
                       30, interval=0.05)
        self.sentinel_ports = free_ports(self.sentinel_count)
        for port in self.sentinel_ports:
            folder = os.path.join(self.out, f"sentinel-{port}")
            os.makedirs(folder, exist_ok=True)
            conf = os.path.join(folder, "sentinel.conf")  # a Sentinel rewrites its file as it learns the group
            with open(conf, "w") as f:
                f.write(f"port {port}\nbind {HOST}\ndir {folder}\n"
                        f"sentinel monitor {self.name} {HOST} {primary.port} 2\n"
                        f"sentinel down-after-milliseconds {self.name} {self.down_after_ms}\n"
                        f"sentinel failover-timeout {self.name} {self.failover_timeout_ms}\n")
            log = open(os.path.join(self.out, f"sentinel-{port}.log"), "ab")
            self.sentinels.append(Process("redis-sentinel", ["redis-server", conf, "--sentinel"],
                                          stdout=log, stderr=log).start())
        # Ready once every Sentinel knows every replica and the other Sentinels (a quorum can then be had).
        for port in self.sentinel_ports:
            wait_until("the Sentinels to know each other and the replicas", lambda: self._knows_all(port), 30, 0.1)
        return self

    def _knows_all(self, port: int) -> bool:
        master = call(port, "SENTINEL", "MASTER", self.name)
        fields = {k.decode(): v.decode() for k, v in zip(master[::2], master[1::2])}
        return (int(fields.get("num-slaves", 0)) >= self.replica_count
                and int(fields.get("num-other-sentinels", 0)) >= self.sentinel_count - 1)

    @property
    def url(self) -> str:
        return "redis+sentinel://" + ",".join(f"{HOST}:{p}" for p in self.sentinel_ports) + f"/{self.name}"

    def primary_port(self, sentinel: int = 0) -> int:
        """The primary's port as Sentinel `sentinel` (an index) names it now."""
        _host, port = call(self.sentinel_ports[sentinel], "SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.name)
        return int(port.decode())

    def by_port(self, port: int) -> RedisServer:
        return next(s for s in self.servers if s.port == port)

    def failover(self) -> None:
        """`SENTINEL FAILOVER name` on the first Sentinel: a replica promoted without agreement."""
        call(self.sentinel_ports[0], "SENTINEL", "FAILOVER", self.name)

    def stop(self) -> None:
        for process in list(self.sentinels) + list(self.servers):
            process.stop()

    def __enter__(self) -> "SentinelGroup":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

