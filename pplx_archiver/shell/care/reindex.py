"""``pplx-export reindex``: rebuild ``index/archive.sqlite`` offline from the thread folders.

The index is derived data. Everything it records about a thread can be read back from the
thread's folder — ``thread.json`` (uuid, mode, title, times, completeness, interruptions,
``remote_deleted``), ``assets/manifest.json`` (whether every asset version is stored) and
the files themselves (sizes and SHA-256 hashes) — plus two append-only files beside the
index: the variant registry ``index/answer_variants_log.jsonl`` (the ``variants`` table)
and ``index/terminal_states.jsonl`` (threads the service reported deleted, expired or not
found, and ``forget`` lines). Every folder becomes a ``done`` row, orphans included (threads
deleted upstream meanwhile: ``sync-deleted`` then sees them again).

The walk is public so that other derived indexes can be rebuilt in the same pass:
:func:`walk_threads` yields one :class:`RebuiltThread` per folder and :func:`reindex` passes
each one to every hook given (``hooks=``) or registered with :func:`register_hook`.

Two passes over the folders keep memory flat: the first reads each ``thread.json`` for its
uuid and time only (of two folders of one thread the newer is kept), the second reads each
kept folder in full as the writer stores its row (the plan's rows are a stream).
Reindex computes an :class:`~pplx_archiver.core.archive.writes.IndexRebuild` and the archive's
writer applies it (``ArchiveWriter.rebuild_index``, no Archive open: the old index may be
damaged): the new index is written beside the old one and moved over it; the runs table
and the alerts of a readable old index are carried over (the alerts are facts found by
runs; a thread's earlier server versions stay in its folder's ``history/``, which the index
does not hold). The search index (tables ``search_*`` in the same
file) is then rebuilt from the raw files, as ``pplx-export search --rebuild`` does. A
damaged old index is kept as ``archive.sqlite.damaged-<UTC>``. Bad or duplicate registry
lines are dropped from the registry (the original is kept as
``answer_variants_log.jsonl.bak-<UTC>``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import structlog

from pplx_archiver.core.archive.writes import IndexRebuild, SearchRebuild
from pplx_archiver.core.thread.layout import safe_component
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.registry import Registry, read_lines, record_key, strip_meta
from pplx_archiver.shell.archive.search_rebuild import Progress
from pplx_archiver.shell.archive.store import (
    DERIVED_TOP,
    INDEX_DIR,
    RAW_FILES,
    THREAD_JSON,
    Archive,
    listing_to_json,
    recorded_file_keys,
)
from pplx_archiver.shell.archive.terminal_log import TERMINAL_LOG, read_terminal_log
from pplx_archiver.shell.archive.writer import ArchiveWriter
from pplx_archiver.shell.archive.writer_rebuild import REGISTRY_FILE
from pplx_archiver.shell.care.reindex_old import (
    lost_variants,
    old_alerts,
    old_index,
    old_usage,
    old_variants,
)

log = structlog.get_logger()

Hook = Callable[["RebuiltThread"], None]
_HOOKS: list[Hook] = []


def register_hook(hook: Hook) -> None:
    """Have every later :func:`reindex` pass each rebuilt thread to ``hook`` as well."""
    if hook not in _HOOKS:
        _HOOKS.append(hook)


@dataclasses.dataclass(frozen=True, slots=True)
class RebuiltThread:
    """One thread folder as read back: its index fields and what a search index needs."""

    uuid: str
    account: str
    path: str  # relative to the archive root
    folder: Path
    record: Mapping[str, Any]  # the parsed thread.json
    fields: Mapping[str, Any]  # the index row's columns (status and account aside)


@dataclasses.dataclass(slots=True)
class ReindexSummary:
    """What a reindex found and wrote."""

    threads: int = 0
    orphans: int = 0  # folders not known to the previous index (or all, when it was gone)
    duplicates: list[str] = dataclasses.field(default_factory=list)
    unreadable: list[dict[str, str]] = dataclasses.field(default_factory=list)
    terminal: int = 0
    variants: int = 0
    registry_dropped: int = 0
    variants_restored: int = 0  # records the registry file lost, kept from the old index
    previous_index: str = "missing"  # missing | readable | damaged

    def as_event(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["duplicates"] = self.duplicates[:50]
        data["unreadable"] = self.unreadable[:50]
        return data

    def line(self) -> str:
        return (
            f"reindex: {self.threads} threads ({self.orphans} not in the previous index), "
            f"{self.terminal} terminal, {self.variants} variants, "
            f"{len(self.duplicates)} duplicate folders, {len(self.unreadable)} unreadable, "
            f"{self.registry_dropped} registry lines dropped; previous index {self.previous_index}"
        ) + (
            f"; {self.variants_restored} variant records the registry had lost restored"
            if self.variants_restored
            else ""
        )


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def _text(record: Mapping[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


def file_record(folder: Path) -> dict[str, list[Any]]:
    """Size and SHA-256 of the files a commit records (raw, derived, asset manifest)."""
    files: dict[str, list[Any]] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(folder).as_posix()
        if not recorded_file_keys(rel):
            continue
        data = path.read_bytes()
        files[rel] = [len(data), hashlib.sha256(data).hexdigest()]
    return files


def _assets_complete(folder: Path) -> bool:
    from pplx_archiver.shell.archive.assets import INCOMPLETE, read_manifest

    return not any(entry.get("status") in INCOMPLETE for entry in read_manifest(folder))


def _thread_record(out: Path, folder: Path) -> tuple[str, dict[str, Any]]:
    """A thread folder's path in the archive and its parsed thread.json (StoreError when it
    cannot be read or names no thread)."""
    rel = folder.relative_to(out).as_posix()
    try:
        record = orjson.loads((folder / THREAD_JSON).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise StoreError(f"{rel}/{THREAD_JSON}: unreadable: {exc}") from None
    if not isinstance(record, dict) or not isinstance(record.get("uuid"), str):
        raise StoreError(f"{rel}/{THREAD_JSON}: no thread uuid")
    return rel, record


def read_folder(out: Path, folder: Path) -> RebuiltThread:
    """Read one thread folder back into its index fields (StoreError when unusable)."""
    rel, record = _thread_record(out, folder)
    from pplx_archiver.shell.care.rerender import listing_from_record

    uuid = str(record["uuid"])
    completeness = record.get("completeness")
    completeness = dict(completeness) if isinstance(completeness, Mapping) else None
    if completeness is not None and not _assets_complete(folder):
        completeness["assets_complete"] = False
    interruptions = record.get("interruptions")
    variants = record.get("answer_variants") or record.get("variants")
    fields: dict[str, Any] = {
        "mode": _text(record, "mode"),
        "title": _text(record, "title"),
        "path": rel,
        "last_updated": _text(record, "last_updated"),
        "created": _text(record, "created"),
        "completeness": completeness,
        "interruptions": interruptions if isinstance(interruptions, list) else None,
        "variant_count": len(variants) if isinstance(variants, list) else 0,
        "listing": listing_to_json(listing_from_record(uuid, record)),
        "archived_at": _text(record, "exported_at"),
        "remote_deleted": _text(record, "remote_deleted"),
        "files": file_record(folder),
    }
    account = rel.split("/", 1)[0]
    return RebuiltThread(uuid, account, rel, folder, record, fields)


def thread_folders(out: Path) -> Iterator[Path]:
    """Every ``<account>/<mode>/<folder>/`` holding a thread.json, in path order."""
    for path in sorted(Path(out).glob(f"*/*/*/{THREAD_JSON}")):
        if path.relative_to(out).parts[0] == INDEX_DIR:
            continue
        yield path.parent


def walk_threads(
    out: Path, on_error: Callable[[Path, StoreError], None] | None = None
) -> Iterator[RebuiltThread]:
    """Every readable thread folder as a :class:`RebuiltThread` (unreadable: ``on_error``)."""
    for folder in thread_folders(out):
        try:
            yield read_folder(Path(out), folder)
        except (StoreError, OSError) as exc:
            error = exc if isinstance(exc, StoreError) else StoreError(f"{folder}: {exc}")
            if on_error is not None:
                on_error(folder, error)


def repair_registry(registry_path: Path) -> tuple[list[dict[str, Any]], int]:
    """The registry's lines without bad lines and without repeats of the current record.

    Returns the lines to keep (bookkeeping keys included) and how many were dropped.
    """
    bad: list[tuple[int, str]] = []
    lines, torn = read_lines(registry_path, bad)
    kept: list[dict[str, Any]] = []
    current: dict[tuple[str, str], dict[str, Any]] = {}
    dropped = len(bad) + (1 if torn is not None else 0)
    for line in lines:
        key = record_key(line)
        record = strip_meta(line)
        if current.get(key) == record:
            dropped += 1
            continue
        current[key] = record
        kept.append(line)
    return kept, dropped


@dataclasses.dataclass(frozen=True, slots=True)
class _Kept:
    """The folder kept for one thread (of two folders of one thread, the newer)."""

    folder: Path
    path: str
    account: str
    archived_at: str


def _folders(out: Path, summary: ReindexSummary) -> dict[str, _Kept]:
    """The folder to index for every thread; of two folders of one thread the newer wins.

    Only each folder's uuid and time are kept (about 200 bytes a thread), not what its row
    will hold: the rows are read in a second pass as the writer stores them
    (:func:`_done_rows`), so memory does not grow with the archive's files and records."""
    seen: dict[str, _Kept] = {}

    def unreadable(folder: Path, exc: StoreError) -> None:
        rel = folder.relative_to(out).as_posix()
        summary.unreadable.append({"path": rel, "error": str(exc)})
        log.warning("REINDEX_UNREADABLE", path=rel, error=str(exc))

    for folder in thread_folders(out):
        try:
            rel, record = _thread_record(out, folder)
        except StoreError as exc:
            unreadable(folder, exc)
            continue
        uuid = str(record["uuid"])
        thread = _Kept(folder, rel, rel.split("/", 1)[0], _text(record, "exported_at") or "")
        other = seen.get(uuid)
        if other is not None:
            # Two folders of one thread: keep the one written last, report the other.
            newer = thread.archived_at > other.archived_at
            keep, drop = (thread, other) if newer else (other, thread)
            summary.duplicates.append(drop.path)
            log.warning("REINDEX_DUPLICATE", thread_uuid=uuid, kept=keep.path,
                        duplicate=drop.path)  # fmt: skip
            seen[uuid] = keep
            continue
        seen[uuid] = thread
    return seen


def _done_rows(
    out: Path,
    kept: Mapping[str, _Kept],
    known: set[str],
    hooks: Sequence[Hook],
    summary: ReindexSummary,
) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """The ``done`` row of each kept folder, read as the writer asks for it (hooks see each
    thread as it is read). A folder that became unreadable since the first pass is reported
    and left out."""
    for uuid, thread in kept.items():
        try:
            rebuilt = read_folder(out, thread.folder)
        except (StoreError, OSError) as exc:
            error = str(exc)
            summary.unreadable.append({"path": thread.path, "error": error})
            log.warning("REINDEX_UNREADABLE", path=thread.path, error=error)
            continue
        summary.threads += 1
        if uuid not in known:
            summary.orphans += 1
        for hook in hooks:
            hook(rebuilt)
        yield rebuilt.uuid, rebuilt.account, {**rebuilt.fields, "status": "done"}


def _terminal_rows(
    seen: Mapping[str, _Kept], index_dir: Path
) -> list[tuple[str, str, dict[str, Any]]]:
    """Deleted / expired / not-found states from the append-only terminal log."""
    rows: list[tuple[str, str, dict[str, Any]]] = []
    for uuid, line in read_terminal_log(index_dir / TERMINAL_LOG).items():
        state = str(line["state"])
        if uuid in seen and state == "not_found":
            continue  # archived since: the folder wins
        account = seen[uuid].account if uuid in seen else str(line.get("account") or "default")
        fields: dict[str, Any] = {"status": state}
        if line.get("error"):
            fields["error"] = str(line["error"])
        if line.get("title") and uuid not in seen:
            fields["title"] = str(line["title"])
        rows.append((uuid, safe_component(account, fallback="default"), fields))
    return rows


