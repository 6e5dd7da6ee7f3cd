"""Small archives built with the real render core from API-shaped pages, for re-render tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread.model import ListingRow, RawPage, RenderContext, ThreadInput
from pplx_archiver.core.thread.rawfile import decode_raw_pages, encode_raw_pages
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.archive.store import Archive
from tests.commit_door import commit_thread

EXPORTED_AT = "2026-09-01T00:00:00Z"


def slug_of(i: int) -> str:
    """The thread uuid (= slug) of thread number i."""
    return f"{i:08x}-1111-4000-8000-{i:012x}"


def _entry(slug: str, n: int, *, variant: bool) -> dict[str, Any]:
    ts = f"2026-07-20T08:{n:02d}:00.000000+00:00"
    final = {
        "answer": f"Answer {n} of {slug}\n\n| a | b |\n|---|---|\n| x\\|y | {n} |",
        "web_results": [
            {"name": f"S{n}", "url": f"https://example.com/{slug}/{n}", "snippet": "s"}
        ],
    }
    entry: dict[str, Any] = {
        "uuid": f"{slug}-e{n}",
        "backend_uuid": slug if n == 0 else f"{slug}-b{n}",
        "context_uuid": f"ctx-{slug}",
        "thread_url_slug": slug,
        "query_str": f"Question {n}?",
        "status": "COMPLETED",
        "search_mode": "SEARCH",
        "display_model": "turbo",
        "entry_created_datetime": ts,
        "entry_updated_datetime": ts,
        "author_username": "alice",
        "thread_title": f"Thread {slug[:8]}",
        "text": orjson.dumps(
            [
                {
                    "step_type": "FINAL",
                    "uuid": "f",
                    "content": {"answer": orjson.dumps(final).decode()},
                }
            ]
        ).decode(),
    }
    if variant:
        entry["side_by_side_metadata"] = {
            "sibling_uuid": f"sib-{n}",
            "selection_status": "SELECTION_STATUS_SELECTED",
            "experiment_role": "[treatment] rewrite",
        }
    return entry


def thread_pages(
    i: int, *, turns: int = 3, variant: bool = False
) -> list[tuple[dict[str, Any], bytes]]:
    """Two cursor-linked plain pages of thread i, as (request, body bytes)."""
    slug = slug_of(i)
    entries = [_entry(slug, n, variant=variant and n == 1) for n in range(turns)]
    meta = {"title": f"Thread {slug[:8]}", "created_at": "2026-07-20T08:00:00.000000"}
    split = max(1, turns // 2)
    bodies = [
        {
            "status": "success",
            "entries": entries[:split],
            "background_entries": [],
            "has_next_page": True,
            "next_cursor": f"cur-{i}",
            "thread_metadata": meta,
        },
        {
            "status": "success",
            "entries": entries[split:],
            "background_entries": [],
            "has_next_page": False,
            "next_cursor": None,
            "thread_metadata": meta,
        },
    ]
    path = f"/rest/thread/{slug}"
    return [
        ({"method": "GET", "path": path, "params": [["limit", "100"]]}, orjson.dumps(bodies[0])),
        (
            {"method": "GET", "path": path, "params": [["limit", "100"], ["cursor", f"cur-{i}"]]},
            orjson.dumps(bodies[1], option=orjson.OPT_INDENT_2),
        ),
    ]


def listing(i: int) -> ListingRow:
    """The listing row of thread i."""
    slug = slug_of(i)
    return ListingRow(
        thread_id=slug,
        title=f"Thread {slug[:8]}",
        slug=slug,
        updated_at=f"2026-07-21T10:00:{i % 60:02d}.500000Z",
    )


def harvest(archive: Archive, i: int, *, variant: bool = False, account: str = "me") -> str:
    """Render and commit thread i like the harvester does; return its folder (relative)."""
    raw = encode_raw_pages(thread_pages(i, variant=variant))
    row = listing(i)
    pages = tuple(RawPage(r, orjson.loads(b)) for r, b in thread_pages(i, variant=variant))
    assert tuple(p.body for p in decode_raw_pages(raw)) == tuple(p.body for p in pages)
    inp = ThreadInput(thread_id=row.thread_id, plain_pages=pages, listing=row)
    result = render_thread(inp, RenderContext(exported_at=EXPORTED_AT, account=account))
    outcome = commit_thread(archive, account, result, raw, None, row.updated_at, listing=row)
    archive.register_variants(result.variants, "online")
    return outcome.path


def build(out: Path, n: int, *, variant_every: int = 3) -> list[str]:
    """An archive of n threads (every ``variant_every``-th with an answer variant)."""
    with Archive(out) as archive:
        return [harvest(archive, i, variant=(i % variant_every == 0)) for i in range(n)]


def snapshot(out: Path) -> dict[str, tuple[bytes, int]]:
    """Every archive file except the index: bytes and mtime_ns."""
    return {
        str(p.relative_to(out)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(out.rglob("*"))
        if p.is_file() and "index" not in p.relative_to(out).parts
    }
