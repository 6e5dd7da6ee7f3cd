"""The archive's state index ``index/archive.sqlite``: threads, runs and answer-variant keys.

One row per thread (status, update time, folder, attempts, last error), one row per run, one
row per registered answer variant. WAL journal, one transaction per finished thread, a
``schema_version`` table. The API is synchronous and thread-safe (one connection guarded by
a lock), so the scheduler's single writer task may call it through ``anyio.to_thread``.

Statuses: ``done`` (all files in place), ``failed`` (retry next run), ``pending`` (being
written or rewritten; a crash leaves it here, so the next run fetches it again), ``deleted``
and ``expired`` (the server answered ENTRY_DELETED / ENTRY_EXPIRED; not retried) and
``not_found`` (the thread answered 404 in two runs, or an id given to ``export`` that the
service does not know; not retried until ``pplx-export forget`` drops it).

Schema version 2 adds ``not_found`` and the ``files`` column: the size and SHA-256 of every
file of the thread folder as the last commit wrote it, so a sync can notice missing or
altered files without parsing them. Version 1 indexes are migrated in place when opened for
writing. A read-only index (``read_only=True``) is opened with SQLite's ``mode=ro`` and
never starts a write transaction.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.layout import normalize_timestamp_key
from pplx_archiver.errors import IndexCorruptError, StoreError

SCHEMA_VERSION = 3
STATUSES = ("done", "failed", "deleted", "expired", "pending", "not_found")
TERMINAL_STATUSES = ("deleted", "expired", "not_found")
REINDEX_HINT = "run `pplx-export reindex --out <archive>` to rebuild it from the thread folders"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS threads (
    uuid             TEXT PRIMARY KEY,
    account          TEXT NOT NULL,
    mode             TEXT,
    title            TEXT,
    path             TEXT,
    status           TEXT NOT NULL
                     CHECK (status IN ('done','failed','deleted','expired','pending',
                                       'not_found')),
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
    first_failed_at  TEXT,
    last_failed_at   TEXT,
    files            TEXT,
    degraded_turns   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS threads_status ON threads (status);
CREATE INDEX IF NOT EXISTS threads_path ON threads (path);
CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    command     TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    summary     TEXT,
    exit_code   INTEGER,
    log_file    TEXT
);
CREATE TABLE IF NOT EXISTS variants (
    thread_uuid    TEXT NOT NULL,
    entry_uuid     TEXT NOT NULL,
    record         TEXT NOT NULL,
    first_seen_run INTEGER,
    PRIMARY KEY (thread_uuid, entry_uuid)
);
"""

_JSON_COLUMNS = ("completeness", "interruptions", "listing", "files")

# Schema migrations: version N-1 → N, run in order inside the opening transaction; a step is
# SQL statements or a function (3 rebuilds the threads table, defined below).
_MIGRATIONS: dict[int, tuple[str, ...] | Callable[[sqlite3.Connection], None]] = {
    # 2: run history (exit code, log file) and when a failing thread first and last failed;
    # threads failing before the upgrade get their last run's start as both dates.
    2: (
        "ALTER TABLE runs ADD COLUMN exit_code INTEGER",
        "ALTER TABLE runs ADD COLUMN log_file TEXT",
        "ALTER TABLE threads ADD COLUMN first_failed_at TEXT",
        "ALTER TABLE threads ADD COLUMN last_failed_at TEXT",
        "UPDATE runs SET exit_code = json_extract(summary, '$.exit_code') "
        "WHERE summary IS NOT NULL AND json_valid(summary)",
        "UPDATE threads SET last_failed_at = "
        "(SELECT started_at FROM runs WHERE runs.id = threads.updated_in_run) "
        "WHERE status = 'failed'",
        "UPDATE threads SET first_failed_at = last_failed_at WHERE status = 'failed'",
    ),
}


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
    first_failed_at: str | None = None
    last_failed_at: str | None = None
    files: Mapping[str, Any] | None = None
    degraded_turns: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class RunRow:
    """One command run: what ran, when, and its summary."""

    id: int
    command: str
    started_at: str
    finished_at: str | None
    summary: Mapping[str, Any] | None
    exit_code: int | None = None
    log_file: str | None = None


def _dumps(value: Any) -> str | None:
    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _loads(value: str | None) -> Any:
    return None if value is None else orjson.loads(value)


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _run_row(r: sqlite3.Row) -> RunRow:
    return RunRow(
        id=r["id"],
        command=r["command"],
        started_at=r["started_at"],
        finished_at=r["finished_at"],
        summary=_loads(r["summary"]),
        exit_code=r["exit_code"],
        log_file=r["log_file"],
    )


