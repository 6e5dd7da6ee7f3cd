"""The shrink guard in a run: which listings it judges, what it holds back, what it lets by."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import structlog

from pplx_archiver.cli._run import CommonOptions
from pplx_archiver.errors import EXIT_LISTING_SHRANK, ListingShrankError, exit_code_for
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.run.runner import run_command
from pplx_archiver.shell.run.scheduler import RunSummary
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import login_for
from pplx_archiver.sim.server import create_app


async def _no_wait(_seconds: float) -> None:
    """Retry waits (a vanished thread's 404 is retried) take no time here."""


class _Sim:
    """An in-process simulated account and the options to run commands against it."""

    def __init__(self, tmp_path: Path, threads: int, seed: int) -> None:
        self.config = SimConfig(threads=threads, seed=seed)
        self.app = create_app(self.config)
        self.out = tmp_path / "archive"

    def run(self, command: str, **options: Any) -> tuple[RunSummary, list[Any]]:
        opts = CommonOptions(out=self.out, base_url="http://sim.test",
                             session_token=login_for(self.config)[2], concurrency=4,
                             rate=1000.0, burst=100, log_format="json", **options)  # fmt: skip
        transport = httpx.ASGITransport(app=self.app)

        async def job() -> RunSummary:
            return await run_command(opts.settings(), opts.run_options(command),
                                     transport=transport, stdout=io.StringIO(),
                                     handle_signals=False, sleep=_no_wait)  # fmt: skip

        with structlog.testing.capture_logs() as logs:
            try:
                return anyio.run(job), logs
            except ListingShrankError as exc:
                exc.logs = logs  # type: ignore[attr-defined]
                raise

    def vanish(self, share: float) -> set[str]:
        return set(self.app.sim.state.vanish(share))

    def statuses(self) -> dict[str, tuple[str, str | None]]:
        index = Index(self.out / "index" / "archive.sqlite")
        try:
            return {row.uuid: (row.status, row.remote_deleted) for row in index.iter_threads()}
        finally:
            index.close()


def _named(logs: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [e for e in logs if e["event"] == event]


def test_only_a_listing_read_to_its_end_is_judged(tmp_path: Path) -> None:
    """An early-stopped or --limit-capped listing says nothing; the same account listed to
    its end is a shrink: exit code 8, the numbers in the event and in the message."""
    sim = _Sim(tmp_path, threads=40, seed=3)
    sim.run("batch")
    gone = sim.vanish(0.4)
    assert len(gone) >= 10

    _summary, logs = sim.run("sync", early_stop=3)
    assert [e for e in logs if e["event"] == "LISTING_EARLY_STOP"]
    assert not _named(logs, "LISTING_SHRANK")
    _summary, logs = sim.run("sync", full=True, limit=1, force=True)
    assert not _named(logs, "LISTING_SHRANK")

    with pytest.raises(ListingShrankError) as caught:
        sim.run("sync", full=True)
    assert exit_code_for(caught.value) == EXIT_LISTING_SHRANK == 8
    assert f"{len(gone)} of the 40 threads" in str(caught.value)
    assert "--accept-shrink" in str(caught.value)
    (event,) = _named(caught.value.logs, "LISTING_SHRANK")  # type: ignore[attr-defined]
    assert event["known"] == 40 and event["missing"] == len(gone)
    assert event["listed"] == 40 - len(gone) and event["accepted"] is False
    assert event["missing_ratio"] == round(len(gone) / 40, 4) and event["threshold"] == 0.05
    (summary,) = _named(caught.value.logs, "RUN_SUMMARY")  # type: ignore[attr-defined]
    assert summary["exit_code"] == 8 and summary["listing_shrank"]["missing"] == len(gone)


def test_a_shrunk_listing_still_archives_what_it_lists(tmp_path: Path) -> None:
    """New threads listed alongside the shrink are archived; nothing is tombstoned."""
    sim = _Sim(tmp_path, threads=40, seed=4)
    sim.run("batch")
    gone = sim.vanish(0.4)
    (added,) = sim.app.sim.state.add(1)
    with pytest.raises(ListingShrankError) as caught:
        sim.run("sync", check_deleted=True)
    statuses = sim.statuses()
    assert statuses[added][0] == "done"
    assert all(statuses[u] == ("done", None) for u in gone)
    logs = caught.value.logs  # type: ignore[attr-defined]
    assert not _named(logs, "THREAD_REMOTE_DELETED") and not _named(logs, "ARCHIVE_ONLY_COPY")
    (event,) = _named(logs, "LISTING_SHRANK")  # the new thread is not one the archive knew
    assert (event["known"], event["missing"], event["listed"]) == (40, len(gone), 41 - len(gone))


def test_accept_shrink_tombstones_and_says_the_archive_holds_the_only_copy(
    tmp_path: Path,
) -> None:
    sim = _Sim(tmp_path, threads=40, seed=5)
    sim.run("batch")
    gone = sim.vanish(0.4)
    summary, logs = sim.run("sync", check_deleted=True, accept_shrink=True)
    assert summary.failed == 0
    (event,) = _named(logs, "LISTING_SHRANK")
    assert event["accepted"] is True
    statuses = sim.statuses()
    assert {u for u, (status, when) in statuses.items() if status == "deleted" and when} == gone
    only = _named(logs, "ARCHIVE_ONLY_COPY")
    assert {e["thread_uuid"] for e in only} == gone
    assert all(e["log_level"] == "warning" and e["title"] and e["path"] for e in only)


def test_fewer_than_ten_missing_threads_are_deletions_not_a_shrink(tmp_path: Path) -> None:
    """A quarter of a small account gone (under 10 threads) is tombstoned without a guard."""
    sim = _Sim(tmp_path, threads=24, seed=6)
    sim.run("batch")
    gone = sim.vanish(0.25)
    assert 1 <= len(gone) < 10
    _summary, logs = sim.run("sync", check_deleted=True)
    assert not _named(logs, "LISTING_SHRANK")
    assert {e["thread_uuid"] for e in _named(logs, "ARCHIVE_ONLY_COPY")} == gone


def test_sync_deleted_offline_reports_the_shrink(tmp_path: Path) -> None:
    sim = _Sim(tmp_path, threads=40, seed=8)
    sim.run("batch")
    gone = sim.vanish(0.4)
    with pytest.raises(ListingShrankError):
        sim.run("sync-deleted")
    assert all(status == ("done", None) for status in sim.statuses().values())
    assert len(gone) >= 10


def test_sync_site_still_updates_the_site_after_exit_8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sync --site`: the archive was written, so the site is updated; the exit code stays 8."""
    import typer

    from pplx_archiver.cli import site

    built: list[bool] = []

    def build_for(*_args: Any, **_kw: Any) -> int:
        built.append(True)
        return 0

    def held_sync() -> None:
        raise typer.Exit(EXIT_LISTING_SHRANK)

    monkeypatch.setattr(site, "build_for", build_for)
    with pytest.raises(typer.Exit) as done:
        site.after_sync(held_sync, tmp_path, "json")
    assert done.value.exit_code == EXIT_LISTING_SHRANK and built == [True]
