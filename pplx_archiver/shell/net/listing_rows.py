"""What every listing shares: the client protocol, row decoding, offset and cursor paging.

:func:`offset_rows` is the offset paging with the guards of ``listing.py``'s docstring;
:func:`graphql_rows` is the cursor paging of a GraphQL Relay connection (persisted queries):
it stops on no connection, empty ``edges``, nothing new, ``hasNextPage`` false, an empty or
repeated ``endCursor`` or ``max_pages``, and raises :class:`StaleHashError` on
``PERSISTED_QUERY_NOT_FOUND``. ``listing.py`` lists the library with them, ``space_listing.py``
the spaces.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, Protocol

from pplx_archiver.core.thread.model import ListingRow, SpaceRef
from pplx_archiver.errors import FetchError, PayloadError
from pplx_archiver.logconfig import get_logger

GRAPHQL_PATH = "/rest/perplexity_ask/graphql"
MAX_PAGES = 2000

LISTING_CAPPED = "LISTING_CAPPED"
LISTING_ROW_SKIPPED = "LISTING_ROW_SKIPPED"
LISTING_COMPLETE = "LISTING_COMPLETE"

Stop = Callable[[ListingRow], bool]
# cursor (None: the first page) → (operation name, variables)
GraphQLRequest = Callable[[str | None], tuple[str, dict[str, Any]]]


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


def text_or_none(value: Any) -> str | None:
    """A non-empty string of a payload, or None for anything else."""
    return value if isinstance(value, str) and value else None


def _space(obj: Any) -> SpaceRef | None:
    if not isinstance(obj, dict):
        return None
    uuid = (
        text_or_none(obj.get("spaceUuid"))
        or text_or_none(obj.get("uuid"))
        or text_or_none(obj.get("id"))
    )
    if uuid is None:
        return None
    return SpaceRef(
        uuid=uuid,
        slug=text_or_none(obj.get("slug")) or "",
        title=text_or_none(obj.get("title")) or "",
    )


def row_from_rest(item: Any) -> ListingRow | None:
    """A ListingRow from a ``list_ask_threads``/``list_collection_threads`` item."""
    if not isinstance(item, dict):
        return None
    thread_id = text_or_none(item.get("slug")) or text_or_none(item.get("uuid"))
    if thread_id is None:
        return None
    return ListingRow(
        thread_id=thread_id,
        title=text_or_none(item.get("title")) or "",
        slug=text_or_none(item.get("slug")) or thread_id,
        context_uuid=text_or_none(item.get("context_uuid")),
        mode=text_or_none(item.get("mode")),
        display_model=text_or_none(item.get("display_model")),
        updated_at=text_or_none(item.get("last_query_datetime")),
        space=_space(item.get("collection")),
        author=text_or_none(item.get("author_username")),
        uuid=text_or_none(item.get("uuid")) or "",
    )


def row_from_graphql(node: Any) -> ListingRow | None:
    """A ListingRow from a GraphQL library ``Thread`` node."""
    if not isinstance(node, dict):
        return None
    thread_id = text_or_none(node.get("slug")) or text_or_none(node.get("entryId"))
    if thread_id is None:
        return None
    model = node.get("displayModel")
    display = text_or_none(model.get("modelID")) if isinstance(model, dict) else text_or_none(model)
    author = node.get("author")
    return ListingRow(
        thread_id=thread_id,
        title=text_or_none(node.get("name")) or text_or_none(node.get("title")) or "",
        slug=text_or_none(node.get("slug")) or thread_id,
        context_uuid=text_or_none(node.get("contextUUID")),
        mode=text_or_none(node.get("mode")),
        display_model=display,
        updated_at=text_or_none(node.get("updatedAt")),
        space=_space(node.get("space")),
        author=text_or_none(author.get("username"))
        if isinstance(author, dict)
        else text_or_none(author),
        uuid=text_or_none(node.get("entryId")) or "",
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


async def offset_rows(
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


def _connection(decoded: Any, keys: Sequence[str]) -> Any:
    node = decoded
    where = ".".join(keys)
    for key in keys:
        if not isinstance(node, dict):
            raise PayloadError(f"{where} (at {key})", "expected an object")
        node = node.get(key)
        if node is None:
            return None
    return node


async def graphql_rows(
    client: JsonClient,
    request: GraphQLRequest,
    hashes: Mapping[str, str],
    *,
    keys: Sequence[str],
    max_pages: int,
) -> AsyncGenerator[ListingRow, None]:
    """Rows of a GraphQL Relay connection at ``keys``, page by page (module docstring)."""
    log = get_logger()
    listed: set[str] = set()
    cursor: str | None = None
    pages = 0
    while True:
        if pages >= max_pages:
            log.warning(LISTING_CAPPED, path=GRAPHQL_PATH, pages=pages, threads=len(listed))
            break
        operation, variables = request(cursor)
        body = {
            "operationName": operation,
            "variables": variables,
            "extensions": {"persistedQuery": {"version": 1, "sha256Hash": hashes[operation]}},
        }
        decoded, _ = await client.post_json(GRAPHQL_PATH, body, kind="graphql", auth_fatal=True)
        pages += 1
        _graphql_errors(decoded, operation)
        threads = _connection(decoded, keys)
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
