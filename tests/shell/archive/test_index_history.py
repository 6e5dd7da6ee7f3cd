"""Schema 2 of the index: run history columns, failure dates, and the upgrade from schema 1."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pplx_archiver.shell.archive.index import SCHEMA_VERSION, Index

# The schema-1 tables as the previous release created them.
SCHEMA_1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE threads (
    uuid TEXT PRIMARY KEY, account TEXT NOT NULL, mode TEXT, title TEXT, path TEXT,
    status TEXT NOT NULL CHECK (status IN ('done','failed','deleted','expired','pending')),
    last_updated TEXT, last_updated_key TEXT, created TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, error TEXT, error_path TEXT, updated_in_run INTEGER,
    remote_deleted TEXT, completeness TEXT, interruptions TEXT,
    variant_count INTEGER NOT NULL DEFAULT 0, listing TEXT, archived_at TEXT
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, command TEXT NOT NULL, started_at TEXT NOT NULL,
    finished_at TEXT, summary TEXT
);
INSERT INTO runs (command, started_at, finished_at, summary)
    VALUES ('sync', '2026-11-01T03:00:00Z', '2026-11-01T03:05:00Z', '{"exit_code": 1}');
INSERT INTO threads (uuid, account, title, status, attempts, error, updated_in_run)
    VALUES ('t1', 'me', 'Old failure', 'failed', 2, 'TransientError: 502', 1);
INSERT INTO threads (uuid, account, title, status) VALUES ('t2', 'me', 'Fine', 'done');
"""


def test_schema_1_index_is_upgraded_in_place(tmp_path: Path) -> None:
    """Opening a schema-1 index adds the columns, backfills exit codes and failure dates."""
    path = tmp_path / "archive.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1)
    db.close()
    idx = Index(path)
    try:
        run = idx.runs(1)[0]
        assert run.exit_code == 1 and run.log_file is None
        old = idx.get("t1")
        assert old is not None and old.attempts == 2
        assert old.first_failed_at == old.last_failed_at == "2026-11-01T03:00:00Z"
        fine = idx.get("t2")
        assert fine is not None and fine.last_failed_at is None
    finally:
        idx.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    db.close()


def test_failure_dates_keep_the_first_and_clear_on_success(tmp_path: Path) -> None:
    """Repeated failures keep the first date and move the last; success clears both."""
    idx = Index(tmp_path / "a.sqlite")
    try:
        idx.mark_failed("t", "me", "E: one", None, failed_at="2026-11-01T00:00:00Z")
        idx.mark_failed("t", "me", "E: two", None, failed_at="2026-11-02T00:00:00Z")
        row = idx.get("t")
        assert row is not None
        assert (row.first_failed_at, row.last_failed_at, row.attempts, row.error) == (
            "2026-11-01T00:00:00Z",
            "2026-11-02T00:00:00Z",
            2,
            "E: two",
        )
        idx.mark_done("t", "me", {"title": "T"})
        row = idx.get("t")
        assert row is not None and row.first_failed_at is None and row.last_failed_at is None
        idx.mark_failed("t", "me", "E: three", None, failed_at="2026-11-05T00:00:00Z")
        row = idx.get("t")
        assert row is not None and row.first_failed_at == "2026-11-05T00:00:00Z"
    finally:
        idx.close()


def test_run_outcome_and_last_success(tmp_path: Path) -> None:
    """A run's exit code comes from its summary, the outcome adds the log file."""
    idx = Index(tmp_path / "a.sqlite")
    try:
        ok = idx.begin_run("sync", "2026-11-01T00:00:00Z")
        idx.finish_run(ok, "2026-11-01T00:01:00Z", {"exit_code": 0})
        bad = idx.begin_run("sync", "2026-11-02T00:00:00Z")
        idx.finish_run(bad, "2026-11-02T00:01:00Z", {"exit_code": 0})
        idx.record_run_outcome(bad, 3, "/a/index/logs/sync.jsonl")
        assert idx.last_run_id() == bad
        row = idx.run(bad)
        assert row is not None and (row.exit_code, row.log_file) == (3, "/a/index/logs/sync.jsonl")
        success = idx.last_success(["sync", "batch"])
        assert success is not None and success.id == ok
        assert idx.last_success(["export"]) is None
    finally:
        idx.close()


def test_degraded_count_reads_completeness(tmp_path: Path) -> None:
    """Done threads with an incomplete answer or missing assets count as degraded."""
    idx = Index(tmp_path / "a.sqlite")
    try:
        idx.mark_done("a", "me", {"completeness": {"complete": True}})
        idx.mark_done("b", "me", {"completeness": {"complete": False}})
        idx.mark_done("c", "me", {"completeness": {"complete": True, "assets_complete": False}})
        idx.mark_failed("d", "me", "E: x", None)
        assert idx.degraded_count() == 2
    finally:
        idx.close()
