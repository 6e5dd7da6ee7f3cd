"""A group commit marks its batch done in one index transaction, search rows included."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import structlog

from pplx_archiver.core.thread.prose import ThreadProse
from pplx_archiver.shell.archive import search as S
from pplx_archiver.shell.archive import search_index
from pplx_archiver.shell.archive.store import Archive
from tests.shell.archive_builders import harvest


class Crash(BaseException):
    """A process dying mid-flush (not an error any code handles)."""


def _batch(archive: Archive, n: int) -> list[str]:
    for i in range(1, n + 1):
        harvest(archive, i)
    uuids = [r.uuid for r in archive.iter_threads("pending")]
    assert len(uuids) == n and archive.unsynced == n
    return uuids


def _failing_for(monkeypatch: pytest.MonkeyPatch, uuid: str, error: BaseException) -> None:
    real = search_index.index_thread

    def index_thread(
        db: sqlite3.Connection, meta: search_index.ThreadMeta, prose: ThreadProse | None
    ) -> None:
        real(db, meta, prose)  # its rows are written, then the failure undoes them
        if meta.uuid == uuid:
            raise error

    monkeypatch.setattr(search_index, "index_thread", index_thread)


def _indexed(archive: Archive) -> set[str]:
    with archive.index.transaction() as db:
        if S.index_state(db) == "missing":  # the tables are made with the first rows
            return set()
        return {u for u, _t, _v in S.iter_prose(db)}


def test_one_transaction_for_the_whole_batch(tmp_path: Path) -> None:
    """flush_done starts one write transaction however many threads the batch holds, and
    writes the search rows without a savepoint per thread (FTS5 flushes at each one)."""
    with Archive(tmp_path / "a", group_commit=True) as archive:
        uuids = _batch(archive, 4)
        begins: list[str] = []
        savepoints: list[str] = []

        def trace(sql: str) -> None:
            if sql.startswith("BEGIN"):
                begins.append(sql)
            if sql.startswith("SAVEPOINT"):
                savepoints.append(sql)

        archive.index._db.set_trace_callback(trace)
        assert archive.flush_done() == 4
        archive.index._db.set_trace_callback(None)
        assert len(begins) == 1
        assert savepoints == []
        assert {r.uuid for r in archive.iter_threads("done")} == set(uuids)
        assert _indexed(archive) == set(uuids)


def test_a_failing_search_update_costs_the_others_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One thread's search rows fail: all are done, the others indexed, the index stale."""
    with Archive(tmp_path / "a", group_commit=True) as archive:
        uuids = _batch(archive, 3)
        _failing_for(monkeypatch, uuids[1], sqlite3.OperationalError("disk I/O error"))
        begins: list[str] = []
        archive.index._db.set_trace_callback(
            lambda sql: begins.append(sql) if sql.startswith("BEGIN") else None
        )
        with structlog.testing.capture_logs() as logs:
            assert archive.flush_done() == 3
        archive.index._db.set_trace_callback(None)
        assert len(begins) == 2  # the fast try, rolled back, then each thread in a savepoint
        failed = [e for e in logs if e["event"] == "SEARCH_INDEX_FAILED"]
        assert [e["thread_uuid"] for e in failed] == [uuids[1]]
        assert {r.uuid for r in archive.iter_threads("done")} == set(uuids)
        assert _indexed(archive) == {uuids[0], uuids[2]}
        with archive.index.transaction() as db:
            assert S.index_state(db) == "stale"


def test_a_crash_mid_batch_leaves_none_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash while the batch is marked done rolls it all back: every thread stays pending."""
    out = tmp_path / "a"
    archive = Archive(out, group_commit=True)
    uuids = _batch(archive, 3)
    _failing_for(monkeypatch, uuids[1], Crash())
    with pytest.raises(Crash):
        archive.flush_done()
    archive.index.close()
    monkeypatch.undo()
    with Archive(out) as reopened:
        assert {r.uuid for r in reopened.iter_threads("pending")} == set(uuids)
        assert not list(reopened.iter_threads("done"))
        assert not _indexed(reopened)
