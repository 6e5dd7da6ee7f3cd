"""The archive on disk: thread folders, their raw and derived files, the index and registry.

Layout (relative to ``out``)::

    <account>/<mode>/<YYYY-MM-DD>_<slug>_<uuid8>/   raw_entries.json, raw_blocks.json,
                                                    thread.json, conversation.md, turns/…,
                                                    sources.json, sources.md, report.md, assets/
    index/archive.sqlite   index/answer_variants_log.jsonl   index/logs/

:meth:`Archive.commit_thread` applies one rendered thread: raw files first, then derived
files, each written atomically and only when its bytes changed; derived files the new render
no longer produces are removed (raw files and ``assets/`` never are); a thread whose folder
name changed (mode or title) is moved with one ``os.rename`` first. The thread is marked done
in the index, in one transaction, only after every file is in place; when an already-done
thread is about to change on disk it is first set back to ``pending``, so a crash at any
instant never leaves a thread marked done whose files are missing or half-updated.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core import plan as planning
from pplx_archiver.core.layout import safe_component
from pplx_archiver.core.model import ListingRow, RenderResult, SpaceRef
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.fsutil import (
    TEMP_PATTERN,
    fsync_dir,
    safe_join,
    same_bytes,
    sync_filesystem,
    write_atomic,
)
from pplx_archiver.shell.archive.index import Index, RunRow, ThreadRow
from pplx_archiver.shell.archive.registry import Registry, utc_now
from pplx_archiver.shell.archive.search import Hook, meta_of, thread_hook

RAW_ENTRIES = "raw_entries.json"
RAW_BLOCKS = "raw_blocks.json"
RAW_FILES = (RAW_ENTRIES, RAW_BLOCKS)
THREAD_JSON = "thread.json"
ASSETS_DIR = "assets"
INDEX_DIR = "index"
# Top-level derived files a render may produce; anything else at the top is left alone.
DERIVED_TOP = frozenset(
    {"conversation.md", "sources.json", "sources.md", "thread.json", "report.md"}
)
_TURN_FILE = re.compile(r"^turn_\d{4,}\.md$")


@dataclasses.dataclass(frozen=True, slots=True)
class CommitOutcome:
    """What one commit did: the folder (relative to ``out``), files written/unchanged/removed."""

    path: str
    written: int
    unchanged: int
    moved_from: str | None = None
    removed: int = 0

    def as_fields(self) -> dict[str, Any]:
        """Log fields for ``THREAD_ARCHIVED``."""
        return dataclasses.asdict(self)


def dump_record(record: Mapping[str, Any]) -> bytes:
    """``thread.json`` bytes of a record, as the render core serializes it."""
    return orjson.dumps(dict(record), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def listing_to_json(row: ListingRow | None) -> dict[str, Any] | None:
    """A listing row as a JSON-able dict (stored in the index for offline re-render)."""
    if row is None:
        return None
    return dataclasses.asdict(row)


def listing_from_json(data: Mapping[str, Any] | None) -> ListingRow | None:
    """The inverse of :func:`listing_to_json`; unknown keys are ignored."""
    if not data:
        return None
    fields = {f.name for f in dataclasses.fields(ListingRow)}
    values = {k: v for k, v in data.items() if k in fields}
    space = values.get("space")
    if isinstance(space, Mapping):
        values["space"] = SpaceRef(
            uuid=str(space.get("uuid", "")),
            slug=str(space.get("slug", "")),
            title=str(space.get("title", "")),
        )
    if "thread_id" not in values:
        return None
    return ListingRow(**values)


def derived_files_on_disk(folder: Path) -> set[str]:
    """Relative paths of the derived files present in a thread folder."""
    found: set[str] = set()
    if not folder.is_dir():
        return found
    for child in folder.iterdir():
        if child.is_file() and child.name in DERIVED_TOP:
            found.add(child.name)
    turns = folder / "turns"
    if turns.is_dir():
        for child in turns.iterdir():
            if child.is_file() and _TURN_FILE.match(child.name):
                found.add(f"turns/{child.name}")
    return found


def recorded_file_keys(rel: str) -> bool:
    """True for the files whose size and hash the index records: raw, derived, manifest."""
    if rel in RAW_FILES or rel in DERIVED_TOP or rel == f"{ASSETS_DIR}/manifest.json":
        return True
    parts = rel.split("/")
    return len(parts) == 2 and parts[0] == "turns" and bool(_TURN_FILE.match(parts[1]))


def check_file_key(rel: str) -> None:
    """Refuse file keys that are raw files, assets or not plain relative paths."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise StoreError(f"refusing file name {rel!r}")
    if rel in RAW_FILES:
        raise StoreError(f"{rel}: raw files are written by the store, not by a render")


