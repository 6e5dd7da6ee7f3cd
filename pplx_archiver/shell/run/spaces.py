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

After the run :func:`write_space_pages` hands the archive's writer ``spaces/<slug>.md`` (one
page per space: title, description, instructions, owner, members, and a table of its threads
with relative links to their ``conversation.md``) and ``spaces/spaces.json`` under the archive
root; their content is the core's (:mod:`pplx_archiver.core.spaces.space_pages`, deterministic).

Events: ``SPACE_LISTED`` (``slug``, ``threads``, ``others_threads``), ``SPACE_SKIPPED``
(``slug``, ``reason``), ``SPACES_WRITTEN`` (``spaces``, ``path``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Protocol

from pplx_archiver.core.archive import decisions
from pplx_archiver.core.archive.writes import RootFiles, ThreadCommit
from pplx_archiver.core.spaces.members import member_folder
from pplx_archiver.core.spaces.space_pages import SPACES_DIR, SpaceInfo, StoredThread, space_files
from pplx_archiver.core.spaces.space_pages import render_space_page as render_space_page
from pplx_archiver.core.spaces.space_pages import space_record as core_space_record
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.errors import FetchError, PayloadError
from pplx_archiver.logconfig import get_logger
from pplx_archiver.shell.net.listing import (
    JsonClient,
    Space,
    get_space,
    iter_space_threads,
    list_spaces,
)
from pplx_archiver.shell.run.run_types import ClosingStore, Offload, Store

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
    """The account folder of another user's threads (see ``core/spaces/members.py``)."""
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


class SpaceAwareStore:
    """The run's store, except that others' threads are committed under their author."""

    def __init__(self, store: Store, collector: SpaceCollector) -> None:
        self._store = store
        self._collector = collector

    def account_for(self, row: ListingRow, default: str) -> str:
        """The account folder of a listed thread: its author's for others' threads."""
        if self._collector.is_others(row) and row.author is not None:
            return author_folder(row.author, own=default)
        return default

    def _under_author(self, plan: ThreadCommit) -> ThreadCommit:
        if plan.listing is None:
            return plan
        return dataclasses.replace(plan, account=self.account_for(plan.listing, plan.account))

    def commit(self, plan: ThreadCommit) -> Mapping[str, Any]:
        """Commit under the thread's account folder (see :meth:`account_for`)."""
        return self._store.commit(self._under_author(plan))

    def commit_then(self, plan: ThreadCommit, then: Callable[[Mapping[str, Any]], None]) -> None:
        """The wrapped store's ``commit_then``, under the thread's account folder."""
        self._store.commit_then(self._under_author(plan), then)

    # the rest: as the wrapped store
    def stored_state(self, thread_uuid: str) -> decisions.StoredState | None:
        return self._store.stored_state(thread_uuid)

    def can_post(self) -> bool:
        return self._store.can_post()

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None:
        self._store.fail(thread_uuid, error, error_path, run_id)

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None:
        self._store.terminal(thread_uuid, state, run_id)

    def confirm_not_found(self, uuid: str, error: str, run_id: int, immediate: bool) -> bool:
        return self._store.confirm_not_found(uuid, error, run_id, immediate)

    def register_variants(self, records: Any, source: str, run_id: int | None = None) -> list[Any]:
        return self._store.register_variants(records, source, run_id)

    def kept_record(self, thread_uuid: str) -> dict[str, Any]:
        return self._store.kept_record(thread_uuid)

    def mode_memo(self, key: str) -> decisions.ModeMemo | None:
        return self._store.mode_memo(key)

    def remember_modes(self, memos: Sequence[tuple[str, decisions.ModeMemo]], run_id: int) -> int:
        return self._store.remember_modes(memos, run_id)

    def flush_done(self) -> int:
        return self._store.flush_done()

    @property
    def unsynced(self) -> int:
        return self._store.unsynced


class _ClosingSpaceStore(SpaceAwareStore):
    """The writer process's store, others' threads committed under their author."""

    def __init__(self, store: ClosingStore, collector: SpaceCollector) -> None:
        super().__init__(store, collector)
        self._closing = store

    def close(self) -> None:
        """As the wrapped store (the writer process finishes, then ends)."""
        self._closing.close()


class SpaceAwareOffload:
    """The run's writer process (an :class:`~pplx_archiver.shell.run.run_types.Offload`),
    its store wrapped so that others' threads are still committed under their author."""

    def __init__(self, offload: Offload, collector: SpaceCollector) -> None:
        self._offload = offload
        self._collector = collector
        self.min_threads = offload.min_threads

    def __call__(self, to_fetch: int) -> ClosingStore | None:
        store = self._offload(to_fetch)
        return None if store is None else _ClosingSpaceStore(store, self._collector)

    def discard(self) -> None:
        """As the wrapped offload."""
        self._offload.discard()


# --------------------------------------------------------------------------- pages


class _Index(Protocol):
    def get(self, uuid: str) -> Any: ...


class _Writer(Protocol):
    def apply(self, plan: RootFiles) -> int: ...


def space_info(entry: SpaceThreads) -> SpaceInfo:
    """The core's view of a listed space (:mod:`pplx_archiver.core.spaces.space_pages`)."""
    space = entry.space
    return SpaceInfo(
        uuid=space.uuid,
        slug=space.slug,
        title=space.title,
        emoji=space.emoji,
        description=space.description,
        instructions=space.instructions,
        user_permission=space.user_permission,
        owner=entry.owner,
        members=entry.members,
        rows=entry.rows,
    )


def _stored(spaces: Sequence[SpaceThreads], archive: _Index) -> dict[str, StoredThread]:
    stored: dict[str, StoredThread] = {}
    for entry in spaces:
        for row in entry.rows:
            known = archive.get(row.key)
            if known is not None:
                stored[row.key] = StoredThread(known.status, known.path)
    return stored


def space_record(entry: SpaceThreads, archive: _Index, page: str) -> dict[str, Any]:
    """The ``spaces.json`` record of one space."""
    return core_space_record(space_info(entry), _stored([entry], archive), page)


def space_pages_plan(spaces: Sequence[SpaceThreads], archive: _Index) -> RootFiles:
    """The writer's plan of ``spaces/<slug>.md`` and ``spaces/spaces.json``."""
    infos = [space_info(entry) for entry in spaces]
    return RootFiles(space_files(infos, _stored(spaces, archive)))


def write_space_pages(writer: _Writer, spaces: Sequence[SpaceThreads], archive: _Index) -> int:
    """Apply the space pages plan; return the files written."""
    plan = space_pages_plan(spaces, archive)
    written = writer.apply(plan)
    get_logger().info(SPACES_WRITTEN, spaces=len(spaces), path=SPACES_DIR)
    return written


# --------------------------------------------------------------------------- run hook


class _Archive(Store, _Index, Protocol):
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
            decision = decisions.decide(row, archive.stored_state(row.key), force=force)
            return decision in (decisions.UNCHANGED, decisions.TERMINAL)

        self.collector = SpaceCollector(
            client, library, own_username=own_username, skip=unchanged if incremental else None
        )
        self.archive = archive
        self.store = SpaceAwareStore(archive, self.collector)

    def rows(self) -> AsyncIterator[ListingRow]:
        """The run's listing (see :meth:`SpaceCollector.rows`)."""
        return self.collector.rows()

    def offload(self, offload: Offload | None) -> SpaceAwareOffload | None:
        """The run's writer process, committing others' threads under their author."""
        return None if offload is None else SpaceAwareOffload(offload, self.collector)

    def write_pages(self, writer: _Writer) -> int:
        """Write the space pages after the run (see :func:`write_space_pages`)."""
        return write_space_pages(writer, self.collector.spaces, self.archive)
