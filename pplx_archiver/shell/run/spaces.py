"""Spaces in an archiving run: threads of spaces shared with the account, and the space pages.

With ``--include-spaces`` the run's listing is :meth:`SpaceCollector.rows`: first the threads
of every space the account can see that another user wrote (their ``author_username`` is not
the account's own; such threads are not in the account's library), then the library as usual.
The account's own threads in a space come through the library; every thread is listed once.
On an incremental run (early stop on), space threads the archive already holds unchanged are
left out of the listing, so they cannot end the listing before the library is read.

Others' threads are archived under their author's account folder
(``<out>/<sanitized author>/<mode>/…``): :class:`SpaceAwareStore` wraps the store and picks
the account folder per thread.

After the run :func:`write_space_pages` writes ``spaces/<slug>.md`` (one page per space:
title, description, instructions, owner, members, and a table of its threads with relative
links to their ``conversation.md``) and ``spaces/spaces.json`` under the archive root, each
atomically and with deterministic bytes (nothing time-dependent; same archive → same bytes).

Events: ``SPACE_LISTED`` (``slug``, ``threads``, ``others_threads``), ``SPACE_SKIPPED``
(``slug``, ``reason``), ``SPACES_WRITTEN`` (``spaces``, ``path``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import urllib.parse
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import orjson

from pplx_archiver.core import plan as planning
from pplx_archiver.core.layout import normalize_timestamp_key, safe_component
from pplx_archiver.core.markdown import bullet, fence, heading, md_table, single_line
from pplx_archiver.core.members import (
    contributions,
    contributions_table,
    member_folder,
)
from pplx_archiver.core.model import ListingRow
from pplx_archiver.errors import FetchError, PayloadError
from pplx_archiver.logconfig import get_logger
from pplx_archiver.shell.archive.fsutil import safe_join, write_atomic
from pplx_archiver.shell.net.listing import (
    JsonClient,
    Space,
    get_space,
    iter_space_threads,
    list_spaces,
)

SPACES_DIR = "spaces"
SPACES_JSON = "spaces.json"
SPACE_LISTED = "SPACE_LISTED"
SPACE_SKIPPED = "SPACE_SKIPPED"
SPACES_WRITTEN = "SPACES_WRITTEN"

Lister = Callable[[], AsyncIterator[ListingRow]]
Skip = Callable[[ListingRow], bool]


@dataclasses.dataclass(frozen=True, slots=True)
class SpaceThreads:
    """One space as the run saw it: its metadata, its members and every thread it lists."""

    space: Space
    owner: str | None
    members: tuple[str, ...]
    rows: tuple[ListingRow, ...]


def author_folder(author: str, own: str | None = None) -> str:
    """The account folder of another user's threads (see ``core/members.py``)."""
    return member_folder(author, own=own)


def _usernames(users: Any) -> list[str]:
    if not isinstance(users, list):
        return []
    names = []
    for user in users:
        name = user.get("username") if isinstance(user, dict) else None
        if isinstance(name, str) and name:
            names.append(name)
    return names


def space_people(space: Space) -> tuple[str | None, tuple[str, ...]]:
    """The owner's username and the members (owner first, then contributors, each once)."""
    owner = space.owner
    seen: list[str] = [owner] if owner else []
    for name in _usernames(space.raw.get("contributor_users")):
        if name not in seen:
            seen.append(name)
    return owner, tuple(seen)


@contextlib.asynccontextmanager
async def _closing(
    rows: AsyncIterator[ListingRow],
) -> AsyncIterator[AsyncIterator[ListingRow]]:
    """``contextlib.aclosing`` for any async iterator (closed when it can be)."""
    try:
        yield rows
    finally:
        close = getattr(rows, "aclose", None)
        if close is not None:
            await close()


