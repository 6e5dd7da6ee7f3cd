"""The simulator's account as render inputs: plain pages, blocks pages when needed, truth.

Pages are produced the way the simulator serves them (newest window first, cursor paging)
without HTTP, so the core can be checked and benchmarked on thousands of threads fast.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from pplx_archiver.core.model import ListingRow, RawPage, SpaceRef, ThreadInput
from pplx_archiver.core.render import needs_blocks
from pplx_archiver.sim import build
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.server import SimServer

ORIGIN = "http://sim.test"


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


def _pages(server: SimServer, index: int, blocks: bool, limit: int) -> tuple[RawPage, ...]:
    plan = server.state.plan(index)
    pages: list[RawPage] = []
    cursor: str | None = None
    for _ in range(200):
        key = server._cursor_key(cursor, plan) if cursor else None
        body = orjson.loads(server._thread_body(plan, blocks, key, limit, ORIGIN, 1))
        params = [("version", "2.18"), ("source", "default")]
        if cursor:
            params.append(("cursor", cursor))
        pages.append(
            RawPage({"method": "GET", "path": f"/rest/thread/{plan.uuid}", "params": params}, body)
        )
        cursor = body.get("next_cursor")
        if not body.get("has_next_page") or not cursor:
            break
    return tuple(pages)


def account(
    threads: int = 2000, seed: int = 7, limit: int = 20
) -> Iterator[tuple[ThreadInput, dict[str, Any]]]:
    """(render input, truth record) for every thread of the simulated account."""
    server = SimServer(SimConfig(threads=threads, seed=seed), clock=lambda: 1_790_000_000.0)
    truth = server.state.truth()["threads"]
    spaces = server.state.spaces()
    for number, record in enumerate(truth):
        _kind, index = server.state.lookup(record["uuid"])
        assert index is not None
        plan = server.state.plan(index)
        listing = _listing(
            build.list_item(plan, number, spaces if plan.space is not None else None)
        )
        plain = _pages(server, index, False, limit)
        blocks: tuple[RawPage, ...] = ()
        if needs_blocks(plain, listing):
            blocks = _pages(server, index, True, limit)
        yield ThreadInput(plan.uuid, plain, blocks, listing), record
