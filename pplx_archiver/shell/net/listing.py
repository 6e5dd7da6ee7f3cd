"""The account's library listing (REST or GraphQL) and its spaces, as ListingRow streams.

:func:`iter_threads` yields one :class:`~pplx_archiver.core.thread.model.ListingRow` per thread,
newest first, each thread once. Both listers yield the same rows (the raw ``mode`` and
update-time strings differ by source: REST ``last_query_datetime`` is naive ISO, GraphQL
``updatedAt`` ends in ``Z``).

REST ``list_ask_threads`` guards (docs/dev/api.md §3): ``has_next_page`` and ``total_threads`` are
never used to stop (``total_threads`` is capped server-side); pages advance by the number of
items received minus one (a one-item overlap, so a thread deleted during the listing that
shifts the rest up does not make one slip between two pages); the listing stops on an empty
page, on a page with no thread not yet seen (also what happens when the server ignores
``offset``), or at ``max_pages`` (``LISTING_CAPPED``). A thread updated during the listing
moves to the top, shifting the others down: they show up twice (yielded once). To catch the
threads that moved to the top *before* the listing reached them, the first page is fetched
once more at the end and any thread not yet yielded is yielded then.

GraphQL (persisted queries, hashes from ``settings.graphql_hashes`` over the defaults below):
the first page with ``LibraryThreadsRelayQuery``, later pages with
``LibraryRecentThreadsPaginationQuery`` (``cursor``/``count``); stops on no ``threads``,
empty ``edges``, ``hasNextPage`` false, ``hasNextPage`` true with an empty or repeated
``endCursor``, or ``max_pages``. A ``PERSISTED_QUERY_NOT_FOUND`` answer logs
``LISTER_FALLBACK`` and the listing continues with REST (threads already yielded are not
yielded again).

The optional ``stop(row)`` predicate is asked after each yielded row; when it returns True
the listing ends there (incremental early stop).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.errors import ConfigError
from pplx_archiver.logconfig import get_logger
from pplx_archiver.shell.net.listing_rows import (
    GRAPHQL_PATH,
    LISTING_CAPPED,
    LISTING_COMPLETE,
    LISTING_ROW_SKIPPED,
    MAX_PAGES,
    JsonClient,
    StaleHashError,
    Stop,
    graphql_rows,
    offset_rows,
    row_from_graphql,
    row_from_rest,
)
from pplx_archiver.shell.net.space_listing import (
    SPACE_PATH,
    SPACE_THREADS_PATH,
    SPACES_PATH,
    Space,
    get_space,
    iter_space_threads,
    list_spaces,
    space_from,
)

__all__ = [
    "GRAPHQL_PATH", "LISTING_CAPPED", "LISTING_COMPLETE", "LISTING_ROW_SKIPPED", "MAX_PAGES",
    "SPACES_PATH", "SPACE_PATH", "SPACE_THREADS_PATH", "JsonClient", "Space", "StaleHashError",
    "Stop", "get_space", "iter_space_threads", "iter_threads", "list_spaces", "row_from_graphql",
    "row_from_rest", "space_from",
]  # fmt: skip

LIST_PATH = "/rest/thread/list_ask_threads"

ROOT_QUERY = "LibraryThreadsRelayQuery"
PAGINATION_QUERY = "LibraryRecentThreadsPaginationQuery"
DEFAULT_GRAPHQL_HASHES: Mapping[str, str] = {
    ROOT_QUERY: "a5229c390a6a00f81764187a21885cff655670029355c663fe393cc6e98f9ebe",
    PAGINATION_QUERY: "4f6dfcb8e9d3c065aca20ca1e82ca7fe464aaffc1faefade295bb7e333199629",
}
BASE_VARIABLES: Mapping[str, Any] = {
    "includeSearchPreview": False,
    "searchTerm": None,
    "sortOrder": "NEWEST",
    "statuses": None,
    "threadTypes": None,
    "sources": None,
    "includeTemporary": None,
}
GRAPHQL_PAGE = 25
REST_PAGE = 50

LISTER_FALLBACK = "LISTER_FALLBACK"


# --------------------------------------------------------------------------- REST


def _rest_rows(
    client: JsonClient, *, page_size: int, max_pages: int, relist_first_page: bool
) -> AsyncGenerator[ListingRow, None]:
    async def fetch(offset: int) -> Any:
        body = {"limit": page_size, "offset": offset, "ascending": False, "search_term": ""}
        decoded, _ = await client.post_json(LIST_PATH, body, kind="list", auth_fatal=True)
        return decoded

    return offset_rows(fetch, LIST_PATH, max_pages=max_pages, relist_first_page=relist_first_page)


# --------------------------------------------------------------------------- GraphQL


def _library_request(cursor: str | None) -> tuple[str, dict[str, Any]]:
    variables = dict(BASE_VARIABLES)
    if cursor is None:
        return ROOT_QUERY, variables
    variables.update(cursor=cursor, count=GRAPHQL_PAGE)
    return PAGINATION_QUERY, variables


def _graphql_rows(
    client: JsonClient, hashes: Mapping[str, str], *, max_pages: int
) -> AsyncGenerator[ListingRow, None]:
    keys = ("data", "viewer", "recentGroup", "threads")
    return graphql_rows(client, _library_request, hashes, keys=keys, max_pages=max_pages)


# --------------------------------------------------------------------------- entry point


async def iter_threads(
    client: JsonClient,
    *,
    lister: str = "rest",
    page_size: int = REST_PAGE,
    stop: Stop | None = None,
    graphql_hashes: Mapping[str, str] | None = None,
    max_pages: int = MAX_PAGES,
    relist_first_page: bool = True,
) -> AsyncIterator[ListingRow]:
    """Every thread of the library, newest first, each once (see the module docstring)."""
    if lister not in ("rest", "graphql"):
        raise ConfigError(f"lister must be 'rest' or 'graphql', got {lister!r}")
    seen: set[str] = set()
    if lister == "graphql":
        hashes = {**DEFAULT_GRAPHQL_HASHES, **(graphql_hashes or {})}
        try:
            async with contextlib.aclosing(
                _graphql_rows(client, hashes, max_pages=max_pages)
            ) as rows:
                async for row in rows:
                    seen.add(row.thread_id)
                    yield row
                    if stop is not None and stop(row):
                        return
            return
        except StaleHashError as exc:
            get_logger().warning(
                LISTER_FALLBACK,
                lister="graphql",
                fallback="rest",
                operation=exc.operation,
                reason="PERSISTED_QUERY_NOT_FOUND",
                threads_listed=len(seen),
            )
    async with contextlib.aclosing(
        _rest_rows(
            client, page_size=page_size, max_pages=max_pages, relist_first_page=relist_first_page
        )
    ) as rows:
        async for row in rows:
            if row.thread_id in seen:
                continue
            seen.add(row.thread_id)
            yield row
            if stop is not None and stop(row):
                return