class SpaceCollector:
    """Lists the spaces and their threads once, and serves the run's combined listing."""

    def __init__(
        self,
        client: JsonClient,
        library: Lister,
        *,
        own_username: str | None,
        skip: Skip | None = None,
    ) -> None:
        self._client = client
        self._library = library
        self.own_username = own_username
        self._skip = skip
        self.spaces: list[SpaceThreads] = []
        self._collected = False

    def is_others(self, row: ListingRow) -> bool:
        """True when the row is a thread another user wrote (not in the account's library)."""
        return row.author is not None and row.author != self.own_username

    async def collect(self) -> list[SpaceThreads]:
        """List every space and its threads (once per collector)."""
        if self._collected:
            return self.spaces
        self._collected = True
        log = get_logger()
        try:
            listed_spaces = await list_spaces(self._client)
        except (FetchError, PayloadError) as exc:
            log.warning(SPACE_SKIPPED, slug=None, reason=f"listing the spaces failed: {exc}")
            return self.spaces
        for listed in listed_spaces:
            space = listed
            try:
                space = await get_space(self._client, listed.slug)
            except (FetchError, PayloadError) as exc:
                log.warning(SPACE_SKIPPED, slug=listed.slug, reason=str(exc))
                continue
            rows: list[ListingRow] = []
            try:
                listing = iter_space_threads(
                    self._client, space.slug, lister=None, space_uuid=space.uuid
                )  # GraphQL for an Era C session, else REST (shell/net/space_listing.py)
                async with _closing(listing) as threads:
                    async for row in threads:
                        rows.append(row)
            except (FetchError, PayloadError) as exc:
                log.warning(SPACE_SKIPPED, slug=space.slug, reason=str(exc))
                continue
            owner, members = space_people(space)
            others = sum(1 for row in rows if self.is_others(row))
            log.info(SPACE_LISTED, slug=space.slug, threads=len(rows), others_threads=others)
            self.spaces.append(SpaceThreads(space, owner, members, tuple(rows)))
        return self.spaces

    async def rows(self) -> AsyncIterator[ListingRow]:
        """Others' space threads (minus skipped ones), then the library; each thread once."""
        seen: set[str] = set()
        for entry in await self.collect():
            for row in entry.rows:
                if not self.is_others(row) or row.thread_id in seen:
                    continue
                seen.add(row.thread_id)
                if self._skip is not None and self._skip(row):
                    continue
                yield row
        async with _closing(self._library()) as library:
            async for row in library:
                if row.thread_id in seen:
                    continue
                seen.add(row.thread_id)
                yield row


# --------------------------------------------------------------------------- store


class _Store(Protocol):
    def stored_state(self, thread_uuid: str) -> Any: ...

    def commit(self, fetched: Any, run_id: int, account: str) -> Mapping[str, Any]: ...

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None: ...

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None: ...

    def register_variants(
        self, records: Any, source: str, run_id: int | None = None
    ) -> list[Any]: ...


