"""The truth manifest agrees with a naive reading of the served responses."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.state import AccountState
from tests.sim.conftest import fetch_pages, list_all

MODE = {
    "ASI": "computer",
    "AGENTIC_RESEARCH": "council",
    "STUDY": "study",
    "RESEARCH": "deep-research",
    "SEARCH": "search",
    "STUDIO": "search",
}
ORDER = ["search", "deep-research", "study", "council", "computer"]
DM = {
    "pplx_agentic_research": "council",
    "pplx_asi_opus": "computer",
    "pplx_asi_opus_thinking": "computer",
    "pplx_study": "study",
}


def _ts(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _kind(status: str, locked: Any) -> str | None:
    if status == "WORKFLOW_AWAITING_NEXT_STEPS":
        return "limit_interrupted" if locked == "spending_limit_exceeded" else "interrupted"
    if status == "WORKFLOW_CANCELED":
        return "canceled"
    return None


def _workflow(entry: dict[str, Any]) -> dict[str, Any] | None:
    for block in entry.get("blocks") or []:
        if block["intended_usage"] == "workflow_root":
            return block["workflow_block"]
    return None


def _sources(workflow: dict[str, Any] | None, urls: set[str]) -> None:
    if not workflow:
        return
    for step in workflow.get("steps", []):
        for item in step.get("items", []):
            payload = item.get("payload", {})
            if item["type"] == "WORKFLOW_ITEM_SOURCES":
                urls.update(s["url"] for s in payload["sources_payload"]["sources"] or [])
            if item["type"] == "WORKFLOW_ITEM_WORKFLOW":
                _sources(payload["workflow_payload"], urls)


def _text_steps(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of a plain ``text`` (none for the 2023 object or the 2025 text-less shape)."""
    text = json.loads(entry["text"]) if "text" in entry else []
    return text if isinstance(text, list) else []


def _naive_mode(
    main: list[dict[str, Any]],
    plain: dict[str, dict[str, Any]],
    meta: dict[str, Any],
    listing: dict[str, Any],
) -> str:
    """The thread's mode: the highest explicit search_mode, else the fallback signals."""
    modes = {MODE[e["search_mode"]] for e in main if e.get("search_mode") in MODE}
    if modes:
        return max(modes, key=ORDER.index)
    steps = [s["step_type"] for e in plain.values() for s in _text_steps(e)]
    dm = next((DM[e["display_model"]] for e in main if e.get("display_model") in DM), None)
    if meta["mode"] == "4" or listing["mode"].upper() in ("ASI", "COMPUTER"):
        step_mode = "computer"
    elif "COUNCIL_RESEARCH" in steps:
        step_mode = "council"
    elif "RESEARCH_ANSWER" in steps:
        step_mode = "deep-research"
    else:
        step_mode = ""
    return dm or step_mode or "search"


def _turn_urls(entry: dict[str, Any], twin: dict[str, Any], urls: set[str]) -> None:
    """Add the cited URLs of one turn: blocks reply, then every shape of the plain reply."""
    _sources(_workflow(entry), urls)
    urls.update(
        r["url"]
        for b in entry["blocks"]
        if b["intended_usage"] == "web_results"
        for r in b["web_result_block"]["web_results"]
    )
    text = json.loads(twin["text"]) if "text" in twin else []
    if isinstance(text, dict):  # the 2023 shape: one object, results inside
        urls.update(r["url"] for r in text.get("web_results", []))
        text = []
    for b in twin.get("blocks", []):  # the 2025 shape: blocks only, in the plain reply
        if b["intended_usage"] == "sources_answer_mode":
            urls.update(r["url"] for r in b["sources_mode_block"]["web_results"])
    for step in text:
        if step["step_type"] == "FINAL":
            final = json.loads(step["content"]["answer"])
            urls.update(r["url"] for r in final.get("web_results", []))


def _main_workflows(
    main: list[dict[str, Any]], interruptions: list[dict[str, Any]]
) -> dict[str, int]:
    """Record the interrupted turns; return the anchored sub-agent payload ids → turn index."""
    anchors: dict[str, int] = {}
    for n, e in enumerate(main):
        wf = _workflow(e)
        if wf is None:
            continue
        kind = _kind(wf["status"], e.get("locked_reason"))
        if kind:
            interruptions.append(
                {"location": f"turn_{n + 1:04d}", "kind": kind, "status": wf["status"]}
            )
        for step in wf["steps"]:
            for item in step["items"]:
                wp = item["payload"].get("workflow_payload")
                if wp and wp.get("is_background_anchor"):
                    anchors[wp["id"]] = n
    return anchors


def _background_payloads(
    bg: dict[str, dict[str, Any]], urls: set[str]
) -> list[tuple[str, str, Any, float]]:
    """(payload id, status, locked reason, completion time) of every background entry."""
    payloads = []
    for e in bg.values():
        wf = _workflow(e)
        assert wf is not None
        _sources(wf, urls)
        holder = next(s for s in wf["steps"] if s["id"].endswith(":workflow"))
        wp = holder["items"][0]["payload"]["workflow_payload"]
        when = wp["completed_at"] or e["entry_updated_datetime"]
        payloads.append((wp["id"], wp["status"], e.get("locked_reason"), _ts(when)))
    return payloads


def _stub_landings(
    main: list[dict[str, Any]], payloads: list[tuple[str, str, Any, float]], anchors: dict[str, int]
) -> dict[str, tuple[str, int | None]]:
    """Unanchored payloads → the nearest ``subagent_result`` stub within 10 seconds."""
    stubs = [
        (n, _ts(e["entry_created_datetime"]))
        for n, e in enumerate(main)
        if e.get("trigger") == "subagent_result"
    ]
    landing: dict[str, tuple[str, int | None]] = {}
    pairs = sorted(
        (abs(t - st), pid, n)
        for pid, _, _, t in payloads
        if pid not in anchors
        for n, st in stubs
        if abs(t - st) <= 10
    )
    for _, pid, n in pairs:
        landing.setdefault(pid, ("stub", n))
    return landing


