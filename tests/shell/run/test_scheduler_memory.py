"""The run holds a bounded number of listed threads, whatever the listing's length (#14)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import anyio
import orjson

from pplx_archiver.cli._run import CommonOptions
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.settings import Settings
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.run.scheduler import Run, RunOptions, RunSummary
from pplx_archiver.shell.writer.offload import OFFLOAD_MIN_THREADS
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


def _run(
    out: Path, options: RunOptions, threads: int = THREADS, offload: Any = None
) -> tuple[RunSummary, int, set[str]]:
    """Run over a listing of THREADS new threads; return the summary and the largest number
    of threads listed but not yet through the writer at any moment, and the listed ids kept."""
    most = 0
    run: Run | None = None

    async def lister() -> Any:
        nonlocal most
        for n in range(threads):
            assert run is not None
            most = max(most, n - run.summary.done)
            yield ListingRow(thread_id=_uuid(n), title=f"T{n}", slug=_uuid(n), uuid=_uuid(n),
                             updated_at=b.ts(n % 60))  # fmt: skip

    async def job() -> RunSummary:
        nonlocal run
        with Archive(out) as archive:
            run = Run(_Api(), archive, lister, options, handle_signals=False, offload=offload)
            return await run.execute()

    summary = anyio.run(job)
    assert run is not None
    return summary, most, run.listed_ids


def test_the_listing_streams_into_the_workers(tmp_path: Path) -> None:
    summary, most, listed_ids = _run(tmp_path, RunOptions(concurrency=CONCURRENCY))
    assert (summary.listed, summary.to_fetch, summary.archived) == (THREADS,) * 3
    assert summary.plan["new"] == THREADS
    assert most <= BOUND  # a plan kept whole before sending would reach THREADS
    assert listed_ids == set()  # kept only for the deletion check


def test_a_dry_run_plans_the_whole_listing_and_fetches_nothing(tmp_path: Path) -> None:
    options = RunOptions(concurrency=CONCURRENCY, dry_run=True, check_deleted=True)
    summary, _most, listed_ids = _run(tmp_path, options)
    assert (summary.listed, summary.to_fetch, summary.archived) == (THREADS, THREADS, 0)
    assert listed_ids == {_uuid(n) for n in range(THREADS)}


def test_the_limit_counts_threads_to_fetch(tmp_path: Path) -> None:
    summary, _most, _ids = _run(tmp_path, RunOptions(concurrency=CONCURRENCY, limit=5))
    assert (summary.to_fetch, summary.archived, summary.listed) == (5, 5, 5)


def test_sync_check_deleted_keeps_the_listed_ids(tmp_path: Path) -> None:
    """The CLI's options become the run's typed options: --check-deleted lists everything
    and keeps the listed ids; the account's run takes its tunables from the settings."""
    settings = Settings(out_dir=tmp_path, early_stop=7, lang="zh")
    asked = CommonOptions(check_deleted=True).run_options("sync").for_account(settings, "me")
    plain = CommonOptions().run_options("sync").for_account(settings, "me")
    assert (asked.keep_listed_ids, asked.lists_everything, asked.full) == (True, True, False)
    assert (plain.keep_listed_ids, plain.lists_everything) == (False, False)
    assert (asked.command, asked.account, asked.early_stop, asked.lang) == ("sync", "me", 7, "zh")


class _Offload:
    """Records when the run asks for a writer process (answers None: write in a thread)."""

    def __init__(self, min_threads: int = OFFLOAD_MIN_THREADS) -> None:
        self.min_threads = min_threads
        self.asked: list[int] = []
        self.discarded = 0

    def __call__(self, to_fetch: int) -> None:
        self.asked.append(to_fetch)

    def discard(self) -> None:
        self.discarded += 1


def test_the_writer_process_is_decided_on_the_final_plan_or_a_large_one(tmp_path: Path) -> None:
    """The listing streams, so a large run decides before its listing ends (auto: 150)."""
    small = _Offload()
    summary, _most, _ids = _run(tmp_path / "small", RunOptions(concurrency=CONCURRENCY),
                                offload=small)  # fmt: skip
    assert small.asked == [THREADS] and summary.archived == THREADS  # below 150: the plan
    large = _Offload()
    _run(tmp_path / "large", RunOptions(concurrency=CONCURRENCY), threads=200, offload=large)
    assert len(large.asked) == 1 and OFFLOAD_MIN_THREADS <= large.asked[0] < 200
    assert (small.discarded, large.discarded) == (0, 0)


def test_a_writer_process_started_early_takes_over_at_the_first_write(tmp_path: Path) -> None:
    """A first archive (min_threads 1): the run asks at its first write, long before 150; a
    run that writes nothing (its listing is empty) discards the child instead."""
    early = _Offload(min_threads=1)
    _run(tmp_path / "first", RunOptions(concurrency=CONCURRENCY), threads=200, offload=early)
    assert len(early.asked) == 1 and early.asked[0] <= BOUND and early.discarded == 0
    unused = _Offload(min_threads=1)
    summary, _most, _ids = _run(tmp_path / "empty", RunOptions(concurrency=CONCURRENCY),
                                threads=0, offload=unused)  # fmt: skip
    assert summary.listed == 0 and unused.asked == [] and unused.discarded == 1


class _Posting:
    """A writer-process store on the run's own archive: ``can_post`` says yes every other
    time; ``commit_then`` records whether it ran in the event loop's thread."""

    def __init__(self, local: Any) -> None:
        self.local = local
        self.asks = 0
        self.in_loop: list[bool] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.local, name)

    def can_post(self) -> bool:
        self.asks += 1
        return self.asks % 2 == 1

    def commit_then(self, plan: Any, then: Any) -> None:
        self.in_loop.append(threading.current_thread() is threading.main_thread())
        then(self.local.commit_online(plan))

    def close(self) -> None:
        """The archive is closed by its owner."""


def test_a_thread_is_posted_from_the_event_loop_when_the_writer_process_has_room(
    tmp_path: Path,
) -> None:
    """Handing a fetched thread to a worker thread and back cost the run's writer task more
    than posting it: with room in the writer process, the event loop posts it itself; without,
    a worker thread waits for room. Every thread is archived either way."""
    stores: list[_Posting] = []

    class Offload(_Offload):
        def __call__(self, to_fetch: int) -> Any:
            super().__call__(to_fetch)
            assert archive is not None
            stores.append(_Posting(archive))
            return stores[-1]

    archive: Archive | None = None

    async def job() -> RunSummary:
        nonlocal archive
        with Archive(tmp_path) as archive:
            lister = _listing(40)
            run = Run(_Api(), archive, lister, RunOptions(concurrency=CONCURRENCY),
                      handle_signals=False, offload=Offload(min_threads=1))  # fmt: skip
            return await run.execute()

    summary = anyio.run(job)
    assert summary.archived == 40 and len(stores) == 1
    assert stores[0].in_loop.count(True) == 20 and stores[0].in_loop.count(False) == 20


def _listing(threads: int) -> Any:
    async def lister() -> Any:
        for n in range(threads):
            yield ListingRow(thread_id=_uuid(n), title=f"T{n}", slug=_uuid(n), uuid=_uuid(n),
                             updated_at=b.ts(n % 60))  # fmt: skip

    return lister
