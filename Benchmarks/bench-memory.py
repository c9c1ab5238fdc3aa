#!/usr/bin/env python3
"""Creates sheetd sessions through the HTTP API, fast, and measures what they cost in RSS.

Used by scripts/bench; standard library only; 127.0.0.1 only.

  bench-memory.py populate --port P --count N [--first F] [--preset facebook] [--detent normal]
                  [--then began,changed] [--connections 4] [--batch 128]
      PUT /sessions/s{F}..s{F+N-1} {"preset":..,"initialDetent":..}, then, per session and in this
      order, the pan phases in --then (began: {"phase":"began"}; changed: a -120.5 pt drag). Each
      connection is keep-alive and pipelines --batch requests per write; a session's requests go on
      one connection, so they arrive in order. Fails on any status other than 200/201.

  bench-memory.py memory --port P --pid PID --steps 100000,1000000 [--preset fluid] [--detent half]
      RSS of PID (VmRSS) idle, then after creating sessions up to each step (resting sessions),
      checked against sheetd_sessions_live in GET /metrics. Prints a markdown table and a line
      "memory: <json>".
"""
import argparse
import json
import socket
import sys
import threading
import time


def vm_rss(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def request_bytes(method, path, body):
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if body is None:
        return (head + "\r\n").encode()
    data = body.encode()
    return (head + f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n").encode() + data


class Pipeline:
    """One keep-alive connection that sends requests in batches and reads every reply."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def exchange(self, requests):
        self.sock.sendall(b"".join(requests))
        statuses = []
        while len(statuses) < len(requests):
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                self._read()
                continue
            head = self.buffer[:end].decode("latin-1")
            lines = head.split("\r\n")
            status = int(lines[0].split(" ", 2)[1])
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            while len(self.buffer) < end + 4 + length:
                self._read()
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            statuses.append((status, body))
        return statuses

    def _read(self):
        chunk = self.sock.recv(1 << 18)
        if not chunk:
            raise ConnectionError("sheetd closed the connection")
        self.buffer += chunk

    def close(self):
        self.sock.close()


PHASES = {
    "began": '{"phase":"began"}',
    "changed": '{"phase":"changed","translation":-120.5,"velocity":-800}',
}


def populate(port, first, count, preset, detent, then, connections, batch):
    """Creates sessions s{first}..s{first+count-1} and applies `then`; returns requests sent."""
    put_body = json.dumps({"preset": preset, "initialDetent": detent}, separators=(",", ":"))
    per_session = 1 + len(then)
    failures = []
    sent = [0] * connections

    def worker(k):
        try:
            pipe = Pipeline(port)
            ids = range(first + k, first + count, connections)
            sessions_per_batch = max(1, batch // per_session)
            for start in range(0, len(ids), sessions_per_batch):
                requests = []
                for i in ids[start : start + sessions_per_batch]:
                    requests.append(request_bytes("PUT", f"/sessions/s{i}", put_body))
                    for phase in then:
                        requests.append(request_bytes("POST", f"/sessions/s{i}/pan", PHASES[phase]))
                for status, body in pipe.exchange(requests):
                    if status not in (200, 201):
                        raise RuntimeError(f"status {status}: {body[:300]!r}")
                sent[k] += len(requests)
            pipe.close()
        except Exception as error:  # reported by the main thread
            failures.append(f"connection {k}: {error}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise RuntimeError("; ".join(failures[:3]))
    return sum(sent)


def sessions_live(port):
    pipe = Pipeline(port)
    ((status, body),) = pipe.exchange([request_bytes("GET", "/metrics", None)])
    pipe.close()
    for line in body.decode().splitlines():
        if line.startswith("sheetd_sessions_live "):
            return int(float(line.split()[1]))
    raise RuntimeError("sheetd_sessions_live is not in /metrics")


def settled_rss(pid):
    time.sleep(1.0)
    return vm_rss(pid)


def memory(args):
    steps = [int(s) for s in args.steps.split(",") if s]
    rows = []
    idle = settled_rss(args.pid)
    rows.append({"sessions": 0, "live": sessions_live(args.port), "rss": idle, "seconds": 0.0})
    created = 0
    for step in steps:
        started = time.monotonic()
        populate(args.port, created, step - created, args.preset, args.detent, [], args.connections, args.batch)
        seconds = time.monotonic() - started
        created = step
        rss = settled_rss(args.pid)
        live = sessions_live(args.port)
        rows.append({"sessions": step, "live": live, "rss": rss, "seconds": seconds})
        print(f"bench: memory: {step:,} sessions created in {seconds:.1f} s ({(step - rows[-2]['sessions']) / seconds:,.0f}/s),"
              f" live {live:,}, RSS {rss / 1e6:.1f} MB", file=sys.stderr)
    print(f"| sessions ({args.preset}, resting at {args.detent}) | `sheetd_sessions_live` | RSS (MB) | bytes per session vs idle | bytes per session vs the previous row |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for i, row in enumerate(rows):
        vs_idle = "–" if row["sessions"] == 0 else f"{(row['rss'] - idle) / row['sessions']:,.0f}"
        vs_prev = "–"
        if i > 1:
            prev = rows[i - 1]
            vs_prev = f"{(row['rss'] - prev['rss']) / (row['sessions'] - prev['sessions']):,.0f}"
        print(f"| {row['sessions']:,} | {row['live']:,} | {row['rss'] / 1e6:.1f} | {vs_idle} | {vs_prev} |")
    print("memory: " + json.dumps(rows))
    if any(row["live"] != row["sessions"] for row in rows):
        print("bench: memory: sheetd_sessions_live differs from the sessions created", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("populate")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--preset", default="facebook")
    p.add_argument("--detent", default="normal")
    p.add_argument("--then", default="")
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--batch", type=int, default=128)
    m = sub.add_parser("memory")
    m.add_argument("--port", type=int, required=True)
    m.add_argument("--pid", type=int, required=True)
    m.add_argument("--steps", default="100000,1000000")
    m.add_argument("--preset", default="fluid")
    m.add_argument("--detent", default="half")
    m.add_argument("--connections", type=int, default=4)
    m.add_argument("--batch", type=int, default=128)
    args = parser.parse_args()
    if args.command == "populate":
        then = [t for t in args.then.split(",") if t]
        for t in then:
            if t not in PHASES:
                parser.error(f"--then: unknown phase {t}")
        started = time.monotonic()
        n = populate(args.port, args.first, args.count, args.preset, args.detent, then, args.connections, args.batch)
        seconds = time.monotonic() - started
        print(f"bench: populated {args.count:,} sessions ({n:,} requests) in {seconds:.1f} s", file=sys.stderr)
        return 0
    return memory(args)


if __name__ == "__main__":
    sys.exit(main())
