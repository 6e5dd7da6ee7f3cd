"""``pplx-export usage-backfill``: per-thread credit usage, stored in the index.

For every thread the index marks done and the ``usage`` table does not yet settle, one
``GET /rest/billing/credits/thread-usage?thread_id=<context uuid>`` (the thread uuid when no
context uuid is known) through the session's client, paced by its own slow rate limiter.
The answer ``{usage_cents, meter_usage: [{meter_type, cost_cents}]}`` is stored as ``ok``; a
403 with an error code as ``forbidden`` (recorded, never asked again); any other failure as
``error`` (asked again by the next run). Each answer is committed at once, so an interrupted
run resumes where it stopped and a finished one asks nothing the second time.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import structlog

from pplx_archiver.core.archive.writes import UsageAnswer
from pplx_archiver.errors import FetchError, ForbiddenError, PayloadError, StoreError
from pplx_archiver.shell.archive.registry import utc_now
from pplx_archiver.shell.archive.store import INDEX_DIR, Archive
from pplx_archiver.shell.net.http import ApiClient

log = structlog.get_logger()

USAGE_PATH = "/rest/billing/credits/thread-usage"
DEFAULT_USAGE_RATE = 0.5  # requests per second: slow, billing is not what we archive
SETTLED = ("ok", "forbidden")


@dataclasses.dataclass(slots=True)
class UsageSummary:
    """Counts of one ``usage-backfill`` run."""

    threads: int = 0
    fetched: int = 0
    forbidden: int = 0
    failed: int = 0
    skipped: int = 0

    def as_event(self) -> dict[str, Any]:
        """Fields of the ``USAGE_BACKFILL_SUMMARY`` event."""
        return dataclasses.asdict(self)

    def line(self) -> str:
        """The one-line report for a person."""
        return (
            f"usage-backfill: {self.threads} threads, {self.fetched} fetched, "
            f"{self.forbidden} forbidden, {self.failed} failed, {self.skipped} already settled"
        )


class UsageStore:
    """The ``usage`` table of the index, read only (the writer records the answers:
    :class:`~pplx_archiver.core.archive.writes.UsageAnswer`)."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path
        try:
            uri = f"{db_path.resolve().as_uri()}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0)
        except sqlite3.Error as exc:
            raise StoreError(f"{db_path}: cannot open the usage table: {exc}") from exc

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def status_of(self) -> dict[str, str]:
        """thread uuid → recorded status."""
        if not self._exists():
            return {}
        rows = self._db.execute("SELECT thread_uuid, status FROM usage").fetchall()
        return {str(u): str(s) for u, s in rows}

    def _exists(self) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage'"
        ).fetchone()
        return row is not None

    def cents_by_thread(self) -> dict[str, int] | None:
        """Credits (``usage_cents``) of each thread answered ``ok``; None before any run."""
        if not self._exists():
            return None
        rows = self._db.execute(
            "SELECT thread_uuid, usage_cents FROM usage WHERE status = 'ok'"
        ).fetchall()
        return {str(u): int(c or 0) for u, c in rows}

    def totals_by_mode(self) -> dict[str, Any] | None:
        """Cents and thread counts per mode (threads table joined); None before any run."""
        if not self._exists():
            return None
        rows = self._db.execute(
            "SELECT COALESCE(t.mode, 'unknown'), u.status, COUNT(*), SUM(u.usage_cents)"
            " FROM usage u LEFT JOIN threads t ON t.uuid = u.thread_uuid"
            " GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
        by_mode: dict[str, dict[str, int]] = {}
        for mode, status, n, cents in rows:
            slot = by_mode.setdefault(str(mode), {"cents": 0, "threads": 0, "forbidden": 0})
            if status == "ok":
                slot["cents"] += int(cents or 0)
                slot["threads"] += int(n)
            elif status == "forbidden":
                slot["forbidden"] += int(n)
        total = sum(v["cents"] for v in by_mode.values())
        return {"total_cents": total, "by_mode": by_mode}


def parse_usage(body: Any, where: str) -> tuple[int, list[dict[str, Any]]]:
    """``usage_cents`` and ``meter_usage`` of an answer; PayloadError names a bad value."""
    if not isinstance(body, Mapping):
        raise PayloadError(where, "expected a JSON object")
    cents = body.get("usage_cents")
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise PayloadError(f"{where}.usage_cents", "expected an integer")
    meters = body.get("meter_usage", [])
    if not isinstance(meters, list):
        raise PayloadError(f"{where}.meter_usage", "expected an array")
    out: list[dict[str, Any]] = []
    for n, meter in enumerate(meters):
        if not isinstance(meter, Mapping):
            raise PayloadError(f"{where}.meter_usage[{n}]", "expected an object")
        out.append(
            {"meter_type": str(meter.get("meter_type", "")), "cost_cents": meter.get("cost_cents")}
        )
    return cents, out


def _thread_id(listing: Mapping[str, Any] | None, uuid: str) -> str:
    context = listing.get("context_uuid") if listing else None
    return context if isinstance(context, str) and context else uuid


async def backfill_usage(
    archive: Archive,
    client: ApiClient,
    *,
    limit: int | None = None,
    clock: Any = utc_now,
    progress: Callable[[int, int], None] | None = None,
) -> UsageSummary:
    """Fetch and store the credit usage of every done thread not yet settled
    (``progress(asked, to ask)`` after each request)."""
    summary = UsageSummary()
    store = UsageStore(archive.out / INDEX_DIR / "archive.sqlite")
    try:
        settled = store.status_of()
    finally:
        store.close()

    def put(uuid: str, status: str, **fields: Any) -> None:
        archive.writer.apply(UsageAnswer(uuid, status, clock(), **fields))

    rows = list(archive.iter_threads("done"))
    todo = sum(1 for r in rows if settled.get(r.uuid) not in SETTLED)
    todo = todo if limit is None else min(todo, limit)
    for row in rows:
        asked = summary.fetched + summary.forbidden + summary.failed
        if progress is not None and asked:
            progress(asked, todo)
        summary.threads += 1
        if settled.get(row.uuid) in SETTLED:
            summary.skipped += 1
            continue
        if limit is not None and summary.fetched + summary.forbidden + summary.failed >= limit:
            continue
        thread_id = _thread_id(row.listing, row.uuid)
        try:
            body, _raw = await client.get_json(USAGE_PATH, [("thread_id", thread_id)], kind="usage")
            cents, meters = parse_usage(body, "usage")
        except ForbiddenError as exc:
            summary.forbidden += 1
            put(row.uuid, "forbidden", error=f"forbidden: {exc.code}")
            log.warning("USAGE_FORBIDDEN", thread_uuid=row.uuid, code=exc.code)
            continue
        except (FetchError, PayloadError) as exc:
            summary.failed += 1
            put(row.uuid, "error", error=str(exc))
            log.error("USAGE_FAILED", thread_uuid=row.uuid, error=str(exc))
            continue
        summary.fetched += 1
        put(row.uuid, "ok", cents=cents, meters=tuple(meters))
        log.info("USAGE_FETCHED", thread_uuid=row.uuid, usage_cents=cents)
    if progress is not None and todo:
        progress(summary.fetched + summary.forbidden + summary.failed, todo)
    log.info("USAGE_BACKFILL_SUMMARY", **summary.as_event())
    return summary
