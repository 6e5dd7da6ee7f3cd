"""The schema of ``index/archive.sqlite``, its migrations, row types and connection helpers.

Used by :class:`~pplx_archiver.shell.archive.index.Index`; see there for the statuses.

Schema version 2 adds ``not_found`` and the ``files`` column: the size and SHA-256 of every
file of the thread folder as the last commit wrote it, so a sync can notice missing or
altered files without parsing them. Version 1 indexes are migrated in place when opened for
writing.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sqlite3
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.errors import IndexCorruptError, StoreError

SCHEMA_VERSION = 4
STATUSES = ("done", "failed", "deleted", "expired", "pending", "not_found")
TERMINAL_STATUSES = ("deleted", "expired", "not_found")
REINDEX_HINT = "run `pplx-export reindex --out <archive>` to rebuild it from the thread folders"

# A done thread archived without a report or asset it could not fetch (retried next run).
INCOMPLETE_WHERE = (
    "status = 'done' AND completeness IS NOT NULL AND json_valid(completeness) "
    "AND json_extract(completeness, '$.assets_complete') = 0"
)

# A run's outcome: exit code, log file and (when there is one) its error in the summary.
OUTCOME_SQL = (
    "UPDATE runs SET exit_code = ?, log_file = COALESCE(?, log_file), summary = CASE WHEN ? "
    "IS NULL THEN summary ELSE json_set(COALESCE(summary, '{}'), '$.error', ?) END WHERE id = ?"
)


def reindex_hint(index_path: Path) -> str:
    """The reindex hint naming the real archive (``index_path`` is ``<archive>/index/…``)."""
    archive = shlex.quote(str(Path(index_path).parent.parent))
    return f"run `pplx-export reindex --out {archive}` to rebuild it from the thread folders"


SCHEMA = """
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
CREATE TABLE IF NOT EXISTS alerts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT NOT NULL,
    thread_uuid TEXT NOT NULL DEFAULT '',
    fact        TEXT NOT NULL,
    run_id      INTEGER,
    found_at    TEXT NOT NULL,
    fields      TEXT NOT NULL,
    UNIQUE (kind, thread_uuid, fact)
);
CREATE INDEX IF NOT EXISTS alerts_found ON alerts (found_at);
CREATE TABLE IF NOT EXISTS mode_memos (
    uuid        TEXT PRIMARY KEY,
    updated_key TEXT NOT NULL,
    mode        TEXT NOT NULL,
    run_id      INTEGER
);
CREATE TABLE IF NOT EXISTS verify_rotation (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    position     TEXT NOT NULL,
    pass_started TEXT NOT NULL,
    covered_from TEXT,
    covered_at   TEXT
);
"""

JSON_COLUMNS = ("completeness", "interruptions", "listing", "files")

# Schema migrations: version N-1 → N, run in order inside the opening transaction; a step is
# SQL statements or a function (3 rebuilds the threads table, defined below).
MIGRATIONS: dict[int, tuple[str, ...] | Callable[[sqlite3.Connection], None]] = {
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


class HookFailed(Exception):
    """A hook's ``fast`` form failed: its batch is marked again with every hook guarded."""


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


def dumps(value: Any) -> str | None:
    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def loads(value: str | None) -> Any:
    return None if value is None else orjson.loads(value)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def run_row(r: sqlite3.Row) -> RunRow:
    return RunRow(
        id=r["id"],
        command=r["command"],
        started_at=r["started_at"],
        finished_at=r["finished_at"],
        summary=loads(r["summary"]),
        exit_code=r["exit_code"],
        log_file=r["log_file"],
    )


def index_file_damage(path: Path) -> str | None:
    """What is wrong with the index file itself, or None: ``missing``, ``empty (0 bytes)``,
    ``not an SQLite database``, ``a foreign SQLite database (no threads table)``."""
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return None  # unreadable: the open says why
    if not head:
        wal = Path(f"{path}-wal")
        return None if wal.is_file() and wal.stat().st_size else "empty (0 bytes)"
    if head != b"SQLite format 3\x00":
        return "not an SQLite database"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            found = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'threads'"
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None  # damaged inside: the open says how
    return None if found else "a foreign SQLite database (no threads table)"


def refuse_damaged(path: Path) -> None:
    """Raise :class:`IndexCorruptError` for an index file that is there but is no index."""
    damage = index_file_damage(path) if path.name == "archive.sqlite" else None
    if damage is not None and damage != "missing":
        raise IndexCorruptError(f"{path}: the index is {damage}: {reindex_hint(path)}")


