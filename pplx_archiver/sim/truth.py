"""The truth manifest: what a correct archiver must find, taken from the generator's plans.

Format (docs/CONTRACTS.md §2): one object per thread with uuid, slug, title, mode, turns,
created, updated_at (the ``list_ask_threads`` ``last_query_datetime`` string), space,
era_state, payload_era (payload shape: ``2023-early``, ``2023``, ``2024``, ``2025`` or
``current``, see docs/dev/formats.md), mode_switch, background landings, interruption
records, answer-variant entry uuids (``backend_uuid`` of the entry), unique cited URLs,
report and asset versions.
"""

from __future__ import annotations

from typing import Any

from pplx_archiver.sim.account import (
    AWAITING,
    CANCELED,
    ThreadPlan,
)
from pplx_archiver.sim.build import iso_naive
from pplx_archiver.sim.text import asset_bytes, sha256

Json = dict[str, Any]


def interruption_kind(status: str | None, locked: bool) -> str | None:
    """``limit_interrupted`` / ``interrupted`` / ``canceled``, or ``None`` (not annotated)."""
    if status == AWAITING:
        return "limit_interrupted" if locked else "interrupted"
    if status == CANCELED:
        return "canceled"
    return None


def _loc(turn: int) -> str:
    return f"turn_{turn + 1:04d}"


def thread_truth(plan: ThreadPlan, space_slug: str | None) -> Json:
    """The manifest record of one thread."""
    background = []
    interruptions = []
    for t in plan.turns:
        kind = interruption_kind(t.status, t.locked) if not t.stub else None
        if kind:
            interruptions.append({"location": _loc(t.index), "kind": kind, "status": t.status})
    for p in plan.payloads:
        turn = p.turn if p.landing != "appendix" else None
        background.append(
            {
                "payload_id": p.payload_id,
                "landing": p.landing,
                "turn": None if turn is None else turn + 1,
            }
        )
        kind = interruption_kind(p.status, p.locked)
        if not kind:
            continue
        if p.landing == "anchored":
            location = _loc(p.turn or 0) + "/subagent"
        elif p.landing == "stub":
            location = _loc(p.turn or 0) + "/subagent_stub"
        else:
            location = "background_unassigned"
        interruptions.append({"location": location, "kind": kind, "status": p.status})
    urls: set[int] = set()
    for t in plan.turns:
        urls.update(t.web)
        urls.update(t.wsrc)
    for p in plan.payloads:
        urls.update(p.sources)
    report = None
    if plan.report:
        asset = next(a for t in plan.turns for a in t.assets if a.uuid == plan.report[0])
        report = {
            "asset_uuid": asset.uuid,
            "version": asset.version,
            "sha256": sha256(asset_bytes(asset.uuid, asset.content)),
        }
    groups: dict[str, list[Any]] = {}
    for t in plan.turns:
        for a in t.assets:
            groups.setdefault(a.root, []).append(a)
    assets = [
        {"uuid": root, "versions": len(vs), "downloadable": vs[0].content != "handle"}
        for root, vs in groups.items()
    ]
    return {
        "uuid": plan.uuid,
        "slug": plan.slug,
        "title": plan.title,
        "mode": plan.mode,
        "turns": len(plan.turns),
        "created": iso_naive(plan.created_us),
        "updated_at": iso_naive(plan.updated_us),
        "space": space_slug,
        "era_state": plan.state,
        "payload_era": plan.shape or "current",
        "mode_switch": plan.mode_switch,
        "background": background,
        "interruptions": interruptions,
        "variants": [t.backend_uuid for t in plan.turns if t.variant and t.variant.hit],
        "unique_citations": len(urls),
        "report": report,
        "assets": assets,
    }
