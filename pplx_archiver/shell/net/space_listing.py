"""The account's spaces (collections) and the threads of one space, every member's.

REST (docs/dev/api.md §3): ``list_user_collections`` (offset paging), ``get_collection`` (by
slug; a space the account may not view answers HTTP 200 ``status: failed``) and
``list_collection_threads`` (offset paging, 20 a page, with ``filter_by_user=false``: the
threads of every member the account can read, each with its ``author_username``).

Era C (GraphQL): the web app lists a space's threads with the persisted query
``SpaceProjectThreadsRelayQuery`` (variables ``spaceId``, ``ownThreadsOnly``, ``searchTerm``,
``groupType``, ``count``, ``cursor``; answer at ``data.viewer.space.threadGroup.threads``).
:func:`iter_space_threads` uses it when asked (``lister="graphql"``) or, by default, when the
session is an Era C one; a stale hash (``PERSISTED_QUERY_NOT_FOUND``) logs ``LISTER_FALLBACK``
and the listing goes on with REST (threads already listed are not listed again).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.errors import ConfigError, ForbiddenError, PayloadError
from pplx_archiver.logconfig import get_logger
from pplx_archiver.shell.net.cookies import session_era
from pplx_archiver.shell.net.listing_rows import (
    LISTING_CAPPED,
    MAX_PAGES,
    JsonClient,
    StaleHashError,
    graphql_rows,
    offset_rows,
    text_or_none,
)

SPACES_PATH = "/rest/collections/list_user_collections"
SPACE_PATH = "/rest/collections/get_collection"
SPACE_THREADS_PATH = "/rest/collections/list_collection_threads"
SPACE_QUERY = "SpaceProjectThreadsRelayQuery"
# Only the first 16 hex digits of the web app's hash are recorded (docs/dev/api.md); the rest
# is a placeholder. A hash the server does not know costs one request per space: the listing
# falls back to REST. ``graphql_hashes`` takes the current full hash.
DEFAULT_SPACE_HASHES: Mapping[str, str] = {SPACE_QUERY: "db13bf755b93bc26" + "0" * 48}
SPACE_GRAPHQL_PAGE = 25
SPACE_KEYS = ("data", "viewer", "space", "threadGroup", "threads")
LISTER_FALLBACK = "LISTER_FALLBACK"


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
    uuid, slug = text_or_none(obj.get("uuid")), text_or_none(obj.get("slug"))
    if uuid is None or slug is None:
        return None
    owner = obj.get("owner_user")
    count, perm = obj.get("thread_count"), obj.get("user_permission")
    return Space(
        uuid=uuid,
        slug=slug,
        title=text_or_none(obj.get("title")) or "",
        emoji=text_or_none(obj.get("emoji")) or "",
        description=text_or_none(obj.get("description")) or "",
        instructions=text_or_none(obj.get("instructions")) or "",
        thread_count=count if isinstance(count, int) else None,
        user_permission=perm if isinstance(perm, int) else None,
        owner=text_or_none(owner.get("username")) if isinstance(owner, dict) else None,
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
        code = text_or_none(decoded.get("_response_type")) or "VIEW_COLLECTION_NOT_ALLOWED"
        raise ForbiddenError(
            f"space {slug!r} not viewable: {code}", status=200, url=SPACE_PATH, code=code
        )
    space = space_from(decoded)
    if space is None:
        raise PayloadError(SPACE_PATH, f"space {slug!r}: expected an object with uuid and slug")
    return space


def _rest_space_rows(
    client: JsonClient, slug: str, *, page_size: int, own_only: bool, max_pages: int
) -> AsyncGenerator[ListingRow, None]:
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

    return offset_rows(fetch, SPACE_THREADS_PATH, max_pages=max_pages, relist_first_page=False)


def _space_request(space_uuid: str, own_only: bool) -> Any:
    def request(cursor: str | None) -> tuple[str, dict[str, Any]]:
        variables: dict[str, Any] = {
            "spaceId": space_uuid,
            "ownThreadsOnly": own_only,
            "searchTerm": None,
            "groupType": "ALL",
            "count": SPACE_GRAPHQL_PAGE,
            "cursor": cursor,
        }
        return SPACE_QUERY, variables

    return request


def space_lister(client: Any, lister: str | None) -> str:
    """``rest`` or ``graphql`` for a space listing; None = GraphQL for Era C sessions."""
    if lister is None:
        cookies = getattr(client, "cookies", None)
        era = session_era(cookies) if isinstance(cookies, Mapping) else None
        return "graphql" if era == "C" else "rest"
    if lister not in ("rest", "graphql"):
        raise ConfigError(f"lister must be 'rest' or 'graphql', got {lister!r}")
    return lister


async def iter_space_threads(
    client: JsonClient,
    slug: str,
    *,
    page_size: int = 20,
    own_only: bool = False,
    max_pages: int = MAX_PAGES,
    lister: str | None = "rest",
    space_uuid: str | None = None,
    graphql_hashes: Mapping[str, str] | None = None,
) -> AsyncIterator[ListingRow]:
    """The threads of one space, every member's (``own_only``: only the account's own).

    ``lister`` ``rest``, ``graphql`` (needs ``space_uuid``) or None (GraphQL for an Era C
    session); see the module docstring.
    """
    seen: set[str] = set()
    if space_lister(client, lister) == "graphql" and space_uuid:
        hashes = {**DEFAULT_SPACE_HASHES, **(graphql_hashes or {})}
        request = _space_request(space_uuid, own_only)
        rows = graphql_rows(client, request, hashes, keys=SPACE_KEYS, max_pages=max_pages)
        try:
            async with contextlib.aclosing(rows) as listed:
                async for row in listed:
                    seen.add(row.thread_id)
                    yield row
            return
        except StaleHashError as exc:
            get_logger().warning(LISTER_FALLBACK, lister="graphql", fallback="rest",
                                 operation=exc.operation, reason="PERSISTED_QUERY_NOT_FOUND",
                                 threads_listed=len(seen))  # fmt: skip
    rest = _rest_space_rows(
        client, slug, page_size=page_size, own_only=own_only, max_pages=max_pages
    )
    async with contextlib.aclosing(rest) as listed:
        async for row in listed:
            if row.thread_id not in seen:
                seen.add(row.thread_id)
                yield row
