"""A loopback TCP proxy that adds a round trip: every chunk waits rtt/2 in each direction.

    python3 -m sheetkit.delay_proxy --listen 127.0.0.1:0 --target 127.0.0.1:8080 --rtt-ms 100

prints `listening 127.0.0.1:PORT` as its first stdout line, then forwards every connection to the
target. A chunk read at time t is written at t + rtt/2, in order per direction; chunks are not
serialised against each other (a stream of chunks is a pipeline, not stop-and-wait), so a
Server-Sent Events response flows through at its own pace, shifted by rtt/2. A half-close (EOF) is
forwarded after the same delay; a reset or a disconnect on either side closes both, quietly.
Loopback addresses only (127.0.0.0/8, ::1), both for listening and for the target.

As a module (standard library only, used by Benchmarks/latency.py, IntegrationTests/browser_test.py
and IntegrationTests/store_faults.py):

    from sheetkit import delay_proxy
    proxy = delay_proxy.start(("127.0.0.1", 8080), rtt_ms=100)   # runs in a daemon thread
    proxy.port          # where it listens on 127.0.0.1
    proxy.stop()

Several proxies may be started; they share one event loop thread.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import socket
import sys
import threading

CHUNK = 64 * 1024
QUEUE_CHUNKS = 256  # chunks in flight per direction before reading pauses (memory bound)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{text!r}: expected HOST:PORT")
    host = host.strip("[]")
    if not is_loopback(host):
        raise ValueError(f"{host!r} is not a loopback address: this proxy is for 127.0.0.1 / ::1 only")
    return host, int(port)


class DelayProxy:
    """One listening socket; each accepted connection is piped to `target` with `delay` per hop."""

    def __init__(self, target: tuple[str, int], rtt_ms: float, listen: tuple[str, int] = ("127.0.0.1", 0)):
        for host in (listen[0], target[0]):
            if not is_loopback(host):
                raise ValueError(f"{host!r} is not a loopback address")
        if rtt_ms < 0:
            raise ValueError("rtt_ms must be >= 0")
        self.target = target
        self.listen = listen
        self.rtt_ms = rtt_ms
        self.delay = rtt_ms / 2000.0  # seconds, one way
        self.server: asyncio.base_events.Server | None = None
        self.port: int | None = None
        self.connections = 0  # accepted so far
        self.open = 0  # open now
        self.bytes = [0, 0]  # client→target, target→client
        self._tasks: set[asyncio.Task] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._accept, self.listen[0], self.listen[1],
                                                 reuse_address=True, limit=CHUNK)
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    async def close(self):
        if self.server:
            self.server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.server:
            try:
                await asyncio.wait_for(self.server.wait_closed(), 1.0)
            except (asyncio.TimeoutError, Exception):
                pass

    async def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter):
        task = asyncio.current_task()
        self._tasks.add(task)
        self.connections += 1
        self.open += 1
        target_writer = None
        try:
            nodelay(client_writer)
            try:
                target_reader, target_writer = await asyncio.open_connection(*self.target, limit=CHUNK)
            except OSError:
                return  # target down: the client sees a closed connection
            nodelay(target_writer)
            up = asyncio.ensure_future(self._pipe(client_reader, target_writer, 0))
            down = asyncio.ensure_future(self._pipe(target_reader, client_writer, 1))
            try:
                # Each direction ends on its own (half-close); a failure in one ends both.
                pending = {up, down}
                while pending:
                    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    if any(t.exception() is not None or t.result() == "error" for t in done):
                        break
            finally:
                for t in (up, down):
                    t.cancel()
                await asyncio.gather(up, down, return_exceptions=True)
        except asyncio.CancelledError:
            pass
        finally:
            for w in (client_writer, target_writer):
                if w is not None:
                    close_quietly(w)
            self.open -= 1
            self._tasks.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, direction: int) -> str:
        """Reads chunks and hands them, stamped with their due time, to a writer task."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue(QUEUE_CHUNKS)
        sender = asyncio.ensure_future(self._send(queue, writer, direction))
        try:
            while True:
                try:
                    data = await reader.read(CHUNK)
                except (ConnectionError, OSError):
                    return "error"  # a reset: what is still queued is dropped
                # the due time is taken when the chunk was read; an empty chunk is the half-close
                if not await self._put(queue, sender, (loop.time() + self.delay, data or None)):
                    return "error"
                if not data:
                    return await sender
        finally:
            if not sender.done():
                sender.cancel()
                await asyncio.gather(sender, return_exceptions=True)

    @staticmethod
    async def _put(queue: asyncio.Queue, sender: asyncio.Future, item) -> bool:
        """Queues item; False if the sender stopped (its peer is gone) before there was room."""
        if sender.done():
            return False
        if not queue.full():
            queue.put_nowait(item)
            return True
        put = asyncio.ensure_future(queue.put(item))
        await asyncio.wait({put, sender}, return_when=asyncio.FIRST_COMPLETED)
        if put.done():
            return True
        put.cancel()
        return False

    async def _send(self, queue: asyncio.Queue, writer: asyncio.StreamWriter, direction: int) -> str:
        loop = asyncio.get_running_loop()
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                if data is None:
                    if writer.can_write_eof() and not writer.is_closing():
                        writer.write_eof()
                    return "eof"
                writer.write(data)
                self.bytes[direction] += len(data)
                await writer.drain()
            except (ConnectionError, OSError, RuntimeError):
                return "error"