class SpaceAwareStore:
    """The run's store, except that others' threads are committed under their author."""

    def __init__(self, store: _Store, collector: SpaceCollector) -> None:
        self._store = store
        self._collector = collector

    def account_for(self, row: ListingRow, default: str) -> str:
        """The account folder of a listed thread: its author's for others' threads."""
        if self._collector.is_others(row) and row.author is not None:
            return author_folder(row.author, own=default)
        return default

    def stored_state(self, thread_uuid: str) -> Any:
        """As the wrapped store."""
        return self._store.stored_state(thread_uuid)

    def commit(self, fetched: Any, run_id: int, account: str) -> Mapping[str, Any]:
        """Commit under the thread's account folder (see :meth:`account_for`)."""
        return self._store.commit(fetched, run_id, self.account_for(fetched.row, account))

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None:
        """As the wrapped store."""
        self._store.fail(thread_uuid, error, error_path, run_id)

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None:
        """As the wrapped store."""
        self._store.terminal(thread_uuid, state, run_id)

    def register_variants(self, records: Any, source: str, run_id: int | None = None) -> list[Any]:
        """As the wrapped store."""
        return self._store.register_variants(records, source, run_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


# --------------------------------------------------------------------------- pages


class _Index(Protocol):
    def get(self, uuid: str) -> Any: ...


def _page_names(spaces: Sequence[SpaceThreads]) -> dict[str, str]:
    """Space uuid → page file name (sanitized slug; uuid-qualified when two collide)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for entry in sorted(spaces, key=lambda e: (e.space.slug, e.space.uuid)):
        base = safe_component(entry.space.slug, fallback="space", max_len=100)
        name = f"{base}.md"
        if name.lower() in taken:
            name = f"{base}~{safe_component(entry.space.uuid, max_len=40)}.md"
        taken.add(name.lower())
        names[entry.space.uuid] = name
    return names


def _thread_records(entry: SpaceThreads, archive: _Index) -> list[dict[str, Any]]:
    records = []
    for row in entry.rows:
        stored = archive.get(row.thread_id)
        path = stored.path if stored is not None and stored.status == "done" else None
        records.append(
            {
                "uuid": row.thread_id,
                "title": row.title,
                "author": row.author,
                "updated_at": row.updated_at,
                "status": stored.status if stored is not None else "not archived",
                "path": path,
            }
        )
    records.sort(key=lambda r: (normalize_timestamp_key(r["updated_at"]), r["uuid"]))
    records.reverse()
    return records


def space_record(entry: SpaceThreads, archive: _Index, page: str) -> dict[str, Any]:
    """The ``spaces.json`` record of one space."""
    space = entry.space
    threads = _thread_records(entry, archive)
    return {
        "uuid": space.uuid,
        "slug": space.slug,
        "title": space.title,
        "emoji": space.emoji,
        "description": space.description,
        "instructions": space.instructions,
        "owner": entry.owner,
        "members": list(entry.members),
        "user_permission": space.user_permission,
        "page": f"{SPACES_DIR}/{page}",
        "threads": threads,
        "contributors": contributions(entry.members, threads),
    }


def _link(path: str | None) -> str:
    """A relative link from ``spaces/<page>.md`` to a thread folder's ``conversation.md``."""
    if not path:
        return ""
    target = "/".join(urllib.parse.quote(part, safe="") for part in path.split("/"))
    return f"[conversation](../{target}/conversation.md)"


def render_space_page(record: Mapping[str, Any]) -> str:
    """The Markdown index page of one space (deterministic for equal records)."""
    members = ", ".join(record["members"]) or "none listed"
    parts = [
        heading(1, record["title"] or record["slug"]),
        "\n",
        bullet(f"slug: {record['slug']}"),
        bullet(f"owner: {record['owner'] or 'unknown'}"),
        bullet(f"members: {members}"),
        bullet(f"threads: {len(record['threads'])}"),
    ]
    if record["description"]:
        parts += ["\n", heading(2, "Description"), "\n", single_line(record["description"]), "\n"]
    if record["instructions"]:
        parts += ["\n", heading(2, "Instructions"), "\n", fence(record["instructions"])]
    if record.get("contributors"):
        cells = contributions_table(record["contributors"])
        parts += ["\n", heading(2, "Contributors"), "\n"]
        parts.append(md_table(["member", "threads", "archived", "modes"], cells))
    parts += ["\n", heading(2, "Threads"), "\n"]
    if not record["threads"]:
        parts.append("No threads.\n")
    else:
        rows = [
            [t["title"] or t["uuid"], t["author"], t["updated_at"], t["status"], _link(t["path"])]
            for t in record["threads"]
        ]
        parts.append(md_table(["title", "author", "updated", "status", "archive"], rows))
    return "".join(parts)


def write_space_pages(out: Path, spaces: Sequence[SpaceThreads], archive: _Index) -> int:
    """Write ``spaces/<slug>.md`` and ``spaces/spaces.json``; return the files written."""
    names = _page_names(spaces)
    records = [
        space_record(entry, archive, names[entry.space.uuid])
        for entry in sorted(spaces, key=lambda e: (e.space.slug, e.space.uuid))
    ]
    folder = safe_join(out, SPACES_DIR)
    written = 0
    for record in records:
        page = record["page"].split("/", 1)[1]
        data = render_space_page(record).encode()
        written += write_atomic(safe_join(folder, page), data)
    doc = {"format": 1, "spaces": records}
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    written += write_atomic(safe_join(folder, SPACES_JSON), data)
    get_logger().info(SPACES_WRITTEN, spaces=len(records), path=SPACES_DIR)
    return written


# --------------------------------------------------------------------------- run hook


class _Archive(_Store, _Index, Protocol):
    pass


class SpacesHook:
    """What ``run_command`` needs for ``--include-spaces``: the listing, the store, the pages."""

    def __init__(
        self,
        client: JsonClient,
        archive: _Archive,
        library: Lister,
        *,
        own_username: str | None,
        incremental: bool,
        force: bool = False,
    ) -> None:
        def unchanged(row: ListingRow) -> bool:
            decision = planning.decide(row, archive.stored_state(row.thread_id), force=force)
            return decision in (planning.UNCHANGED, planning.TERMINAL)

        self.collector = SpaceCollector(
            client, library, own_username=own_username, skip=unchanged if incremental else None
        )
        self.archive = archive
        self.store = SpaceAwareStore(archive, self.collector)

    def rows(self) -> AsyncIterator[ListingRow]:
        """The run's listing (see :meth:`SpaceCollector.rows`)."""
        return self.collector.rows()

    def write_pages(self, out: Path) -> int:
        """Write the space pages after the run (see :func:`write_space_pages`)."""
        return write_space_pages(out, self.collector.spaces, self.archive)
