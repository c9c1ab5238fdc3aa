#!/usr/bin/env python3
"""Raw-socket HTTP/1.1 protocol suite for sheetd, in the spirit of h1spec and the HTTP Garden.

Run by IntegrationTests/protocol-test, which builds and starts sheetd; by hand:
    python3 IntegrationTests/protocol_test.py --port 8080 [--report .build/protocol-test/latest.md]

Every case in CASES sends exact bytes (in one or several writes) on a fresh connection and checks
what must happen: the status code(s) accepted, whether the connection must be closed afterwards
(or must stay usable), problem+json bodies where sheetd answers, and how many responses come back.
Cases libmicrohttpd answers itself (its HTML error pages) are marked MHD: only their status and
connection behaviour are asserted.

Smuggling cases hide an inner request pair (GET /livez, then DELETE of a per-case canary session)
where a misparse would make it a request. A case fails if either ever reaches the router: the
/livez counters of GET /metrics move, the canary is gone, or an extra response arrives. The suite
itself never requests /livez. Percent-decoding cases aim at a victim session made first with
POST /sessions, which must be unchanged after each of them and at the end.

Prints one line per case, the number of smuggled requests that reached the router, and last
`protocol-test: N passed, M failed`; writes a markdown table to --report; exits 1 on any failure.
Python 3 standard library only.
"""

import argparse
import json
import os
import re
import socket
import sys
import time

HOST = "127.0.0.1"
IO_TIMEOUT = 2.0  # the longest wait for any one answer: a hung case fails instead of hanging
QUIET = 0.3  # how long silence means "nothing more is coming" on an open connection
BUDGET = 50.0  # seconds for the whole run; cases after it fail unrun
MAX_BODY = 16 * 1024  # sheetd's default --max-body

# Placeholders, replaced when a case runs. Each is exactly as long as what replaces it, so the
# Content-Length values and chunk sizes written in the table stay right.
CANARY = b"<canary-id->"  # 12 bytes: "canary-" + the 5-character case id
VICTIM = b"<victim-session-id-22>"  # 22 bytes: ids from POST /sessions are 22 characters
PORT = b"{port}"  # request line only (no length depends on it)
assert len(CANARY) == 12 and len(VICTIM) == 22

# The inner request pair of the smuggling cases: if either is ever answered, a request was smuggled.
INNER = b"GET /livez HTTP/1.1\r\nHost: h\r\n\r\nDELETE /sessions/" + CANARY + b" HTTP/1.1\r\nHost: h\r\n\r\n"

# Expected body kinds.
PROBLEM = "problem"  # sheetd answers: every 4xx/5xx must be application/problem+json
MHD = "mhd"  # libmicrohttpd answers itself (HTML page): status and connection only
ANY = "any"  # either may answer

JSON_CT = b"Content-Type: application/json\r\n"
POST_SESSIONS = b"POST /sessions HTTP/1.1\r\nHost: h\r\n" + JSON_CT
CREATE_BODY = (
    b'{"preset": "facebook", "geometry": {"height": 844, "safeAreaTop": 47, "safeAreaBottom": 34},'
    b' "options": {"expandedOffset": 30}, "initialDetent": "normal", "clock": "server"}'
)


def chunked(data):
    """`data` as one chunk plus the last chunk."""
    return b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n"


def cl(n):
    return b"Content-Length: %d\r\n" % n


class Await:
    """A pause in the sending: wait until `count` responses (1xx included) have arrived."""

    def __init__(self, count):
        self.count = count


class Case:
    def __init__(
        self,
        id,
        rule,
        send,
        status,
        close=None,
        body=ANY,
        smuggle=False,
        canary=False,
        victim=False,
        no_answer_ok=False,
        interim=None,
        head=(),
        check=None,
    ):
        self.id = id  # 5 characters, so that "canary-" + id fits the CANARY placeholder
        self.rule = rule
        self.send = send if isinstance(send, list) else [send]
        # One set of accepted statuses per expected final response (pipelining: several).
        self.status = status if isinstance(status, list) else [status]
        self.close = close  # True: must close; False: must stay usable; None: either
        self.body = body
        self.smuggle = smuggle  # carries INNER: nothing of it may reach the router
        self.canary = canary or smuggle  # a canary session is made first and must survive
        self.victim = victim  # aims at the victim session, which must be unchanged afterwards
        self.no_answer_ok = no_answer_ok  # closing without any answer is also a refusal
        self.interim = interim  # list of 1xx statuses that must come first ([] = none at all)
        self.head = set(head)  # indexes of the final responses that answer HEAD (no body)
        self.check = check  # (finals) -> error string or None
        assert len(id) == 5, id


def s(*codes):
    return set(codes)


