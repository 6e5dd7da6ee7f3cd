"""The simulator's account as render inputs: plain pages, blocks pages when needed, truth.

Everything goes through the simulator's public HTTP interface, in process
(``httpx.ASGITransport``): the listing, cursor-paged thread detail in both flavours (the
blocks fetch only when :func:`needs_blocks` says so, like the shell) and ``/__sim/truth``.
The pages are collected once and cached per (size, seed), so tests and the benchmark
render the same inputs.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
import httpx

from pplx_archiver.core.thread.model import ListingRow, RawPage, SpaceRef, ThreadInput
from pplx_archiver.core.thread.render import needs_blocks
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.server import create_app

QueryValue = str | int | float | bool | None
PARAMS: list[tuple[str, QueryValue]] = [("version", "2.18"), ("source", "default")]
BLOCKS: list[tuple[str, QueryValue]] = [
    *PARAMS, ("with_schematized_response", "true"), ("with_parent_info", "true"),
    ("limit", "100"), ("offset", "0"), ("from_first", "false"),
]  # fmt: skip


def _listing(item: dict[str, Any]) -> ListingRow:
    space = item.get("collection")
    return ListingRow(
        thread_id=item["uuid"],
        title=item["title"],
        slug=item["slug"],
        context_uuid=item["context_uuid"],
        mode=item["mode"],
        display_model=item["display_model"],
        updated_at=item["last_query_datetime"],
        space=SpaceRef(space["uuid"], space["slug"], space["title"]) if space else None,
    )


async def _pages(
    client: httpx.AsyncClient, thread_id: str, params: list[tuple[str, QueryValue]]
) -> tuple[RawPage, ...]:
    pages: list[RawPage] = []
    cursor: str | None = None
    seen: set[str] = set()
    path = f"/rest/thread/{thread_id}"
    while True:
        query = [*params, ("cursor", cursor)] if cursor else list(params)
        response = await client.get(path, params=query)
        response.raise_for_status()
        body = response.json()
        pages.append(RawPage({"method": "GET", "path": path, "params": query}, body))
        cursor = body.get("next_cursor")
        if not body.get("has_next_page") or not cursor or cursor in seen:
            return tuple(pages)
        seen.add(cursor)


async def _collect(threads: int, seed: int) -> list[tuple[ThreadInput, dict[str, Any]]]:
    app = create_app(SimConfig(threads=threads, seed=seed), clock=lambda: 1_790_000_000.0)
    cookies = app.sim.sessions.cookies()
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://sim.test", cookies=cookies
    ) as client:
        items: list[dict[str, Any]] = []
        while True:
            r = await client.post(
                "/rest/thread/list_ask_threads",
                params=PARAMS,
                json={"limit": 100, "offset": len(items), "ascending": False},
            )
            r.raise_for_status()
            page = r.json()
            if not page:
                break
            items.extend(page)
        truth = {t["uuid"]: t for t in (await client.get("/__sim/truth")).json()["threads"]}
        out = []
        for item in items:
            listing = _listing(item)
            plain = await _pages(client, listing.thread_id, PARAMS)
            blocks: tuple[RawPage, ...] = ()
            if needs_blocks(plain, listing):
                blocks = await _pages(client, listing.thread_id, BLOCKS)
            out.append((ThreadInput(listing.thread_id, plain, blocks, listing),
                        truth[item["uuid"]]))  # fmt: skip
        return out


@functools.lru_cache(maxsize=2)
def account(threads: int = 2000, seed: int = 7) -> tuple[tuple[ThreadInput, dict[str, Any]], ...]:
    """(render input, truth record) for every listed thread of the simulated account."""
    return tuple(anyio.run(_collect, threads, seed))
