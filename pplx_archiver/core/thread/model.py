"""The values that cross the core/shell boundary: render inputs, render outputs, findings.

The shell builds :class:`ThreadInput` and :class:`RenderContext` from what it fetched and
stored; the core returns a :class:`RenderResult`; the shell writes ``files`` and logs
``findings``. Everything here is frozen; mappings handed in are not mutated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pplx_archiver.core.thread.layout import thread_key

if TYPE_CHECKING:
    from pplx_archiver.core.thread.prose import ThreadProse


@dataclasses.dataclass(frozen=True, slots=True)
class SpaceRef:
    """A space (collection) a thread belongs to."""

    uuid: str
    slug: str
    title: str


@dataclasses.dataclass(frozen=True, slots=True)
class ListingRow:
    """One thread as the library listing (REST or GraphQL) describes it.

    ``thread_id`` is what goes into ``GET /rest/thread/{thread_id}`` (the slug, which since
    2026 equals the first entry's uuid). ``updated_at`` is the raw update time string of the
    listing (``last_query_datetime`` or ``updatedAt``), compared after normalisation.
    """

    thread_id: str
    title: str = ""
    slug: str = ""
    context_uuid: str | None = None
    mode: str | None = None
    display_model: str | None = None
    updated_at: str | None = None
    space: SpaceRef | None = None
    author: str | None = None
    uuid: str = ""  # the listing's own uuid of the thread (REST ``uuid``, GraphQL ``entryId``)
    url: str = ""  # the thread URL it was named by (``export <URL>``), a mode signal

    @property
    def key(self) -> str:
        """The index key of the thread: :func:`~pplx_archiver.core.thread.layout.thread_key` of its
        id and listed uuid (the listed uuid for a thread addressed by an older text slug)."""
        return thread_key(self.thread_id, (self.uuid,))


@dataclasses.dataclass(frozen=True, slots=True)
class RawPage:
    """One fetched page: the request as made (no secrets) and the decoded JSON body."""

    request: Mapping[str, Any]
    body: Any


@dataclasses.dataclass(frozen=True, slots=True)
class AssetFile:
    """Downloaded bytes of one asset version, handed back to the core (reports)."""

    asset_uuid: str
    version: int
    file_name: str
    data: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadInput:
    """Everything fetched for one thread."""

    thread_id: str
    plain_pages: tuple[RawPage, ...]
    blocks_pages: tuple[RawPage, ...] = ()
    listing: ListingRow | None = None
    downloads: tuple[AssetFile, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class RenderContext:
    """What the core may not find out by itself: time, language, account, kept fields.

    ``exported_at`` is written into ``thread.json``; a re-render passes the stored value so
    unchanged input yields unchanged bytes. ``kept_record`` holds fields the shell owns and
    the core copies into ``thread.json`` verbatim (``remote_deleted``).
    """

    exported_at: str
    lang: str = "en"
    account: str = "default"
    kept_record: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Finding:
    """Something the shell should log: an UPPER_SNAKE event name and snake_case fields."""

    event: str
    level: str
    fields: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class RenderResult:
    """Every derived file of one thread, its record and what to log.

    ``dir_name`` is ``<mode>/<YYYY-MM-DD>_<title-slug>_<uuid8>`` relative to the account
    folder; ``files`` maps paths relative to the thread folder (``conversation.md``,
    ``turns/turn_0001.md``, ``sources.json``, ``thread.json`` …) to their bytes.
    ``variants`` are the answer-variant registry records of this thread; ``prose`` is
    what the search index holds of it (None when the producer gives none).
    """

    thread_uuid: str
    mode: str
    title: str
    dir_name: str
    files: Mapping[str, bytes]
    record: Mapping[str, Any]
    findings: tuple[Finding, ...] = ()
    variants: tuple[Mapping[str, Any], ...] = ()
    prose: ThreadProse | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class AssetRef:
    """One version of one asset found in a thread's payloads (issue 8 downloads these).

    ``version`` numbers the versions of one ``file_name`` 1..N by ``created_at``;
    ``is_handle`` marks ``toolu_…`` cloud-workspace handles (no download channel);
    ``inline_content`` holds diffs/code/text the payload already carries; ``path`` is the
    JSON path where the asset was found.
    """

    uuid: str
    asset_type: str
    created_at: str
    file_name: str
    url: str | None
    is_handle: bool
    version: int
    title: str = ""
    inline_content: str | None = None
    path: str = ""
