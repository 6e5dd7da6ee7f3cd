"""What ``verify`` checks beyond the thread folders: the index, the search index, the registry.

- the index database itself (``PRAGMA quick_check``): ``index_damaged``;
- the search tables (present, and each FTS5 table's ``integrity-check``, run on a copy of
  its tables in a temporary database: the index is only read): ``search_damaged``;
- the answer-variant registry against the index: a variant record the index holds and the
  registry file lacks (the file deleted or cut short) is ``missing_registry``.

Each kind has its repair in :data:`REPAIRS` (``verify`` prints it after the problem).
Read-only: nothing is changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.index_schema import connect_read_only
from pplx_archiver.shell.archive.registry import read_lines, record_key
from pplx_archiver.shell.archive.search_grams import gram_tokens
from pplx_archiver.shell.archive.search_index import SEPARATOR
from pplx_archiver.shell.archive.store import Archive

_FTS = ("search_tri", "search_grams")
_SEARCH = ("search_docs", "search_threads", "search_meta", *_FTS)
_SHADOWS = ("data", "idx", "config", "docsize", "content")

_REFETCH = "pplx-export sync --full (fetches the thread again)"
_RERENDER = "pplx-export re-render --thread-json"
_REINDEX = "pplx-export reindex"
# problem kind -> the command that repairs it
REPAIRS: dict[str, str] = {
    "missing_path": _REINDEX,
    "bad_path": _REINDEX,
    "missing_folder": _REFETCH,
    "missing_raw": _REFETCH,
    "raw_changed": _REFETCH,
    "bad_raw": _REFETCH,
    "incomplete": _REFETCH,
    "cursor_gap": _REFETCH,
    "missing_asset": _REFETCH,
    "asset_hash": _REFETCH,
    "bad_manifest": _REFETCH,
    "missing_derived": _RERENDER,
    "bad_thread_json": _RERENDER,
    "rerender_mismatch": _RERENDER,
    "stale_derived": _RERENDER,
    "rerender_failed": "pplx-export sync --full (fetches the thread again), or an upgrade",
    "index_mismatch": _REINDEX,
    "bad_registry": _REINDEX,
    "duplicate_variant": _REINDEX,
    "missing_registry": _REINDEX + " (restores the records from the index)",
    "index_damaged": _REINDEX,
    "search_damaged": _REINDEX + " (rebuilds the search index)",
    "temp_file": "none needed: delete the file (an interrupted write left it)",
    "history_damaged": "none: the damaged earlier versions cannot be fetched again; "
    "the current files are not affected",
}


def index_problems(archive: Archive) -> Iterator[tuple[str, str, str]]:
    """``(kind, path, message)`` of damage in the index database and its search tables."""
    path = archive.index.path
    where = str(path.relative_to(archive.out))
    try:
        db = connect_read_only(path)
    except sqlite3.Error as exc:
        yield "index_damaged", where, f"cannot be opened: {exc}"
        return
    try:
        found = [r[0] for r in db.execute("PRAGMA quick_check")]
        if found != ["ok"]:
            yield "index_damaged", where, "; ".join(str(f) for f in found[:3])
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error as exc:
        yield "index_damaged", where, str(exc)
        return
    finally:
        db.close()
    lacking = [t for t in _SEARCH if t not in tables]
    if lacking:
        yield "search_damaged", where, f"search tables missing: {', '.join(lacking)}"
        return
    for table, error in _fts_damage(path):
        yield "search_damaged", where, f"{table}: {error}"
    lost = _probe(path)
    if lost:
        yield "search_damaged", where, lost


def _fts_damage(path: Path) -> Iterator[tuple[str, str]]:
    """Each FTS table's integrity check, run on a copy of its tables in a temporary database
    (FTS5 runs it as an ``INSERT``): the archive's index is only read, never locked."""
    src = connect_read_only(path)
    try:
        names = {r[0] for r in src.execute("SELECT name FROM sqlite_master")}
        for table in _FTS:
            copy = sqlite3.connect("")  # a private temporary database, on disk
            try:
                (sql,) = src.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
                copy.execute(sql[0])
                for name in (f"{table}_{s}" for s in _SHADOWS if f"{table}_{s}" in names):
                    rows = src.execute(f'SELECT * FROM "{name}"')
                    marks = ", ".join("?" * len(rows.description))
                    copy.execute(f'DELETE FROM "{name}"')
                    copy.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
                copy.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 0)")
            except sqlite3.Error as exc:
                yield table, str(exc)
            finally:
                copy.close()
    finally:
        src.close()


PROBES = 32


def _probe(path: Path) -> str | None:
    """Whether the search tables still find text their rows hold: for up to :data:`PROBES`
    rows spread over ``search_docs``, a piece of each row's folded text is looked up in both
    FTS tables by that row's id (an index whose structure was lost finds nothing)."""
    db = connect_read_only(path)
    try:
        count = db.execute("SELECT count(*) FROM search_docs").fetchone()[0]
        step = max(1, count // PROBES)
        rows = db.execute(
            "SELECT id, folded FROM search_docs WHERE id % ? = 0 LIMIT ?", (step, PROBES)
        ).fetchall()
        missed = asked = 0
        for rowid, folded in rows:
            for table, query in _lookups(bytes(folded)):
                asked += 1
                sql = f"SELECT 1 FROM {table} WHERE {table} MATCH ? AND rowid = ?"
                if db.execute(sql, (query, rowid)).fetchone() is None:
                    missed += 1
    except sqlite3.Error as exc:
        return f"a lookup failed: {exc}"
    finally:
        db.close()
    if missed:
        return f"the search index does not find text its rows hold ({missed} of {asked} lookups)"
    return None


def _lookups(folded: bytes) -> Iterator[tuple[str, str]]:
    """A query of each FTS table that must find the row whose folded fields are these."""
    fields = [f.decode("utf-8", "replace") for f in folded.split(SEPARATOR)]
    text = next((f for f in fields if len(f) >= 3 and '"' not in f[:3]), None)
    if text is not None:
        yield "search_tri", f'"{text[:3]}"'
    grams = gram_tokens(fields).split()
    if grams:
        yield "search_grams", grams[0]


def registry_problems(archive: Archive) -> Iterator[tuple[str, str, str]]:
    """Variant records the index holds that the registry file lacks."""
    registry = archive.registry.path
    where = str(registry.relative_to(archive.out))
    lines, _ = read_lines(registry, [])
    held: set[Any] = set()
    for line in lines:
        try:
            held.add(record_key(line))
        except StoreError:  # a bad line is reported by the registry check itself
            continue
    lost = [v for v in archive.index.variants() if _key(v) not in held]
    if lost:
        state = "missing" if not registry.exists() else "lacks them"
        yield (
            "missing_registry",
            where,
            f"{len(lost)} variant records in the index, the registry file {state}",
        )


def _key(record: Any) -> Any:
    try:
        return record_key(record)
    except StoreError:
        return None