class Archive:
    """One archive root: folders, the SQLite index and the answer-variant registry."""

    def __init__(
        self,
        out_dir: Path,
        *,
        clock: Any = utc_now,
        read_only: bool = False,
        group_commit: bool = False,
    ) -> None:
        self.out = Path(out_dir)
        # Group commit: files are written without a per-file fsync and a thread is marked done
        # only by flush_done(), after one syncfs of the archive's file system has made every
        # written file durable. Until then the thread is ``pending`` (retried after a crash).
        self.group_commit = group_commit
        self._unsynced: list[tuple[str, str, dict[str, Any]]] = []
        self._search_hooks: dict[str, Hook] = {}  # uuid -> search index update at "done"
        if read_only and not (self.out / INDEX_DIR / "archive.sqlite").is_file():
            raise StoreError(f"{self.out}: no archive here (no {INDEX_DIR}/archive.sqlite)")
        try:
            if not read_only:
                (self.out / INDEX_DIR / "logs").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.out}: cannot create the archive: {exc}") from exc
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

    def close(self) -> None:
        """Mark group-committed threads done, then close the index connection."""
        self.flush_done()
        self.index.close()

    @property
    def unsynced(self) -> int:
        """Threads written but not yet marked done (group commit)."""
        return len(self._unsynced)

    def flush_done(self) -> int:
        """Group commit: make every written file durable, then mark those threads done."""
        if not self._unsynced:
            return 0
        batch, self._unsynced = self._unsynced, []
        sync_filesystem(self.out)
        for uuid, account, fields in batch:
            self.index.mark_done(uuid, account, fields, hook=self._search_hooks.pop(uuid, None))
        return len(batch)

    def _sync_dir(self, path: Path) -> None:
        if not self.group_commit:
            fsync_dir(path)

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

    def _claim_path(self, uuid: str, rel: str) -> str:
        """``rel``, or a uuid-qualified variant when another thread already owns ``rel``."""
        owner = self.index.path_owner(rel)
        if owner is None or owner == uuid:
            return rel
        return f"{rel}~{safe_component(uuid, max_len=60)}"

    # -- index passthrough -----------------------------------------------------------------

    def get(self, uuid: str) -> ThreadRow | None:
        """The index row of a thread."""
        return self.index.get(uuid)

    def iter_threads(self, status: str | None = None) -> Iterator[ThreadRow]:
        """Every thread row of the index (optionally of one status)."""
        return self.index.iter_threads(status)

    def begin_run(self, command: str) -> int:
        """Record the start of a command run; return its id."""
        return self.index.begin_run(command, self._clock())

    def finish_run(self, run_id: int, summary: Mapping[str, Any]) -> None:
        """Record the end of a run and its summary."""
        self.index.finish_run(run_id, self._clock(), summary)

    def last_run(self) -> RunRow | None:
        """The newest run, if any."""
        runs = self.index.runs(1)
        return runs[0] if runs else None

    def stored_state(self, thread_uuid: str) -> planning.StoredState | None:
        """What the incremental planner needs to know of a thread."""
        row = self.index.get(thread_uuid)
        if row is None:
            return None
        complete = bool((row.completeness or {}).get("complete", False))
        # Issue 8: a thread whose asset versions failed is archived but retried next run.
        complete = complete and (row.completeness or {}).get("assets_complete", True) is not False
        if row.status == "done" and self.files_problem(row, deep=self.deep_check) is not None:
            complete = False  # files missing or changed (or the folder went away): refetch
        return planning.StoredState(
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
        for rel, expected in sorted(recorded.items()):
            path = folder.joinpath(*str(rel).split("/"))
            try:
                size = path.stat().st_size
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
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError:
                    return f"{rel} unreadable"
                if digest != expected[1]:
                    return f"{rel} changed since it was written"
        return None

    def update_files(
        self, uuid: str, written: Mapping[str, bytes], removed: Iterable[str] = ()
    ) -> None:
        """Record new sizes/hashes of files rewritten outside a commit (re-render)."""
        row = self.index.get(uuid)
        if row is None or not isinstance(row.files, Mapping):
            return
        files = dict(row.files)
        for rel, data in written.items():
            if recorded_file_keys(rel):
                files[rel] = [len(data), hashlib.sha256(data).hexdigest()]
        for rel in removed:
            files.pop(rel, None)
        self.index.upsert(uuid, row.account, files=files)

    def first_invalid_thread(self) -> ThreadRow | None:
        """The first done thread whose stored files are missing or changed in size."""
        for row in self.index.iter_threads("done"):
            if self.files_problem(row) is not None:
                return row
        return None

    def confirm_not_found(self, uuid: str, error: str, run_id: int, immediate: bool) -> bool:
        """Make a 404 terminal (``not_found``) when confirmed; False: record a failure instead.

        Confirmed means the previous attempt also answered 404, or ``immediate`` (an id given
        to ``export``) for a thread never archived. Freshly created threads answer 404 for a
        while, so one 404 of a listed thread is only a failure, retried by the next run.
        """
        previous = self.index.get(uuid)
        was_404 = (
            previous is not None
            and previous.status == "failed"
            and (previous.error or "").startswith("NotFoundError")
        )
        never_archived = previous is None or previous.status != "done"
        if not (was_404 or (immediate and never_archived)):
            return False
        owner = previous.account if previous else "default"
        self.index.upsert(
            uuid, owner, status="not_found", error=f"NotFoundError: {error}", updated_in_run=run_id
        )
        self._log_terminal(uuid, "not_found", owner, previous.title if previous else None)
        return True

    def _log_terminal(self, uuid: str, state: str, account: str, title: str | None) -> None:
        """Keep terminal states beside the index, so ``reindex`` can restore them."""
        from pplx_archiver.shell.care.reindex import append_terminal

        append_terminal(self.out, uuid, state, account=account, title=title, at=self._clock())

    def forget(self, uuid: str) -> bool:
        """Drop a thread from the index (its folder and files stay); False if unknown."""
        known = self.index.forget(uuid)
        if known:
            self._log_terminal(uuid, "forgotten", "default", None)
        return known

    def kept_record(self, thread_uuid: str) -> dict[str, Any]:
        """Fields the render must carry over into ``thread.json`` (``remote_deleted``)."""
        row = self.index.get(thread_uuid)
        if row is not None and row.remote_deleted:
            return {"remote_deleted": row.remote_deleted}
        return {}

    # -- commit ----------------------------------------------------------------------------

    def commit_thread(
        self,
        account: str,
        result: RenderResult,
        raw_entries: bytes,
        raw_blocks: bytes | None,
        listing_updated_at: str | None,
        extra_files: Mapping[str, bytes] | None = None,
        run_id: int | None = None,
        *,
        listing: ListingRow | None = None,
        staged_files: Mapping[str, Path] | None = None,
        assets_complete: bool = True,
    ) -> CommitOutcome:
        """Write one thread's files atomically and mark it done last (see module docstring).

        ``staged_files`` (issue 8): complete downloaded asset files (``assets/…`` → a file on
        the archive's file system) moved into the thread folder with ``os.replace`` after the
        raw files and before the thread is marked done. ``assets_complete=False`` is recorded
        in the index's completeness so the next run retries the thread.
        """
        uuid = result.thread_uuid
        extra = dict(extra_files or {})
        files = dict(result.files)
        staged = dict(staged_files or {})
        for rel in (*files, *extra, *staged):
            check_file_key(rel)
        for rel in staged:
            if not rel.startswith(ASSETS_DIR + "/"):
                raise StoreError(f"refusing staged file {rel!r}: only assets/ files are staged")
        previous = self.index.get(uuid)
        kept = self._kept_remote_deleted(previous)
        if kept and THREAD_JSON in files:
            files[THREAD_JSON] = _with_remote_deleted(files[THREAD_JSON], kept)
        rel = self._claim_path(uuid, self.thread_rel_path(account, result.dir_name))
        target = self.folder(rel)
        old_rel = previous.path if previous and previous.path else None
        old_folder = self.folder(old_rel) if old_rel else None
        moving = old_rel is not None and old_rel != rel and old_folder is not None
        moving = moving and old_folder is not None and old_folder.is_dir()

        wanted: dict[str, bytes] = {RAW_ENTRIES: raw_entries}
        if raw_blocks is not None:
            wanted[RAW_BLOCKS] = raw_blocks
        wanted.update(extra)
        wanted.update(files)
        stale = derived_files_on_disk(old_folder if moving and old_folder else target) - set(files)
        source = old_folder if moving and old_folder else target
        changed = [k for k in wanted if not same_bytes(safe_join(source, *k.split("/")), wanted[k])]

        changed += list(staged)  # staged asset files always land (issue 8)
        if previous is not None and previous.status == "done" and (moving or changed or stale):
            self.index.upsert(uuid, account, status="pending")
        moved_from: str | None = None
        if moving and old_folder is not None:
            if target.exists():
                raise StoreError(
                    f"{target}: cannot move thread {uuid} here from {old_rel}: folder exists"
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                old_folder.rename(target)
            except OSError as exc:
                raise StoreError(f"{old_folder}: cannot move to {target}: {exc}") from exc
            self._sync_dir(target.parent)
            self._sync_dir(old_folder.parent)
            _remove_empty_parents(old_folder.parent, stop=self.out)
            moved_from = old_rel
        target.mkdir(parents=True, exist_ok=True)
        _remove_temp_leftovers(target)

        written = 0
        # Raw files first, then extra files (assets), then derived files; thread.json last.
        order = [k for k in wanted if k in RAW_FILES]
        order += [k for k in wanted if k not in RAW_FILES and k not in files]
        order += sorted((k for k in files if k != THREAD_JSON), key=str)
        order += [THREAD_JSON] if THREAD_JSON in files else []
        for key in order:
            path = safe_join(target, *key.split("/"))
            if write_atomic(path, wanted[key], durable=not self.group_commit):
                written += 1
        # Issue 8: staged asset downloads are moved in (complete files only) before "done".
        for key in sorted(staged):
            dest = safe_join(target, *key.split("/"))
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                Path(staged[key]).replace(dest)
            except OSError as exc:
                raise StoreError(f"{dest}: cannot move the downloaded asset in: {exc}") from exc
            written += 1
        if staged:
            for parent in sorted({safe_join(target, *k.split("/")).parent for k in staged}):
                self._sync_dir(parent)
        removed = 0
        for key in sorted(stale):
            path = safe_join(target, *key.split("/"))
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                pass
        if removed:
            self._sync_dir(target)
            if (target / "turns").is_dir():
                self._sync_dir(target / "turns")

        recorded_files = {
            key: [len(data), hashlib.sha256(data).hexdigest()]
            for key, data in sorted(wanted.items())
            if recorded_file_keys(key)
        }
        record = result.record
        completeness = record.get("completeness")
        if not assets_complete and isinstance(completeness, Mapping):  # issue 8
            completeness = {**completeness, "assets_complete": False}
        interruptions = record.get("interruptions")
        fields: dict[str, Any] = {
            "mode": result.mode,
            "title": result.title,
            "path": rel,
            "last_updated": listing_updated_at or _str_or_none(record.get("last_updated")),
            "created": _str_or_none(record.get("created")),
            "updated_in_run": run_id,
            "completeness": completeness if isinstance(completeness, Mapping) else None,
            "interruptions": interruptions if isinstance(interruptions, list) else None,
            "variant_count": len(result.variants),
            "degraded_turns": int((record.get("counts") or {}).get("degraded_turns") or 0),
            "listing": listing_to_json(listing)
            if listing is not None
            else (previous.listing if previous else None),
            "archived_at": self._clock(),
            "files": recorded_files,
        }
        if self.group_commit and (written or removed or moved_from):
            # Claim the folder now (pending); flush_done() marks it done after one syncfs.
            self.index.upsert(uuid, account, **{**fields, "status": "pending"})
            self._unsynced.append((uuid, account, fields))
            self._search_hooks[uuid] = self._search_hook(account, rel, result)
        else:
            self.index.mark_done(
                uuid, account, fields, hook=self._search_hook(account, rel, result)
            )
        return CommitOutcome(
            path=rel,
            written=written,
            unchanged=len(wanted) + len(staged) - written,
            moved_from=moved_from,
            removed=removed,
        )

    @staticmethod
    def _search_hook(account: str, rel: str, result: RenderResult) -> Hook:
        """Issue 17: the search index update run in the transaction marking the thread done."""
        meta = meta_of(result.thread_uuid, account, rel, result.record, result.mode, result.title)
        return thread_hook(meta, result.prose)

    def commit(self, fetched: Any, run_id: int, account: str) -> Mapping[str, Any]:
        """Commit a fetched thread (the scheduler's ``FetchedThread``); return log fields."""
        row: ListingRow = fetched.row
        key = fetched.result.thread_uuid
        if row.thread_id != key and self.index.get(key) is None:
            self.index.rekey(row.thread_id, key)  # filed under its text slug by older releases
        outcome = self.commit_thread(
            account,
            fetched.result,
            fetched.plain.raw_file,
            fetched.blocks.raw_file if fetched.blocks is not None else None,
            row.updated_at,
            extra_files=getattr(fetched, "extra_files", None),  # issue 8: assets/manifest.json
            run_id=run_id,
            listing=row,
            staged_files=getattr(fetched, "staged_files", None),
            assets_complete=getattr(fetched, "assets_complete", True),
        )
        return outcome.as_fields()

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
        fields: dict[str, Any] = {"updated_in_run": run_id, "failed_at": self._clock()}
        if title is not None:
            fields["title"] = title
        previous = self.index.get(uuid)
        self.index.mark_failed(
            uuid, previous.account if previous else account, error, error_path, **fields
        )

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None:
        """The scheduler's name for :meth:`mark_failed`."""
        self.mark_failed(thread_uuid, error, error_path, run_id=run_id)

    def mark_terminal(
        self, uuid: str, state: str, *, account: str = "default", run_id: int | None = None
    ) -> None:
        """Record that the server reports the thread deleted or expired (never retried)."""
        if state not in ("deleted", "expired"):
            raise StoreError(f"terminal state must be deleted or expired, got {state!r}")
        previous = self.index.get(uuid)
        owner = previous.account if previous else account
        self.index.upsert(uuid, owner, status=state, updated_in_run=run_id)
        self._log_terminal(uuid, state, owner, previous.title if previous else None)

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None:
        """The scheduler's name for :meth:`mark_terminal`."""
        self.mark_terminal(thread_uuid, state, run_id=run_id)

    def register_variants(
        self, records: Any, source: str, run_id: int | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        """Register answer-variant records; return the new or changed ones."""
        return self.registry.register(records, source, run_id=run_id)

    def set_remote_deleted(self, uuid: str, timestamp: str) -> bool:
        """Write ``remote_deleted`` into the thread's ``thread.json`` and index, once.

        Returns False when it was already recorded (the first timestamp is kept). Files are
        never moved or removed.
        """
        row = self.index.get(uuid)
        if row is None:
            raise StoreError(f"thread {uuid} is not in the archive index")
        if row.remote_deleted:
            return False
        if row.path:
            path = safe_join(self.folder(row.path), THREAD_JSON)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = b""
            if data:
                record = _load_record(data, path)
                if record.get("remote_deleted"):
                    timestamp = str(record["remote_deleted"])
                else:
                    new = _with_remote_deleted(data, timestamp)
                    write_atomic(path, new)
                    self.update_files(uuid, {THREAD_JSON: new})
        self.index.upsert(uuid, row.account, remote_deleted=timestamp)
        return True

    def _kept_remote_deleted(self, previous: ThreadRow | None) -> str | None:
        return previous.remote_deleted if previous is not None else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _load_record(data: bytes, path: Path) -> dict[str, Any]:
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise StoreError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(record, dict):
        raise StoreError(f"{path}: expected a JSON object")
    return record


def _with_remote_deleted(data: bytes, timestamp: str) -> bytes:
    """``thread.json`` bytes with ``remote_deleted`` set unless it already is."""
    record = _load_record(data, Path(THREAD_JSON))
    if record.get("remote_deleted"):
        return data
    record["remote_deleted"] = timestamp
    return dump_record(record)


def _remove_temp_leftovers(folder: Path) -> None:
    """Delete temp files a killed process left mid-write in a thread folder being committed.

    The writer is the archive's only one and finishes its own temp files before it returns,
    so any temp file found here belongs to an interrupted earlier run.
    """
    for path in folder.rglob(".*.tmp-*"):
        if TEMP_PATTERN.match(path.name) and path.is_file():
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def _remove_empty_parents(folder: Path, *, stop: Path) -> None:
    """Remove ``folder`` and its parents while empty, never ``stop`` or above."""
    current = folder
    while current != stop and stop in current.parents:
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent
