"""The SQLite index records thread states, runs and variant keys, in WAL mode."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.index import Index


def test_schema_wal_and_version(tmp_path: Path) -> None:
    """A new index is in WAL mode with the schema version recorded; reopening keeps it."""
    path = tmp_path / "index" / "archive.sqlite"
    Index(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(4,)]
    db.close()
    idx = Index(path)
    assert idx.counts() == {}
    idx.close()


def test_version_1_index_is_migrated(tmp_path: Path) -> None:
    """A schema-1 index (no not_found status, no files column) is migrated, rows kept."""
    path = tmp_path / "a.sqlite"
    Index(path).close()
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TABLE threads; CREATE TABLE threads (uuid TEXT PRIMARY KEY, account TEXT NOT NULL,"
        " mode TEXT, title TEXT, path TEXT, status TEXT NOT NULL CHECK (status IN ('done',"
        "'failed','deleted','expired','pending')), last_updated TEXT, last_updated_key TEXT,"
        " created TEXT, attempts INTEGER NOT NULL DEFAULT 0, error TEXT, error_path TEXT,"
        " updated_in_run INTEGER, remote_deleted TEXT, completeness TEXT, interruptions TEXT,"
        " variant_count INTEGER NOT NULL DEFAULT 0, listing TEXT, archived_at TEXT);"
        "INSERT INTO threads (uuid, account, status) VALUES ('t1', 'me', 'done');"
        "UPDATE schema_version SET version = 1;"
    )
    db.close()
    idx = Index(path)
    idx.upsert("t2", "me", status="not_found", files={"thread.json": [2, "ab"]})
    assert idx.counts() == {"done": 1, "not_found": 1}
    row = idx.get("t2")
    assert row is not None and row.files == {"thread.json": [2, "ab"]}
    idx.close()


def test_refuses_unknown_schema_version(tmp_path: Path) -> None:
    """An index written by a newer schema is refused with its path in the message."""
    path = tmp_path / "a.sqlite"
    Index(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = 99")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="schema version 99"):
        Index(path)


def test_thread_lifecycle_and_normalized_key(tmp_path: Path) -> None:
    """Rows move through failed and done; the update key drops trailing fraction zeros."""
    idx = Index(tmp_path / "a.sqlite")
    idx.mark_failed("u1", "acct", "TransientError: 502", "entries[0]", title="T")
    idx.mark_failed("u1", "acct", "TransientError: 503", None)
    row = idx.get("u1")
    assert row is not None
    assert (row.status, row.attempts, row.error, row.title) == (
        "failed",
        2,
        "TransientError: 503",
        "T",
    )
    idx.mark_done(
        "u1",
        "acct",
        {"last_updated": "2026-09-07T16:42:48.180330Z", "completeness": {"complete": True}},
        [{"thread_uuid": "u1", "entry_uuid": "e1", "x": 1}],
        run_id=3,
    )
    row = idx.get("u1")
    assert row is not None
    assert row.status == "done" and row.attempts == 0 and row.error is None
    assert row.last_updated_key == "2026-09-07T16:42:48.18033Z"
    assert row.completeness == {"complete": True}
    assert idx.variants() == [{"thread_uuid": "u1", "entry_uuid": "e1", "x": 1}]
    assert idx.counts() == {"done": 1}
    with pytest.raises(StoreError, match="unknown thread status"):
        idx.upsert("u2", "acct", status="gone")
    idx.close()


def test_runs_are_recorded_newest_first(tmp_path: Path) -> None:
    """begin/finish run store the command, times and the summary."""
    idx = Index(tmp_path / "a.sqlite")
    first = idx.begin_run("batch", "2026-01-01T00:00:00Z")
    second = idx.begin_run("sync", "2026-01-02T00:00:00Z")
    idx.finish_run(second, "2026-01-02T00:01:00Z", {"archived": 3})
    runs = idx.runs()
    assert [r.id for r in runs] == [second, first]
    assert runs[0].summary == {"archived": 3} and runs[1].finished_at is None
    idx.close()


def test_concurrent_writers_from_threads(tmp_path: Path) -> None:
    """Writes from several threads through one connection all land."""
    idx = Index(tmp_path / "a.sqlite")

    def work(n: int) -> None:
        for i in range(20):
            idx.upsert(f"t{n}-{i}", "acct", status="pending", title=str(i))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert idx.counts() == {"pending": 80}
    idx.close()


def test_index_without_degraded_column_gains_it(tmp_path: Path) -> None:
    """An index written before ``degraded_turns`` existed gets the column (0) when opened."""
    path = tmp_path / "old.sqlite"
    idx = Index(path)
    idx.upsert("t1", "default", status="done", degraded_turns=2)
    idx.close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE threads DROP COLUMN degraded_turns")
    db.commit()
    db.close()
    idx = Index(path)
    row = idx.get("t1")
    assert row is not None and row.degraded_turns == 0
    idx.upsert("t1", "default", degraded_turns=3)
    row = idx.get("t1")
    assert row is not None and row.degraded_turns == 3
    idx.close()
