"""A thread commit resolved against the index and the disk, before the writer applies it.

:func:`prepare` reads only: the thread's folder (claimed for its uuid), whether it moves, the
files whose bytes changed, the stale derived files and the write order. The writer applies
the result; ``--dry-run`` and tests can look at it without writing.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.core.thread.asset_files import INCOMPLETE
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.files import (
    ASSETS_DIR,
    RAW_BLOCKS,
    RAW_ENTRIES,
    RAW_FILES,
    THREAD_JSON,
    check_file_key,
    derived_files_on_disk,
    listing_to_json,
    recorded_file_keys,
    str_or_none,
    with_remote_deleted,
)
from pplx_archiver.shell.archive.fsutil import Confined, same_bytes
from pplx_archiver.shell.archive.history import HistoryStep, plan_step
from pplx_archiver.shell.archive.index_schema import TERMINAL_STATUSES

if TYPE_CHECKING:
    from pplx_archiver.shell.archive.index import ThreadRow
    from pplx_archiver.shell.archive.store import Archive


@dataclasses.dataclass(frozen=True, slots=True)
class CommitOutcome:
    """What one commit did: the folder (relative to ``out``), files written/unchanged/removed."""

    path: str
    written: int
    unchanged: int
    moved_from: str | None = None
    removed: int = 0
    version: int | None = None  # the thread's new version number, when one was kept
    # findings of this commit stating a new fact: (event, level, fields), logged by the run
    findings: tuple[tuple[str, str, Mapping[str, Any]], ...] = ()

    def as_fields(self) -> dict[str, Any]:
        """Log fields for ``THREAD_ARCHIVED`` (and ``findings``, which the run logs apart)."""
        fields: dict[str, Any] = {
            "path": self.path,
            "written": self.written,
            "unchanged": self.unchanged,
            "moved_from": self.moved_from,
            "removed": self.removed,
        }
        if self.version is not None:
            fields["version"] = self.version
        fields["findings"] = [(e, lv, dict(f)) for e, lv, f in self.findings]
        return fields


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedCommit:
    """A thread commit resolved against the index and the disk: what :meth:`apply` will do.

    ``order`` is the write order of ``wanted``; ``changed`` the keys whose bytes differ from
    the stored ones (and every staged file); ``stale`` the derived files to remove.
    """

    plan: ThreadCommit
    rel: str
    target: Path
    moving_from: str | None
    wanted: Mapping[str, bytes]
    order: tuple[str, ...]
    changed: tuple[str, ...]
    stale: tuple[str, ...]
    previous: ThreadRow | None
    history: HistoryStep | None = None


def write_order(wanted: Mapping[str, bytes], derived: Iterable[str]) -> tuple[str, ...]:
    """Raw files, then extra files (assets), then derived files; thread.json last."""
    derived = set(derived)
    order = [k for k in wanted if k in RAW_FILES]
    order += [k for k in wanted if k not in RAW_FILES and k not in derived]
    order += sorted(k for k in derived if k != THREAD_JSON)
    order += [THREAD_JSON] if THREAD_JSON in derived else []
    return tuple(order)


def file_records(files: Mapping[str, bytes]) -> dict[str, list[Any]]:
    return {
        key: [len(data), hashlib.sha256(data).hexdigest()]
        for key, data in sorted(files.items())
        if recorded_file_keys(key)
    }


def prepare(arc: Archive, plan: ThreadCommit) -> PreparedCommit:
    """Resolve a commit against the index and the disk (reads only)."""
    result = plan.result
    files = dict(result.files)
    for rel in (*files, *plan.extra_files, *(s.rel for s in plan.staged)):
        check_file_key(rel)
    for staged in plan.staged:
        if not staged.rel.startswith(ASSETS_DIR + "/"):
            raise StoreError(f"refusing staged file {staged.rel!r}: only assets/ is staged")
    previous = arc.index.get(result.thread_uuid)
    kept = previous is not None and previous.remote_deleted and not returned_from(previous)
    if kept and previous is not None and previous.remote_deleted and THREAD_JSON in files:
        files[THREAD_JSON] = with_remote_deleted(files[THREAD_JSON], previous.remote_deleted)
    rel = arc.claim_path(result.thread_uuid, arc.thread_rel_path(plan.account, result.dir_name))
    old_rel = previous.path if previous is not None and previous.path else None
    target = arc.folder(rel)
    moving = old_rel is not None and old_rel != rel and arc.folder(old_rel).is_dir()
    source = arc.folder(old_rel) if moving and old_rel else target
    wanted: dict[str, bytes] = {RAW_ENTRIES: plan.raw_entries}
    if plan.raw_blocks is not None:
        wanted[RAW_BLOCKS] = plan.raw_blocks
    wanted.update(plan.extra_files)
    wanted.update(files)
    if source.is_dir():
        confined = Confined(source)
        changed = [k for k in wanted if not same_bytes(confined.key(k), wanted[k])]
    else:  # a new folder: every file is written (and confined as it is, by the writer)
        changed = list(wanted)
    history = None
    if source.is_dir() and any(k in RAW_FILES for k in changed):
        history = plan_step(source, previous, plan, arc.now())
    changed += [s.rel for s in plan.staged]  # staged asset files always land
    return PreparedCommit(
        plan=plan,
        rel=rel,
        target=target,
        moving_from=old_rel if moving else None,
        wanted=wanted,
        order=write_order(wanted, files),
        changed=tuple(changed),
        stale=tuple(sorted(derived_files_on_disk(source) - set(files))),
        previous=previous,
        history=history,
    )


def returned_from(previous: ThreadRow | None) -> str | None:
    """The tombstone a thread being committed comes back from (``deleted``, ``expired``,
    ``not_found``), or None: a tombstone is a state, and a thread that answers is live."""
    if previous is not None and previous.status in TERMINAL_STATUSES:
        return previous.status
    return None


def index_fields(arc: Archive, prep: PreparedCommit) -> dict[str, Any]:
    """The index row of a committed thread."""
    plan, record, previous = prep.plan, prep.plan.result.record, prep.previous
    completeness = record.get("completeness")
    if not plan.assets_complete and isinstance(completeness, Mapping):
        completeness = {**completeness, "assets_complete": False}
    interruptions = record.get("interruptions")
    listing: Any = listing_to_json(plan.listing) if plan.listing is not None else None
    if plan.listing is None and previous is not None:
        listing = previous.listing
    return {
        "mode": plan.result.mode,
        "title": plan.result.title,
        "path": prep.rel,
        "last_updated": plan.listing_updated_at or str_or_none(record.get("last_updated")),
        "created": str_or_none(record.get("created")),
        "updated_in_run": plan.run_id,
        "completeness": completeness if isinstance(completeness, Mapping) else None,
        "interruptions": interruptions if isinstance(interruptions, list) else None,
        "variant_count": len(plan.result.variants),
        "degraded_turns": int((record.get("counts") or {}).get("degraded_turns") or 0),
        "listing": listing
        if plan.listing is not None
        else (previous.listing if previous else None),
        "archived_at": arc.now(),
        "files": file_records(prep.wanted),
        **({"remote_deleted": None} if returned_from(previous) else {}),
    }


Found = tuple[str, str, Mapping[str, Any]]


def commit_findings(prep: PreparedCommit) -> list[Found]:
    """Every finding of a commit: the render's, the history's rewrites, missing pieces."""
    plan = prep.plan
    uuid = plan.thread_uuid
    out: list[Found] = [(f.event, f.level, f.fields) for f in plan.result.findings]
    if prep.history is not None:
        out += [(e, "warning", {"thread_uuid": uuid, **f}) for e, f in prep.history.findings]
    if not plan.assets_complete:
        out.append(("THREAD_INCOMPLETE", "warning", {"thread_uuid": uuid, **missing(plan)}))
    state = returned_from(prep.previous)
    if state is not None and prep.previous is not None:
        back = {"previous_state": state, "tombstoned_in_run": prep.previous.updated_in_run}
        back["remote_deleted"] = prep.previous.remote_deleted
        out.append(("THREAD_RETURNED", "warning", {"thread_uuid": uuid, **back}))
    return out


def missing(plan: ThreadCommit) -> dict[str, Any]:
    """What an incomplete thread lacks: asset versions not stored, and whether the report is
    one of them (from the manifest the commit writes)."""
    manifest = plan.extra_files.get(f"{ASSETS_DIR}/manifest.json")
    try:
        entries = orjson.loads(manifest)["assets"] if manifest else []
    except (orjson.JSONDecodeError, KeyError, TypeError):
        entries = []
    lacking = [e for e in entries if isinstance(e, dict) and e.get("status") in INCOMPLETE]
    report = any(e.get("asset_type") == "RESEARCH_REPORT" for e in lacking)
    return {
        "assets_missing": sorted({str(e.get("file_name") or e.get("uuid")) for e in lacking}),
        "report_missing": report and outputs.REPORT.path not in plan.result.files,
    }
