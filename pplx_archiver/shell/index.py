"""The archive's state index ``index/archive.sqlite``: threads, runs and answer-variant keys.

One row per thread (status, update time, folder, attempts, last error), one row per run, one
row per registered answer variant. WAL journal, one transaction per finished thread, a
``schema_version`` table. The API is synchronous and thread-safe (one connection guarded by
a lock), so the scheduler's single writer task may call it through ``anyio.to_thread``.

Statuses: ``done`` (all files in place), ``failed`` (retry next run), ``pending`` (being
written or rewritten; a crash leaves it here, so the next run fetches it again), ``deleted``
and ``expired`` (the server answered ENTRY_DELETED / ENTRY_EXPIRED; not retried).
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.layout import normalize_timestamp_key
from pplx_archiver.errors import StoreError

SCHEMA_VERSION = 1
STATUSES = ("done", "failed", "deleted", "expired", "pending")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS threads (
    uuid             TEXT PRIMARY KEY,
    account          TEXT NOT NULL,
    mode             TEXT,
    title            TEXT,
    path             TEXT,
    status           TEXT NOT NULL
                     CHECK (status IN ('done','failed','deleted','expired','pending')),
    last_updated     TEXT,
    last_updated_key TEXT,
    created          TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    error            TEXT,
    error_path       TEXT,
    updated_in_run   INTEGER,
    remote_deleted   TEXT,
    completeness     TEXT,
    interruptions    TEXT,
    variant_count    INTEGER NOT NULL DEFAULT 0,
    listing          TEXT,
    archived_at      TEXT,
    degraded_turns   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS threads_status ON threads (status);
CREATE INDEX IF NOT EXISTS threads_path ON threads (path);
CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    command     TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    summary     TEXT
);
CREATE TABLE IF NOT EXISTS variants (
    thread_uuid    TEXT NOT NULL,
    entry_uuid     TEXT NOT NULL,
    record         TEXT NOT NULL,
    first_seen_run INTEGER,
    PRIMARY KEY (thread_uuid, entry_uuid)
);
"""

_JSON_COLUMNS = ("completeness", "interruptions", "listing")


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadRow:
    """One thread's state as the index records it (JSON columns decoded)."""

    uuid: str
    account: str
    mode: str | None
    title: str | None
    path: str | None
    status: str
    last_updated: str | None
    last_updated_key: str | None
    created: str | None
    attempts: int
    error: str | None
    error_path: str | None
    updated_in_run: int | None
    remote_deleted: str | None
    completeness: Mapping[str, Any] | None
    interruptions: Sequence[Mapping[str, Any]] | None
    variant_count: int
    listing: Mapping[str, Any] | None
    archived_at: str | None
    degraded_turns: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class RunRow:
    """One command run: what ran, when, and its summary."""

    id: int
    command: str
    started_at: str
    finished_at: str | None
    summary: Mapping[str, Any] | None


def _dumps(value: Any) -> str | None:
    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _loads(value: str | None) -> Any:
    return None if value is None else orjson.loads(value)


