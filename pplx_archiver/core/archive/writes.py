"""Plans of what goes into the archive: typed values the one writer applies.

Every command that changes the archive computes one of these and hands it to
:class:`~pplx_archiver.shell.archive.writer.ArchiveWriter` (``apply(plan)``), the only code
that writes there. ``--dry-run`` computes the plan and does not apply it. The plans are pure
values: paths are ``/``-separated strings relative to the thread folder or the archive root,
bytes are the exact file contents.

- :class:`ThreadCommit`: one fetched thread (raw files, derived files, assets, index row);
- :class:`DerivedUpdate`: a re-render's changed and stale derived files of one thread;
- :class:`AssetPlacement`: ``assets-backfill``'s asset files and manifest of one thread;
- :class:`RootFiles`: files under the archive root (space pages, the relations graph);
- :class:`Tombstone`: a thread the server reports deleted (``remote_deleted`` + terminal state);
- :class:`VariantRecords`: answer-variant records for the registry;
- :class:`ModeMemos`: threads a run with ``--mode`` found of another mode (the index).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pplx_archiver.core.archive.plan import ModeMemo
from pplx_archiver.core.thread.model import ListingRow, RenderResult


@dataclasses.dataclass(frozen=True, slots=True)
class StagedFile:
    """A complete downloaded file in staging (``source``, absolute) to move to ``rel``."""

    rel: str
    source: str


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadCommit:
    """Everything one fetched thread becomes in the archive.

    ``extra_files`` are files besides the render's (``assets/manifest.json``, inline assets);
    ``staged`` downloaded asset files moved in; ``assets_complete`` False makes the next run
    retry the thread.
    """

    account: str
    result: RenderResult
    raw_entries: bytes
    raw_blocks: bytes | None = None
    listing: ListingRow | None = None
    listing_updated_at: str | None = None
    extra_files: Mapping[str, bytes] = dataclasses.field(default_factory=dict)
    staged: tuple[StagedFile, ...] = ()
    assets_complete: bool = True
    run_id: int | None = None

    @property
    def thread_uuid(self) -> str:
        """The thread's uuid (from its rendering)."""
        return self.result.thread_uuid


@dataclasses.dataclass(frozen=True, slots=True)
class DerivedUpdate:
    """A re-render of one stored thread: files whose bytes differ and stale derived files."""

    thread_uuid: str
    rel_path: str
    changed: Mapping[str, bytes]
    stale: tuple[str, ...] = ()
    degraded_turns: int | None = None  # recorded in the index when thread.json changed


@dataclasses.dataclass(frozen=True, slots=True)
class AssetPlacement:
    """``assets-backfill`` for one stored thread: files to write, downloads to move in."""

    thread_uuid: str
    rel_path: str
    files: Mapping[str, bytes]
    staged: tuple[StagedFile, ...] = ()
    complete: bool = True


@dataclasses.dataclass(frozen=True, slots=True)
class RootFiles:
    """Files under the archive root (``spaces/…``, ``relations/…``), with an event to log."""

    files: Mapping[str, bytes]
    event: str | None = None
    fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Tombstone:
    """A thread the server confirmed deleted or expired: ``remote_deleted`` and its state."""

    thread_uuid: str
    state: str
    timestamp: str


@dataclasses.dataclass(frozen=True, slots=True)
class VariantRecords:
    """Answer-variant records to register (``online`` or ``offline``)."""

    records: tuple[Mapping[str, Any], ...]
    source: str
    run_id: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ModeMemos:
    """Threads fetched by a run with ``--mode`` and found of another mode, by their key
    (the listing's): remembered so the next such run leaves them out without a request."""

    memos: tuple[tuple[str, ModeMemo], ...]
    run_id: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Findings:
    """Findings to record in the alerts once per fact: ``(event, level, fields)`` each."""

    found: tuple[tuple[str, str, Mapping[str, Any]], ...]
    run_id: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class VerifyRotation:
    """Where ``verify --sample`` stands: the last uuid it checked, when the current pass over
    the archive started, and the start and end of the last complete pass (None before one)."""

    position: str
    pass_started: str
    covered_from: str | None = None
    covered_at: str | None = None


Plan = (
    ThreadCommit
    | DerivedUpdate
    | AssetPlacement
    | RootFiles
    | Tombstone
    | VariantRecords
    | ModeMemos
    | Findings
    | VerifyRotation
)