def _registry_plan(
    index_dir: Path, target: Path, summary: ReindexSummary
) -> tuple[str | None, tuple[dict[str, Any], ...] | None]:
    """The registry file's repair: the name of its backup (it held bad or repeated lines)
    and the lines to rewrite it with (None: kept as it is)."""
    registry_path = index_dir / REGISTRY_FILE
    kept, dropped = repair_registry(registry_path)
    backup = f"{REGISTRY_FILE}.bak-{_stamp()}" if dropped else None
    # The file the writer's registry reads: moved away when repaired, else as it is.
    held = {} if dropped else Registry(registry_path, repair=False).current()
    lost = lost_variants(old_variants(target), held)
    if dropped:
        summary.registry_dropped = dropped
        log.warning("REGISTRY_REPAIRED", dropped=dropped, backup=f"{INDEX_DIR}/{backup}")
    summary.variants_restored = len(lost)
    return backup, ((*kept, *lost) if dropped or lost else None)


def reindex(
    out: Path, *, hooks: Iterable[Hook] = (), search_progress: Progress | None = None
) -> ReindexSummary:
    """Rebuild the index of the archive at ``out`` from its folders (see module docstring):
    the plan is computed here, applied by the archive's writer."""
    out = Path(out)
    index_dir = out / INDEX_DIR
    target = index_dir / "archive.sqlite"
    summary = ReindexSummary()
    runs, known, summary.previous_index = old_index(target)
    backup, lines = _registry_plan(index_dir, target, summary)
    seen = _folders(out, summary)
    terminal = _terminal_rows(seen, index_dir)
    summary.terminal = len(terminal)
    plan = IndexRebuild(
        rows=itertools.chain(_done_rows(out, seen, known, [*hooks, *_HOOKS], summary), terminal),
        registry_backup=backup,
        registry_lines=lines,
        runs=tuple(runs),
        alerts=tuple(old_alerts(target)),
        usage=tuple(old_usage(target)),
        damaged_name=f"archive.sqlite.damaged-{_stamp()}"
        if summary.previous_index == "damaged"
        else None,
    )
    summary.variants = ArchiveWriter.rebuild_index(out, plan)
    with Archive(out) as archive:  # the search index, last: read from the raw files
        archive.writer.apply(SearchRebuild(search_progress))
    log.info("REINDEX_DONE", **summary.as_event())
    return summary


__all__ = [
    "DERIVED_TOP",
    "RAW_FILES",
    "RebuiltThread",
    "ReindexSummary",
    "read_folder",
    "register_hook",
    "reindex",
    "walk_threads",
]
