"""Rebuilding the search index from the archive's raw files (offline, the render core).

The archive's writer applies a :class:`~pplx_archiver.core.archive.writes.SearchRebuild` with
:func:`rebuild`: sent by ``pplx-export search`` when the index is missing, of another version
or stale (:func:`ensure_ready`; and for ``--rebuild``), and by ``pplx-export reindex``. The
sender holds the archive's writer lock (``shell/archive/lock.py``): a rebuild writes the index.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any

import structlog

from pplx_archiver.core.archive.writes import SearchRebuild
from pplx_archiver.core.thread.prose import ThreadProse
from pplx_archiver.errors import PplxError
from pplx_archiver.shell.archive import search_index as ix

log = structlog.get_logger()


@dataclasses.dataclass(slots=True)
class RebuildSummary:
    """Counts of one rebuild."""

    threads: int = 0
    rows: int = 0
    failed: int = 0


Progress = Callable[[int, int], None]


def print_progress(done: int, total: int) -> None:
    """A ``Progress`` for a terminal: ``search index: rebuilding N/M threads`` on stderr."""
    if done == total or done % 200 == 0:
        end = "\n" if done == total else "\r"
        sys.stderr.write(f"search index: rebuilding {done}/{total} threads{end}")
        sys.stderr.flush()


def rebuild(archive: Any, *, progress: Progress | None = None, batch: int = 100) -> RebuildSummary:
    """Rebuild the search index of ``archive`` (a store ``Archive``) from its raw files.

    Every thread marked done is rendered again offline (the same render core, no network)
    and its prose indexed; the index is ``stale`` until the last thread is in, so an
    interrupted rebuild starts over next time. ``progress(done, total)`` is called as it goes.
    """
    from pplx_archiver.core.thread.render import render_thread
    from pplx_archiver.shell.archive.fsutil import safe_join
    from pplx_archiver.shell.archive.stored import build_input, context_for

    total = archive.index.counts().get("done", 0)
    summary = RebuildSummary()
    with archive.index.transaction() as db:
        ix.create(db, state="stale")
    pending: list[tuple[ix.ThreadMeta, ThreadProse]] = []

    def flush() -> None:
        with archive.index.transaction() as db:
            for meta, prose in pending:
                ix.index_thread(db, meta, prose)
        pending.clear()

    for number, row in enumerate(archive.iter_threads("done"), 1):  # by pages, not held
        if progress is not None:
            progress(number, max(total, number))
        if not row.path:
            continue
        try:
            folder = safe_join(archive.out, *row.path.split("/"))
            inp, record = build_input(folder, row.uuid, row.listing)
            result = render_thread(inp, context_for(record, row.account, None))
        except (PplxError, OSError, ValueError) as exc:
            summary.failed += 1
            log.warning(
                "SEARCH_REBUILD_FAILED", thread_uuid=row.uuid, path=row.path, error=str(exc)
            )
            continue
        meta = ix.meta_of(row.uuid, row.account, row.path, result.record, result.mode, result.title)
        pending.append((meta, result.prose or ThreadProse(rows=())))
        summary.threads += 1
        summary.rows += len(result.prose.rows) if result.prose else 0
        if len(pending) >= batch:
            flush()
    flush()
    with archive.index.transaction() as db:
        ix.optimize(db)
        ix.set_meta(db, "state", "ready")
    log.info("SEARCH_INDEX_REBUILT", **dataclasses.asdict(summary))
    return summary


def ensure_ready(archive: Any, *, progress: Progress | None = None) -> RebuildSummary | None:
    """Rebuild the index when it is missing, of another version or stale; else None."""
    with archive.index.transaction() as db:
        state = ix.index_state(db)
    if state == "ready":
        return None
    log.info("SEARCH_INDEX_REBUILDING", reason=state)
    return archive.writer.apply(SearchRebuild(progress))  # type: ignore[no-any-return]
