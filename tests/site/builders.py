"""Small archives for the site tests: API-shaped threads (English, Chinese, math, hostile)
rendered and committed with the real render core, like the harvester does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread.model import (
    ListingRow,
    RawPage,
    RenderContext,
    SpaceRef,
    ThreadInput,
)
from pplx_archiver.core.thread.rawfile import encode_raw_pages
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.archive.store import Archive
from tests.commit_door import commit_thread

EXPORTED_AT = "2026-09-01T00:00:00Z"

HOSTILE_ANSWER = "\n\n".join(
    [
        "Payloads follow [1].",
        "<script>alert('script')</script>",
        '<img src="x" onerror="alert(\'onerror\')">',
        '<svg onload="alert(\'svg\')"><circle r="5"/></svg>',
        "[click me](javascript:alert('link')) and [data](data:text/html,<script>alert(1)</script>)",
        "![pixel](https://tracker.example/pixel.png) ![inline](data:image/png;base64,AAAA)",
        '<iframe src="https://evil.example/"></iframe>',
        "</details></details> closing folds that are not there",
        "<style>body { display: none }",
        "VISIBLE-AFTER-STYLE: this sentence must stay visible.",
    ]
)

THREADS: tuple[dict[str, Any], ...] = (
    {
        "key": 1,
        "title": "Photosynthesis basics",
        "query": "How does photosynthesis work?",
        "answer": "Plants turn light into chemical energy [1]. Chlorophyll absorbs light [2].",
        "mode": "SEARCH",
    },
    {
        "key": 2,
        "title": "量子计算入门",
        "query": "量子计算的基本原理是什么？",
        "answer": "量子计算利用叠加和纠缠来处理信息[1]。",
        "mode": "RESEARCH",
        "space": ("space-q", "quantum", "Quantum notes"),
    },
    {
        "key": 3,
        "title": "Quadratic formula",
        "query": "Solve a quadratic",
        "answer": "The roots are\n\n$$x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}$$\n\n"
        "and inline \\( a^2 + b^2 = c^2 \\).\n\n```python\nprint('roots')\n```",
        "mode": "STUDY",
    },
    {
        "key": 4,
        "title": "<script>alert('title')</script><b>bold title</b>",
        "query": "<img src=x onerror=alert('query')> hostile query",
        "answer": HOSTILE_ANSWER,
        "mode": "SEARCH",
    },
)


# Variant forms for the site's folded search: traditional Chinese, full- and half-width
# katakana and Latin (queried in the other forms by the browser test).
FOLD_THREAD: dict[str, Any] = {
    "key": 5,
    "title": "Variant forms",
    "query": "查詢經濟 カタカナ",
    "answer": "ｼﾗﾄﾘ ＡＩ abcd",
    "mode": "SEARCH",
}


def slug_of(key: int) -> str:
    """The thread uuid (= slug) of thread ``key``."""
    return f"{key:08x}-2222-4000-8000-{key:012x}"


def _pages(spec: dict[str, Any], answer: str) -> list[tuple[dict[str, Any], bytes]]:
    slug = slug_of(spec["key"])
    ts = f"2026-07-{10 + spec['key']:02d}T08:00:00.000000+00:00"
    final = {
        "answer": answer,
        "web_results": [
            {"name": f"Source {n}", "url": f"https://example.com/{slug}/{n}", "snippet": "s"}
            for n in (1, 2)
        ],
    }
    entry: dict[str, Any] = {
        "uuid": f"{slug}-e0",
        "backend_uuid": slug,
        "context_uuid": f"ctx-{slug}",
        "thread_url_slug": slug,
        "query_str": spec["query"],
        "status": "COMPLETED",
        "search_mode": spec["mode"],
        "display_model": "turbo",
        "entry_created_datetime": ts,
        "entry_updated_datetime": ts,
        "author_username": "alice",
        "thread_title": spec["title"],
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
    body = {
        "status": "success",
        "entries": [entry],
        "background_entries": [],
        "has_next_page": False,
        "next_cursor": None,
        "thread_metadata": {"title": spec["title"], "created_at": ts[:26]},
    }
    request = {"method": "GET", "path": f"/rest/thread/{slug}", "params": [["limit", "100"]]}
    return [(request, orjson.dumps(body))]


def harvest(archive: Archive, spec: dict[str, Any], *, answer: str | None = None) -> str:
    """Render and commit one thread; return its folder (relative to the archive)."""
    slug = slug_of(spec["key"])
    pages = _pages(spec, answer if answer is not None else spec["answer"])
    space = spec.get("space")
    row = ListingRow(
        thread_id=slug,
        title=spec["title"],
        slug=slug,
        updated_at=f"2026-07-21T10:00:0{spec['key']}.5Z" + ("" if answer is None else "x"),
        space=SpaceRef(*space) if space else None,
    )
    inp = ThreadInput(
        thread_id=slug,
        plain_pages=tuple(RawPage(r, orjson.loads(b)) for r, b in pages),
        listing=row,
    )
    result = render_thread(inp, RenderContext(exported_at=EXPORTED_AT, account="me"))
    raw = encode_raw_pages(pages)
    outcome = commit_thread(archive, "me", result, raw, None, row.updated_at, listing=row)
    return outcome.path


def build(out: Path, specs: tuple[dict[str, Any], ...] = THREADS) -> list[str]:
    """An archive holding ``specs`` (by default the four site-test threads)."""
    with Archive(out) as archive:
        return [harvest(archive, spec) for spec in specs]
