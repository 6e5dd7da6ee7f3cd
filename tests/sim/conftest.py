"""Helpers for simulator tests: an in-process client on a fake clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.server import create_app

PARAMS = {"version": "2.18", "source": "default"}
BLOCKS = {**PARAMS, "with_schematized_response": "true", "with_parent_info": "true"}


class FakeClock:
    """A settable wall clock."""

    def __init__(self, now: float = 1_790_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


Factory = Callable[..., Any]


@pytest.fixture
async def make_client() -> AsyncIterator[Factory]:
    """Build in-process clients for a config; closes them at the end."""
    clients: list[httpx.AsyncClient] = []

    def factory(
        config: SimConfig | None = None, clock: FakeClock | None = None, login: bool = True
    ) -> httpx.AsyncClient:
        app = create_app(config or SimConfig(), clock=clock or FakeClock())
        cookies = app.sim.sessions.cookies() if login else {}
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app), base_url="http://sim.test", cookies=cookies
        )
        client.app = app  # type: ignore[attr-defined]
        clients.append(client)
        return client

    yield factory
    for client in clients:
        await client.aclose()


async def list_all(client: httpx.AsyncClient, page: int = 100) -> list[dict[str, Any]]:
    """Every listing item via list_ask_threads offset paging."""
    out: list[dict[str, Any]] = []
    while True:
        r = await client.post(
            "/rest/thread/list_ask_threads", params=PARAMS, json={"limit": page, "offset": len(out)}
        )
        assert r.status_code == 200
        items = r.json()
        if not items:
            return out
        out.extend(items)


async def fetch_pages(
    client: httpx.AsyncClient, thread_id: str, blocks: bool, limit: int | None = None
) -> list[dict[str, Any]]:
    """All pages of one thread, following next_cursor."""
    params: dict[str, Any] = dict(BLOCKS if blocks else PARAMS)
    if limit is not None:
        params["limit"] = limit
    pages = []
    cursor = None
    for _ in range(50):
        query = dict(params)
        if cursor:
            query["cursor"] = cursor
        r = await client.get(f"/rest/thread/{thread_id}", params=query)
        assert r.status_code == 200, r.text
        body = r.json()
        pages.append(body)
        cursor = body["next_cursor"]
        if not body["has_next_page"]:
            return pages
    raise AssertionError("cursor loop")