class Index:
    """The SQLite state index of one archive."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=30.0
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            with self._tx():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                columns = {r[1] for r in self._db.execute("PRAGMA table_info(threads)")}
                if "degraded_turns" not in columns:  # an index written before the column
                    self._db.execute(
                        "ALTER TABLE threads ADD COLUMN degraded_turns INTEGER NOT NULL DEFAULT 0"
                    )
                row = self._db.execute("SELECT version FROM schema_version").fetchone()
                if row is None:
                    self._db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
                elif row[0] != SCHEMA_VERSION:
                    raise StoreError(
                        f"{path}: index schema version {row[0]}, this program knows "
                        f"{SCHEMA_VERSION}"
                    )
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open the index: {exc}") from exc

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._db.close()

    class _Tx:
        def __init__(self, index: Index) -> None:
            self.index = index

        def __enter__(self) -> sqlite3.Connection:
            self.index._lock.acquire()
            try:
                self.index._db.execute("BEGIN IMMEDIATE")
            except BaseException:
                self.index._lock.release()
                raise
            return self.index._db

        def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
            try:
                self.index._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
            finally:
                self.index._lock.release()

    def _tx(self) -> Index._Tx:
        """One write transaction under the lock (commit on success, rollback on error)."""
        return Index._Tx(self)

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return list(self._db.execute(sql, args).fetchall())
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: query failed: {exc}") from exc

    # -- threads ----------------------------------------------------------------------------

    @staticmethod
    def _row(row: sqlite3.Row) -> ThreadRow:
        values = dict(row)
        for key in _JSON_COLUMNS:
            values[key] = _loads(values[key])
        return ThreadRow(**values)

    def get(self, uuid: str) -> ThreadRow | None:
        """The thread's row, or None when the index does not know it."""
        rows = self._query("SELECT * FROM threads WHERE uuid = ?", (uuid,))
        return self._row(rows[0]) if rows else None

    def iter_threads(self, status: str | None = None) -> Iterator[ThreadRow]:
        """Every thread row (optionally of one status), in uuid order."""
        if status is None:
            rows = self._query("SELECT * FROM threads ORDER BY uuid")
        else:
            rows = self._query("SELECT * FROM threads WHERE status = ? ORDER BY uuid", (status,))
        for row in rows:
            yield self._row(row)

    def path_owner(self, path: str) -> str | None:
        """The uuid of the thread recorded at ``path`` (relative to the archive), if any."""
        rows = self._query("SELECT uuid FROM threads WHERE path = ?", (path,))
        return str(rows[0][0]) if rows else None

    def upsert(self, uuid: str, account: str, **fields: Any) -> None:
        """Insert or update one thread's row with ``fields`` in one transaction."""
        with self._tx() as db:
            self._upsert(db, uuid, account, fields)

    def _upsert(self, db: sqlite3.Connection, uuid: str, account: str, fields: Any) -> None:
        values = dict(fields)
        if "status" in values and values["status"] not in STATUSES:
            raise StoreError(f"unknown thread status {values['status']!r} for {uuid}")
        if "last_updated" in values:
            values["last_updated_key"] = normalize_timestamp_key(values["last_updated"]) or None
        for key in _JSON_COLUMNS:
            if key in values:
                values[key] = _dumps(values[key])
        exists = db.execute("SELECT 1 FROM threads WHERE uuid = ?", (uuid,)).fetchone()
        if exists:
            values["account"] = account
            sets = ", ".join(f"{k} = ?" for k in values)
            db.execute(f"UPDATE threads SET {sets} WHERE uuid = ?", (*values.values(), uuid))
        else:
            values.setdefault("status", "pending")
            cols = ["uuid", "account", *values]
            marks = ", ".join("?" for _ in cols)
            db.execute(
                f"INSERT INTO threads ({', '.join(cols)}) VALUES ({marks})",
                (uuid, account, *values.values()),
            )

    def mark_failed(
        self, uuid: str, account: str, error: str, error_path: str | None, **fields: Any
    ) -> None:
        """Record a failure (attempts + 1); the thread is retried by the next run."""
        with self._tx() as db:
            row = db.execute("SELECT attempts FROM threads WHERE uuid = ?", (uuid,)).fetchone()
            attempts = (row[0] if row else 0) + 1
            self._upsert(
                db,
                uuid,
                account,
                {
                    **fields,
                    "status": "failed",
                    "error": error,
                    "error_path": error_path,
                    "attempts": attempts,
                },
            )

    def mark_done(
        self,
        uuid: str,
        account: str,
        fields: Mapping[str, Any],
        variants: Sequence[Mapping[str, Any]] = (),
        run_id: int | None = None,
    ) -> None:
        """Mark a thread done with its new state and variant keys, in one transaction."""
        with self._tx() as db:
            self._upsert(
                db,
                uuid,
                account,
                {**fields, "status": "done", "error": None, "error_path": None, "attempts": 0},
            )
            self._put_variants(db, variants, run_id)

    def counts(self) -> dict[str, int]:
        """Number of threads per status."""
        rows = self._query("SELECT status, COUNT(*) FROM threads GROUP BY status")
        return {str(r[0]): int(r[1]) for r in rows}

    # -- runs -------------------------------------------------------------------------------

    def begin_run(self, command: str, started_at: str) -> int:
        """Record the start of a run; return its id."""
        with self._tx() as db:
            cur = db.execute(
                "INSERT INTO runs (command, started_at) VALUES (?, ?)", (command, started_at)
            )
            return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, finished_at: str, summary: Mapping[str, Any]) -> None:
        """Record the end of a run and its summary."""
        with self._tx() as db:
            db.execute(
                "UPDATE runs SET finished_at = ?, summary = ? WHERE id = ?",
                (finished_at, _dumps(dict(summary)), run_id),
            )

    def runs(self, limit: int = 20) -> list[RunRow]:
        """The latest runs, newest first."""
        rows = self._query("SELECT * FROM runs ORDER BY id DESC LIMIT ?", (limit,))
        return [
            RunRow(
                id=r["id"],
                command=r["command"],
                started_at=r["started_at"],
                finished_at=r["finished_at"],
                summary=_loads(r["summary"]),
            )
            for r in rows
        ]

    # -- variants ---------------------------------------------------------------------------

    def put_variants(self, records: Sequence[Mapping[str, Any]], run_id: int | None) -> None:
        """Store (or replace) registry records by (thread_uuid, entry_uuid), keeping first run."""
        if not records:
            return
        with self._tx() as db:
            self._put_variants(db, records, run_id)

    @staticmethod
    def _put_variants(
        db: sqlite3.Connection, records: Sequence[Mapping[str, Any]], run_id: int | None
    ) -> None:
        for rec in records:
            db.execute(
                "INSERT INTO variants (thread_uuid, entry_uuid, record, first_seen_run) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (thread_uuid, entry_uuid) "
                "DO UPDATE SET record = excluded.record",
                (str(rec["thread_uuid"]), str(rec["entry_uuid"]), _dumps(dict(rec)), run_id),
            )

    def variants(self) -> list[Mapping[str, Any]]:
        """Every registered variant record."""
        rows = self._query("SELECT record FROM variants ORDER BY thread_uuid, entry_uuid")
        return [orjson.loads(r[0]) for r in rows]
