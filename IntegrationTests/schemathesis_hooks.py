"""Schemathesis hooks for IntegrationTests/schemathesis: three built-in checks narrowed where docs/HTTP.md makes them wrong.

- `response_schema_conformance` reads a `text/event-stream` body as events and an `application/yaml`
  body as the document it parses to, and validates those against the media type's `schema` (the
  reading of OpenAPI 3.2). openapi.yaml is 3.1: there `schema` describes the body as sent, a
  string, which is what generated clients need to type the stream and the spec at all (an object
  schema makes them parse the text as JSON). `response_schema_conformance_text` runs the built-in
  check for every other body and checks those two by their own rules: every event block has one
  line of JSON `data`, a known `event` and its id form; the YAML is an OpenAPI document.

Every other check runs as shipped. Each narrowing below names the rule of docs/HTTP.md (the contract,
docs/HTTP.md) that the built-in check cannot know; anything outside those rules still fails the run.

- `use_after_free` flags any 2xx on a deleted session's path, CORS preflights included. docs/HTTP.md:
  "preflight OPTIONS answered for every route" - a preflight never reads the session, so
  `OPTIONS /sessions/{id}` answering 204 after the DELETE is the contract, not a use after free.
  `use_after_free_except_preflight` runs the built-in check for every other method.

- `positive_data_acceptance` expects every schema-valid request to be accepted. Some of docs/HTTP.md's 400s
  depend on things no request schema can express: the session's state (its preset's detents, its
  clock) or a relation between fields (geometry, option ranges measured against the geometry, the
  body's `seq` against the `Sheetd-Seq` field).
  `positive_data_acceptance_semantic` runs the built-in check and lets a 400 pass only when its
  problem `code` and `field` are one of those documented rules (SEMANTIC_400 below).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from sheetkit.sse import parse_fields  # noqa: E402  (an event block's fields, as every stream check reads them)

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi import checks as builtin


@schemathesis.check
def use_after_free_except_preflight(ctx: Any, response: Any, case: Any) -> bool | None:
    """use_after_free, except for CORS preflights (docs/HTTP.md: preflight OPTIONS answered for every route)."""
    if case.operation.method.upper() == "OPTIONS":
        return None
    # docs/HTTP.md, 204 No Content: an EventSource reconnecting (Last-Event-ID) to a session that is
    # gone is told to stop reconnecting with 204 (WHATWG HTML §9.2), not 404.
    headers = {k.lower(): v for k, v in (case.headers or {}).items()}
    if case.operation.path.endswith("/frames") and response.status_code == 204 and "last-event-id" in headers:
        return None
    return builtin.use_after_free(ctx, response, case)


def _body_has_time(body: Any, field: str) -> bool:
    """Whether the request named the `time` the server says is missing (`time` or `events[i].time`)."""
    match = re.fullmatch(r"events\[(\d+)\]\.time", field)
    if match and isinstance(body, dict) and isinstance(body.get("events"), list):
        events = body["events"]
        index = int(match.group(1))
        return index < len(events) and isinstance(events[index], dict) and "time" in events[index]
    return isinstance(body, dict) and "time" in body


def _changed_without_translation(body: Any, field: str) -> bool:
    """Whether the event the server names (`translation` or `events[i].translation`) is a `changed`
    without `translation`."""
    match = re.fullmatch(r"events\[(\d+)\]\.translation", field)
    event = body
    if match and isinstance(body, dict) and isinstance(body.get("events"), list):
        index = int(match.group(1))
        event = body["events"][index] if index < len(body["events"]) else None
    return isinstance(event, dict) and event.get("phase") == "changed" and "translation" not in event


def _semantic_400(case: Any, response: Any) -> bool:
    """A 400 for one of docs/HTTP.md's rules that the request schema cannot express."""
    try:
        problem = json.loads(response.content)
    except ValueError:
        return False
    if not isinstance(problem, dict):
        return False
    code, field = problem.get("code"), str(problem.get("field", ""))
    # Detent names belong to the preset (fluid: to its `options.detents`) and, for show, to the
    # session the request addresses: "unknown preset/option/detent" is 400 (docs/HTTP.md, Errors).
    if code == "unknown-detent":
        return True
    # "bad geometry" is 400: safeAreaTop + safeAreaBottom < height relates three fields.
    if code == "bad-geometry":
        return True
    # Option ranges are measured against the geometry (e.g. expandedOffset in [0, H]; docs/PHYSICS.md).
    # The magnitude bound every number has (|x| <= 1e6) is not one of them: a schema can state it.
    if code == "invalid-value" and re.match(r"(config\.)?options\.", field):
        return "magnitude" not in str(problem.get("detail", ""))
    # `clock: client`: "every mutating request carries `time`" - required by the session's clock,
    # not by the body schema. Only a request that left `time` out qualifies.
    if code == "invalid-value" and re.fullmatch(r"time|events\[\d+\]\.time", field):
        return not _body_has_time(case.body, field)
    # A batch of pan events needs a client-clock session (its events' times space them): the
    # session's clock, not the body schema, decides.
    if code == "invalid-value" and field == "events" and "client clock" in str(problem.get("detail", "")):
        return True
    # "`translation` is required for `changed`" (PanEvent, SimPanEvent): the request schemas keep
    # one shape per event (generated clients drop conditional sub-schemas), so the rule is in the
    # descriptions. Only a `changed` that left `translation` out qualifies.
    if code == "invalid-value" and re.fullmatch(r"translation|events\[\d+\]\.translation", field):
        return _changed_without_translation(case.body, field)
    # "`fluid` also takes `scrollOffset`": on any other preset's session it is an unknown field;
    # likewise a layout event's `keyboardInset` and `contentHeight` (the `keyboard` and
    # `contentFit` capabilities), decided by the session the request addresses.
    if code == "unknown-field" and re.fullmatch(
        r"(events\[\d+\]\.)?(scrollOffset|keyboardInset|contentHeight)", field
    ):
        return True
    # `fling` is a phase of the presets with scroll hand-off only (the session's preset decides);
    # on the others it is an unknown phase, and where the session is not resting where its content
    # scrolls it is a 409, not a 400.
    if code == "invalid-value" and re.fullmatch(r"(events\[\d+\]\.)?phase", field):
        return "fling" in str(problem.get("detail", "")) or "layout" in str(problem.get("detail", ""))
    # A layout event's options are checked as at creation (the preset's own, against the new
    # layout); a layout event that would leave no reachable detent is refused.
    if code == "invalid-value" and re.fullmatch(r"(events\[\d+\]\.)?(options\..*|contentHeight)", field):
        return "magnitude" not in str(problem.get("detail", ""))
    # Options of another preset in a layout event are unknown options for the session's preset.
    if code == "unknown-option":
        return True
    # "`seq` in the body and the `Sheetd-Seq` field, when both are sent, are equal" relates a header
    # parameter to a body member. Only a request that sent two different numbers qualifies.
    if code == "invalid-value" and field == "seq":
        headers = {k.lower(): str(v) for k, v in (case.headers or {}).items()}
        body = case.body if isinstance(case.body, dict) else {}
        return "sheetd-seq" in headers and "seq" in body and headers["sheetd-seq"] != str(body["seq"])
    return False