# The table. One comment per row names the rule it checks; `send` is the exact bytes, in writes.
CASES = [
    # --- Request line -----------------------------------------------------------------------
    # RFC 9112 §3 (request-line = method SP request-target SP HTTP-version): no version, the
    # HTTP/0.9 form, is refused, never answered as a 0.9 body.
    Case("RL-01", "RFC 9112 §3: HTTP/0.9-style request line (no version) refused",
         b"GET /healthz\r\n\r\n", s(400, 505), close=True, body=MHD, no_answer_ok=True),
    # RFC 9110 §6.2, §15.6.6: HTTP/0.9 is not supported.
    Case("RL-02", "RFC 9110 §15.6.6: HTTP/0.9 version → 505",
         b"GET /healthz HTTP/0.9\r\nHost: h\r\n\r\n", s(400, 505), close=True, body=MHD),
    # RFC 9110 §15.6.6: another major version → 505.
    Case("RL-03", "RFC 9110 §15.6.6: HTTP/2.0 in an HTTP/1 request line → 505",
         b"GET /healthz HTTP/2.0\r\nHost: h\r\n\r\n", s(505), close=True, body=MHD),
    Case("RL-04", "RFC 9110 §15.6.6: HTTP/3.0 → 505",
         b"GET /healthz HTTP/3.0\r\nHost: h\r\n\r\n", s(505), close=True, body=MHD),
    # RFC 9110 §2.5: a higher minor version is processed as the highest 1.x known (200), or 505.
    Case("RL-05", "RFC 9110 §2.5: HTTP/1.2 handled as 1.1, or 505",
         b"GET /healthz HTTP/1.2\r\nHost: h\r\n\r\n", s(200, 505), body=ANY),
    # RFC 9112 §2.3: HTTP-name is case-sensitive "HTTP".
    Case("RL-06", "RFC 9112 §2.3: lowercase http/1.1 is not a version → 400",
         b"GET /healthz http/1.1\r\nHost: h\r\n\r\n", s(400, 505), close=True, body=MHD),
    # RFC 9110 §9.1: methods are case-sensitive: "get" is an unknown method (405 with Allow, or 501).
    Case("RL-07", "RFC 9110 §9.1: lowercase method is not GET → 405/501",
         b"get /healthz HTTP/1.1\r\nHost: h\r\n\r\n", s(405, 501), body=PROBLEM,
         check=lambda r: allow_header(r[0])),
    # RFC 9110 §15.5.6, §15.6.2: unknown method → 405 (with Allow) or 501.
    Case("RL-08", "RFC 9110 §15.6.2: unknown method → 405/501",
         b"BREW /healthz HTTP/1.1\r\nHost: h\r\n\r\n", s(405, 501), body=PROBLEM,
         check=lambda r: allow_header(r[0])),
    # docs/HTTP.md (405 with Allow): a method the route does not take never changes the session.
    Case("RL-09", "docs/HTTP.md 405: PATCH on a session → 405 + Allow, session unchanged",
         b"PATCH /sessions/" + VICTIM + b" HTTP/1.1\r\nHost: h\r\n" + JSON_CT + cl(20) + b"\r\n"
         + b'{"preset":"twitter"}', s(405, 501), body=PROBLEM, victim=True,
         check=lambda r: allow_header(r[0])),
    # RFC 9112 §3.2.2: "A server MUST accept the absolute-form in requests"; Host is then ignored.
    Case("RL-10", "RFC 9112 §3.2.2: absolute-form target is accepted",
         b"GET http://127.0.0.1:" + PORT + b"/healthz HTTP/1.1\r\nHost: other\r\n\r\n", s(200),
         close=False, body=PROBLEM),
    # RFC 9112 §3.2.4 + §3: asterisk-form is for OPTIONS only; an invalid request line → 400.
    Case("RL-11", "RFC 9112 §3.2.4: asterisk-form with GET → 400",
         b"GET * HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=PROBLEM),
    # RFC 9110 §9.3.7: OPTIONS * asks about the server; never a 5xx, connection stays usable.
    Case("RL-12", "RFC 9110 §9.3.7: OPTIONS * answered without error, keep-alive",
         b"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", s(200, 204, 404), close=False, body=PROBLEM),
    # RFC 9112 §3: a recipient MAY parse on whitespace boundaries, or refuse: 200 or 400.
    Case("RL-13", "RFC 9112 §3: two spaces after the method → 200 or 400",
         b"GET  /healthz HTTP/1.1\r\nHost: h\r\n\r\n", s(200, 400), body=ANY),
    Case("RL-14", "RFC 9112 §3: HTAB as the separators → 200 or 400 (or closed)",
         b"GET\t/healthz\tHTTP/1.1\r\nHost: h\r\n\r\n", s(200, 400), body=ANY, no_answer_ok=True),
    # RFC 9112 §3.2: no whitespace inside request-target; a refused request never acts.
    Case("RL-15", "RFC 9112 §3.2: space inside the target → 400, canary kept",
         b"DELETE /sessions/" + CANARY + b" x HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=ANY,
         canary=True, no_answer_ok=True),
    # RFC 9112 §3.2 / RFC 3986 §2: NUL is not allowed in a target; it must not truncate the path.
    Case("RL-16", "RFC 9112 §3.2: NUL byte in the target → 400, never truncated",
         b"DELETE /sessions/" + CANARY + b"\x00.x HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=ANY,
         canary=True),
    Case("RL-17", "RFC 9112 §3.2: control byte (0x01) in the target → 400",
         b"DELETE /sessions/" + CANARY + b"\x01 HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=ANY,
         canary=True),
    # RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
    Case("RL-18", "RFC 9112 §2.2: CRLF before the request line ignored",
         b"\r\nGET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", s(200, 400), body=ANY),
    # RFC 9112 §2.2: a recipient MAY recognize a bare LF as a line terminator.
    Case("RL-19", "RFC 9112 §2.2: bare LF line endings → 200 or 400",
         b"GET /healthz HTTP/1.1\nHost: h\n\n", s(200, 400), body=ANY),
    # --- Header section ---------------------------------------------------------------------
    # RFC 9110 §15.5.15: a target longer than the server interprets → 414.
    Case("HD-01", "RFC 9110 §15.5.15: 40 000-byte target → 414",
         b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\nHost: h\r\n\r\n", s(414), close=True, body=MHD),
    # RFC 6585 §5: header fields too large → 431.
    Case("HD-02", "RFC 6585 §5: one 40 000-byte header field → 431",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\nX-Big: " + b"b" * 40000 + b"\r\n\r\n", s(431),
         close=True, body=MHD),
    Case("HD-03", "RFC 6585 §5: 3 000 header fields → 431",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(3000))
         + b"\r\n", s(431), close=True, body=MHD),
    # Control: an 8 KB header is normal (cookies, tokens) and must pass.
    Case("HD-04", "RFC 9110 §5.4: an 8 KB header field is served",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\nX-Token: " + b"t" * 8000 + b"\r\n\r\n", s(200),
         close=False),
    # RFC 9112 §5: field-line = field-name ":" OWS field-value OWS.
    Case("HD-05", "RFC 9112 §5: header line without a colon → 400",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\nNoColonHere\r\n\r\n", s(400), close=True, body=MHD),
    # RFC 9112 §5.1: "A server MUST reject ... whitespace between a header field name and colon
    # with 400"; docs/HTTP.md: whitespace in a header name → 400 and the connection is closed.
    Case("HD-06", "RFC 9112 §5.1, docs/HTTP.md: space before the colon → 400 + close",
         POST_SESSIONS + b"Content-Length : %d\r\n\r\n" % len(INNER) + INNER, s(400), close=True,
         body=PROBLEM, smuggle=True),
    Case("HD-07", "RFC 9112 §5.1, docs/HTTP.md: HTAB before the colon of Transfer-Encoding → 400 + close",
         POST_SESSIONS + cl(len(chunked(INNER))) + b"Transfer-Encoding\t: chunked\r\n\r\n"
         + chunked(INNER), s(400), close=True, body=PROBLEM, smuggle=True),
    # RFC 9112 §2.2: whitespace between the start line and the first field line: reject, or
    # ignore that line. Either way the hidden Transfer-Encoding must not frame the body.
    Case("HD-08", "RFC 9112 §2.2: whitespace-preceded first header line → reject or ignore",
         b"POST /sessions HTTP/1.1\r\n Transfer-Encoding: chunked\r\nHost: h\r\n" + JSON_CT
         + cl(len(INNER)) + b"\r\n" + INNER, s(400), body=ANY, smuggle=True),
    # RFC 9112 §5.2: obs-fold: a server MUST reject (400) or replace each obs-fold with SP.
    Case("HD-09", "RFC 9112 §5.2: obs-fold continuation → 400, or unfolded (415)",
         b"POST /sessions HTTP/1.1\r\nHost: h\r\n" + cl(2) + b"Content-Type: text/plain\r\n x\r\n\r\n{}",
         s(400, 415), body=ANY),
    Case("HD-10", "RFC 9112 §5.2: obs-fold after an empty value → 400, or unfolded (415)",
         b"POST /sessions HTTP/1.1\r\nHost: h\r\n" + cl(2) + b"Content-Type:\r\n text/plain\r\n\r\n{}",
         s(400, 415), body=ANY),
    Case("HD-11", "RFC 9112 §5.2: Transfer-Encoding folded onto the next line → 400/411 + close",
         b"POST /sessions HTTP/1.1\r\nHost: h\r\n" + JSON_CT + b"Transfer-Encoding:\r\n chunked\r\n\r\n"
         + chunked(INNER), s(400, 411), close=True, body=ANY, smuggle=True),
    # RFC 9112 §2.2: a bare CR MUST be treated as invalid or replaced with SP: never a line end.
    Case("HD-12", "RFC 9112 §2.2: bare CR hiding Transfer-Encoding → never framed by it",
         POST_SESSIONS + cl(len(chunked(INNER))) + b"X-A: a\rTransfer-Encoding: chunked\r\n\r\n"
         + chunked(INNER), s(400), body=ANY, smuggle=True),
    # RFC 9110 §5.5: NUL in a field value: reject, or replace with SP (then it is not JSON: 415).
    # Known limitation, accepted: libmicrohttpd 0.9.75 measures values with strlen, so sheetd only
    # ever sees "application/json" (201); no later hop parses the header again (RELIABILITY.md).
    Case("HD-13", "RFC 9110 §5.5: NUL inside a field value → 400 or 415 (201: libmicrohttpd cuts at the NUL)",
         b"POST /sessions HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\x00x\r\n" + cl(2)
         + b"\r\n{}", s(400, 415, 201), body=ANY),
    # --- Host ---------------------------------------------------------------------------------
    # RFC 9112 §3.2: "A server MUST respond with a 400 ... to any HTTP/1.1 request message that
    # lacks a Host header field".
    Case("HO-01", "RFC 9112 §3.2: HTTP/1.1 request without Host → 400",
         b"GET /healthz HTTP/1.1\r\n\r\n", s(400), body=ANY),
    # RFC 9112 §3.2, docs/HTTP.md: duplicate Host → 400 and close; the pipelined pair is never served.
    Case("HO-02", "RFC 9112 §3.2, docs/HTTP.md: two Host fields → 400 + close",
         b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + INNER, s(400), close=True,
         body=PROBLEM, smuggle=True),
    # Control, RFC 9112 §9.3: HTTP/1.0 needs no Host, and without keep-alive the server closes.
    Case("HO-03", "RFC 9112 §9.3: HTTP/1.0 without Host → 200, then close",
         b"GET /healthz HTTP/1.0\r\n\r\n", s(200), close=True),
    # --- Message framing and smuggling (RFC 9112 §6, docs/HTTP.md "Behaviour users rely on") ----------
    # RFC 9112 §6.3 ¶3: CL with TE is a smuggling attempt; docs/HTTP.md: 400 and close.
    Case("SM-01", "RFC 9112 §6.3, docs/HTTP.md: Content-Length + Transfer-Encoding (CL.TE) → 400 + close",
         POST_SESSIONS + cl(5) + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + INNER, s(400),
         close=True, body=PROBLEM, smuggle=True),
    Case("SM-02", "RFC 9112 §6.3, docs/HTTP.md: Transfer-Encoding + Content-Length (TE.CL) → 400 + close",
         POST_SESSIONS + b"Transfer-Encoding: chunked\r\n" + cl(4) + b"\r\n" + chunked(INNER), s(400),
         close=True, body=PROBLEM, smuggle=True),
    # RFC 9112 §6.1: an unknown transfer coding → 501; docs/HTTP.md: 501 and close.
    Case("SM-03", "RFC 9112 §6.1, docs/HTTP.md: Transfer-Encoding: gzip → 501 + close",
         POST_SESSIONS + b"Transfer-Encoding: gzip\r\n\r\n" + INNER, s(501), close=True, body=PROBLEM,
         smuggle=True),
    Case("SM-04", "RFC 9112 §6.1, docs/HTTP.md: Transfer-Encoding: gzip, chunked → 501 + close",
         POST_SESSIONS + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked(INNER), s(400, 501),
         close=True, body=PROBLEM, smuggle=True),
    # RFC 9112 §6.1: chunked MUST NOT be applied more than once.
    Case("SM-05", "RFC 9112 §6.1: Transfer-Encoding: chunked, chunked → 400/501 + close",
         POST_SESSIONS + b"Transfer-Encoding: chunked, chunked\r\n\r\n" + chunked(INNER), s(400, 501),
         close=True, body=PROBLEM, smuggle=True),
    Case("SM-06", "RFC 9112 §6.1: two Transfer-Encoding: chunked lines → refused + close",
         POST_SESSIONS + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
         + chunked(INNER), s(400, 411, 501), close=True, body=PROBLEM, smuggle=True),
    Case("SM-07", "RFC 9112 §6.1, docs/HTTP.md: Transfer-Encoding: identity + Content-Length → refused + close",
         POST_SESSIONS + b"Transfer-Encoding: identity\r\n" + cl(len(INNER)) + b"\r\n" + INNER,
         s(400, 501), close=True, body=PROBLEM, smuggle=True),
    # RFC 9112 §6.3 ¶5, docs/HTTP.md: duplicate Content-Length → 400 and close.
    Case("SM-08", "RFC 9112 §6.3, docs/HTTP.md: two equal Content-Length → 400 + close",
         POST_SESSIONS + cl(2) + cl(2) + b"\r\n{}" + INNER, s(400), close=True, body=PROBLEM,
         smuggle=True),
    Case("SM-09", "RFC 9112 §6.3, docs/HTTP.md: two different Content-Length → 400 + close",
         POST_SESSIONS + cl(2) + cl(2 + len(INNER)) + b"\r\n{}" + INNER, s(400), close=True,
         body=PROBLEM, smuggle=True),
    Case("SM-10", "RFC 9112 §6.3, docs/HTTP.md: two Content-Length split by a bare LF → 400 + close",
         POST_SESSIONS + b"Content-Length: 2\nContent-Length: %d\r\n\r\n{}" % (2 + len(INNER)) + INNER,
         s(400), close=True, body=ANY, smuggle=True),
    Case("SM-11", "RFC 9112 §6.3, docs/HTTP.md: Content-Length: 2, 2 (a list) → 400 + close",
         POST_SESSIONS + b"Content-Length: 2, 2\r\n\r\n{}" + INNER, s(400), close=True, body=MHD,
         smuggle=True),
    # RFC 9110 §8.6: Content-Length = 1*DIGIT; anything else is invalid (RFC 9112 §6.3 ¶5: 400).
    Case("SM-12", "RFC 9110 §8.6: Content-Length with a sign (+2) → 400 + close",
         POST_SESSIONS + b"Content-Length: +2\r\n\r\n{}" + INNER, s(400), close=True, body=MHD,
         smuggle=True),
    Case("SM-13", "RFC 9110 §8.6: Content-Length in hex (0x2) → 400 + close",
         POST_SESSIONS + b"Content-Length: 0x2\r\n\r\n{}" + INNER, s(400), close=True, body=MHD,
         smuggle=True),
    Case("SM-14", "RFC 9110 §8.6: Content-Length with inner whitespace (1 1) → 400 + close",
         POST_SESSIONS + b"Content-Length: 1 1\r\n\r\n{}" + INNER, s(400), close=True, body=MHD,
         smuggle=True),
    Case("SM-15", "RFC 9110 §8.6: Content-Length of 23 digits (overflow) → 400/413 + close",
         POST_SESSIONS + b"Content-Length: 99999999999999999999999\r\n\r\n{}" + INNER, s(400, 413),
         close=True, body=ANY, smuggle=True),
    Case("SM-16", "RFC 9110 §8.6: empty Content-Length → 400 + close",
         POST_SESSIONS + b"Content-Length:\r\n\r\n{}" + INNER, s(400), close=True, body=MHD,
         smuggle=True),
    # Control, RFC 9110 §8.6: leading zeros are still 1*DIGIT.
    Case("SM-17", "RFC 9110 §8.6: Content-Length: 002 is valid → 201",
         POST_SESSIONS + b"Content-Length: 002\r\n\r\n{}", s(201), close=False),
    # --- Body limits and media types (docs/HTTP.md "Errors") ---------------------------------------
    # docs/HTTP.md 411: a chunked body is refused, answered from the headers alone.
    Case("BL-01", "docs/HTTP.md 411: chunked body refused before it is sent, + close",
         [POST_SESSIONS + b"Transfer-Encoding: chunked\r\n\r\n", Await(1), chunked(INNER)], s(411),
         close=True, body=PROBLEM, smuggle=True),
    Case("BL-02", "docs/HTTP.md 411: chunked body with a request in its chunk data → 411 + close",
         POST_SESSIONS + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(INNER), s(411), close=True,
         body=PROBLEM, smuggle=True),
    # docs/HTTP.md 413: "answered before the body is read": the answer comes with only the headers sent,
    # and what follows (a request pair) is never read as requests.
    Case("BL-03", "docs/HTTP.md 413: Content-Length 20000 answered before the body is sent, + close",
         [POST_SESSIONS + cl(20000) + b"\r\n", Await(1), INNER + b" " * (20000 - len(INNER))], s(413),
         close=True, body=PROBLEM, smuggle=True),
    # Control: a body of exactly the limit is accepted.
    Case("BL-04", "docs/HTTP.md 413: a body of exactly 16 KiB is accepted → 201",
         POST_SESSIONS + cl(MAX_BODY) + b"\r\n" + b"{" + b" " * (MAX_BODY - 2) + b"}", s(201), close=False),
    Case("BL-05", "docs/HTTP.md 413: one byte over the limit, sent at once → 413 + close",
         POST_SESSIONS + cl(MAX_BODY + 1) + b"\r\n" + b"{" + b" " * (MAX_BODY - 1) + b"}", s(413),
         close=True, body=PROBLEM),
    # docs/HTTP.md 415: another declared media type; the body is not a request.
    Case("BL-06", "docs/HTTP.md 415: Content-Type text/plain → 415",
         b"POST /sessions HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\n" + cl(len(INNER)) + b"\r\n"
         + INNER, s(415), body=PROBLEM, smuggle=True),
    # RFC 9112 §6.3: a Content-Length body is read in full even when the route is unknown, and
    # the connection stays in sync.
    Case("BL-07", "RFC 9112 §6.3: body of a 404 is skipped, not parsed as requests; keep-alive",
         b"POST /nope HTTP/1.1\r\nHost: h\r\n" + cl(len(INNER)) + b"\r\n" + INNER, s(404), close=False,
         body=PROBLEM, smuggle=True),
    Case("BL-08", "RFC 9112 §6.3: Content-Length frames a GET body too; keep-alive",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\n" + cl(len(INNER)) + b"\r\n" + INNER, s(200), close=False,
         smuggle=True),
    # --- Expect: 100-continue (RFC 9110 §10.1.1) ---------------------------------------------
    Case("EX-01", "RFC 9110 §10.1.1: Expect: 100-continue → 100 Continue, then 201",
         [POST_SESSIONS + cl(2) + b"Expect: 100-continue\r\n\r\n", Await(1), b"{}"], s(201), interim=[100],
         close=False),
    Case("EX-02", "RFC 9110 §10.1.1, docs/HTTP.md 413: over-limit with Expect → 413, no 100, + close",
         [POST_SESSIONS + cl(20000) + b"Expect: 100-continue\r\n\r\n", Await(1), INNER], s(413), interim=[],
         close=True, body=PROBLEM, smuggle=True),
    Case("EX-03", "RFC 9110 §10.1.1: no 100 Continue to an HTTP/1.0 client",
         b"POST /sessions HTTP/1.0\r\n" + JSON_CT + cl(2) + b"Expect: 100-continue\r\n\r\n{}", s(201),
         interim=[], close=True),
    # --- Pipelining and persistence (RFC 9112 §9.3) --------------------------------------------
    Case("PL-01", "RFC 9112 §9.3.2: three pipelined GETs answered in order",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /sessions/" + VICTIM + b" HTTP/1.1\r\nHost: h\r\n\r\n"
         b"GET /presets HTTP/1.1\r\nHost: h\r\n\r\n", [s(200), s(200), s(200)], close=False,
         check=lambda r: in_order(r, [b'"status"', b'"id"', b'"presets"'])),
    Case("PL-02", "RFC 9112 §9.3.2: pipelined POST with a body, then GET",
         POST_SESSIONS + cl(2) + b"\r\n{}GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", [s(201), s(200)],
         close=False, check=lambda r: in_order(r, [b'"id"', b'"status"'])),
    Case("PL-03", "RFC 9110 §9.3.2: HEAD answered without a body, next response intact",
         b"HEAD /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /presets HTTP/1.1\r\nHost: h\r\n\r\n",
         [s(200), s(200)], close=False, head=[0], check=lambda r: in_order(r, [b"", b'"presets"'])),
    # RFC 9112 §9.6: after Connection: close the server MUST NOT process further requests.
    Case("PL-04", "RFC 9112 §9.6: requests pipelined after Connection: close are never served",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
         + INNER, [s(200), s(200)], close=True, smuggle=True),
    Case("PL-05", "RFC 9112 §9.6: Connection: close → closed after the response",
         b"GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", s(200), close=True),
    Case("PL-06", "RFC 9112 §9.3: HTTP/1.0 with Connection: keep-alive stays open",
         b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", s(200), close=False),
    # --- Path segments after percent-decoding (docs/HTTP.md: "%2F never reaches another session") -----
    Case("PC-01", "docs/HTTP.md ids: %2F.. after the id → 400, victim unchanged",
         b"DELETE /sessions/" + VICTIM + b"%2F.. HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=PROBLEM, victim=True),
    Case("PC-02", "RFC 3986 §6.2.2.2: %2e%2e is the id \"..\", not a dot-segment",
         b"DELETE /sessions/%2e%2e HTTP/1.1\r\nHost: h\r\n\r\n", s(400, 404), body=PROBLEM, victim=True),
    Case("PC-03", "docs/HTTP.md ids: %00 after the id → 400",
         b"DELETE /sessions/" + VICTIM + b"%00 HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=PROBLEM, victim=True),
    Case("PC-04", "RFC 3986 §2.4: double encoding %252F is decoded once → 400",
         b"DELETE /sessions/" + VICTIM + b"%252F HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=PROBLEM,
         victim=True),
    Case("PC-05", "RFC 3629 §3: overlong UTF-8 %c0%af (\"/\") → 400",
         b"POST /sessions/" + VICTIM + b"%c0%af/dismiss HTTP/1.1\r\nHost: h\r\n" + JSON_CT + cl(2) + b"\r\n{}",
         s(400), body=PROBLEM, victim=True),
    Case("PC-06", "RFC 3986 §2.1: invalid escape %zz → 400",
         b"DELETE /sessions/" + VICTIM + b"%zz HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=PROBLEM, victim=True),
    Case("PC-07", "docs/HTTP.md routes: trailing slash is another path → 404",
         b"DELETE /sessions/" + VICTIM + b"/ HTTP/1.1\r\nHost: h\r\n\r\n", s(400, 404), body=PROBLEM,
         victim=True),
    Case("PC-08", "docs/HTTP.md routes: extra segment after an action → 404",
         b"POST /sessions/" + VICTIM + b"/show/extra HTTP/1.1\r\nHost: h\r\n" + JSON_CT + cl(2) + b"\r\n{}",
         s(400, 404), body=PROBLEM, victim=True),
    Case("PC-09", "docs/HTTP.md: x%2F..%2F<id> never reaches the session",
         b"PUT /sessions/x%2F..%2F" + VICTIM + b" HTTP/1.1\r\nHost: h\r\n" + JSON_CT + cl(20) + b"\r\n"
         + b'{"preset":"twitter"}', s(400), body=PROBLEM, victim=True),
    Case("PC-10", "docs/HTTP.md: <id>%2Fshow is one segment, not the show action",
         b"POST /sessions/" + VICTIM + b"%2Fshow HTTP/1.1\r\nHost: h\r\n" + JSON_CT + cl(21) + b"\r\n"
         + b'{"detent":"expanded"}', s(400), body=PROBLEM, victim=True),
    Case("PC-11", "RFC 3986 §3.4: %3F is part of the segment, not a query → 400",
         b"DELETE /sessions/" + VICTIM + b"%3F HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=PROBLEM, victim=True),
    Case("PC-12", "docs/HTTP.md ids: encoded backslash %5C.. → 400",
         b"DELETE /sessions/" + VICTIM + b"%5C.. HTTP/1.1\r\nHost: h\r\n\r\n", s(400), body=PROBLEM, victim=True),
]


# ---------------------------------------------------------------------------------------------
# Checks used by the table.


def allow_header(resp):
    if resp.status == 405 and resp.header("allow") is None:
        return "405 without an Allow header (RFC 9110 §15.5.6)"
    return None


def in_order(finals, markers):
    for i, (resp, marker) in enumerate(zip(finals, markers)):
        if marker == b"" and resp.body:
            return "response %d (HEAD) has a body" % (i + 1)
        if marker and marker not in resp.body:
            return "response %d is not the answer to request %d (no %s)" % (i + 1, i + 1, marker.decode())
    return None


# ---------------------------------------------------------------------------------------------
# A raw HTTP/1.1 client connection.


class Response:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body

    def header(self, name):
        for n, v in self.headers:
            if n.lower() == name:
                return v
        return None

    @property
    def is_problem(self):
        return (self.header("content-type") or "").startswith("application/problem+json")

    @property
    def from_mhd(self):
        # libmicrohttpd's own error pages carry no Content-Type; sheetd always sets one.
        return self.status >= 400 and self.header("content-type") is None


class Garbage(Exception):
    """Bytes that are not an HTTP response."""


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.eof = False
        self.send_failed = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError:  # the server closed first (EPIPE, ECONNRESET): what follows is unread
            self.send_failed = True

    def _fill(self, deadline):
        """Reads more bytes; False on timeout or end of stream."""
        if self.eof:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except OSError:  # ECONNRESET: closed
            self.eof = True
            return False
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def read_response(self, timeout=IO_TIMEOUT, head=False):
        """The next response, or None if none came complete before the timeout or end of stream."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            if self.buf and not b"HTTP/".startswith(self.buf[:5]):
                raise Garbage(self.buf)
            if not self._fill(deadline):
                if self.buf:
                    if not self.buf.startswith(b"HTTP/"):
                        raise Garbage(self.buf)
                return None
        head_bytes, _, rest = self.buf.partition(b"\r\n\r\n")
        lines = head_bytes.split(b"\r\n")
        m = re.match(rb"HTTP/\d\.\d (\d{3}) ?(.*)$", lines[0])
        if not m:
            raise Garbage(self.buf)
        status = int(m.group(1))
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers.append((name.decode("latin-1"), value.strip().decode("latin-1")))
        resp = Response(status, m.group(2).decode("latin-1"), headers, b"")
        self.buf = rest
        if head or status < 200 or status in (204, 304):
            return resp
        length = resp.header("content-length")
        if (resp.header("transfer-encoding") or "").lower() == "chunked":
            body = b""
            while True:
                while b"\r\n" not in self.buf:
                    if not self._fill(deadline):
                        return None
                size_line, _, self.buf = self.buf.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                while len(self.buf) < size + 2:
                    if not self._fill(deadline):
                        return None
                body += self.buf[:size]
                self.buf = self.buf[size + 2 :]
                if size == 0:
                    break
            resp.body = body
        elif length is not None:
            n = int(length)
            while len(self.buf) < n:
                if not self._fill(deadline):
                    return None
            resp.body, self.buf = self.buf[:n], self.buf[n:]
        else:  # delimited by the close
            while self._fill(deadline):
                pass
            resp.body, self.buf = self.buf, b""
        return resp

    def wait_closed(self, timeout):
        """Reads until end of stream or `timeout`; True if closed. Bytes read stay in buf."""
        deadline = time.monotonic() + timeout
        while self._fill(deadline):
            pass
        return self.eof


def request(port, raw, timeout=IO_TIMEOUT):
    """One request on a fresh connection: its response (or None)."""
    c = Conn(port)
    try:
        c.send(raw)
        return c.read_response(timeout)
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# Running the table.


class Env:
    def __init__(self, port):
        self.port = port
        self.victim = None
        self.victim_snapshot = None
        self.smuggled = 0

    def fill(self, data, case):
        return (
            data.replace(CANARY, canary_id(case).encode())
            .replace(VICTIM, self.victim.encode())
            .replace(PORT, str(self.port).encode())
        )

    def livez_requests(self):
        resp = request(self.port, b"GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n")
        if resp is None or resp.status != 200:
            raise RuntimeError("GET /metrics failed")
        total = 0
        for line in resp.body.decode().splitlines():
            if line.startswith('sheetd_requests_total{route="/livez"'):
                total += int(float(line.rsplit(" ", 1)[1]))
        return total

    def session(self, id):
        return request(self.port, b"GET /sessions/" + id.encode() + b" HTTP/1.1\r\nHost: h\r\n\r\n")

    def victim_state(self):
        resp = self.session(self.victim)
        if resp is None or resp.status != 200:
            raise RuntimeError("could not read the victim session")
        return stable(resp)

    def put_canary(self, id):
        resp = request(
            self.port, b"PUT /sessions/" + id.encode() + b" HTTP/1.1\r\nHost: h\r\n" + JSON_CT + cl(2) + b"\r\n{}"
        )
        if resp is None or resp.status not in (200, 201):
            raise RuntimeError("could not create canary session %s" % id)


def stable(resp):
    """A snapshot without its sampling time: what a request could have changed."""
    snapshot = json.loads(resp.body)
    snapshot.pop("time", None)
    return snapshot


def canary_id(case):
    return "canary-" + case.id


def describe(resp):
    if resp.status < 200:
        return str(resp.status)
    kind = "problem+json" if resp.is_problem else ("(answered by libmicrohttpd)" if resp.from_mhd else "")
    return ("%d %s" % (resp.status, kind)).strip()


def run_case(env, case):
    """Runs one case: (errors, seen, notes)."""
    errors, notes = [], []
    livez_before = env.livez_requests() if case.smuggle else 0
    conn = Conn(env.port)
    interims, finals = [], []
    garbage = b""

    def read_one(timeout=IO_TIMEOUT):
        nonlocal garbage
        try:
            resp = conn.read_response(timeout, head=len(finals) in case.head)
        except Garbage as g:
            garbage = g.args[0]
            conn.buf = b""
            return None
        if resp is not None:
            (interims if resp.status < 200 else finals).append(resp)
        return resp

    try:
        for step in case.send:
            if isinstance(step, Await):
                while len(interims) + len(finals) < step.count:
                    if read_one() is None:
                        errors.append("no answer before the rest was sent")
                        break
            else:
                conn.send(env.fill(step, case))
        while len(finals) < len(case.status):
            if read_one() is None:
                break

        # Connection behaviour, and anything that comes after the expected responses.
        extra = []
        if case.close is False and len(finals) == len(case.status):
            if case.smuggle:  # give an inner request time to be answered before probing
                conn.wait_closed(QUIET)
            while conn.buf or not conn.eof:
                try:
                    resp = conn.read_response(0.05)
                except Garbage as g:
                    garbage = g.args[0]
                    break
                if resp is None:
                    break
                extra.append(resp)
            closed = conn.eof
            if not closed:
                conn.send(b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n")
                probe = conn.read_response()
                if probe is None or probe.status != 200 or b'"status"' not in probe.body:
                    closed = True
                    errors.append("the connection is not usable after the response")
        else:
            closed = conn.wait_closed(IO_TIMEOUT if case.close else QUIET)
            while conn.buf:
                try:
                    resp = conn.read_response(0)
                except Garbage as g:
                    garbage = g.args[0]
                    break
                if resp is None:
                    break
                extra.append(resp)
    finally:
        conn.close()

    # Status codes and count.
    unanswered = not finals and case.no_answer_ok and closed  # a refusal too: checks go on
    if not finals and not unanswered:
        errors.append("no response" + (" (connection closed)" if closed else " (timed out)"))
    for i, (resp, accepted) in enumerate(zip(finals, case.status)):
        if resp.status not in accepted:
            errors.append(
                "response %d: status %d, expected %s" % (i + 1, resp.status, "/".join(map(str, sorted(accepted))))
            )
    if extra:
        errors.append("%d unexpected extra response(s): %s" % (len(extra), ", ".join(str(r.status) for r in extra)))
    if garbage:
        if any(r.from_mhd and r.body.startswith(b"HTTP/1.") for r in finals):
            notes.append("libmicrohttpd sent its error header twice (malformed response)")
        else:
            errors.append("bytes that are not a response: %r" % garbage[:40])

    # 1xx.
    if case.interim is not None and [r.status for r in interims] != case.interim:
        errors.append("interim responses %s, expected %s" % ([r.status for r in interims], case.interim))

    # Bodies: sheetd's errors are problem+json; libmicrohttpd's own pages are only noted.
    for resp in finals:
        if resp.status >= 400:
            if resp.from_mhd:
                if case.body == PROBLEM:
                    errors.append("%d answered by libmicrohttpd, expected sheetd's problem+json" % resp.status)
            elif not resp.is_problem:
                errors.append("%d with Content-Type %s, not problem+json" % (resp.status, resp.header("content-type")))

    # Connection.
    if case.close is True and not closed:
        errors.append("the connection stayed open")
    if case.close is False and closed and not any("not usable" in e for e in errors) and finals:
        errors.append("the connection was closed")

    if case.check and finals and len(finals) == len(case.status):
        problem = case.check(finals)
        if problem:
            errors.append(problem)

    # Nothing reached the router: the inner GET /livez (its counters, or an extra response), the
    # inner DELETE (the canary), the victim.
    counted = env.livez_requests() - livez_before if case.smuggle else 0
    if case.canary:
        resp = env.session(canary_id(case))
        if resp is None or resp.status != 200:
            errors.append("canary session %s was deleted" % canary_id(case))
            counted += 1
    # Each inner request that got through shows as a counter or a lost canary, and as a response
    # if the connection was still open to carry it.
    reached = max(counted, len(extra)) if case.smuggle else 0
    if reached:
        errors.append("%d smuggled request(s) reached the router" % reached)
        env.smuggled += reached
    if case.victim:
        resp = env.session(env.victim)
        if resp is None or resp.status != 200:
            errors.append("the victim session is gone")
        elif stable(resp) != env.victim_snapshot:
            errors.append("the victim session was changed")

    if unanswered:
        return errors, "closed without an answer", notes
    seen = " + ".join(describe(r) for r in interims + finals) or "no response"
    seen += ", closed" if closed else ", open"
    if case.send and any(isinstance(step, Await) for step in case.send) and conn.send_failed:
        seen += " (rest unsent: closed)"
    return errors, seen, notes


def expected_text(case):
    parts = []
    for accepted in case.status:
        parts.append("/".join(map(str, sorted(accepted))))
    text = ", ".join(parts)
    if case.interim:
        text = "+".join(map(str, case.interim)) + " then " + text
    elif case.interim == []:
        text += ", no 1xx"
    if case.body == PROBLEM:
        text += " problem+json"
    elif case.body == MHD:
        text += " (answered by libmicrohttpd)"
    if case.no_answer_ok:
        text += " or closed unanswered"
    text += {True: ", close", False: ", keep-alive", None: ""}[case.close]
    if case.smuggle:
        text += ", inner never served"
    if case.canary and not case.smuggle:
        text += ", canary kept"
    if case.victim:
        text += ", victim unchanged"
    return text


def sent_summary(case):
    """The bytes sent, escaped, with long runs and the placeholders named, cut to one cell."""
    pieces = []
    for step in case.send:
        if isinstance(step, Await):
            pieces.append("⟨wait for the answer⟩")
            continue
        data = step.replace(INNER, b"<inner pair>").replace(CANARY, b"<canary>").replace(VICTIM, b"<victim>")
        data = data.replace(PORT, b"<port>")
        text = data.decode("latin-1")
        text = re.sub(
            r"(.)\1{15,}", lambda m: "%s×%d" % (m.group(1).replace(" ", "SP"), len(m.group(0))), text
        )
        text = text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
        text = re.sub(r"[\x00-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group(0)), text)
        if len(text) > 150:
            text = text[:150] + "…"
        pieces.append(text)
    return " ".join(pieces)


def md(text):
    return text.replace("|", "\\|")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--report", default=".build/protocol-test/latest.md")
    args = parser.parse_args()
    began = time.monotonic()
    env = Env(args.port)

    # The victim: a session made as docs/HTTP.md shows; percent tricks must never reach it.
    resp = request(args.port, POST_SESSIONS + cl(len(CREATE_BODY)) + b"\r\n" + CREATE_BODY)
    if resp is None or resp.status != 201 or not (resp.header("location") or "").startswith("/sessions/"):
        print("protocol-test: could not create the victim session: %s" % (resp and resp.status))
        print("protocol-test: 0 passed, 1 failed")
        return 1
    env.victim = resp.header("location").rsplit("/", 1)[1]
    assert len(env.victim) == len(VICTIM), env.victim
    env.victim_snapshot = env.victim_state()
    for case in CASES:
        if case.canary:
            env.put_canary(canary_id(case))

    rows, passed, failed = [], 0, 0
    for case in CASES:
        if time.monotonic() - began > BUDGET:
            errors, seen, notes = ["not run: the time budget of %ds was spent" % BUDGET], "-", []
        else:
            try:
                errors, seen, notes = run_case(env, case)
            except Exception as e:  # a broken case fails alone
                errors, seen, notes = ["%s: %s" % (type(e).__name__, e)], "-", []
        ok = not errors
        passed += ok
        failed += not ok
        line = "%-4s %s  %s — seen: %s" % ("ok" if ok else "FAIL", case.id, case.rule, seen)
        if errors:
            line += "\n       " + "; ".join(errors)
        if notes:
            line += "\n       note: " + "; ".join(notes)
        print(line, flush=True)
        rows.append((case, seen, ok, errors, notes))

    # The two closing checks, counted as cases.
    final = [
        ("ZZ-01", "docs/HTTP.md: the victim session exists and is unchanged at the end", "GET /sessions/<victim>"),
        ("ZZ-02", "docs/HTTP.md: zero smuggled requests reach the router", "GET /metrics, the canaries"),
    ]
    resp = env.session(env.victim)
    victim_ok = resp is not None and resp.status == 200 and stable(resp) == env.victim_snapshot
    results = [
        (victim_ok, "unchanged" if victim_ok else "changed or gone"),
        (env.smuggled == 0, "%d reached the router" % env.smuggled),
    ]
    for (id, rule, sent), (ok, seen) in zip(final, results):
        passed += ok
        failed += not ok
        print("%-4s %s  %s — seen: %s" % ("ok" if ok else "FAIL", id, rule, seen))
        rows.append((id, rule, sent, "unchanged" if id == "ZZ-01" else "0", seen, ok))

    os.makedirs(os.path.dirname(args.report) or ".", exist_ok=True)
    with open(args.report, "w") as out:
        out.write("# sheetd protocol suite: latest run\n\n")
        out.write(
            "Written by `IntegrationTests/protocol-test` (%s). Cases marked *answered by libmicrohttpd* get its "
            "HTML error page; only their status and connection behaviour are asserted.\n\n"
            % time.strftime("%Y-%m-%d %H:%M:%S")
        )
        out.write("| case | rule | sent | expected | seen | result |\n|---|---|---|---|---|---|\n")
        for row in rows:
            if isinstance(row[0], Case):
                case, seen, ok, errors, notes = row
                result = "ok" if ok else "FAIL: " + "; ".join(errors)
                if notes:
                    result += " (note: " + "; ".join(notes) + ")"
                cells = (case.id, case.rule, "`" + sent_summary(case) + "`", expected_text(case), seen, result)
            else:
                id, rule, sent, expected, seen, ok = row
                cells = (id, rule, sent, expected, seen, "ok" if ok else "FAIL")
            out.write("| " + " | ".join(md(c) for c in cells) + " |\n")
        out.write(
            "\n%d passed, %d failed; smuggled requests that reached the router: %d.\n" % (passed, failed, env.smuggled)
        )

    print("protocol-test: smuggled requests that reached the router: %d" % env.smuggled)
    print("protocol-test: report in %s (%.1f s)" % (args.report, time.monotonic() - began))
    print("protocol-test: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
