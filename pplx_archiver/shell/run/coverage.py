"""Whether a run may stop its listing early: what earlier runs covered, and the gaps.

The early stop assumes every thread older than a run of unchanged ones was archived by an
earlier run; :func:`listing_gap_reason` says why that does not hold (a failed, pending or
changed thread, a previous run that did not finish or covered less), or None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pplx_archiver.core.thread.timeparse import parse_ts
from pplx_archiver.shell.archive.file_check import invalid_threads
from pplx_archiver.shell.archive.index_schema import INCOMPLETE_WHERE
from pplx_archiver.shell.archive.store import Archive

LISTING_COMMANDS = ("batch", "sync")


def coverage_gap(previous: Mapping[str, Any], coverage: Mapping[str, Any]) -> str | None:
    """Why the previous run's listing covered less than this run's (None: as much or more)."""
    modes, wanted = set(previous.get("modes") or ()), set(coverage.get("modes") or ())
    if modes and not (wanted and wanted <= modes):
        return "the previous run archived only threads of mode " + ", ".join(sorted(modes))
    since, from_ = parse_ts(previous.get("since")), parse_ts(coverage.get("since"))
    if since is not None and (from_ is None or from_ < since):
        return f"the previous run archived only threads updated since {previous['since']}"
    return None


def incomplete_count(archive: Archive) -> int:
    """Done threads archived without a report or asset (retried by the next run)."""
    rows = archive.index.select(f"SELECT COUNT(*) FROM threads WHERE {INCOMPLETE_WHERE}")
    return int(rows[0][0])


def listing_gap_reason(
    archive: Archive, coverage: dict[str, Any] | None = None, *, invalid: bool | None = None
) -> str | None:
    """Why this run's listing must not stop early (None when the early stop is safe).

    The early stop assumes every thread older than a run of unchanged ones was archived by
    an earlier run. That holds only when the previous listing run finished its whole plan and
    no thread is left failed, pending or incomplete; after a crash, an interruption,
    ``--limit`` or a failure, older threads may be missing or due for a retry, so the run
    lists everything.
    So does a run that looks at more than the previous one did (``coverage``: its ``modes``
    and ``since``; a run with ``--mode study`` left the other modes unarchived).
    ``invalid``: whether some done thread's stored files are missing or changed, when the
    caller has checked them already (None: checked here by
    :func:`~pplx_archiver.shell.archive.file_check.invalid_threads`: every folder, and every
    file or a rotating share of them on a large archive).
    """
    counts = archive.index.counts()
    if counts.get("pending") or counts.get("failed"):
        return "threads failed or pending in the index"
    if incomplete_count(archive):
        return "threads incomplete in the index (a report or asset to fetch again)"
    if invalid is None:
        invalid = next(invalid_threads(archive), None) is not None
    if invalid:
        return "stored files of some threads are missing or changed"
    for run in archive.index.runs(100):
        if run.command not in LISTING_COMMANDS:
            continue
        summary = run.summary or {}
        if run.finished_at is None:
            return "the previous run did not finish"
        if summary.get("dry_run"):
            continue
        if not summary.get("listing_complete"):
            return "the previous run did not archive its whole listing"
        return coverage_gap(summary, coverage or {})
    return None