def nodelay(writer: asyncio.StreamWriter):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


def close_quietly(writer: asyncio.StreamWriter):
    try:
        writer.close()
    except Exception:
        pass


# ---------------------------------------------------------------- in a thread (module use)

class _LoopThread:
    """One event loop in a daemon thread, shared by every proxy this process starts."""

    _lock = threading.Lock()
    _instance: "_LoopThread | None" = None

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda loop, ctx: None)  # no tracebacks for dropped peers
        self.thread = threading.Thread(target=self._run, name="delay-proxy", daemon=True)
        self.thread.start()

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @classmethod
    def get(cls) -> "_LoopThread":
        with cls._lock:
            if cls._instance is None:
                cls._instance = _LoopThread()
            return cls._instance

    def call(self, coro, timeout=5.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


class RunningProxy:
    """A DelayProxy running in the shared loop thread."""

    def __init__(self, proxy: DelayProxy, runner: _LoopThread):
        self.proxy = proxy
        self._runner = runner
        self.port = proxy.port
        self.rtt_ms = proxy.rtt_ms
        self.url = f"http://{proxy.listen[0]}:{proxy.port}/"

    @property
    def connections(self) -> int:
        return self.proxy.connections

    def stop(self):
        try:
            self._runner.call(self.proxy.close())
        except Exception:
            pass


def start(target: tuple[str, int], rtt_ms: float, listen: tuple[str, int] = ("127.0.0.1", 0)) -> RunningProxy:
    """Starts a proxy to `target` (host, port) with `rtt_ms` added per round trip; returns it
    running (`.port`, `.url`, `.stop()`)."""
    runner = _LoopThread.get()
    proxy = DelayProxy(target, rtt_ms, listen)
    runner.call(proxy.start())
    return RunningProxy(proxy, runner)


# ---------------------------------------------------------------- command line

async def serve(args) -> None:
    proxy = DelayProxy(split_address(args.target), args.rtt_ms, split_address(args.listen))
    await proxy.start()
    print(f"listening {proxy.listen[0]}:{proxy.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    import signal
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    await stop.wait()
    await proxy.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT to listen on (loopback; port 0: any free port)")
    parser.add_argument("--target", required=True, help="HOST:PORT to forward to (loopback)")
    parser.add_argument("--rtt-ms", type=float, default=0.0, help="added round trip in ms (half each way)")
    args = parser.parse_args(argv)
    try:
        split_address(args.listen), split_address(args.target)
    except ValueError as e:
        parser.error(str(e))
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda loop, ctx: None)
    try:
        loop.run_until_complete(serve(args))
    except KeyboardInterrupt:
        pass
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