def _db_error(path: Path, what: str, exc: sqlite3.Error) -> StoreError:
    """The project's error for an SQLite failure: the path, the reason and a hint."""
    text = str(exc)
    lowered = text.lower()
    if "full" in lowered:
        return StoreError(f"{path}: {what}: {text}; free disk space and run the command again")
    if "readonly" in lowered or "read-only" in lowered:
        return StoreError(f"{path}: {what}: {text}; the archive is not writable by this user")
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return IndexCorruptError(f"{path}: {what}: {text}; the index is damaged: {REINDEX_HINT}")
    if "malformed" in lowered or "not a database" in lowered or "no such table" in lowered:
        return IndexCorruptError(f"{path}: {what}: {text}; the index is damaged: {REINDEX_HINT}")
    return StoreError(f"{path}: {what}: {text}")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """Open the index with ``mode=ro``; fall back to ``immutable=1`` on a read-only folder.

    A WAL database needs its ``-shm`` file to be read; on a read-only folder where no writer
    left one, SQLite cannot create it. No writer can be running there, so the immutable
    open (no locking, no shared memory) reads the same data.
    """
    if not path.is_file():
        raise StoreError(f"{path}: no index here")
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        if os.access(path.parent, os.W_OK) and "unable to open" not in str(exc):
            raise
    return sqlite3.connect(
        uri + "&immutable=1", uri=True, check_same_thread=False, isolation_level=None
    )


def _migrate_status_and_files(db: sqlite3.Connection) -> None:
    """Schema 2 → 3: the ``not_found`` status (rebuilt CHECK) and the ``files`` column."""
    columns = [r[1] for r in db.execute("PRAGMA table_info(threads)")]
    db.execute("ALTER TABLE threads RENAME TO threads_v1")
    db.execute("DROP INDEX IF EXISTS threads_status")
    db.execute("DROP INDEX IF EXISTS threads_path")
    create = _SCHEMA.split("CREATE TABLE IF NOT EXISTS threads")[1].split(";")[0]
    db.execute("CREATE TABLE threads" + create)
    names = ", ".join(columns)
    db.execute(f"INSERT INTO threads ({names}) SELECT {names} FROM threads_v1")
    db.execute("DROP TABLE threads_v1")


_MIGRATIONS[3] = _migrate_status_and_files

_ADD_COLUMN = re.compile(r"^ALTER TABLE (\w+) ADD COLUMN (\w+)")


def _column_exists(db: sqlite3.Connection, statement: str) -> bool:
    """Whether ``statement`` adds a column the table already has (a migration met halfway)."""
    match = _ADD_COLUMN.match(statement)
    if match is None:
        return False
    table, column = match.groups()
    return any(r[1] == column for r in db.execute(f"PRAGMA table_info({table})"))