def disk_full(path: Path) -> bool:
    """Whether the file system holding ``path`` has no block left for this user (a read-only
    command's SQLite then says only "disk I/O error": it could not make its ``-shm`` file)."""
    try:
        stats = os.statvfs(path.parent if not path.is_dir() else path)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


def db_error(path: Path, what: str, exc: sqlite3.Error) -> StoreError:
    """The project's error for an SQLite failure: the path, the reason and a hint."""
    text = str(exc)
    lowered = text.lower()
    io_error = "disk i/o error" in lowered or "unable to open" in lowered
    if "full" in lowered or (io_error and disk_full(path)):
        return StoreError(
            f"{path}: {what}: {text}; the disk is full: free disk space and run the command again"
        )
    if "readonly" in lowered or "read-only" in lowered:
        return StoreError(f"{path}: {what}: {text}; the archive is not writable by this user")
    damage = index_file_damage(path) if path.name == "archive.sqlite" else None
    if damage is not None and damage != "missing":
        return IndexCorruptError(f"{path}: {what}: the index is {damage}: {reindex_hint(path)}")
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return IndexCorruptError(
            f"{path}: {what}: {text}; the index is damaged: {reindex_hint(path)}"
        )
    if "malformed" in lowered or "not a database" in lowered or "no such table" in lowered:
        return IndexCorruptError(
            f"{path}: {what}: {text}; the index is damaged: {reindex_hint(path)}"
        )
    return StoreError(f"{path}: {what}: {text}")


def connect_read_only(path: Path) -> sqlite3.Connection:
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


def migrate_status_and_files(db: sqlite3.Connection) -> None:
    """Schema 2 → 3: the ``not_found`` status (rebuilt CHECK) and the ``files`` column."""
    columns = [r[1] for r in db.execute("PRAGMA table_info(threads)")]
    db.execute("ALTER TABLE threads RENAME TO threads_v1")
    db.execute("DROP INDEX IF EXISTS threads_status")
    db.execute("DROP INDEX IF EXISTS threads_path")
    create = SCHEMA.split("CREATE TABLE IF NOT EXISTS threads")[1].split(";")[0]
    db.execute("CREATE TABLE threads" + create)
    names = ", ".join(columns)
    db.execute(f"INSERT INTO threads ({names}) SELECT {names} FROM threads_v1")
    db.execute("DROP TABLE threads_v1")


MIGRATIONS[3] = migrate_status_and_files
# 4: the alerts table (created by SCHEMA when the index is opened for writing)
MIGRATIONS[4] = ()

ADD_COLUMN = re.compile(r"^ALTER TABLE (\w+) ADD COLUMN (\w+)")


def column_exists(db: sqlite3.Connection, statement: str) -> bool:
    """Whether ``statement`` adds a column the table already has (a migration met halfway)."""
    match = ADD_COLUMN.match(statement)
    if match is None:
        return False
    table, column = match.groups()
    return any(r[1] == column for r in db.execute(f"PRAGMA table_info({table})"))


def rekey_rows(db: sqlite3.Connection, old: str, new: str) -> bool:
    """File a thread's row, variants and search row under ``new`` instead of ``old`` (unknown
    ``new`` only); False when the index does not know ``old``."""
    cur = db.execute("UPDATE threads SET uuid = ? WHERE uuid = ?", (new, old))
    if not cur.rowcount:
        return False
    db.execute("UPDATE variants SET thread_uuid = ? WHERE thread_uuid = ?", (new, old))
    db.execute("UPDATE alerts SET thread_uuid = ? WHERE thread_uuid = ?", (new, old))
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    if "search_threads" in tables:
        db.execute("UPDATE search_threads SET uuid = ? WHERE uuid = ?", (new, old))
    return True


def migrate(db: sqlite3.Connection) -> None:
    """Bring an index of an older schema version up to :data:`SCHEMA_VERSION`."""
    row = db.execute("SELECT version FROM schema_version").fetchone()
    version = int(row[0]) if row is not None else SCHEMA_VERSION
    while version < SCHEMA_VERSION and version + 1 in MIGRATIONS:
        step = MIGRATIONS[version + 1]
        if callable(step):
            step(db)
        else:
            for statement in step:
                if not column_exists(db, statement):
                    db.execute(statement)
        version += 1
        db.execute("UPDATE schema_version SET version = ?", (version,))
