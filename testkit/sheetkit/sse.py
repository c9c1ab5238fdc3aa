"""Checks a sheetd frame stream (Server-Sent Events) event by event, as docs/HTTP.md describes it.

Part of the test kit (sheetkit.sse). Shared by IntegrationTests/drain_test.py and
IntegrationTests/concurrency_test.py: each reads the stream its own way
(raw sockets on a selector, or a thread per stream) and hands every event block (the text between
two blank lines) to `StreamCheck.event`. The load test and the rolling restart check events their
own way and share the decoding: `take_events` (with `take_chunks`) and `parse_fields` (which
IntegrationTests/schemathesis_hooks.py uses too); the rolling restart and the fault checks open their
streams on a raw socket with `open_stream`, read the body with `StreamBody` and reconnect as an
EventSource does with what a `ResumePoint` kept.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

FRAME_FIELDS = {"animation", "index", "t", "constant", "dimmerAlpha", "progress", "velocity"}
SNAPSHOT_FIELDS = {
    "id", "preset", "constraint", "geometry", "options", "clock", "detents", "state", "detent", "constant",
    "dimmerAlpha", "progress", "animation", "time",
}


class StreamCheck:
    """What one stream carried so far, and what was wrong with it (the first five problems).

    Checks: one whole JSON `data:` line per event (no torn frames), frame fields, ids `n:k` equal
    to the frame's own and strictly increasing, an animation's frames ended by `settled` or
    `interrupted` before the next animation's, snapshot fields (and, given `sid`, the session id),
    frame times within k / fps and never going back (given `fps`), nothing after `closed`.
    """

    def __init__(self, sid: str | None = None, fps: int | None = None):
        self.sid, self.fps = sid, fps
        self.events = 0
        self.frames = 0
        self.frames_by_animation: dict[int, list[dict]] = {}
        self.last_id: tuple[int, int] | None = None
        self.open_animation: int | None = None  # frames seen, no settled/interrupted yet
        self.closed_at: float | None = None  # monotonic time the `closed` event was read
        self.closed_reason = None
        self.after_closed = 0  # events after `closed` (must be 0)
        self.problems: list[str] = []

    def problem(self, what: str):
        if len(self.problems) < 5:
            self.problems.append(what)

    def event(self, block: str) -> None:
        """Checks one event block. `retry:` travels in an event's block (the first one's, or
        `closed`'s), never alone: some clients hand a block without data to the application as an
        empty event."""
        fields = parse_fields(block)
        if not fields:
            return
        if "data" not in fields:
            self.problem(f"a block without data: {block!r}")
            return
        self.events += 1
        if self.closed_at is not None:
            self.after_closed += 1
        name = fields.get("event", ["message"])[0]
        datas = fields.get("data", [])
        if len(datas) != 1:
            self.problem(f"`{name}` with {len(datas)} data lines: {block!r}")
            return
        try:
            data = json.loads(datas[0])
        except ValueError:
            self.problem(f"torn data line: {datas[0]!r}")
            return
        if name == "frame":
            self._frame(fields.get("id", [""])[0], data, datas[0])
        elif name in ("settled", "interrupted", "snapshot"):
            missing = SNAPSHOT_FIELDS - data.keys()
            if missing:
                self.problem(f"`{name}` without {sorted(missing)}: {datas[0]}")
            if self.sid is not None and data.get("id") != self.sid:
                self.problem(f"`{name}` of session {data.get('id')!r}")
            self.open_animation = None
        elif name == "closed":
            if self.closed_at is None:
                self.closed_at = time.monotonic()
                self.closed_reason = data.get("reason")
        else:
            self.problem(f"unknown event `{name}`")
        return

    def _frame(self, fid: str, data: dict, line: str):
        self.frames += 1
        missing = FRAME_FIELDS - data.keys()
        if missing:
            self.problem(f"frame without {sorted(missing)}: {line}")
        try:
            n, k = (int(x) for x in fid.split(":"))
        except ValueError:
            self.problem(f"frame id {fid!r}")
            return
        if (n, k) != (data.get("animation"), data.get("index")):
            self.problem(f"id {fid} but the data says {data.get('animation')}:{data.get('index')}")
        if self.last_id is not None and (n, k) <= self.last_id:
            self.problem(f"frame id {n}:{k} after {self.last_id[0]}:{self.last_id[1]}")
        if self.open_animation is not None and self.open_animation != n:
            self.problem(f"frames of animation {n} before {self.open_animation} ended with settled/interrupted")
        if self.fps is not None:
            # t = min(k / fps, duration): never past k / fps, never back within an animation.
            t = data.get("t", -1)
            prev = self.frames_by_animation.get(n)
            if not (0 <= t <= k / self.fps + 1e-9) or (prev and t < prev[-1].get("t", 0)):
                self.problem(f"frame {fid}: t {t} (fps {self.fps}, previous {prev[-1].get('t') if prev else '-'})")
        self.open_animation = n
        self.last_id = (n, k)
        self.frames_by_animation.setdefault(n, []).append(data)


def take_chunks(pending: bytes) -> tuple[str, bytes, bool]:
    """Decodes the complete chunks at the front of a chunked body's bytes: (their text, the bytes
    left for later, whether the last chunk has come). sheetd writes whole events per chunk, so a
    chunk is whole UTF-8."""
    text = ""
    while True:
        nl = pending.find(b"\r\n")
        if nl < 0:
            return text, pending, False
        size = int(pending[:nl].split(b";")[0], 16)
        if size == 0:
            return text, pending, True
        if len(pending) < nl + 2 + size + 2:
            return text, pending, False
        text += pending[nl + 2:nl + 2 + size].decode("utf-8")
        pending = pending[nl + 2 + size + 2:]


def take_events(text: str, pending: bytes, chunked: bool) -> tuple[list[str], str, bytes, bool]:
    """Decodes what has arrived of a stream's body (chunked or not) onto `text`, the part of an
    event already decoded, and splits off every complete event block: (the blocks, the text left,
    the bytes left undecoded, whether the last chunk has come)."""
    ended = False
    if chunked:
        decoded, pending, ended = take_chunks(pending)
        text += decoded
    else:
        text += pending.decode("utf-8")
        pending = b""
    *blocks, text = text.split("\n\n")
    return blocks, text, pending, ended


def parse_fields(block: str) -> dict[str, list[str]]:
    """The fields of one event block, each name with its values in order (one space after the
    colon dropped); comments (keep-alives) and blank lines are skipped."""
    fields: dict[str, list[str]] = {}
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
    return fields


def open_stream(sock: socket.socket, path: str, host: str, last_id: str | None = None,
                recv: Callable[[], bytes | None] | None = None) -> tuple[int, dict[str, str], bytes] | None:
    """Sends `GET path` for an event stream on a connected socket (with `Last-Event-ID` when
    resuming) and reads the response head: (status, headers with lower-cased names, the body bytes
    that came with the head), or None when the connection closed first. `recv` reads the next
    bytes (default: `sock.recv(65536)`); it returns None to give up waiting (a check that stops)."""
    head = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
    if last_id:
        head += f"Last-Event-ID: {last_id}\r\n"
    sock.sendall((head + "\r\n").encode())
    read = recv or (lambda: sock.recv(65536))
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = read()
        if not chunk:
            return None
        raw += chunk
    header, body = raw.split(b"\r\n\r\n", 1)
    lines = header.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


class StreamBody:
    """The event blocks of a stream's body as they arrive; `pending`: the body bytes that came with
    the head, `recv`: the next bytes (b"" when the connection closed, None to stop waiting). After
    the iteration, `end` says how the body ended: "ended" (the chunked body's last chunk came),
    "dropped" (the connection closed first) or "stopped" (recv gave up)."""

    def __init__(self, pending: bytes, chunked: bool, recv: Callable[[], bytes | None]) -> None:
        self.pending = pending
        self.chunked = chunked
        self.recv = recv
        self.end: str | None = None

    def __iter__(self) -> Iterator[str]:
        text = ""
        while True:
            blocks, text, self.pending, ended = take_events(text, self.pending, self.chunked)
            yield from blocks
            if ended:
                self.end = "ended"
                return
            chunk = self.recv()
            if chunk is None or not chunk:
                self.end = "stopped" if chunk is None else "dropped"
                return
            self.pending += chunk


@dataclass
class StreamEvent:
    """One event as a reconnecting client reads it: `kind` (the event field, "message" without one),
    `data` (its data lines joined), a frame's (animation, index), a `closed` event's reason ("?"
    without one), and `problem`: a frame whose id is not n:k, or that does not come after the last."""

    kind: str
    data: str
    frame: tuple[int, int] | None = None
    reason: str | None = None
    problem: str | None = None


class ResumePoint:
    """What a client that reconnects as an EventSource does keeps across its connections: the
    server's `retry` (seconds), the last event id (sent back as Last-Event-ID) and the highest frame
    (animation, index) seen, after which every frame must come."""

    def __init__(self) -> None:
        self.retry = 1.0  # an EventSource's default until the server sends `retry:`
        self.last_id: str | None = None
        self.last: tuple[int, int] | None = None

    def events(self, blocks: Iterable[str]) -> Iterator[StreamEvent]:
        """The events of `blocks` (a StreamBody) in order, each read into this point; blocks of
        comments only (keep-alives) skipped."""
        for block in blocks:
            event = self.read(block)
            if event is not None:
                yield event

    def read(self, block: str) -> StreamEvent | None:
        """The event in `block`, with what it changes kept; None for a block of comments only."""
        fields = parse_fields(block)
        if not fields:
            return None
        if "retry" in fields:  # in the first event's block, and in `closed`'s
            self.retry = int(fields["retry"][0]) / 1000
        if "id" in fields:
            self.last_id = fields["id"][0]
        event = StreamEvent((fields.get("event") or ["message"])[0], "\n".join(fields.get("data", [])))
        if event.kind == "frame":
            try:
                n, k = (int(x) for x in fields["id"][0].split(":"))
            except (KeyError, ValueError):
                event.problem = f"frame without an n:k id: {block[:200]!r}"
                return event
            if self.last is not None and (n, k) <= self.last:
                event.problem = f"frame {n}:{k} after {self.last[0]}:{self.last[1]}"
            event.frame = (n, k)
            self.last = (n, k) if self.last is None else max(self.last, (n, k))
        elif event.kind == "closed":
            try:
                event.reason = json.loads(event.data).get("reason", "?")
            except (ValueError, AttributeError):
                event.reason = "?"
        return event
