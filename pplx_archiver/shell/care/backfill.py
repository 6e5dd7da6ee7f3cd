"""``assets-backfill``: bring the assets of an existing archive up to date from its raw files.

For every thread the index marks done, the asset versions are found again in the stored raw
files (the render core's :func:`~pplx_archiver.core.thread.assets.extract_assets`) and resolved by
an :class:`~pplx_archiver.shell.archive.assets.AssetSession`: versions already stored with their
sha256 are kept, inline ones are written from the payload, and — with ``--online`` — the missing
downloadable ones are fetched (their URLs refreshed first when expired). Offline they are
recorded as ``missing``. The thread's :class:`~pplx_archiver.core.archive.writes.AssetPlacement`
plan (files moved in, inline files, the manifest, whether its assets are complete: an incomplete
thread is retried by the next ``sync``) and then its re-render plan (so ``report.md`` appears)
go to the archive's writer. Every file is written atomically and only when its bytes change,
so a second run changes nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import structlog

from pplx_archiver.core.archive.writes import AssetPlacement
from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.errors import PayloadError, PplxError, StoreError
from pplx_archiver.shell.archive.assets import AssetSession
from pplx_archiver.shell.archive.index import ThreadRow
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care import rerender

log = structlog.get_logger()


@dataclasses.dataclass(slots=True)
class BackfillSummary:
    """Counts of one backfill pass (the ``RUN_SUMMARY`` event and the printed line)."""

    online: bool
    threads: int = 0
    with_assets: int = 0
    versions: dict[str, int] = dataclasses.field(default_factory=dict)
    files_written: int = 0
    rerendered_files: int = 0
    incomplete_threads: int = 0
    failures: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def as_event(self) -> dict[str, Any]:
        """Fields of ``RUN_SUMMARY``."""
        data = dataclasses.asdict(self)
        data["failed"] = len(self.failures)
        return data

    def line(self) -> str:
        """One line for a person."""
        counts = ", ".join(f"{n} {k}" for k, n in sorted(self.versions.items())) or "none"
        mode = "online" if self.online else "offline"
        return (
            f"assets-backfill ({mode}): {self.threads} threads, {self.with_assets} with assets; "
            f"versions: {counts}; {self.files_written} asset files written, "
            f"{self.rerendered_files} derived files rewritten, "
            f"{self.incomplete_threads} threads with assets still missing, "
            f"{len(self.failures)} failed"
        )


async def backfill(
    archive: Archive, session: AssetSession, *, lang: str = "en", limit: int | None = None
) -> BackfillSummary:
    """Backfill every done thread's assets (see the module docstring); return the counts."""
    summary = BackfillSummary(online=session.online)
    rows = [r for r in archive.iter_threads("done") if r.path]
    for row in rows[:limit] if limit is not None else rows:
        summary.threads += 1
        assert row.path is not None
        with structlog.contextvars.bound_contextvars(thread_uuid=row.uuid):
            try:
                await _one(archive, session, row, lang, summary)
            except (PplxError, OSError) as exc:
                failure = {"thread_uuid": row.uuid, "path": row.path, "error": str(exc)}
                if isinstance(exc, PayloadError):
                    failure["json_path"] = exc.path
                summary.failures.append(failure)
                log.error("ASSETS_BACKFILL_FAILED", **failure)
    log.info("RUN_SUMMARY", command="assets-backfill", **summary.as_event())
    return summary


async def _one(
    archive: Archive, session: AssetSession, row: ThreadRow, lang: str, summary: BackfillSummary
) -> None:
    rel = row.path or ""
    folder = archive.folder(rel)
    if not folder.is_dir():
        raise StoreError(f"{folder}: thread folder missing")
    inp, _record = await anyio.to_thread.run_sync(
        rerender.build_input, folder, row.uuid, row.listing
    )
    refs = extract_assets(inp)
    if not refs:
        return
    summary.with_assets += 1
    outcome = await session.collect(row.uuid, refs, folder=folder)
    for key, n in outcome.counts().items():
        summary.versions[key] = summary.versions.get(key, 0) + n
    plan = AssetPlacement(row.uuid, rel, outcome.files, outcome.staged, outcome.complete)
    summary.files_written += await anyio.to_thread.run_sync(archive.writer.apply, plan)
    task = rerender.Task(row.uuid, row.account, rel, row.listing, lang, False)
    rendered = await anyio.to_thread.run_sync(rerender.render_one, archive.out, task)
    if rendered.error is not None:
        raise StoreError(f"re-render after the backfill failed: {rendered.error}")
    written, _removed = rerender.apply(archive, rendered)
    summary.rerendered_files += written
    if written:
        log.info(
            "THREAD_RERENDERED", thread_uuid=row.uuid, path=rel, files=sorted(rendered.changed)
        )
    if not outcome.complete:
        summary.incomplete_threads += 1
