"""sheetd's test kit: what IntegrationTests/ and Benchmarks/ share (docs/TESTING.md).

- harness: start sheetd (port 0, the bound port found, ready, stopped by PID), redis-server and
  deploy/'s proxies; keep-alive JSON client; also a command line for the shell scripts.
- sse: a frame stream read and checked event by event; resumption as an EventSource does it.
- checklist: a check's results and its closing `NAME: N passed, M failed` line.
- presets: the preset catalog as a running sheetd serves it (GET /presets).
- delay_proxy: a loopback proxy that adds a round trip.
"""
