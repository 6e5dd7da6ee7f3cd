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
- :class:`ModeMemos`: threads a run with ``--mode`` found of another mode (the index);
- :class:`Findings`: facts for the ``alerts`` table, once each;
- :class:`RunStart`, :class:`RunFinish`, :class:`RunOutcome`: the ``runs`` table;
- :class:`ThreadFailed`, :class:`ThreadTerminal`, :class:`NotFound`, :class:`Forget`,
  :class:`Rekey`: a thread's index row (and the terminal-state log beside the index);
- :class:`UsageAnswer`: one row of the ``usage`` table;
- :class:`RelationEdges`: the ``relations`` table, replaced whole;
- :class:`SearchRebuild`: the ``search_*`` tables rebuilt from the raw files;
- :class:`IndexRebuild`: ``reindex``'s new index, moved over the old one;
- :class:`SiteFiles`: files of the static site (and stale ones removed) under its folder;
- :class:`RunLog`: the JSON-lines log file of one command run, opened for appending.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pplx_archiver.core.archive.decisions import ModeMemo
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


@dataclasses.dataclass(frozen=True, slots=True)
class RunStart:
    """A command run begins: a new row of the ``runs`` table (its id is returned)."""

    command: str


@dataclasses.dataclass(frozen=True, slots=True)
class RunFinish:
    """A command run ends: its finish time and summary."""

    run_id: int
    summary: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class RunOutcome:
    """The process outcome of a recorded run: exit code, log file, error line."""

    run_id: int
    exit_code: int
    log_file: str | None
    error: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadFailed:
    """A thread that could not be archived this time (attempts + 1; the next run retries)."""

    thread_uuid: str
    error: str
    error_path: str | None = None
    account: str = "default"
    title: str | None = None
    run_id: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadTerminal:
    """The server reports a thread ``deleted`` or ``expired``: never retried."""

    thread_uuid: str
    state: str
    account: str = "default"
    run_id: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class NotFound:
    """A 404 of a thread, made terminal (``not_found``) when confirmed (the writer answers
    whether it was; ``immediate``: an id given to ``export``)."""

    thread_uuid: str
    error: str
    run_id: int
    immediate: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Forget:
    """Drop a thread from the index (its folder stays); the writer answers whether it was known."""

    thread_uuid: str


@dataclasses.dataclass(frozen=True, slots=True)
class Rekey:
    """A thread filed under its text slug by older releases, moved to its uuid."""

    old: str
    new: str


@dataclasses.dataclass(frozen=True, slots=True)
class UsageAnswer:
    """One thread's credit-usage answer (``ok``, ``forbidden`` or ``error``), replacing any."""

    thread_uuid: str
    status: str
    fetched_at: str
    cents: int | None = None
    meters: tuple[Mapping[str, Any], ...] | None = None
    error: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class RelationEdges:
    """The whole ``relations`` table: ``(src, dst, kind, evidence)`` each."""

    edges: tuple[tuple[str, str, str, str], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class SearchRebuild:
    """Rebuild the search tables from the raw files (``progress(done, total)`` as it goes)."""

    progress: Callable[[int, int], None] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class IndexRebuild:
    """``reindex``: a new index from the thread folders and the logs beside it.

    ``rows`` are upserted in order (``uuid, account, fields``: the folders' ``done`` rows,
    then the terminal states), taken from the iterable as they are stored, so a reindex
    reads each folder when its row is written instead of holding every row at once;
    ``registry_backup`` names the copy the registry file is moved to first (it held bad
    lines), ``registry_lines`` the lines it is rewritten with (None: kept); ``runs``,
    ``alerts``, ``usage`` are the old index's rows carried over;
    ``damaged_name`` the name the damaged old database is kept under.
    """

    rows: Iterable[tuple[str, str, Mapping[str, Any]]]
    registry_backup: str | None = None
    registry_lines: tuple[Mapping[str, Any], ...] | None = None
    runs: tuple[tuple[Any, ...], ...] = ()
    alerts: tuple[tuple[Any, ...], ...] = ()
    usage: tuple[tuple[Any, ...], ...] = ()
    damaged_name: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class SiteFiles:
    """Files of the static site under ``dest`` (an absolute folder), then ``stale`` removed
    (paths relative to ``dest``); the writer answers how many were written and removed."""

    dest: str
    files: Mapping[str, bytes]
    stale: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class RunLog:
    """The log file ``name`` of one command run in ``folder``, opened for appending."""

    folder: str
    name: str


# The plans that write index rows only (the writer's ``writer_rows``).
RowPlan = (
    Findings
    | ModeMemos
    | RunStart
    | RunFinish
    | RunOutcome
    | ThreadFailed
    | ThreadTerminal
    | NotFound
    | Forget
    | Rekey
    | UsageAnswer
    | RelationEdges
    | VerifyRotation
)
Plan = (
    ThreadCommit
    | DerivedUpdate
    | AssetPlacement
    | RootFiles
    | Tombstone
    | VariantRecords
    | SearchRebuild
    | SiteFiles
    | RowPlan
)
