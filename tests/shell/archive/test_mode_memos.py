"""The index's memory of other-mode threads, and the early stop after a filtered run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pplx_archiver.core.archive.plan import ModeMemo
from pplx_archiver.core.archive.writes import ModeMemos
from pplx_archiver.settings import Settings
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.run import accounts
from pplx_archiver.shell.run.coverage import listing_gap_reason
from pplx_archiver.shell.run.run_types import RunOptions
from pplx_archiver.shell.writer.writer_process import OffloadedStore

KEY = "0a1b2c3d-0000-4000-8000-000000000001"


def test_memos_go_through_the_writer_and_are_replaced(tmp_path: Path) -> None:
    """The writer's ModeMemos plan records a thread's mode; a later one replaces it."""
    with Archive(tmp_path) as archive:
        assert archive.mode_memo(KEY) is None
        assert archive.writer.apply(ModeMemos(((KEY, ModeMemo("2026-07-20", "search")),), 1)) == 1
        assert archive.mode_memo(KEY) == ModeMemo("2026-07-20", "search")
        archive.remember_modes([(KEY, ModeMemo("2026-07-21", "computer"))], 2)
        assert archive.mode_memo(KEY) == ModeMemo("2026-07-21", "computer")


def test_the_writer_process_records_memos(tmp_path: Path) -> None:
    """A run writing through a child process records its memos there; reads stay here."""
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        try:
            assert store.remember_modes([(KEY, ModeMemo("2026-07-20", "council"))], 3) == 1
        finally:
            store.close()
        assert store.mode_memo(KEY) == ModeMemo("2026-07-20", "council")


def test_a_read_only_index_without_the_table_remembers_nothing(tmp_path: Path) -> None:
    """An index written before the table existed, opened read-only, answers None."""
    path = tmp_path / "index" / "archive.sqlite"
    Index(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE mode_memos")
    index = Index(path, read_only=True)
    try:
        assert index.mode_memo(KEY) is None
    finally:
        index.close()
    Index(path).close()  # a writable open creates it again
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM mode_memos").fetchone() == (0,)


def _previous_run(archive: Archive, **coverage: object) -> None:
    run = archive.begin_run("sync")
    archive.finish_run(run, {"listing_complete": True, "exit_code": 0, **coverage})


def test_a_run_that_looks_at_more_than_the_filtered_previous_one_lists_everything(
    tmp_path: Path,
) -> None:
    """After `--mode study`, only a run limited to study may stop early; after `--since`,
    only a run with the same or a later date."""
    with Archive(tmp_path) as archive:
        _previous_run(archive, modes=["study"], since=None)
        assert listing_gap_reason(archive, {"modes": ["study"]}) is None
        assert "mode study" in (listing_gap_reason(archive, {"modes": []}) or "")
        assert listing_gap_reason(archive, {"modes": ["search"]}) is not None
        assert listing_gap_reason(archive) is not None  # status: an unfiltered sync
        _previous_run(archive, modes=[], since="2026-07-01T00:00:00Z")
        assert listing_gap_reason(archive, {"since": "2026-07-01T00:00:00Z"}) is None
        assert listing_gap_reason(archive, {"since": "2026-08-01T00:00:00Z"}) is None
        assert "since 2026-07-01" in (listing_gap_reason(archive, {"since": None}) or "")
        assert listing_gap_reason(archive, {"since": "2026-06-01T00:00:00Z"}) is not None
        _previous_run(archive, modes=[], since=None)
        assert listing_gap_reason(archive, {"modes": ["study"], "since": "2026-07-01"}) is None


def test_an_account_after_its_own_filtered_run_lists_everything(tmp_path: Path) -> None:
    """index/accounts.json keeps each account's last `--mode`/`--since`: a run of that
    account looking at more lists everything; the same filter may stop early."""
    settings = Settings(out_dir=tmp_path)
    (tmp_path / "index").mkdir()
    accounts._record(tmp_path, "work", 1, True, {"modes": ["study"], "since": None})
    study = RunOptions(command="sync", modes=frozenset({"study"}))
    everything = RunOptions(command="sync")
    assert accounts._settings_for(settings, "work", study).early_stop == 50
    assert accounts._settings_for(settings, "work", everything).early_stop == 0
    accounts._record(tmp_path, "work", 2, True, {"modes": [], "since": None})
    assert accounts._settings_for(settings, "work", everything).early_stop == 50
