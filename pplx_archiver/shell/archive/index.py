"""The archive's state index ``index/archive.sqlite``: threads, runs and answer-variant keys.

A row per thread (status, update time, folder, attempts, last error), run and answer variant;
WAL; thread-safe (one connection, one lock); written by the archive's writer only. Statuses:
``done``, ``failed`` (retried next run), ``pending`` (being written; a crash leaves it here),
the tombstones ``deleted``/``expired``/``not_found`` (fetched again only when listed or
exported again). Schema: ``index_schema``. Read-only: ``mode=ro``, never a write transaction.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread.layout import normalize_timestamp_key
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive import index_schema as sch
from pplx_archiver.shell.archive.index_modes import ModeMemoTable
from pplx_archiver.shell.archive.index_schema import (
    REINDEX_HINT,
    SCHEMA_VERSION,
    STATUSES,
    TERMINAL_STATUSES,
    HookFailed,
    RunRow,
    ThreadRow,
    rekey_rows,
)
from pplx_archiver.shell.archive.index_verify import VerifyRotationTable

__all__ = ["REINDEX_HINT", "SCHEMA_VERSION", "STATUSES", "TERMINAL_STATUSES"]
__all__ += ["Done", "HookFailed", "Index", "RunRow", "ThreadRow"]

PAGE_ROWS = 2000  # rows read at once by iter_threads
# A thread a group commit marks done: uuid, account, index fields, the hook run with it.
Done = tuple[str, str, Mapping[str, Any], Callable[[sqlite3.Connection], None] | None]


class Index(ModeMemoTable, VerifyRotationTable):
    """The SQLite state index of one archive (``mode_memos``, ``verify_rotation``: mixins)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._lock = threading.RLock()
        sch.refuse_damaged(path)  # never made into a new, empty index
        try:
            if read_only:
                self._db = sch.connect_read_only(path)
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
                    sch.migrate(self._db)
                for statement in sch.SCHEMA.split(";"):
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
            raise sch.db_error(path, "cannot open the index", exc) from None
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
                f"{SCHEMA_VERSION}; open it once with a writing command "
                f"(or {sch.reindex_hint(self.path)})"
            )

    # -- plumbing ---------------------------------------------------------------------------

    def close(self, *, checkpoint: bool = False) -> None:
        """Close the connection (idempotent; ``checkpoint``: the WAL moved into the file first)."""
        with self._lock:
            if checkpoint:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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
                raise sch.db_error(self.index.path, "cannot start a transaction", exc) from None
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
                    raise sch.db_error(self.index.path, "cannot commit", error) from None
            finally:
                self.index._lock.release()
            if isinstance(exc, sqlite3.Error):
                raise sch.db_error(self.index.path, "write failed", exc) from None

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
                raise sch.db_error(self.path, "query failed", exc) from None

    def select(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """The rows of one read query (tables other modules keep in this file)."""
        return self._query(sql, args)

    # -- threads ----------------------------------------------------------------------------

    @staticmethod
    def thread_row(row: sqlite3.Row) -> ThreadRow:
        values = dict(row)
        for key in sch.JSON_COLUMNS:
            values[key] = sch.loads(values[key])
        return ThreadRow(**values)

    def get(self, uuid: str) -> ThreadRow | None:
        """The thread's row, or None when the index does not know it."""
        rows = self._query("SELECT * FROM threads WHERE uuid = ?", (uuid,))
        return self.thread_row(rows[0]) if rows else None

    def iter_threads(self, status: str | None = None, after: str = "") -> Iterator[ThreadRow]:
        """Every thread row (of one status) after uuid ``after``, in uuid order, read by pages:
        memory stays bounded however many threads the archive holds."""
        where = "uuid > ?" + ("" if status is None else " AND status = ?")
        while rows := self._query(
            f"SELECT * FROM threads WHERE {where} ORDER BY uuid LIMIT {PAGE_ROWS}",
            (after,) if status is None else (after, status),
        ):
            yield from (self.thread_row(row) for row in rows)
            after = rows[-1]["uuid"]

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
        for key in sch.JSON_COLUMNS:
            if key in values:
                values[key] = sch.dumps(values[key])
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
        failed_at = fields.pop("failed_at", None) or sch.utc_now()
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
        """Mark a thread done with its new state and variant keys, in one transaction;
        ``hook`` runs inside it (the search index updates the thread's rows)."""
        with self._tx() as db:
            self._done(db, uuid, account, fields)
            self._put_variants(db, variants, run_id)
            if hook is not None:
                hook(db)

    def mark_done_many(self, batch: Sequence[Done]) -> None:
        """Mark a batch of threads done in ONE transaction (a group commit's flush).

        Each thread's hook runs right after its row is updated; a hook keeps its own failures
        to itself (the search hook rolls back to its savepoint), while any other error rolls
        the whole batch back: no thread of it is marked done. A hook's ``fast`` form (no
        savepoint: FTS5 writes its pending rows out at every one) is tried first; when one
        raises :class:`HookFailed` the batch is rolled back and marked with every hook guarded.
        """
        try:
            self._mark_batch(batch, fast=True)
        except HookFailed:
            self._mark_batch(batch, fast=False)

    def _mark_batch(self, batch: Sequence[Done], *, fast: bool) -> None:
        with self._tx() as db:
            for uuid, account, fields, hook in batch:
                self._done(db, uuid, account, fields)
                if hook is not None:
                    (getattr(hook, "fast", hook) if fast else hook)(db)

    def _done(self, db: sqlite3.Connection, uuid: str, account: str, fields: Any) -> None:
        cleared = dict.fromkeys(("error", "error_path", "first_failed_at", "last_failed_at"))
        self._upsert(db, uuid, account, {**fields, "status": "done", "attempts": 0, **cleared})

    def forget(self, uuid: str) -> bool:
        """Delete a thread's row, variants and alerts; False when the index does not know it."""
        with self._tx() as db:
            cur = db.execute("DELETE FROM threads WHERE uuid = ?", (uuid,))
            db.execute("DELETE FROM variants WHERE thread_uuid = ?", (uuid,))
            db.execute("DELETE FROM alerts WHERE thread_uuid = ?", (uuid,))
            return bool(cur.rowcount)

    def rekey(self, old: str, new: str) -> bool:
        """File a thread's rows under ``new`` instead of ``old`` (see ``rekey_rows``)."""
        with self._tx() as db:
            return rekey_rows(db, old, new)

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
            code = code if isinstance(code, int) else None
            db.execute(
                "UPDATE runs SET finished_at = ?, summary = ?, exit_code = ? WHERE id = ?",
                (finished_at, sch.dumps(dict(summary)), code, run_id),
            )

    def runs(self, limit: int = 20) -> list[RunRow]:
        """The latest runs, newest first."""
        rows = self._query("SELECT * FROM runs ORDER BY id DESC LIMIT ?", (limit,))
        return [sch.run_row(r) for r in rows]

    def run(self, run_id: int) -> RunRow | None:
        """One run by id, or None."""
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        return sch.run_row(rows[0]) if rows else None

    def last_run_id(self) -> int:
        """The id of the newest run (0 when none ran)."""
        rows = self._query("SELECT COALESCE(MAX(id), 0) FROM runs")
        return int(rows[0][0])

    def record_run_outcome(
        self, run_id: int, exit_code: int, log_file: str | None, error: str | None = None
    ) -> None:
        """Record a run's process exit code, log file and error (the summary's ``error``)."""
        with self._tx() as db:
            db.execute(sch.OUTCOME_SQL, (exit_code, log_file, error, error, run_id))

    def last_success(self, commands: Sequence[str]) -> RunRow | None:
        """The newest finished run of one of ``commands`` that exited 0."""
        marks = ", ".join("?" for _ in commands)
        rows = self._query(
            f"SELECT * FROM runs WHERE exit_code = 0 AND finished_at IS NOT NULL "
            f"AND command IN ({marks}) ORDER BY id DESC LIMIT 1",
            tuple(commands),
        )
        return sch.run_row(rows[0]) if rows else None

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
                (str(rec["thread_uuid"]), str(rec["entry_uuid"]), sch.dumps(dict(rec)), run_id),
            )

    def variants(self) -> list[Mapping[str, Any]]:
        """Every registered variant record."""
        rows = self._query("SELECT record FROM variants ORDER BY thread_uuid, entry_uuid")
        return [orjson.loads(r[0]) for r in rows]
