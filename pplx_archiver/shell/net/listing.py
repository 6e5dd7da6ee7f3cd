"""The account's library listing (REST or GraphQL) and its spaces, as ListingRow streams.

:func:`iter_threads` yields one :class:`~pplx_archiver.core.model.ListingRow` per thread,
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
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any, Protocol

from pplx_archiver.core.model import ListingRow, SpaceRef
from pplx_archiver.errors import ConfigError, FetchError, ForbiddenError, PayloadError
from pplx_archiver.logconfig import get_logger

LIST_PATH = "/rest/thread/list_ask_threads"
GRAPHQL_PATH = "/rest/perplexity_ask/graphql"
SPACES_PATH = "/rest/collections/list_user_collections"
SPACE_PATH = "/rest/collections/get_collection"
SPACE_THREADS_PATH = "/rest/collections/list_collection_threads"

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
MAX_PAGES = 2000

LISTER_FALLBACK = "LISTER_FALLBACK"
LISTING_CAPPED = "LISTING_CAPPED"
LISTING_ROW_SKIPPED = "LISTING_ROW_SKIPPED"
LISTING_COMPLETE = "LISTING_COMPLETE"

Stop = Callable[[ListingRow], bool]


class JsonClient(Protocol):
    """What the listers need from :class:`~pplx_archiver.shell.net.http.ApiClient`."""

    async def get_json(
        self, path: str, params: Any = None, *, kind: str | None = None, auth_fatal: bool = False
    ) -> tuple[Any, bytes]: ...

    async def post_json(
        self,
        path: str,
        json: Any,
        params: Any = None,
        *,
        kind: str | None = None,
        auth_fatal: bool = False,
    ) -> tuple[Any, bytes]: ...


class StaleHashError(FetchError):
    """The server no longer knows a persisted-query hash (``PERSISTED_QUERY_NOT_FOUND``)."""

    def __init__(self, operation: str) -> None:
        super().__init__(f"persisted query {operation} not found (stale hash)", status=200)
        self.operation = operation


# --------------------------------------------------------------------------- rows


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _space(obj: Any) -> SpaceRef | None:
    if not isinstance(obj, dict):
        return None
    uuid = _str(obj.get("spaceUuid")) or _str(obj.get("uuid")) or _str(obj.get("id"))
    if uuid is None:
        return None
    return SpaceRef(uuid=uuid, slug=_str(obj.get("slug")) or "", title=_str(obj.get("title")) or "")


def row_from_rest(item: Any) -> ListingRow | None:
    """A ListingRow from a ``list_ask_threads``/``list_collection_threads`` item."""
    if not isinstance(item, dict):
        return None
    thread_id = _str(item.get("slug")) or _str(item.get("uuid"))
    if thread_id is None:
        return None
    return ListingRow(
        thread_id=thread_id,
        title=_str(item.get("title")) or "",
        slug=_str(item.get("slug")) or thread_id,
        context_uuid=_str(item.get("context_uuid")),
        mode=_str(item.get("mode")),
        display_model=_str(item.get("display_model")),
        updated_at=_str(item.get("last_query_datetime")),
        space=_space(item.get("collection")),
        author=_str(item.get("author_username")),
        uuid=_str(item.get("uuid")) or "",
    )


def row_from_graphql(node: Any) -> ListingRow | None:
    """A ListingRow from a GraphQL library ``Thread`` node."""
    if not isinstance(node, dict):
        return None
    thread_id = _str(node.get("slug")) or _str(node.get("entryId"))
    if thread_id is None:
        return None
    model = node.get("displayModel")
    display = _str(model.get("modelID")) if isinstance(model, dict) else _str(model)
    author = node.get("author")
    return ListingRow(
        thread_id=thread_id,
        title=_str(node.get("name")) or _str(node.get("title")) or "",
        slug=_str(node.get("slug")) or thread_id,
        context_uuid=_str(node.get("contextUUID")),
        mode=_str(node.get("mode")),
        display_model=display,
        updated_at=_str(node.get("updatedAt")),
        space=_space(node.get("space")),
        author=_str(author.get("username")) if isinstance(author, dict) else _str(author),
        uuid=_str(node.get("entryId")) or "",
    )


# --------------------------------------------------------------------------- REST


def _rows_of(decoded: Any, where: str, log: Any) -> list[ListingRow]:
    if not isinstance(decoded, list):
        raise PayloadError(where, f"expected a JSON array of threads, got {type(decoded).__name__}")
    rows = []
    for index, item in enumerate(decoded):
        row = row_from_rest(item)
        if row is None:
            log.warning(LISTING_ROW_SKIPPED, path=where, index=index, reason="no slug or uuid")
        else:
            rows.append(row)
    return rows


async def _offset_rows(
    fetch: Callable[[int], Any],
    where: str,
    *,
    max_pages: int,
    relist_first_page: bool,
) -> AsyncGenerator[ListingRow, None]:
    """Offset paging with the guards of the module docstring; ``fetch(offset)`` → decoded."""
    log = get_logger()
    listed: set[str] = set()
    offset = 0
    pages = 0
    productive = 0
    while True:
        if pages >= max_pages:
            log.warning(LISTING_CAPPED, path=where, pages=pages, threads=len(listed))
            break
        decoded = await fetch(offset)
        pages += 1
        rows = _rows_of(decoded, where, log)
        if not decoded:
            break
        new = [row for row in rows if row.thread_id not in listed]
        if not new:
            break
        productive += 1
        for row in new:
            if row.thread_id not in listed:
                listed.add(row.thread_id)
                yield row
        step = len(decoded) - 1 if len(decoded) > 1 else 1
        offset += step
    if relist_first_page and productive > 1:
        for row in _rows_of(await fetch(0), where, log):
            if row.thread_id not in listed:
                listed.add(row.thread_id)
                yield row
    log.info(LISTING_COMPLETE, path=where, pages=pages, threads=len(listed))


def _rest_rows(
    client: JsonClient, *, page_size: int, max_pages: int, relist_first_page: bool
) -> AsyncGenerator[ListingRow, None]:
    async def fetch(offset: int) -> Any:
        body = {"limit": page_size, "offset": offset, "ascending": False, "search_term": ""}
        decoded, _ = await client.post_json(LIST_PATH, body, kind="list", auth_fatal=True)
        return decoded

    return _offset_rows(fetch, LIST_PATH, max_pages=max_pages, relist_first_page=relist_first_page)


# --------------------------------------------------------------------------- GraphQL


def _graphql_errors(decoded: Any, operation: str) -> None:
    errors = decoded.get("errors") if isinstance(decoded, dict) else None
    if not errors:
        return
    text = repr(errors)
    if "PERSISTED_QUERY_NOT_FOUND" in text or "PersistedQueryNotFound" in text:
        raise StaleHashError(operation)
    first = errors[0] if isinstance(errors, list) and errors else errors
    message = first.get("message") if isinstance(first, dict) else str(first)
    raise FetchError(f"GraphQL {operation} failed: {message}", status=200, url=GRAPHQL_PATH)


def _threads_of(decoded: Any) -> Any:
    node = decoded
    for key in ("data", "viewer", "recentGroup", "threads"):
        if not isinstance(node, dict):
            raise PayloadError(f"data.viewer.recentGroup.threads (at {key})", "expected an object")
        node = node.get(key)
        if node is None:
            return None
    return node


async def _graphql_rows(
    client: JsonClient, hashes: Mapping[str, str], *, max_pages: int
) -> AsyncGenerator[ListingRow, None]:
    log = get_logger()
    listed: set[str] = set()
    cursor: str | None = None
    pages = 0
    while True:
        if pages >= max_pages:
            log.warning(LISTING_CAPPED, path=GRAPHQL_PATH, pages=pages, threads=len(listed))
            break
        operation = ROOT_QUERY if cursor is None else PAGINATION_QUERY
        variables = dict(BASE_VARIABLES)
        if cursor is not None:
            variables.update(cursor=cursor, count=GRAPHQL_PAGE)
        body = {
            "operationName": operation,
            "variables": variables,
            "extensions": {"persistedQuery": {"version": 1, "sha256Hash": hashes[operation]}},
        }
        decoded, _ = await client.post_json(GRAPHQL_PATH, body, kind="graphql", auth_fatal=True)
        pages += 1
        _graphql_errors(decoded, operation)
        threads = _threads_of(decoded)
        if not isinstance(threads, dict):
            break
        edges = threads.get("edges") or []
        rows = [row_from_graphql(e.get("node") if isinstance(e, dict) else None) for e in edges]
        new = [r for r in rows if r is not None and r.thread_id not in listed]
        if not new:
            break
        for row in new:
            if row.thread_id not in listed:
                listed.add(row.thread_id)
                yield row
        info: Any = threads.get("pageInfo")
        if not isinstance(info, dict):
            info = {}
        end = info.get("endCursor")
        if not info.get("hasNextPage") or not isinstance(end, str) or not end or end == cursor:
            break
        cursor = end
    log.info(LISTING_COMPLETE, path=GRAPHQL_PATH, pages=pages, threads=len(listed))


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


# --------------------------------------------------------------------------- spaces


@dataclasses.dataclass(frozen=True, slots=True)
class Space:
    """One space (collection) of the account; ``raw`` is the API object as received."""

    uuid: str
    slug: str
    title: str
    emoji: str = ""
    description: str = ""
    instructions: str = ""
    thread_count: int | None = None
    user_permission: int | None = None
    owner: str | None = None
    raw: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)


def space_from(obj: Any) -> Space | None:
    """A Space from a ``list_user_collections`` item or a ``get_collection`` answer."""
    if not isinstance(obj, dict):
        return None
    uuid, slug = _str(obj.get("uuid")), _str(obj.get("slug"))
    if uuid is None or slug is None:
        return None
    owner = obj.get("owner_user")
    count, perm = obj.get("thread_count"), obj.get("user_permission")
    return Space(
        uuid=uuid,
        slug=slug,
        title=_str(obj.get("title")) or "",
        emoji=_str(obj.get("emoji")) or "",
        description=_str(obj.get("description")) or "",
        instructions=_str(obj.get("instructions")) or "",
        thread_count=count if isinstance(count, int) else None,
        user_permission=perm if isinstance(perm, int) else None,
        owner=_str(owner.get("username")) if isinstance(owner, dict) else None,
        raw=obj,
    )


async def list_spaces(
    client: JsonClient, *, page_size: int = 30, max_pages: int = 200
) -> list[Space]:
    """Every space the account lists (offset paging, same guards as the thread listing)."""
    spaces: list[Space] = []
    seen: set[str] = set()
    offset = 0
    for _ in range(max_pages):
        decoded, _raw = await client.get_json(
            SPACES_PATH, {"limit": page_size, "offset": offset}, kind="spaces", auth_fatal=True
        )
        if not isinstance(decoded, list):
            raise PayloadError(SPACES_PATH, "expected a JSON array of spaces")
        new = [s for s in map(space_from, decoded) if s is not None and s.uuid not in seen]
        if not decoded or not new:
            break
        for space in new:
            seen.add(space.uuid)
            spaces.append(space)
        offset += len(decoded)
    else:
        get_logger().warning(LISTING_CAPPED, path=SPACES_PATH, pages=max_pages, threads=0)
    return spaces


async def get_space(client: JsonClient, slug: str) -> Space:
    """One space by slug; ForbiddenError when the account may not view it (HTTP 200 failed)."""
    decoded, _ = await client.get_json(SPACE_PATH, {"collection_slug": slug}, kind="spaces")
    if isinstance(decoded, dict) and decoded.get("status") == "failed":
        code = _str(decoded.get("_response_type")) or "VIEW_COLLECTION_NOT_ALLOWED"
        raise ForbiddenError(
            f"space {slug!r} not viewable: {code}", status=200, url=SPACE_PATH, code=code
        )
    space = space_from(decoded)
    if space is None:
        raise PayloadError(SPACE_PATH, f"space {slug!r}: expected an object with uuid and slug")
    return space


def iter_space_threads(
    client: JsonClient,
    slug: str,
    *,
    page_size: int = 20,
    own_only: bool = False,
    max_pages: int = MAX_PAGES,
) -> AsyncIterator[ListingRow]:
    """The threads of one space (``own_only`` = only the account's own threads)."""

    async def fetch(offset: int) -> Any:
        params = {
            "collection_slug": slug,
            "limit": page_size,
            "offset": offset,
            "filter_by_user": "true" if own_only else "false",
            "filter_by_shared_threads": "false",
        }
        decoded, _ = await client.get_json(SPACE_THREADS_PATH, params, kind="spaces")
        return decoded

    return _offset_rows(fetch, SPACE_THREADS_PATH, max_pages=max_pages, relist_first_page=False)
