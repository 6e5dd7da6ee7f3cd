"""The archive on disk: thread folders, their raw and derived files, the index and registry.

Layout (relative to ``out``)::

    <account>/<mode>/<YYYY-MM-DD>_<slug>_<uuid8>/   raw_entries.json, raw_blocks.json,
                                                    thread.json, conversation.md, turns/…,
                                                    sources.json, sources.md, report.md, assets/
    index/archive.sqlite   index/answer_variants_log.jsonl   index/logs/

:class:`Archive` opens the index and the registry and answers what is stored; every change to
the folders goes through its :class:`~pplx_archiver.shell.archive.writer.ArchiveWriter`
(``archive.writer.apply(plan)``), the archive's one writer (see there for the commit order
and crash safety).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pplx_archiver.core.archive import decisions
from pplx_archiver.core.archive.writes import (
    Forget,
    ModeMemos,
    NotFound,
    Rekey,
    RunFinish,
    RunStart,
    ThreadCommit,
    ThreadFailed,
    ThreadTerminal,
    Tombstone,
    VariantRecords,
)
from pplx_archiver.core.thread.layout import safe_component
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.alerts import AlertBook
from pplx_archiver.shell.archive.disk import Disk
from pplx_archiver.shell.archive.files import ASSETS_DIR as ASSETS_DIR
from pplx_archiver.shell.archive.files import DERIVED_TOP as DERIVED_TOP
from pplx_archiver.shell.archive.files import INDEX_DIR as INDEX_DIR
from pplx_archiver.shell.archive.files import RAW_BLOCKS as RAW_BLOCKS
from pplx_archiver.shell.archive.files import RAW_ENTRIES as RAW_ENTRIES
from pplx_archiver.shell.archive.files import RAW_FILES as RAW_FILES
from pplx_archiver.shell.archive.files import THREAD_JSON as THREAD_JSON
from pplx_archiver.shell.archive.files import derived_files_on_disk as derived_files_on_disk
from pplx_archiver.shell.archive.files import dump_record as dump_record
from pplx_archiver.shell.archive.files import listing_from_json as listing_from_json
from pplx_archiver.shell.archive.files import listing_to_json as listing_to_json
from pplx_archiver.shell.archive.files import recorded_file_keys as recorded_file_keys
from pplx_archiver.shell.archive.files import stored_assets_problem
from pplx_archiver.shell.archive.fsutil import safe_join
from pplx_archiver.shell.archive.index import TERMINAL_STATUSES, Index, RunRow, ThreadRow
from pplx_archiver.shell.archive.registry import Registry, utc_now
from pplx_archiver.shell.archive.writer import ArchiveWriter


class Archive:
    """One archive root: folders, the SQLite index and the answer-variant registry."""

    def __init__(
        self,
        out_dir: Path,
        *,
        clock: Any = utc_now,
        read_only: bool = False,
        group_commit: bool = False,
        disk: Disk | None = None,
    ) -> None:
        self.out = Path(out_dir)
        # Group commit: files are written without a per-file fsync and a thread is marked done
        # only by flush_done(), after one syncfs of the archive's file system has made every
        # written file durable. Until then the thread is ``pending`` (retried after a crash).
        self.group_commit = group_commit
        if read_only and not (self.out / INDEX_DIR / "archive.sqlite").is_file():
            raise StoreError(f"{self.out}: no archive here (no {INDEX_DIR}/archive.sqlite)")
        # The only code that writes into the archive (``disk``: its file operations).
        self.writer = ArchiveWriter(self, disk)
        if not read_only:
            self.writer.make_folders()
        self._clock = clock
        self.read_only = read_only
        # True (sync --full / --force): stored files are also checked against their hashes.
        self.deep_check = False
        self.index = Index(self.out / INDEX_DIR / "archive.sqlite", read_only=read_only)
        self.registry = Registry(
            self.out / INDEX_DIR / "answer_variants_log.jsonl",
            self.index,
            clock=clock,
            repair=not read_only,
        )
        # Findings recorded once per fact (written by the writer only).
        self.alerts = AlertBook(self.index)

    def reload_registry(self) -> None:
        """Read the variant registry again (the run's writer process appended to it)."""
        self.registry = Registry(self.registry.path, self.index, clock=self._clock, repair=False)

    def close(self) -> None:
        """Mark group-committed threads done, then close the index connection."""
        self.flush_done()
        self.index.close()

    @property
    def unsynced(self) -> int:
        """Threads written but not yet marked done (group commit)."""
        return self.writer.unsynced

    def flush_done(self) -> int:
        """Group commit: make every written file durable, then mark those threads done."""
        return self.writer.flush_done()

    def now(self) -> str:
        """The archive clock's current time (UTC text)."""
        return str(self._clock())

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- paths -----------------------------------------------------------------------------

    @property
    def logs_dir(self) -> Path:
        """``index/logs``: one JSON-lines file per command run."""
        return self.out / INDEX_DIR / "logs"

    def thread_rel_path(self, account: str, dir_name: str) -> str:
        """``<account>/<mode>/<folder>`` relative to ``out``, every part sanitized."""
        parts = dir_name.split("/")
        if len(parts) != 2:
            raise StoreError(f"thread folder name {dir_name!r} is not <mode>/<folder>")
        safe = [safe_component(account, fallback="default")]
        safe += [safe_component(p, max_len=120) for p in parts]
        return "/".join(safe)

    def folder(self, rel: str) -> Path:
        """The absolute folder of a relative thread path, confined to ``out``."""
        return safe_join(self.out, *rel.split("/"))

    def claim_path(self, uuid: str, rel: str) -> str:
        """``rel``, or a uuid-qualified variant when another thread already owns ``rel``."""
        owner = self.index.path_owner(rel)
        if owner is None or owner == uuid:
            return rel
        return f"{rel}~{safe_component(uuid, max_len=60)}"

    # -- index passthrough -----------------------------------------------------------------

    def get(self, uuid: str) -> ThreadRow | None:
        """The index row of a thread."""
        return self.index.get(uuid)

    def iter_threads(self, status: str | None = None, after: str = "") -> Iterator[ThreadRow]:
        """Every thread row of the index (of one status) after uuid ``after``, in uuid order."""
        return self.index.iter_threads(status, after)

    def begin_run(self, command: str) -> int:
        """Record the start of a command run (through the writer); return its id."""
        return int(self.writer.apply(RunStart(command)))

    def finish_run(self, run_id: int, summary: Mapping[str, Any]) -> None:
        """Record the end of a run and its summary (through the writer)."""
        self.writer.apply(RunFinish(run_id, summary))

    def last_run(self) -> RunRow | None:
        """The newest run, if any."""
        runs = self.index.runs(1)
        return runs[0] if runs else None

    def stored_state(self, thread_uuid: str) -> decisions.StoredState | None:
        """What the incremental planner needs to know of a thread."""
        row = self.index.get(thread_uuid)
        if row is None:
            return None
        complete = bool((row.completeness or {}).get("complete", False))
        # Issue 8: a thread whose asset versions failed is archived but retried next run.
        complete = complete and (row.completeness or {}).get("assets_complete", True) is not False
        if row.status == "done" and self.files_problem(row, deep=self.deep_check) is not None:
            complete = False  # files missing or changed (or the folder went away): refetch
        return decisions.StoredState(
            status=row.status, last_updated=row.last_updated, complete=complete
        )

    def files_problem(self, row: ThreadRow, *, deep: bool = False) -> str | None:
        """Why a done thread's stored files are not as its last commit wrote them (or None).

        Sizes are compared always (one ``stat`` per file), SHA-256 hashes with ``deep``.
        Rows written before sizes were recorded only need their raw files and thread.json.
        """
        if not row.path:
            return "no folder recorded"
        try:
            folder = self.folder(row.path)
        except StoreError as exc:
            return str(exc)
        if not folder.is_dir():
            return "folder missing"
        recorded = row.files
        if not isinstance(recorded, Mapping) or not recorded:
            recorded = {RAW_ENTRIES: None, THREAD_JSON: None}
        base = os.fspath(folder)  # plain strings: one stat per file, no Path objects
        for rel, expected in sorted(recorded.items()):
            path = f"{base}/{rel}"
            try:
                size = os.stat(path).st_size  # noqa: PTH116 (a Path per file costs more)
            except OSError:
                return f"{rel} missing"
            if not isinstance(expected, list | tuple) or len(expected) != 2:
                if size == 0:
                    return f"{rel} empty"
                continue
            if size != expected[0]:
                return f"{rel} has {size} bytes, {expected[0]} were written"
            if deep:
                try:
                    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                except OSError:
                    return f"{rel} unreadable"
                if digest != expected[1]:
                    return f"{rel} changed since it was written"
        return stored_assets_problem(folder, deep=deep)

    def confirm_not_found(self, uuid: str, error: str, run_id: int, immediate: bool) -> bool:
        """Make a 404 terminal (``not_found``) when confirmed; False: record a failure instead
        (see :class:`~pplx_archiver.core.archive.writes.NotFound`)."""
        return bool(self.writer.apply(NotFound(uuid, error, run_id, immediate)))

    def forget(self, uuid: str) -> bool:
        """Drop a thread from the index (its folder and files stay); False if unknown."""
        return bool(self.writer.apply(Forget(uuid)))

    def kept_record(self, thread_uuid: str) -> dict[str, Any]:
        """Fields the render must carry over into ``thread.json`` (``remote_deleted``)."""
        row = self.index.get(thread_uuid)
        # A tombstoned thread fetched again answered: it is live, its tombstone not kept.
        if row is not None and row.remote_deleted and row.status not in TERMINAL_STATUSES:
            return {"remote_deleted": row.remote_deleted}
        return {}

    def mode_memo(self, key: str) -> decisions.ModeMemo | None:
        """What a run with ``--mode`` last found of a thread of another mode, if anything."""
        return self.index.mode_memo(key)

    def remember_modes(self, memos: Sequence[tuple[str, decisions.ModeMemo]], run_id: int) -> int:
        """Record threads a run with ``--mode`` found of another mode (through the writer)."""
        return self.writer.apply(ModeMemos(tuple(memos), run_id))

    # -- commit ----------------------------------------------------------------------------

    def commit(self, plan: ThreadCommit) -> Mapping[str, Any]:
        """Apply a fetched thread's plan through the writer; return the log fields."""
        row, key = plan.listing, plan.result.thread_uuid
        if row is not None and row.thread_id != key and self.index.get(key) is None:
            self.writer.apply(Rekey(row.thread_id, key))  # filed under its slug by old releases
        return self.writer.apply(plan).as_fields()

    def commit_online(self, plan: ThreadCommit) -> Mapping[str, Any]:
        """Commit a thread a run fetched, then register its answer variants (source
        ``online``): both before a group commit can mark it done, for a thread done without
        its records would never get them (the next run skips it). The one order of the run's
        own writer and of the writer process."""
        fields = self.commit(plan)
        if plan.result.variants:
            self.register_variants(plan.result.variants, "online", plan.run_id)
        return fields

    def commit_then(self, plan: ThreadCommit, then: Callable[[Mapping[str, Any]], None]) -> None:
        """:meth:`commit_online` here and now, then ``then`` with its fields."""
        then(self.commit_online(plan))

    def can_post(self) -> bool:
        """False: this store writes in the calling thread (only a writer process posts)."""
        return False

    # -- other states ----------------------------------------------------------------------

    def mark_failed(
        self,
        uuid: str,
        error: str,
        error_path: str | None = None,
        *,
        account: str = "default",
        title: str | None = None,
        run_id: int | None = None,
    ) -> None:
        """Record a failed thread (attempts + 1); the next run retries it."""
        self.writer.apply(ThreadFailed(uuid, error, error_path, account, title, run_id))

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None:
        """The scheduler's name for :meth:`mark_failed`."""
        self.mark_failed(thread_uuid, error, error_path, run_id=run_id)

    def mark_terminal(
        self, uuid: str, state: str, *, account: str = "default", run_id: int | None = None
    ) -> None:
        """Record that the server reports the thread deleted or expired (never retried)."""
        self.writer.apply(ThreadTerminal(uuid, state, account, run_id))

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None:
        """The scheduler's name for :meth:`mark_terminal`."""
        self.mark_terminal(thread_uuid, state, run_id=run_id)

    def register_variants(
        self, records: Sequence[Mapping[str, Any]], source: str, run_id: int | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        """Register answer-variant records (through the writer); return the new or changed."""
        return self.writer.apply(VariantRecords(tuple(records), source, run_id))

    def set_remote_deleted(self, uuid: str, timestamp: str) -> bool:
        """Write ``remote_deleted`` into the thread's ``thread.json`` and index, once.

        Returns False when it was already recorded (the first timestamp is kept). Files are
        never moved or removed.
        """
        return self.writer.remote_deleted(uuid, timestamp)

    def tombstone(self, uuid: str, state: str, timestamp: str) -> bool:
        """Apply a :class:`Tombstone`: ``remote_deleted`` once, then the terminal state."""
        return self.writer.apply(Tombstone(uuid, state, timestamp))