def _naive_background(
    main: list[dict[str, Any]],
    payloads: list[tuple[str, str, Any, float]],
    anchors: dict[str, int],
    interruptions: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Where each background payload lands (anchored, on a stub, in the appendix)."""
    landing = _stub_landings(main, payloads, anchors)
    background = []
    for pid, status, locked, _ in payloads:
        turn: int | None
        if pid in anchors:
            where, turn = "anchored", anchors[pid]
            loc = f"turn_{turn + 1:04d}/subagent"
        elif pid in landing:
            where, turn = landing[pid]
            loc = f"turn_{(turn or 0) + 1:04d}/subagent_stub"
        else:
            where, turn, loc = "appendix", None, "background_unassigned"
        background.append(
            {"payload_id": pid, "landing": where, "turn": None if turn is None else turn + 1}
        )
        kind = _kind(status, locked)
        if kind:
            interruptions.append({"location": loc, "kind": kind, "status": status})
    return background


def _naive_variants(main: list[dict[str, Any]]) -> list[str]:
    variants = []
    for e in main:
        sbs = e.get("side_by_side_metadata")
        if not sbs or not sbs.get("sibling_uuid"):
            continue
        status = sbs.get("selection_status")
        specified = bool(status) and status != "SELECTION_STATUS_UNSPECIFIED"
        if specified or not sbs.get("experiment_role", "").startswith("[control]"):
            variants.append(e["backend_uuid"])
    return variants


def naive_truth(
    blocks_pages: list[dict[str, Any]], plain_pages: list[dict[str, Any]], listing: dict[str, Any]
) -> dict[str, Any]:
    """Recompute what the manifest claims, straight from the bodies."""
    entries = {e["backend_uuid"]: e for p in blocks_pages for e in p["entries"]}
    main = sorted(entries.values(), key=lambda e: _ts(e["entry_created_datetime"]))
    bg = {e["backend_uuid"]: e for p in blocks_pages for e in p["background_entries"]}
    plain = {e["backend_uuid"]: e for p in plain_pages for e in p["entries"]}
    urls: set[str] = set()
    for e in main:
        _turn_urls(e, plain[e["backend_uuid"]], urls)
    interruptions: list[dict[str, Any]] = []
    anchors = _main_workflows(main, interruptions)
    payloads = _background_payloads(bg, urls)
    background = _naive_background(main, payloads, anchors, interruptions)
    return {
        "uuid": listing["uuid"],
        "mode": _naive_mode(main, plain, blocks_pages[0]["thread_metadata"], listing),
        "turns": len(main),
        "updated_at": listing["last_query_datetime"],
        "background": sorted(background, key=lambda b: b["payload_id"]),
        "interruptions": sorted(interruptions, key=lambda i: (i["location"], i["status"])),
        "variants": _naive_variants(main),
        "unique_citations": len(urls),
    }


@pytest.mark.heavy  # pure CPU: `make test` runs it untraced (docs/dev/architecture.md)
async def test_truth_matches_naive_reading_of_responses(make_client: Any) -> None:
    """For 300 threads, mode/turns/landings/interruptions/variants/citations match the bodies."""
    config = SimConfig()
    client = make_client(config)
    listing = await list_all(client)
    truth = {t["uuid"]: t for t in AccountState(config).truth()["threads"]}
    assert len(listing) == 300 == len(truth)
    mismatches = []
    for item in listing:
        blocks = await fetch_pages(client, item["uuid"], blocks=True)
        plain = await fetch_pages(client, item["uuid"], blocks=False)
        seen = naive_truth(blocks, plain, item)
        expected = dict(truth[item["uuid"]])
        expected["background"] = sorted(expected["background"], key=lambda b: b["payload_id"])
        expected["interruptions"] = sorted(
            expected["interruptions"], key=lambda i: (i["location"], i["status"])
        )
        for key, value in seen.items():
            if expected[key] != value:
                mismatches.append((item["uuid"], key, expected[key], value))
    assert mismatches == []


def test_truth_covers_every_case_in_the_default_account() -> None:
    """The 300-thread default account contains every mode, landing, interruption kind, variant."""
    threads = AccountState(SimConfig()).truth()["threads"]
    assert {t["mode"] for t in threads} == {
        "search",
        "deep-research",
        "computer",
        "council",
        "study",
    }
    landings = {b["landing"] for t in threads for b in t["background"]}
    assert landings == {"anchored", "stub", "appendix"}
    kinds = {i["kind"] for t in threads for i in t["interruptions"]}
    assert kinds == {"limit_interrupted", "interrupted", "canceled"}
    locations = {i["location"].split("/")[-1] for t in threads for i in t["interruptions"]}
    assert {"subagent", "subagent_stub", "background_unassigned"} <= locations
    assert any(t["variants"] for t in threads)
    assert any(t["mode_switch"] for t in threads)
    assert any(t["report"] for t in threads)
    assert any(a["versions"] > 1 for t in threads for a in t["assets"])
    assert any(not a["downloadable"] for t in threads for a in t["assets"])
    assert any(t["space"] for t in threads)
    assert any(t["turns"] > 20 for t in threads)
    titles = {t["title"] for t in threads}
    assert "../../x" in titles or "a/b" in titles
    assert any(len(t) == 300 for t in titles)
    eras = {"current", "2023-early", "2023", "2024", "2025"}
    assert {t["payload_era"] for t in threads} == eras
