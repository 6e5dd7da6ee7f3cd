"""Tests commit a thread through the run's door: ``Archive.commit(ThreadCommit)``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pplx_archiver.core.archive.writes import StagedFile, ThreadCommit
from pplx_archiver.core.thread.model import ListingRow, RenderResult
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.archive.writer import CommitOutcome


def commit_thread(
    archive: Archive,
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
    """Build one thread's :class:`ThreadCommit` and hand it to ``archive.commit`` (as the
    run does); the door's answer read back as a :class:`CommitOutcome`."""
    plan = ThreadCommit(
        account=account,
        result=result,
        raw_entries=raw_entries,
        raw_blocks=raw_blocks,
        listing=listing,
        listing_updated_at=listing_updated_at,
        extra_files=dict(extra_files or {}),
        staged=tuple(StagedFile(k, str(v)) for k, v in (staged_files or {}).items()),
        assets_complete=assets_complete,
        run_id=run_id,
    )
    fields = dict(archive.commit(plan))
    findings = tuple((str(e), str(lv), dict(f)) for e, lv, f in fields.pop("findings"))
    return CommitOutcome(**fields, findings=findings)
