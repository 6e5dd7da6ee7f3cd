"""The archive's one writer: every change to the archive is a plan it applies.

``ArchiveWriter.apply(plan)`` takes a plan of :mod:`pplx_archiver.core.archive.writes` (thread
files, index rows: ``writer_rows.py``, site files: ``writer_files.py``, a search rebuild) and
is the only code that writes into the archive (an architecture test enforces it). A
``--dry-run`` computes the plan and never calls ``apply``. :meth:`ArchiveWriter.open_log`
opens a run's log file.

A thread commit (:class:`ThreadCommit`): raw files first, then extra files (assets), then
derived files, thread.json last; each written atomically and only when its bytes changed;
derived files the new render no longer produces are removed (raw files and ``assets/`` never
are); a thread whose folder name changed (mode or title) is moved with one ``rename`` first.
The thread is marked done in the index, in one transaction with its search rows, only after
every file is in place; an already-done thread about to change on disk is first set back to
``pending``, so a crash at any instant never leaves a thread marked done whose files are
missing or half-updated. With group commit files are written without a per-file fsync and the
thread is marked done by :meth:`ArchiveWriter.flush_done` after one sync of the file system.

The file operations go through a :class:`Disk` (a seam: tests inject one that fails or
records the order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, overload

from pplx_archiver.core.archive.writes import (
    AssetPlacement,
    DerivedUpdate,
    Findings,
    IndexRebuild,
    ModeMemos,
    Plan,
    RootFiles,
    RowPlan,
    RunLog,
    SearchRebuild,
    SiteFiles,
    StagedFile,
    ThreadCommit,
    ThreadTerminal,
    Tombstone,
    VariantRecords,
)
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.commit import (
    CommitOutcome,
    PreparedCommit,
    commit_findings,
    file_records,
    index_fields,
    prepare,
    returned_from,
)
from pplx_archiver.shell.archive.disk import Disk
from pplx_archiver.shell.archive.files import (
    ASSETS_DIR,
    INDEX_DIR,
    THREAD_JSON,
    check_relative,
    load_record,
    with_remote_deleted,
)
from pplx_archiver.shell.archive.fsutil import TEMP_PATTERN, Confined, safe_join
from pplx_archiver.shell.archive.history import VERSIONS, HistoryStep
from pplx_archiver.shell.archive.search import Hook, meta_of, thread_hook
from pplx_archiver.shell.archive.search_rebuild import RebuildSummary, rebuild
from pplx_archiver.shell.archive.terminal_log import append_terminal
from pplx_archiver.shell.archive.writer_files import open_log, write_site
from pplx_archiver.shell.archive.writer_rebuild import rebuild_index
from pplx_archiver.shell.archive.writer_rows import apply_row_plan, set_assets_complete

if TYPE_CHECKING:
    from pplx_archiver.shell.archive.store import Archive

__all__ = ["ArchiveWriter", "CommitOutcome", "Disk", "PreparedCommit"]

MANIFEST = f"{ASSETS_DIR}/manifest.json"


class ArchiveWriter:
    """Applies plans to one archive (see the module docstring)."""

    def __init__(self, archive: Archive, disk: Disk | None = None) -> None:
        self.archive = archive
        self.disk = disk or Disk()
        self._unsynced: list[tuple[str, str, dict[str, Any]]] = []
        self._search_hooks: dict[str, Hook] = {}  # uuid -> search index update at "done"

    def make_folders(self) -> None:
        """The archive's ``index/logs`` folder (StoreError when it cannot be made)."""
        try:
            self.disk.make_dir(self.archive.out / INDEX_DIR / "logs")
        except OSError as exc:
            raise StoreError(f"{self.archive.out}: cannot create the archive: {exc}") from exc

    @property
    def durable(self) -> bool:
        """Each file synced as written (False under group commit)."""
        return not self.archive.group_commit

    # -- the one door ------------------------------------------------------------------------

    @overload
    def apply(self, plan: ThreadCommit) -> CommitOutcome: ...
    @overload
    def apply(self, plan: DerivedUpdate | SiteFiles) -> tuple[int, int]: ...
    @overload
    def apply(self, plan: AssetPlacement | RootFiles | ModeMemos) -> int: ...
    @overload
    def apply(self, plan: Tombstone) -> bool: ...
    @overload
    def apply(self, plan: VariantRecords) -> list[tuple[dict[str, Any], str]]: ...
    @overload
    def apply(self, plan: Findings) -> list[tuple[str, str, Mapping[str, Any]]]: ...
    @overload
    def apply(self, plan: SearchRebuild) -> RebuildSummary: ...
    @overload
    def apply(self, plan: RowPlan) -> Any: ...  # see writer_rows.apply_row_plan

    def apply(self, plan: Plan) -> Any:
        """Apply one plan and return what it did (a ``ThreadCommit`` its :class:`CommitOutcome`,
        a ``DerivedUpdate`` or ``SiteFiles`` the files written and removed, …: the overloads)."""
        if isinstance(plan, RowPlan):  # index rows only (``writer_rows``)
            return apply_row_plan(self.archive, plan)
        if isinstance(plan, SearchRebuild):  # the sender holds the writer lock
            return rebuild(self.archive, progress=plan.progress)
        if isinstance(plan, SiteFiles):  # not synced one by one: built again from the archive
            return write_site(self.disk, plan)
        if isinstance(plan, ThreadCommit):
            return self._commit(self.prepare(plan))
        if isinstance(plan, DerivedUpdate):
            return self._derived(plan)
        if isinstance(plan, AssetPlacement):
            return self._placement(plan)
        if isinstance(plan, RootFiles):
            return self._root_files(plan)
        if isinstance(plan, Tombstone):
            return self._tombstone(plan)
        return self.archive.registry.register(plan.records, plan.source, run_id=plan.run_id)

    # -- thread commits ----------------------------------------------------------------------

    def prepare(self, plan: ThreadCommit) -> PreparedCommit:
        """What applying ``plan`` will do (reads the index and the disk, writes nothing)."""
        return prepare(self.archive, plan)

    def _commit(self, prep: PreparedCommit) -> CommitOutcome:
        plan, target, disk = prep.plan, prep.target, self.disk
        uuid = plan.thread_uuid
        previous = prep.previous
        touching = bool(prep.moving_from or prep.changed or prep.stale)
        if previous is not None and previous.status == "done" and touching:
            self.archive.index.upsert(uuid, plan.account, status="pending")
        if prep.moving_from is not None:
            self._move_folder(self.archive.folder(prep.moving_from), target)
        # A folder made now holds nothing: no leftovers to look for, no symlink to resolve.
        fresh = not disk.exists(target)
        disk.make_dir(target)
        if not fresh:
            self._remove_temp_leftovers(target)
        if prep.history is not None:  # the version being replaced is kept first
            self._write_history(target, prep.history)
        written = self._write_changed(prep, target, fresh)
        written += self._move_staged(target, plan.staged, fresh)
        removed = self._remove_stale(target, prep.stale)
        fields = index_fields(self.archive, prep)
        hook = self._search_hook(plan.account, prep.rel, plan)
        if self.archive.group_commit and (written or removed or prep.moving_from):
            # Claim the folder now (pending); flush_done() marks it done after one syncfs.
            self.archive.index.upsert(uuid, plan.account, **{**fields, "status": "pending"})
            self._unsynced.append((uuid, plan.account, fields))
            self._search_hooks[uuid] = hook
        else:
            self.archive.index.mark_done(uuid, plan.account, fields, hook=hook)
        if returned_from(previous) is not None:
            # A tombstoned thread archived again: its terminal line is closed for reindex.
            append_terminal(
                self.archive.out, uuid, "returned", account=plan.account, at=self.archive.now()
            )
        return CommitOutcome(
            path=prep.rel,
            written=written,
            unchanged=len(prep.wanted) + len(plan.staged) - written,
            moved_from=prep.moving_from,
            removed=removed,
            version=prep.history.version if prep.history is not None else None,
            findings=tuple(self.archive.alerts.record(commit_findings(prep), plan.run_id)),
        )

    def _write_history(self, target: Path, step: HistoryStep) -> None:
        """The replaced version's chunks, then the versions file (before the raw files)."""
        confined = Confined(target)
        made: set[Path] = set()
        for key in sorted(step.chunks):
            path = confined.key(key)
            if path.parent not in made:
                self.disk.make_dir(path.parent)
                made.add(path.parent)
            self.disk.write(path, step.chunks[key], durable=self.durable, compare=False)
        path = confined.key(VERSIONS)
        self.disk.make_dir(path.parent)
        self.disk.write(path, step.versions, durable=self.durable, compare=False)

    def _write_changed(self, prep: PreparedCommit, target: Path, fresh: bool) -> int:
        """Write the files :func:`prepare` found changed, in the plan's order (the unchanged
        ones are left alone: their mtime tells when their content last changed)."""
        confined, changed, made = Confined(target, fresh=fresh), set(prep.changed), {target}
        written = 0
        for key in prep.order:
            if key not in changed:
                continue
            path = confined.key(key)
            if path.parent not in made:
                self.disk.make_dir(path.parent)
                made.add(path.parent)
            data = prep.wanted[key]
            written += self.disk.write(path, data, durable=self.durable, compare=False)
        return written

    def _sync_dir(self, path: Path) -> None:
        if self.durable:
            self.disk.sync_dir(path)

    def _move_folder(self, old: Path, target: Path) -> None:
        self.disk.rename_dir(old, target)
        self._sync_dir(target.parent)
        self._sync_dir(old.parent)
        current = old.parent  # remove the emptied parents, never the archive root
        while current != self.archive.out and self.archive.out in current.parents:
            if not self.disk.remove_empty_dir(current):
                break
            current = current.parent

    def _move_staged(self, folder: Path, staged: Iterable[StagedFile], fresh: bool) -> int:
        """Move complete downloads in (before the thread is marked done); return how many."""
        moved = 0
        parents: set[Path] = set()
        confined = Confined(folder, fresh=fresh)  # each sub-folder resolved once at most
        for item in sorted(staged, key=lambda s: s.rel):
            dest = confined.key(item.rel)
            self.disk.move_in(Path(item.source), dest)
            parents.add(dest.parent)
            moved += 1
        for parent in sorted(parents):
            self._sync_dir(parent)
        return moved

    def _remove_stale(self, folder: Path, stale: Iterable[str]) -> int:
        removed = sum(self.disk.remove(safe_join(folder, *k.split("/"))) for k in stale)
        if removed:
            self._sync_dir(folder)
            if (folder / "turns").is_dir():
                self._sync_dir(folder / "turns")
        return removed

    def _remove_temp_leftovers(self, folder: Path) -> None:
        """Delete temp files a killed process left mid-write in a thread folder.

        The writer finishes its own temp files before it returns, so any temp file found
        here belongs to an interrupted earlier run.
        """
        for path in folder.rglob(".*.tmp-*"):
            if TEMP_PATTERN.match(path.name) and path.is_file():
                self.disk.remove(path)

    @staticmethod
    def _search_hook(account: str, rel: str, plan: ThreadCommit) -> Hook:
        """The search index update run in the transaction marking the thread done."""
        result = plan.result
        meta = meta_of(result.thread_uuid, account, rel, result.record, result.mode, result.title)
        return thread_hook(meta, result.prose)

    @property
    def unsynced(self) -> int:
        """Threads written but not yet marked done (group commit)."""
        return len(self._unsynced)

    def drop_unsynced(self) -> None:
        """Forget the threads awaiting their group commit (as a process dying would)."""
        self._unsynced.clear()
        self._search_hooks.clear()

    def flush_done(self) -> int:
        """Group commit: make every written file durable, then mark those threads done."""
        if not self._unsynced:
            return 0
        batch, self._unsynced = self._unsynced, []
        self.disk.sync_all(self.archive.out)
        # One index transaction for the whole batch, each thread's search rows in their own
        # savepoint: a crash before its commit leaves every thread of the batch pending.
        hooks, self._search_hooks = self._search_hooks, {}
        self.archive.index.mark_done_many(
            [(uuid, account, fields, hooks.get(uuid)) for uuid, account, fields in batch]
        )
        return len(batch)

    # -- other plans -------------------------------------------------------------------------

    def _record_files(
        self, uuid: str, written: Mapping[str, bytes], removed: Iterable[str] = ()
    ) -> None:
        """Record new sizes/hashes of files rewritten outside a commit."""
        row = self.archive.index.get(uuid)
        if row is None or not isinstance(row.files, Mapping):
            return
        files = dict(row.files)
        files.update(file_records(written))
        for rel in removed:
            files.pop(rel, None)
        self.archive.index.upsert(uuid, row.account, files=files)

    def _write_all(self, folder: Path, files: Mapping[str, bytes], keys: Iterable[str]) -> int:
        written = 0
        for rel in keys:
            check_relative(rel)
            written += self.disk.write(safe_join(folder, *rel.split("/")), files[rel])
        return written

    def _derived(self, plan: DerivedUpdate) -> tuple[int, int]:
        """A re-render: changed derived files (thread.json last), stale ones removed."""
        folder = self.archive.folder(plan.rel_path)
        order = sorted(k for k in plan.changed if k != THREAD_JSON)
        order += [THREAD_JSON] if THREAD_JSON in plan.changed else []
        written = self._write_all(folder, plan.changed, order)
        removed = self._remove_stale(folder, plan.stale)
        if written or removed:
            self._record_files(plan.thread_uuid, plan.changed, plan.stale)
        row = self.archive.index.get(plan.thread_uuid) if THREAD_JSON in plan.changed else None
        degraded = plan.degraded_turns
        if row is not None and degraded is not None and row.degraded_turns != degraded:
            self.archive.index.upsert(row.uuid, row.account, degraded_turns=degraded)
        return written, removed

    def _placement(self, plan: AssetPlacement) -> int:
        """Backfilled assets: downloads moved in, inline files, then the manifest."""
        folder = self.archive.folder(plan.rel_path)
        written = self._move_staged(folder, plan.staged, fresh=False)
        written += self._write_all(
            folder, plan.files, sorted(k for k in plan.files if k != MANIFEST)
        )
        written += self._write_all(folder, plan.files, [MANIFEST] if MANIFEST in plan.files else [])
        owner = self.archive.index.path_owner(plan.rel_path)
        if owner is not None:
            self._record_files(owner, plan.files)
        set_assets_complete(self.archive, plan.thread_uuid, plan.complete)
        return written

    def _root_files(self, plan: RootFiles) -> int:
        """Files under the archive root, in the plan's order."""
        return self._write_all(self.archive.out, plan.files, list(plan.files))

    @staticmethod
    def rebuild_index(out: Path, plan: IndexRebuild) -> int:
        """``reindex``'s plan, with no Archive open (its index may be damaged)."""
        return rebuild_index(out, plan)

    @staticmethod
    def open_log(plan: RunLog) -> IO[bytes]:
        """A run's log file, opened before the command opens the archive."""
        return open_log(plan)

    def _tombstone(self, plan: Tombstone) -> bool:
        """``remote_deleted`` into thread.json and the index (once), then the terminal state."""
        recorded = self.remote_deleted(plan.thread_uuid, plan.timestamp)
        apply_row_plan(self.archive, ThreadTerminal(plan.thread_uuid, plan.state))
        return recorded

    def remote_deleted(self, uuid: str, timestamp: str) -> bool:
        """Write ``remote_deleted`` once; False when it was already recorded (first kept)."""
        row = self.archive.index.get(uuid)
        if row is None:
            raise StoreError(f"thread {uuid} is not in the archive index")
        if row.remote_deleted:
            return False
        if row.path:
            path = safe_join(self.archive.folder(row.path), THREAD_JSON)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = b""
            if data:
                record = load_record(data, path)
                if record.get("remote_deleted"):
                    timestamp = str(record["remote_deleted"])
                else:
                    new = with_remote_deleted(data, timestamp)
                    self.disk.write(path, new)
                    self._record_files(uuid, {THREAD_JSON: new})
        self.archive.index.upsert(uuid, row.account, remote_deleted=timestamp)
        return True

    # -- staging -----------------------------------------------------------------------------

    def clear_staging(self, staging: Path) -> None:
        """Remove a run's staging folder (downloads the writer did not take)."""
        self.disk.remove_tree(staging)
        self.disk.remove_empty_dir(staging.parent)