@schemathesis.check
def positive_data_acceptance_semantic(ctx: Any, response: Any, case: Any) -> bool | None:
    """positive_data_acceptance, except 400s for docs/HTTP.md rules that depend on state or on several fields."""
    try:
        return builtin.positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if response.status_code == 400 and _semantic_400(case, response):
            return None
        raise


# Events of GET /sessions/{id}/frames (openapi.yaml, streamFrames) and the members their data has.
SSE_EVENTS = {
    "frame": {"animation", "index", "t", "constant", "dimmerAlpha", "progress", "velocity"},
    "settled": {"preset", "state", "detent", "constant", "options", "dragLaw"},
    "interrupted": {"preset", "state", "detent", "constant", "options", "dragLaw"},
    "snapshot": {"preset", "state", "detent", "constant", "options", "dragLaw"},
    "closed": {"reason"},
}


def _sse_problems(text: str) -> list[str]:
    """What is wrong with an event stream, block by block (comments and blank blocks aside)."""
    problems = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = parse_fields(block)
        if not fields:
            continue
        event = fields.get("event", ["message"])[0]
        if len(fields.get("data", [])) != 1:
            problems.append(f"`{event}` without one data line: {block[:200]!r}")
            continue
        if event not in SSE_EVENTS:
            problems.append(f"unknown event {event!r}")
            continue
        try:
            data = json.loads(fields["data"][0])
        except ValueError:
            problems.append(f"`{event}` data is not JSON: {fields['data'][0][:200]!r}")
            continue
        missing = SSE_EVENTS[event] - (data.keys() if isinstance(data, dict) else set())
        if missing:
            problems.append(f"`{event}` data lacks {sorted(missing)}")
        if "id" in fields and not re.fullmatch(r"[0-9]+:[0-9]+", fields["id"][0]):
            problems.append(f"`{event}` id {fields['id'][0]!r} is not n:k")
        if "retry" in fields and not fields["retry"][0].isdigit():
            problems.append(f"retry {fields['retry'][0]!r}")
    return problems


def _yaml_problems(text: str) -> list[str]:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        return [f"not YAML: {error}"]
    if not isinstance(document, dict) or not {"openapi", "info", "paths"} <= document.keys():
        return ["not an OpenAPI document (openapi, info, paths)"]
    return []


@schemathesis.check
def response_schema_conformance_text(ctx: Any, response: Any, case: Any) -> bool | None:
    """response_schema_conformance, with event streams and YAML checked as the text they are sent as."""
    content_type = response.headers.get("content-type", [""])
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    media = content_type.split(";")[0].strip().lower()
    if media not in ("text/event-stream", "application/yaml") or not 200 <= response.status_code < 300:
        return builtin.response_schema_conformance(ctx, response, case)
    text = response.content.decode("utf-8", errors="replace")
    problems = _sse_problems(text) if media == "text/event-stream" else _yaml_problems(text)
    if problems:
        raise AssertionError(f"{media} body: " + "; ".join(problems[:5]))
    return None
