"""A whole sheetd session driven through the client openapi-python-client makes from openapi.yaml.

    openapi-python-client generate --path openapi.yaml --output-path sheetd_client --meta none \
        --config Clients/python/config.yaml
    python3 Clients/python/session.py http://127.0.0.1:8080 [DIR holding sheetd_client]

Every preset is created with options, shown, dragged (began, changed, ended), its snap and
animation read typed and its frames streamed (parsed with sseclient-py); then a simulation, the
metrics and the spec. Every typed answer is encoded again (`to_dict()`) and compared with the raw
JSON sheetd sent, nulls included, and no member may be left untyped (kept only as
`additional_properties`): a field the typed client lost fails the run. `run()` returns the
(passed, failed) checks, printing `ok …` or `FAIL …` for each.
"""

from __future__ import annotations

import json
import sys

import attrs
import sseclient


def lost(sent, again, path=""):
    """Where `again` (a typed value encoded again) differs from `sent` (what sheetd sent)."""
    if isinstance(sent, dict) and isinstance(again, dict):
        out = [f"{path}/{k}: not sent, but encoded" for k in again.keys() - sent.keys()]
        out += [f"{path}/{k}: lost (sent {json.dumps(sent[k])[:80]})" for k in sent.keys() - again.keys()]
        for k in sent.keys() & again.keys():
            out += lost(sent[k], again[k], f"{path}/{k}")
        return out
    if isinstance(sent, list) and isinstance(again, list):
        if len(sent) != len(again):
            return [f"{path}: {len(sent)} items sent, {len(again)} typed"]
        return [d for i, (x, y) in enumerate(zip(sent, again)) for d in lost(x, y, f"{path}[{i}]")]
    if isinstance(sent, bool) or isinstance(again, bool):
        return [] if sent is again else [f"{path}: sent {sent!r}, typed {again!r}"]
    return [] if sent == again else [f"{path}: sent {sent!r}, typed {again!r}"]


def untyped(value, path=""):
    """Members the typed value holds only as `additional_properties` (not in the schema), where
    its schema has members of its own: they survive `to_dict()`, but nothing types them."""
    if attrs.has(type(value)):
        names = [f.name for f in attrs.fields(type(value)) if f.name != "additional_properties"]
        extra = getattr(value, "additional_properties", {})
        out = [f"{path}: untyped {sorted(extra)}"] if names and extra else []
        for name in names:
            out += untyped(getattr(value, name), f"{path}/{name}")
        for key, item in extra.items():
            out += untyped(item, f"{path}/{key}")
        return out
    if isinstance(value, list):
        return [d for i, item in enumerate(value) for d in untyped(item, f"{path}[{i}]")]
    return []