class Index:
    """The SQLite state index of one archive."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._lock = threading.RLock()
        try:
            if read_only:
                self._db = _connect_read_only(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(
                    path, check_same_thread=False, isolation_level=None, timeout=30.0
                )
            self._db.row_factory = sqlite3.Row
            if read_only:
                self._check_version(self._db.execute("SELECT version FROM schema_version"))
                return
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            with self._tx():
                row = self._db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
                ).fetchone()
                if row is not None:
                    self._migrate(path)
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
                else:
                    self._check_version([row])
        except StoreError:
            raise
        except sqlite3.DatabaseError as exc:
            raise _db_error(path, "cannot open the index", exc) from None
        except OSError as exc:
            raise StoreError(
                f"{path}: cannot open the index: {exc.strerror or exc}; "
                "check that the archive folder is writable"
            ) from None

    def _check_version(self, rows: Any) -> None:
        row = next(iter(rows), None)
        if row is None or row[0] != SCHEMA_VERSION:
            found = "none" if row is None else row[0]
            raise StoreError(
                f"{self.path}: index schema version {found}, this program knows "
                f"{SCHEMA_VERSION}; open it once with a writing command (or {REINDEX_HINT})"
            )

    def _migrate(self, path: Path) -> None:
        """Bring an index of an older schema version up to :data:`SCHEMA_VERSION`."""
        row = self._db.execute("SELECT version FROM schema_version").fetchone()
        version = int(row[0]) if row is not None else SCHEMA_VERSION
        while version < SCHEMA_VERSION and version + 1 in _MIGRATIONS:
            step = _MIGRATIONS[version + 1]
            if callable(step):
                step(self._db)
            else:
                for statement in step:
                    if not _column_exists(self._db, statement):
                        self._db.execute(statement)
            version += 1
            self._db.execute("UPDATE schema_version SET version = ?", (version,))

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._db.close()

    class _Tx:
        def __init__(self, index: Index) -> None:
            self.index = index

        def __enter__(self) -> sqlite3.Connection:
            if self.index.read_only:
                raise StoreError(f"{self.index.path}: the index was opened read-only")
            self.index._lock.acquire()
            try:
                self.index._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                self.index._lock.release()
                raise _db_error(self.index.path, "cannot start a transaction", exc) from None
            except BaseException:
                self.index._lock.release()
                raise
            return self.index._db

        def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
            try:
                self.index._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
            except sqlite3.Error as error:
                if exc_type is None:
                    try:
                        self.index._db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                    raise _db_error(self.index.path, "cannot commit", error) from None
            finally:
                self.index._lock.release()
            if isinstance(exc, sqlite3.Error):
                raise _db_error(self.index.path, "write failed", exc) from None

    def _tx(self) -> Index._Tx:
        """One write transaction under the lock (commit on success, rollback on error)."""
        return Index._Tx(self)

    def transaction(self) -> Index._Tx:
        """A write transaction for tables other modules keep in this file (search index)."""
        return self._tx()

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return list(self._db.execute(sql, args).fetchall())
            except sqlite3.Error as exc:
                raise _db_error(self.path, "query failed", exc) from None

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
        """Record a failure (attempts + 1); the thread is retried by the next run.

        ``failed_at`` (a field, default now) becomes the last failure; the first failure is
        kept while the thread stays failed.
        """
        failed_at = fields.pop("failed_at", None) or _utc_now()
        with self._tx() as db:
            row = db.execute(
                "SELECT attempts, status, first_failed_at FROM threads WHERE uuid = ?", (uuid,)
            ).fetchone()
            attempts = (row[0] if row else 0) + 1
            first = row[2] if row and row[1] == "failed" and row[2] else failed_at
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
                    "first_failed_at": first,
                    "last_failed_at": failed_at,
                },
            )

    def mark_done(
        self,
        uuid: str,
        account: str,
        fields: Mapping[str, Any],
        variants: Sequence[Mapping[str, Any]] = (),
        run_id: int | None = None,
        hook: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """Mark a thread done with its new state and variant keys, in one transaction.

        ``hook`` runs inside that transaction (the search index updates the thread's rows).
        """
        with self._tx() as db:
            self._upsert(
                db,
                uuid,
                account,
                {
                    **fields,
                    "status": "done",
                    "error": None,
                    "error_path": None,
                    "attempts": 0,
                    "first_failed_at": None,
                    "last_failed_at": None,
                },
            )
            self._put_variants(db, variants, run_id)
            if hook is not None:
                hook(db)

    def forget(self, uuid: str) -> bool:
        """Delete a thread's row and its variant rows; False when the index does not know it."""
        with self._tx() as db:
            cur = db.execute("DELETE FROM threads WHERE uuid = ?", (uuid,))
            db.execute("DELETE FROM variants WHERE thread_uuid = ?", (uuid,))
            return bool(cur.rowcount)

    def rekey(self, old: str, new: str) -> bool:
        """File a thread's row, variants and search row under ``new`` instead of ``old``
        (unknown ``new`` only); False when the index does not know ``old``."""
        with self._tx() as db:
            cur = db.execute("UPDATE threads SET uuid = ? WHERE uuid = ?", (new, old))
            if not cur.rowcount:
                return False
            db.execute("UPDATE variants SET thread_uuid = ? WHERE thread_uuid = ?", (new, old))
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
            if "search_threads" in tables:
                db.execute("UPDATE search_threads SET uuid = ? WHERE uuid = ?", (new, old))
            return True

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
            code = summary.get("exit_code")
            db.execute(
                "UPDATE runs SET finished_at = ?, summary = ?, exit_code = ? WHERE id = ?",
                (
                    finished_at,
                    _dumps(dict(summary)),
                    code if isinstance(code, int) else None,
                    run_id,
                ),
            )

    def runs(self, limit: int = 20) -> list[RunRow]:
        """The latest runs, newest first."""
        rows = self._query("SELECT * FROM runs ORDER BY id DESC LIMIT ?", (limit,))
        return [_run_row(r) for r in rows]

    def run(self, run_id: int) -> RunRow | None:
        """One run by id, or None."""
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        return _run_row(rows[0]) if rows else None

    def last_run_id(self) -> int:
        """The id of the newest run (0 when none ran)."""
        rows = self._query("SELECT COALESCE(MAX(id), 0) FROM runs")
        return int(rows[0][0])

    def record_run_outcome(self, run_id: int, exit_code: int, log_file: str | None) -> None:
        """Record the process exit code and the log file of a run (the run history)."""
        with self._tx() as db:
            db.execute(
                "UPDATE runs SET exit_code = ?, log_file = COALESCE(?, log_file) WHERE id = ?",
                (exit_code, log_file, run_id),
            )

    def last_success(self, commands: Sequence[str]) -> RunRow | None:
        """The newest finished run of one of ``commands`` that exited 0."""
        marks = ", ".join("?" for _ in commands)
        rows = self._query(
            f"SELECT * FROM runs WHERE exit_code = 0 AND finished_at IS NOT NULL "
            f"AND command IN ({marks}) ORDER BY id DESC LIMIT 1",
            tuple(commands),
        )
        return _run_row(rows[0]) if rows else None

    def degraded_count(self) -> int:
        """Done threads whose completeness record says something is missing."""
        rows = self._query(
            "SELECT COUNT(*) FROM threads WHERE status = 'done' AND completeness IS NOT NULL "
            "AND json_valid(completeness) AND (json_extract(completeness, '$.complete') = 0 "
            "OR json_extract(completeness, '$.assets_complete') = 0)"
        )
        return int(rows[0][0])

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
