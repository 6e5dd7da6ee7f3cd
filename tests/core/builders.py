"""Small hand-made payloads in the shapes of docs/dev/api.md §4–§7, for core tests."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.core.thread.model import AssetFile, RawPage, RenderContext, ThreadInput

CTX = RenderContext(exported_at="2026-09-01T00:00:00Z")


def ts(second: int, base: str = "2026-07-20T08:00") -> str:
    """An entry timestamp ``+00:00`` at ``second`` seconds past ``base``."""
    minute, sec = divmod(second, 60)
    hour_min = base.split("T")[1]
    hour, mins = (int(x) for x in hour_min.split(":"))
    total = hour * 60 + mins + minute
    return f"{base.split('T')[0]}T{total // 60:02d}:{total % 60:02d}:{sec:02d}.000000+00:00"


def web(n: int) -> dict[str, Any]:
    """A web result numbered n."""
    return {
        "name": f"Source {n}",
        "url": f"https://example.com/{n}",
        "snippet": f"snip {n}",
        "timestamp": "2026-01-01T00:00:00",
    }


def text_item(text: str, variant: str = "answer") -> dict[str, Any]:
    """A WORKFLOW_ITEM_TEXT item."""
    return {
        "id": "t",
        "type": "WORKFLOW_ITEM_TEXT",
        "payload": {"text_payload": {"text": text, "variant": variant}},
    }


def sources_item(*ns: int) -> dict[str, Any]:
    """A WORKFLOW_ITEM_SOURCES item."""
    return {
        "id": "s",
        "type": "WORKFLOW_ITEM_SOURCES",
        "payload": {"sources_payload": {"sources": [web(n) for n in ns]}},
    }


def step(items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A workflow step."""
    return {
        "id": extra.pop("id", "step"),
        "status": "WORKFLOW_COMPLETED",
        "title": "Step",
        "items": items,
        **extra,
    }


def workflow(
    steps: list[dict[str, Any]], status: str = "WORKFLOW_COMPLETED", **extra: Any
) -> dict[str, Any]:
    """A workflow_root block."""
    return {
        "intended_usage": "workflow_root",
        "workflow_block": {
            "version": "1.0",
            "status": status,
            "headline": "",
            "steps": steps,
            **extra,
        },
    }


def payload(
    pid: str,
    status: str = "WORKFLOW_COMPLETED",
    *,
    completed: str = "",
    steps: list[dict[str, Any]] | None = None,
    anchor: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A WORKFLOW_ITEM_WORKFLOW item (sub-agent anchor or background payload)."""
    wp = {
        "version": "1.0",
        "status": status,
        "headline": f"Agent {pid}",
        "id": pid,
        "completed_at": completed,
        "steps": steps or [],
        "objective_chunks": [f"Do {pid}"],
        **extra,
    }
    if anchor:
        wp["is_background_anchor"] = True
    return step(
        [{"id": pid, "type": "WORKFLOW_ITEM_WORKFLOW", "payload": {"workflow_payload": wp}}],
        id=f"{pid}:workflow",
    )


def answer_block(text: str) -> dict[str, Any]:
    """An ask_text markdown block."""
    return {
        "intended_usage": "ask_text",
        "markdown_block": {"progress": "DONE", "answer": text, "chunks": []},
    }


def entry(
    uid: str,
    second: int,
    *,
    query: str = "q",
    blocks: list[dict[str, Any]] | None = None,
    search_mode: str | None = "SEARCH",
    display_model: str | None = "turbo",
    text: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An entry (plain when ``text`` is given, schematized when ``blocks`` is)."""
    e: dict[str, Any] = {
        "uuid": uid,
        "backend_uuid": uid,
        "context_uuid": "ctx",
        "thread_url_slug": "thread-1",
        "query_str": query,
        "status": "COMPLETED",
        "search_mode": search_mode,
        "display_model": display_model,
        "entry_created_datetime": ts(second),
        "entry_updated_datetime": ts(second + 5),
        "updated_datetime": ts(second + 5)[:26],
        "author_username": "alice",
        "thread_title": "Thread one",
    }
    if blocks is not None:
        e["blocks"] = blocks
    if text is not None:
        e["text"] = orjson.dumps(text).decode()
    e.update(extra)
    return e


def final_step(answer: str, *ns: int) -> dict[str, Any]:
    """A plain FINAL step whose answer is a JSON string."""
    inner = {"answer": answer, "web_results": [web(n) for n in ns], "chunks": []}
    return {"step_type": "FINAL", "uuid": "f", "content": {"answer": orjson.dumps(inner).decode()}}


def page(
    entries: list[dict[str, Any]],
    background: list[dict[str, Any]] | None = None,
    *,
    next_cursor: str | None = None,
    title: str = "Thread one",
    **meta: Any,
) -> dict[str, Any]:
    """A thread page body."""
    return {
        "status": "success",
        "entries": entries,
        "background_entries": background or [],
        "has_next_page": next_cursor is not None,
        "next_cursor": next_cursor,
        "thread_metadata": {
            "title": title,
            "created_at": "2026-07-20T08:00:00.000000",
            "updated_at": "2026-07-20T09:00:00.000000",
            **meta,
        },
    }


def thread_input(
    plain: list[dict[str, Any]], blocks: list[dict[str, Any]] | None = None, **kw: Any
) -> ThreadInput:
    """A ThreadInput from page bodies."""
    return ThreadInput(
        thread_id="thread-1",
        plain_pages=tuple(
            RawPage({"method": "GET", "path": "/rest/thread/thread-1", "params": []}, b)
            for b in plain
        ),
        blocks_pages=tuple(RawPage({}, b) for b in blocks or []),
        **kw,
    )


def research_thread(*, asset: bool) -> ThreadInput:
    """A deep-research turn whose RESEARCH_ANSWER step names the report (and its URL)."""
    answer = {
        "step_type": "RESEARCH_ANSWER",
        "uuid": "ra-1",
        "content": {
            "title": "Report",
            "file_name": "research-report.md",
            "url": "https://cdn.example/files/research-report.md",
        },
    }
    blocks = None
    if asset:
        report = {"research_report": {"file_name": "research-report.md", "url": "https://x/r.md"}}
        node = {"uuid": "asset-1", "asset_type": "RESEARCH_REPORT", **report}
        blocks = [{"intended_usage": "unified_assets", "unified_assets_block": {"assets": [node]}}]
    one = entry("e1", 1, search_mode="RESEARCH", text=[answer, final_step("a")], blocks=blocks)
    return thread_input([page([one])])


def with_report(inp: ThreadInput, data: bytes = b"# Full report\n") -> ThreadInput:
    """``inp`` with ``data`` downloaded for its first asset (the report of a research thread)."""
    ref = extract_assets(inp)[0]
    return dataclasses.replace(inp, downloads=(AssetFile(ref.uuid, 1, ref.file_name, data),))