def run(base: str) -> tuple[int, int]:
    # The generated package, imported here so the caller decides where it was generated.
    from sheetd_client import Client
    from sheetd_client.api.frames import stream_frames
    from sheetd_client.api.meta import metrics, openapi
    from sheetd_client.api.sessions import create_session, delete_session, dismiss, get_session, pan, put_session, show
    from sheetd_client.api.simulate import simulate
    from sheetd_client import models as m

    counts = [0, 0]

    def check(ok, what, why=""):
        counts[0 if ok else 1] += 1
        print(("ok   " if ok else "FAIL ") + what + ("" if ok else f": {why}"))

    def typed(what, response, want=200):
        """The parsed answer of `response`, after checking its status and its round trip."""
        if response.status_code != want:
            check(False, f"{what}: status {want}", f"{response.status_code} {response.content[:300]!r}")
            return None
        differences = lost(json.loads(response.content), response.parsed.to_dict()) + untyped(response.parsed)
        check(not differences, f"{what}: every field survives the typed round trip", "; ".join(differences[:5]))
        return response.parsed

    client = Client(base_url=base, raise_on_unexpected_status=True)
    # (preset, its typed configuration, what the typed snapshot must echo)
    rows = [
        ("facebook", m.FacebookConfig(preset=m.FacebookConfigPreset.FACEBOOK,
                                      options=m.FacebookOptions(expanded_offset=60)),
         lambda s: isinstance(s, m.FacebookSnapshot) and s.options.expanded_offset == 60),
        ("twitter", m.TwitterConfig(preset=m.TwitterConfigPreset.TWITTER,
                                    options=m.TwitterOptions(card_height_ratio=0.6, max_dim_alpha=0.5)),
         lambda s: isinstance(s, m.TwitterSnapshot) and s.options.card_height_ratio == 0.6),
        ("glide", m.GlideConfig(preset=m.GlideConfigPreset.GLIDE, options=m.GlideOptions(
            segmented=False, concrete_dimension=m.GlideOptionsConcreteDimensionCustom(custom=500))),
         lambda s: isinstance(s, m.GlideSnapshot) and s.options.segmented is False
         and isinstance(s.options.concrete_dimension, m.GlideOptionsConcreteDimensionCustom)
         and s.options.concrete_dimension.custom == 500),
        ("transition", m.TransitionConfig(preset=m.TransitionConfigPreset.TRANSITION,
                                          options=m.TransitionOptions(mini_height=80, finish_threshold=None)),
         lambda s: isinstance(s, m.TransitionSnapshot) and s.options.mini_height == 80
         and s.options.finish_threshold is None),
        ("swipeCell", m.SwipeCellConfig(preset=m.SwipeCellConfigPreset.SWIPECELL,
                                        options=m.SwipeCellOptions(swipe_distance=120)),
         lambda s: isinstance(s, m.SwipeCellSnapshot) and s.options.swipe_distance == 120),
        ("fluid", m.FluidConfig(preset=m.FluidConfigPreset.FLUID, options=m.FluidOptions(
            detents=m.FluidOptionsDetents.from_dict(
                {"full": {"fromTop": 18}, "half": {"fraction": 0.5}, "peek": {"height": 120}}),
            hideable=False, max_dim_alpha=0.4)),
         lambda s: isinstance(s, m.FluidSnapshot) and "peek" in s.detents.additional_properties
         and "hidden" not in s.detents.additional_properties and s.options.hideable is False),
    ]
    for preset, config, echoes in rows:
        created = typed(f"{preset}: created snapshot", create_session.sync_detailed(client=client, body=config), 201)
        if created is None:
            continue
        check(echoes(created), f"{preset}: the typed snapshot has the options sent", repr(created)[:300])
        sid = created.id
        shown = typed(f"{preset}: show result", show.sync_detailed(sid, client=client, body=m.ShowRequest()))
        check(shown is not None and isinstance(shown.snap, m.Snap) and isinstance(shown.animation, m.Animation),
              f"{preset}: show answers a typed snap and animation", repr(shown)[:300])
        # The show animation runs: an instant `once` stream sends its frames and `settled`, then ends.
        stream = stream_frames.sync_detailed(sid, client=client, fps=60, pace=m.StreamFramesPace.INSTANT, once=True)
        events = list(sseclient.SSEClient(iter([stream.parsed.encode()])).events()) if stream.status_code == 200 else []
        frames = [m.Frame.from_dict(json.loads(e.data)) for e in events if e.event == "frame"]
        check(bool(frames) and all(e.id == f"{f.animation}:{f.index}" for e, f in zip(
            [e for e in events if e.event == "frame"], frames)),
            f"{preset}: the stream is text; {len(frames)} typed frames with ids n:k", f"{stream.status_code} {events[:3]}")
        check(bool(events) and events[-1].event == "settled" and m.SnapshotCommon.from_dict(json.loads(events[-1].data)),
              f"{preset}: the stream ends with a typed settled snapshot", repr(events[-1:]))
        began = typed(f"{preset}: began result", pan.sync_detailed(sid, client=client, body=m.PanEvent(phase=m.PanPhase.BEGAN)))
        check(began is not None and isinstance(began.drag, m.DragSegment) and isinstance(began.drag_law, m.DragLaw),
              f"{preset}: began answers the segment and the drag law", repr(began)[:300])
        changed = typed(f"{preset}: changed result",
                        pan.sync_detailed(sid, client=client, body=m.PanEvent(phase=m.PanPhase.CHANGED, translation=60)))
        ended = typed(f"{preset}: ended result", pan.sync_detailed(
            sid, client=client, body=m.PanEvent(phase=m.PanPhase.ENDED, translation=60, velocity=-900)))
        # A transition drag that reaches its finish threshold is over on `changed`, which answers
        # the animation; the release then changes nothing.
        release = ended if ended is None or ended.animation is not None or changed is None else changed
        check(release is not None and isinstance(release.snap, m.Snap)
              and isinstance(release.animation, m.Animation),
              f"{preset}: the release answers a typed snap and animation", repr(ended)[:300])
        typed(f"{preset}: GET snapshot", get_session.sync_detailed(sid, client=client))
        check(delete_session.sync_detailed(sid, client=client).status_code == 204, f"{preset}: deleted")

    # A card in a living layout (fluid): a content-fit detent, the keyboard rising with its own
    # curve, the content growing, a content fling handed to the card and a spring handing its
    # momentum to the content, every answer typed and round-tripped.
    living = typed("layout: created snapshot", create_session.sync_detailed(client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID, content_height=300, options=m.FluidOptions(
            detents=m.FluidOptionsDetents.from_dict(
                {"full": {"fromTop": 18}, "fit": {"content": 40}, "tip": {"height": 69}}),
            content_scrolls_at=m.FluidOptionsContentScrollsAtType0.EVERYWHERE,
            drag_first=m.FluidOptionsDragFirst.SHEET, momentum_hand_off=True, damping_ratio=0.5),
        initial_detent="fit")), 201)
    if living is not None:
        sid = living.id
        check(living.unreachable == ["full"] and living.revision == 0 and isinstance(living.layout_law, m.LayoutLaw),
              "layout: the snapshot has its unreachable detents, revision and layout law", repr(living)[:300])
        up = typed("layout: keyboard result", pan.sync_detailed(sid, client=client, body=m.LayoutEvent(
            phase=m.LayoutEventPhase.LAYOUT, keyboard_inset=291,
            motion=m.LayoutMotionType1(curve=m.LayoutMotionType1Curve.EASEOUT, duration=0.25))))
        check(up is not None and up.revision == 1 and up.keyboard_inset == 291 and isinstance(up.layout_law, m.LayoutLaw)
              and up.animation is not None and up.animation.to == 166,
              "layout: the keyboard lifts the card, with the new laws of revision 1", repr(up)[:300])
        grown = typed("layout: content result", pan.sync_detailed(sid, client=client, body=m.LayoutEvent(
            phase=m.LayoutEventPhase.LAYOUT, keyboard_inset=0, content_height=420, motion=m.LayoutMotionType0.NONE)))
        check(grown is not None and grown.revision == 2 and grown.detents.additional_properties.get("fit") == 337,
              "layout: the content-fit detent follows the content", repr(grown)[:300])
        flung = typed("layout: fling result", pan.sync_detailed(sid, client=client, body=m.FlingEvent(
            phase=m.FlingEventPhase.FLING, velocity=900)))
        check(flung is not None and isinstance(flung.snap, m.Snap), "layout: a content fling releases the card",
              repr(flung)[:300])
        typed("layout: GET snapshot", get_session.sync_detailed(sid, client=client))
        check(delete_session.sync_detailed(sid, client=client).status_code == 204, "layout: deleted")
    handing = typed("hand-off: created snapshot", create_session.sync_detailed(client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID, options=m.FluidOptions(momentum_hand_off=True, damping_ratio=0.5),
        initial_detent="half")), 201)
    if handing is not None:
        typed("hand-off: began result", pan.sync_detailed(handing.id, client=client, body=m.PanEvent(phase=m.PanPhase.BEGAN)))
        handed = typed("hand-off: ended result", pan.sync_detailed(handing.id, client=client, body=m.PanEvent(
            phase=m.PanPhase.ENDED, velocity=-1000)))
        check(handed is not None and isinstance(handed.scroll_fling, m.ScrollFling) and handed.scroll_fling.velocity < 0,
              "hand-off: the release hands its momentum to the content (scrollFling)", repr(handed)[:300])
        check(delete_session.sync_detailed(handing.id, client=client).status_code == 204, "hand-off: deleted")

    # A left drawer (fluid's `edge`): the geometry's width, the drag law's axis and sign.
    drawer = typed("edge: created snapshot", create_session.sync_detailed(client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID,
        geometry=m.Geometry(height=844, safe_area_top=47, safe_area_bottom=34, width=390, safe_area_left=0, safe_area_right=0),
        options=m.FluidOptions(edge=m.FluidOptionsEdge.LEFT), initial_detent="half")), 201)
    if drawer is not None:
        check(drawer.drag_law.edge == m.DragLawEdge.LEFT and drawer.drag_law.axis == m.DragLawAxis.X
              and drawer.drag_law.sign == m.DragLawSign.VALUE_NEGATIVE_1 and drawer.geometry.width == 390,
              "edge: a left drawer's law says its axis x and sign -1", repr(drawer.drag_law)[:300])
        typed("edge: began result", pan.sync_detailed(drawer.id, client=client, body=m.PanEvent(phase=m.PanPhase.BEGAN)))
        moved = typed("edge: changed result", pan.sync_detailed(drawer.id, client=client, body=m.PanEvent(
            phase=m.PanPhase.CHANGED, translation=40)))
        check(moved is not None and moved.constant == drawer.constant + 40, "edge: the drawer follows the axis",
              repr(moved)[:200])
        check(delete_session.sync_detailed(drawer.id, client=client).status_code == 204, "edge: deleted")

    # A contentAnchor detent: the card stops with the content shown down to a point (a Buy button's
    # bottom) and an offset more; unreachable once the content ends above the point.
    anchored = typed("anchor: created snapshot", create_session.sync_detailed(client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID, content_height=500, options=m.FluidOptions(
            detents=m.FluidOptionsDetents.from_dict(
                {"full": {"fromTop": 18}, "buy": {"contentAnchor": 300, "offset": 62}, "tip": {"height": 69}})),
        initial_detent="buy")), 201)
    if anchored is not None:
        rules = {r.name: r for r in anchored.layout_law.detents}
        check(anchored.detents.additional_properties.get("buy") == 435 and rules["buy"].kind.value == "contentAnchor"
              and rules["buy"].offset == 62,
              "anchor: H − (300 + 62) = 435, the layout law's rule carries its offset", repr(anchored.layout_law)[:300])
        shrunk = typed("anchor: content result", pan.sync_detailed(anchored.id, client=client, body=m.LayoutEvent(
            phase=m.LayoutEventPhase.LAYOUT, content_height=200, motion=m.LayoutMotionType0.NONE)))
        check(shrunk is not None and shrunk.unreachable == ["buy"] and shrunk.snap.detent != "buy",
              "anchor: a point past the content's end is unreachable, and the card leaves it", repr(shrunk)[:300])
        check(delete_session.sync_detailed(anchored.id, client=client).status_code == 204, "anchor: deleted")

    # Reduced motion per request: a show that asks for it jumps on a session with motion, an ended
    # that asks for motion animates on a session under reduced motion; the laws carry both
    # variants (`requestOverride`), and the session's own setting never changes.
    calm = typed("reduced motion: created snapshot", create_session.sync_detailed(client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID, initial_detent="half")), 201)
    if calm is not None:
        law = calm.release_law
        check(law.reduced_motion is False and isinstance(law.request_override, m.MotionVariant)
              and law.request_override.reduced_motion is True
              and law.request_override.motions[0].curve.duration == 0,
              "reduced motion: the release law carries the jump a request may ask for", repr(law)[:300])
        jumped = typed("reduced motion: show result", show.sync_detailed(calm.id, client=client, body=m.ShowRequest(
            detent="full", reduced_motion=True)))
        check(jumped is not None and jumped.snap.reduced_motion is True and jumped.animation.duration == 0,
              "reduced motion: a show with reducedMotion true jumps, and says so", repr(jumped)[:300])
        again = typed("reduced motion: GET snapshot", get_session.sync_detailed(calm.id, client=client))
        check(again is not None and again.release_law.reduced_motion is False,
              "reduced motion: the session keeps its own setting", repr(again)[:200])
        check(delete_session.sync_detailed(calm.id, client=client).status_code == 204, "reduced motion: deleted")
    still = typed("reduced motion: reduced session", create_session.sync_detailed(client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID, reduced_motion=True, initial_detent="half")), 201)
    if still is not None:
        typed("reduced motion: began result", pan.sync_detailed(still.id, client=client, body=m.PanEvent(
            phase=m.PanPhase.BEGAN)))
        moved = typed("reduced motion: ended result", pan.sync_detailed(still.id, client=client, body=m.PanEvent(
            phase=m.PanPhase.ENDED, velocity=-2000, reduced_motion=False)))
        check(moved is not None and moved.snap.reduced_motion is False and moved.animation.curve == m.AnimationCurve.SPRING,
              "reduced motion: an ended with reducedMotion false animates on a reduced session", repr(moved)[:300])
        check(delete_session.sync_detailed(still.id, client=client).status_code == 204, "reduced motion: deleted")

    # A stack: a root whose page recedes (`recede.backdrop`) and a sheet over it; the covered root
    # says so with its transform, refuses a drag (409), and a cascading dismiss closes both.
    root = typed("stack: root snapshot", put_session.sync_detailed("py-root", client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID, options=m.FluidOptions(recede=m.FluidOptionsRecede(backdrop=True)),
        initial_detent="half")), 201)
    child = typed("stack: child snapshot", put_session.sync_detailed("py-root~pay", client=client, body=m.FluidConfig(
        preset=m.FluidConfigPreset.FLUID, parent="py-root", initial_detent="full")), 201)
    if root is not None and child is not None:
        check(isinstance(root.backdrop_transform, m.SheetTransform) and child.parent == "py-root"
              and child.parent_transform.scale == 0.94 and isinstance(child.recede_law, m.RecedeLaw),
              "stack: the child's law and transform, the root's backdrop", repr(child)[:300])
        covered = typed("stack: covered root", get_session.sync_detailed("py-root", client=client))
        check(covered is not None and covered.covered_by == "py-root~pay" and covered.transform.lift == 10,
              "stack: the root is covered and drawn by the child's law", repr(covered)[:300])
        refused = pan.sync_detailed("py-root", client=client, body=m.PanEvent(phase=m.PanPhase.BEGAN))
        check(refused.status_code == 409 and isinstance(refused.parsed, m.Problem) and refused.parsed.code == "covered",
              "stack: a drag on the covered root is a typed 409 covered", repr(refused.parsed)[:200])
        closed = typed("stack: cascade result", dismiss.sync_detailed("py-root", client=client,
                                                                     body=m.DismissRequest(cascade=True)))
        check(closed is not None and closed.cascade == ["py-root~pay"], "stack: the cascade closes both",
              repr(closed)[:300])
        for sid in ("py-root~pay", "py-root"):
            check(delete_session.sync_detailed(sid, client=client).status_code == 204, f"stack: {sid} deleted")

    simulated = typed("simulate response", simulate.sync_detailed(client=client, body=m.SimulateRequest(
        config=m.FacebookConfig(preset=m.FacebookConfigPreset.FACEBOOK, initial_detent="normal"),
        events=[m.SimPanEvent(type_=m.SimPanEventType.PAN, time=0, phase=m.PanPhase.BEGAN),
                m.SimPanEvent(type_=m.SimPanEventType.PAN, time=0.05, phase=m.PanPhase.CHANGED, translation=-100),
                m.SimPanEvent(type_=m.SimPanEventType.PAN, time=0.1, phase=m.PanPhase.ENDED, translation=-248.5),

                m.SimShowEvent(type_=m.SimShowEventType.SHOW, time=1, detent="normal"),
                m.SimDismissEvent(type_=m.SimDismissEventType.DISMISS, time=2)],
        fps=10)))
    check(simulated is not None and len(simulated.results) == 5 and simulated.animation.detent == "hidden",
          "simulate: typed results and last animation", repr(simulated)[:300])
    text = metrics.sync_detailed(client=client)
    check(text.status_code == 200 and isinstance(text.parsed, str) and "# TYPE" in text.parsed,
          "metrics: Prometheus text, parsed as the str it is", repr(text.parsed)[:100])
    spec = openapi.sync_detailed(client=client)
    check(spec.status_code == 200 and isinstance(spec.parsed, str) and spec.parsed.startswith("openapi: 3.1"),
          "openapi.yaml: the spec, parsed as text (application/yaml read as text, config.yaml)", repr(spec.parsed)[:100])
    return counts[0], counts[1]


if __name__ == "__main__":
    if len(sys.argv) > 2:
        sys.path.insert(0, sys.argv[2])
    passed, failed = run(sys.argv[1])
    print(f"python-client: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
