"""The run holds a bounded number of listed threads, whatever the listing's length (#14)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
import orjson

from pplx_archiver.core.model import ListingRow
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.run.scheduler import Run, RunOptions, RunSummary
from tests.core import builders as b

THREADS = 120
CONCURRENCY = 2
# Rows and outcomes in the two streams (2 × concurrency each), one per worker, one in the
# writer and the one the listing is sending.
BOUND = 2 * CONCURRENCY + CONCURRENCY + 2 * CONCURRENCY + 2


def _uuid(n: int) -> str:
    return str(uuid.UUID(int=n + 1))


class _Api:
    """Answers every ``GET /rest/thread/<uuid>`` with a one-entry page."""

    async def get_json(self, path: str, params: Any = None) -> tuple[Any, bytes]:
        uid = path.rsplit("/", 1)[1]
        body = orjson.dumps(b.page([b.entry(uid, 1, text=[b.final_step("A.")])]))
        return orjson.loads(body), body


def _run(out: Path, options: RunOptions) -> tuple[RunSummary, int]:
    """Run over a listing of THREADS new threads; return the summary and the largest number
    of threads listed but not yet through the writer at any moment."""
    most = 0
    run: Run | None = None

    async def lister() -> Any:
        nonlocal most
        for n in range(THREADS):
            assert run is not None
            most = max(most, n - run.summary.done)
            yield ListingRow(thread_id=_uuid(n), title=f"T{n}", slug=_uuid(n), uuid=_uuid(n),
                             updated_at=b.ts(n % 60))  # fmt: skip

    async def job() -> RunSummary:
        nonlocal run
        with Archive(out) as archive:
            run = Run(_Api(), archive, lister, options, handle_signals=False)
            return await run.execute()

    return anyio.run(job), most


def test_the_listing_streams_into_the_workers(tmp_path: Path) -> None:
    summary, most = _run(tmp_path, RunOptions(concurrency=CONCURRENCY))
    assert (summary.listed, summary.to_fetch, summary.archived) == (THREADS,) * 3
    assert summary.plan["new"] == THREADS
    assert most <= BOUND  # a plan kept whole before sending would reach THREADS


def test_a_dry_run_plans_the_whole_listing_and_fetches_nothing(tmp_path: Path) -> None:
    summary, _most = _run(tmp_path, RunOptions(concurrency=CONCURRENCY, dry_run=True))
    assert (summary.listed, summary.to_fetch, summary.archived) == (THREADS, THREADS, 0)


def test_the_limit_counts_threads_to_fetch(tmp_path: Path) -> None:
    summary, _most = _run(tmp_path, RunOptions(concurrency=CONCURRENCY, limit=5))
    assert (summary.to_fetch, summary.archived, summary.listed) == (5, 5, 5)
