"""The listers yield every thread exactly once whatever the server's paging quirks."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
import structlog

from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.errors import ForbiddenError, PayloadError
from pplx_archiver.shell.net.listing import (
    DEFAULT_GRAPHQL_HASHES,
    PAGINATION_QUERY,
    ROOT_QUERY,
    get_space,
    iter_space_threads,
    iter_threads,
    list_spaces,
)


def _item(n: int) -> dict[str, Any]:
    uid = f"u{n:04d}"
    return {"uuid": uid, "slug": uid, "title": f"T{n}", "context_uuid": f"c{n}",
            "mode": "copilot", "display_model": "pplx_pro",
            "last_query_datetime": f"2026-07-{1 + n % 28:02d}T08:00:00.123450",
            "collection": {"uuid": "s1", "slug": "space-1", "title": "S"} if n % 5 == 0 else None,
            "author_username": "alice"}  # fmt: skip


def _node(item: dict[str, Any]) -> dict[str, Any]:
    space = item["collection"]
    return {"slug": item["slug"], "entryId": item["uuid"], "name": item["title"],
            "contextUUID": item["context_uuid"], "mode": "copilot",
            "displayModel": {"modelID": item["display_model"]},
            "updatedAt": item["last_query_datetime"],
            "space": None if space is None else {
                "spaceUuid": space["uuid"], "slug": space["slug"],
                "title": space["title"]}}  # fmt: skip


class FakeLibrary:
    """An in-memory account answering list_ask_threads and the GraphQL library query."""

    def __init__(self, n: int, *, gql_page: int = 25, hashes: set[str] | None = None) -> None:
        self.items = [_item(i) for i in range(n)]
        self.calls: list[tuple[str, Any]] = []
        self.on_list: Callable[[FakeLibrary, int], None] | None = None
        self.max_limit = 1000
        self.ignore_offset = False
        self.gql_page = gql_page
        self.hashes = set(DEFAULT_GRAPHQL_HASHES.values()) if hashes is None else hashes
        self.empty_end_cursor = False

    async def get_json(self, path: str, params: Any = None, **_: Any) -> tuple[Any, bytes]:
        raise AssertionError(f"unexpected GET {path}")

    async def post_json(
        self, path: str, json: Any, params: Any = None, **_: Any
    ) -> tuple[Any, bytes]:
        self.calls.append((path, json))
        if path.endswith("graphql"):
            return self._graphql(json), b""
        if self.on_list is not None:
            self.on_list(self, len(self.calls))
        offset = 0 if self.ignore_offset else json["offset"]
        page = self.items[offset : offset + min(json["limit"], self.max_limit)]
        # has_next_page / total_threads lie on purpose: always "no more", total capped at 3.
        return [{**it, "thread_number": i, "has_next_page": False, "total_threads": 3}
                for i, it in enumerate(page)], b""  # fmt: skip

    def _graphql(self, body: dict[str, Any]) -> dict[str, Any]:
        sha = body["extensions"]["persistedQuery"]["sha256Hash"]
        if sha not in self.hashes:
            return {"errors": [{"message": "PersistedQueryNotFound",
                                "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}]}  # fmt: skip
        cursor = body["variables"].get("cursor")
        start = int(base64.b64decode(cursor)) if cursor else 0
        page = self.items[start : start + self.gql_page]
        end = start + len(page)
        more = end < len(self.items)
        end_cursor = base64.b64encode(str(end).encode()).decode()
        if self.empty_end_cursor and not more:
            more, end_cursor = True, ""
        return {"data": {"viewer": {"recentGroup": {"threads": {
            "edges": [{"node": _node(it)} for it in page],
            "pageInfo": {"hasNextPage": more, "endCursor": end_cursor}}}}}}  # fmt: skip


async def _ids(client: Any, **kwargs: Any) -> list[str]:
    return [row.thread_id async for row in iter_threads(client, **kwargs)]


def _expected(n: int) -> list[str]:
    return [f"u{i:04d}" for i in range(n)]


async def test_rest_lists_everything_despite_lying_paging_fields() -> None:
    """has_next_page=false and total_threads=3 on every item do not stop the listing."""
    lib = FakeLibrary(57)
    assert await _ids(lib, page_size=10) == _expected(57)


async def test_rest_rows_carry_the_listing_fields() -> None:
    """A REST row has slug, title, context, mode, model, raw update time, space and author."""
    rows = [r async for r in iter_threads(FakeLibrary(6), page_size=10)]
    assert rows[5] == ListingRow(
        thread_id="u0005", title="T5", slug="u0005", context_uuid="c5", mode="copilot",
        display_model="pplx_pro", updated_at="2026-07-06T08:00:00.123450",
        space=rows[5].space, author="alice", uuid="u0005")  # fmt: skip
    assert rows[5].space is not None and rows[5].space.slug == "space-1"
    assert rows[1].space is None


async def test_server_cap_below_requested_limit_loses_nothing() -> None:
    """A server returning fewer items than asked (page cap) is paged by what it returned."""
    lib = FakeLibrary(45)
    lib.max_limit = 7
    assert await _ids(lib, page_size=50) == _expected(45)


async def test_ignored_offset_stops_after_one_repeated_page() -> None:
    """A server that ignores offset gives one page, then a page with nothing new: stop."""
    lib = FakeLibrary(30)
    lib.ignore_offset = True
    assert await _ids(lib, page_size=10) == _expected(10)
    assert len(lib.calls) == 2


async def test_empty_account_is_one_request() -> None:
    """An empty first page ends the listing at once."""
    lib = FakeLibrary(0)
    assert await _ids(lib) == []
    assert len(lib.calls) == 1


async def test_thread_moving_to_top_during_listing_is_caught_by_relisting() -> None:
    """A thread updated mid-listing (moved to the top) is still yielded, and only once."""
    lib = FakeLibrary(30)

    def bump(library: FakeLibrary, call: int) -> None:
        if call == 2:  # before the second page: thread 25 (not listed yet) moves to the top
            library.items.insert(0, library.items.pop(25))

    lib.on_list = bump
    ids = await _ids(lib, page_size=10)
    assert sorted(ids) == _expected(30)
    assert len(ids) == len(set(ids))
    assert ids[-1] == "u0025"


async def test_thread_deleted_during_listing_does_not_hide_its_neighbour() -> None:
    """A deletion shifting the rest up by one is absorbed by the one-item page overlap."""
    lib = FakeLibrary(30)

    def delete(library: FakeLibrary, call: int) -> None:
        if call == 2:
            del library.items[3]

    lib.on_list = delete
    ids = await _ids(lib, page_size=10)
    # u0003 was listed before it went; u0010 moved up across the page boundary and is kept.
    assert sorted(ids) == _expected(30)


async def test_stop_predicate_ends_the_listing() -> None:
    """The stop predicate ends the listing after the row it returned True for."""
    lib = FakeLibrary(100)
    ids = await _ids(lib, page_size=10, stop=lambda row: row.thread_id == "u0012")
    assert ids == _expected(13)
    assert len(lib.calls) == 2


async def test_graphql_lists_the_same_rows_as_rest() -> None:
    """The GraphQL lister yields the same threads with the same fields (author is REST-only)."""
    rest = [
        dataclasses.replace(r, author=None)
        async for r in iter_threads(FakeLibrary(60), page_size=10)
    ]
    lib = FakeLibrary(60)
    gql = [r async for r in iter_threads(lib, lister="graphql")]
    assert gql == rest
    ops = [body["operationName"] for _, body in lib.calls]
    assert ops == [ROOT_QUERY, PAGINATION_QUERY, PAGINATION_QUERY]
    assert lib.calls[1][1]["variables"]["count"] == 25


async def test_graphql_empty_end_cursor_stops() -> None:
    """hasNextPage true with an empty endCursor ends the listing instead of looping."""
    lib = FakeLibrary(50)
    lib.empty_end_cursor = True
    assert await _ids(lib, lister="graphql") == _expected(50)
    assert len(lib.calls) == 2


async def test_stale_hash_falls_back_to_rest() -> None:
    """PERSISTED_QUERY_NOT_FOUND logs LISTER_FALLBACK and REST lists the same set."""
    lib = FakeLibrary(40, hashes=set())
    with structlog.testing.capture_logs() as logs:
        ids = await _ids(lib, lister="graphql", page_size=15)
    assert ids == _expected(40)
    fallback = [e for e in logs if e["event"] == "LISTER_FALLBACK"]
    assert len(fallback) == 1 and fallback[0]["operation"] == ROOT_QUERY


async def test_stale_pagination_hash_mid_listing_continues_without_duplicates() -> None:
    """A stale pagination hash after the first page continues with REST, no thread twice."""
    lib = FakeLibrary(40, hashes={DEFAULT_GRAPHQL_HASHES[ROOT_QUERY]})
    ids = await _ids(lib, lister="graphql", page_size=15)
    assert ids == _expected(40)


async def test_configured_hashes_override_defaults() -> None:
    """settings.graphql_hashes replace the built-in hashes."""
    lib = FakeLibrary(10, hashes={"f" * 64})
    await _ids(lib, lister="graphql", graphql_hashes={ROOT_QUERY: "f" * 64})
    assert lib.calls[0][1]["extensions"]["persistedQuery"]["sha256Hash"] == "f" * 64


async def test_non_array_listing_is_a_payload_error() -> None:
    """A listing answer that is not an array names the endpoint."""

    class Odd(FakeLibrary):
        async def post_json(
            self, path: str, json: Any, params: Any = None, **_: Any
        ) -> tuple[Any, bytes]:
            return {"threads": []}, b""

    with pytest.raises(PayloadError, match="list_ask_threads"):
        await _ids(Odd(1))


class FakeSpaces:
    """Answers the collections endpoints from a small fixed set of spaces."""

    def __init__(self) -> None:
        self.spaces = [{"uuid": f"s{i}", "slug": f"space-{i}", "title": f"S{i}",
                        "thread_count": 3, "owner_user": {"username": "bob"}}
                       for i in range(35)]  # fmt: skip
        self.threads = [_item(i) for i in range(25)]
        self.params: list[Any] = []

    async def get_json(self, path: str, params: Any = None, **_: Any) -> tuple[Any, bytes]:
        self.params.append(params)
        if path.endswith("list_user_collections"):
            off, lim = params["offset"], params["limit"]
            return self.spaces[off : off + lim], b""
        if path.endswith("get_collection"):
            if params["collection_slug"] == "secret":
                return {"status": "failed", "_response_type": "VIEW_COLLECTION_NOT_ALLOWED"}, b""
            return self.spaces[0], b""
        off, lim = params["offset"], params["limit"]
        return self.threads[off : off + lim], b""

    async def post_json(self, *a: Any, **k: Any) -> tuple[Any, bytes]:
        raise AssertionError("no POST expected")


async def test_spaces_list_get_and_threads() -> None:
    """Spaces page fully; a forbidden space is a ForbiddenError; space threads page fully."""
    api = FakeSpaces()
    spaces = await list_spaces(api)
    assert [s.slug for s in spaces] == [f"space-{i}" for i in range(35)]
    assert spaces[0].owner == "bob"
    assert (await get_space(api, "space-0")).uuid == "s0"
    with pytest.raises(ForbiddenError) as info:
        await get_space(api, "secret")
    assert info.value.code == "VIEW_COLLECTION_NOT_ALLOWED"
    ids = [r.thread_id async for r in iter_space_threads(api, "space-0")]
    assert ids == _expected(25)
    assert api.params[-1]["filter_by_user"] == "false"
