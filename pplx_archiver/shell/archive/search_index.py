"""The search index's tables and rows, inside ``index/archive.sqlite`` (tables ``search_*``).

``search_docs``     one row per searchable unit: turn ``0`` is the thread (title, conclusions
                    of unplaced background sub-agents), turns ``1..N`` the turns; the prose
                    zlib-compressed (for snippets) and its fields case-folded, UTF-8,
                    NUL-separated (``folded``: a match is confirmed there and ranked from
                    it; a row is removed from the contentless tables with them).
``search_tri``      contentless FTS5 (``detail=none``, SQLite's ``trigram`` tokenizer) of
                    each row's case-folded fields: every 3-character piece; and, in its
                    ``short`` column, every 1- and 2-character piece (the fields with a
                    mark between their characters).
``search_grams``    contentless FTS5 (``detail=none``, ``ascii`` tokenizer) of the distinct
                    space-centred 7-character pieces of each row's case-folded fields,
                    hex-encoded (:mod:`~pplx_archiver.shell.archive.search_grams` says how
                    a query uses the two tables).
``search_threads``  per thread: account, mode, title, folder, space, dates (the filters).
``search_meta``     ``version`` (:data:`SEARCH_VERSION`) and ``state`` (``ready`` or ``stale``).

The index is written by :func:`thread_hook`, called by the store inside the transaction
that marks a thread done. When the stored version differs from :data:`SEARCH_VERSION`
(tokens, schema or prose extraction changed) the tables are dropped and recreated as
``stale``; the rebuild (``search_rebuild``) then fills them from the stored raw files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import structlog

from pplx_archiver.core.thread.prose import ThreadProse, TurnProse
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.index import HookFailed
from pplx_archiver.shell.archive.search_grams import UNINDEXED, fold, gram_tokens, short_text

log = structlog.get_logger()

# Bump on any change of the tables, the grams, their encoding or the prose taken from a
# thread: an index of another version is dropped and rebuilt.
SEARCH_VERSION = 5
SEPARATOR = b"\x00"  # between the folded fields in search_docs.folded (never in a value)

# search_text: the trigram table (with positions) of version 1, dropped with the rest.
_TABLES = (
    "search_text",
    "search_tri",
    "search_grams",
    "search_docs",
    "search_threads",
    "search_meta",
)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS search_threads (id INTEGER PRIMARY KEY, uuid TEXT UNIQUE, "
    "account TEXT, "
    "mode TEXT, title TEXT, path TEXT, space_title TEXT, space_slug TEXT, created TEXT, "
    "updated TEXT)",
    "CREATE TABLE IF NOT EXISTS search_docs (id INTEGER PRIMARY KEY, thread INTEGER NOT NULL, "
    "turn INTEGER NOT NULL, created TEXT, folded BLOB NOT NULL, prose BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS search_docs_thread ON search_docs (thread)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_grams USING fts5("
    "grams, content='', detail=none, columnsize=0, tokenize='ascii')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_tri USING fts5("
    "title, query, answer, subagents, sources, short, content='', detail=none, columnsize=0, "
    "tokenize='trigram case_sensitive 1')",
)


# -- schema and version ----------------------------------------------------------------------


def meta_value(db: sqlite3.Connection, key: str) -> str | None:
    """A ``search_meta`` value (None when unset or when there are no search tables)."""
    try:
        row = db.execute("SELECT value FROM search_meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:  # no search tables yet
        return None
    return None if row is None else str(row[0])


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    """Set a ``search_meta`` value."""
    db.execute(
        "INSERT INTO search_meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def create(db: sqlite3.Connection, *, state: str) -> None:
    """Drop every search table (of any version) and create empty ones in ``state``."""
    for table in _TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in _SCHEMA:
        db.execute(statement)
    set_meta(db, "version", str(SEARCH_VERSION))
    set_meta(db, "state", state)


def ensure_schema(db: sqlite3.Connection, *, committing: str = "") -> None:
    """Create the search tables (or recreate them for another version), inside a transaction.

    A new index of an archive that already holds threads (other than ``committing``, the
    one being marked done) is ``stale`` until rebuilt.
    """
    if meta_value(db, "version") == str(SEARCH_VERSION):
        return
    done = db.execute(
        "SELECT COUNT(*) FROM threads WHERE status = 'done' AND uuid != ?", (committing,)
    ).fetchone()[0]
    create(db, state="stale" if done else "ready")


def index_state(db: sqlite3.Connection) -> str:
    """``ready``, ``stale`` (needs a rebuild) or ``missing`` / ``old`` (other version)."""
    version = meta_value(db, "version")
    if version is None:
        return "missing"
    if version != str(SEARCH_VERSION):
        return "old"
    return meta_value(db, "state") or "stale"


# -- rows --------------------------------------------------------------------------------------


def pack(row: TurnProse) -> bytes:
    """A row's field values as stored in ``search_docs.prose``."""
    return zlib.compress(orjson.dumps(list(row.values())), 9)


def unpack(blob: bytes) -> tuple[str, ...]:
    """The field values of a stored row."""
    values = orjson.loads(zlib.decompress(blob))
    return tuple(str(v) for v in values)


def folded_fields(values: Iterable[str]) -> bytes:
    """The values case-folded, UTF-8, NUL-separated: what a match is confirmed against."""
    return _joined(map(fold, values))


def clean(text: str) -> str:
    """Text safe for the index: no NUL (FTS5 stops reading at one) nor the short column's
    marks (each becomes a space), no lone surrogates."""
    for char in UNINDEXED:  # three scans in C: ~15× faster than str.translate here
        text = text.replace(char, " ")
    return text.encode("utf-8", "replace").decode("utf-8")


_TRI_INSERT = (
    "INSERT INTO search_tri (rowid, title, query, answer, subagents, sources, short) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_TRI_DELETE = (
    "INSERT INTO search_tri (search_tri, rowid, title, query, answer, subagents, sources, "
    "short) VALUES ('delete', ?, ?, ?, ?, ?, ?, ?)"
)
_GRAMS_INSERT = "INSERT INTO search_grams (rowid, grams) VALUES (?, ?)"
_GRAMS_DELETE = "INSERT INTO search_grams (search_grams, rowid, grams) VALUES ('delete', ?, ?)"


def _insert_row(db: sqlite3.Connection, thread: int, row: TurnProse) -> None:
    values = tuple(clean(v) for v in row.values())
    row = TurnProse(row.turn, row.created, *values)
    folded = tuple(map(fold, values))
    cur = db.execute(
        "INSERT INTO search_docs (thread, turn, created, folded, prose) VALUES (?, ?, ?, ?, ?)",
        (thread, row.turn, row.created or None, _joined(folded), pack(row)),
    )
    db.execute(_TRI_INSERT, (cur.lastrowid, *folded, short_text(folded)))
    tokens = gram_tokens(folded)
    if tokens:  # a row without a space-centred piece has no search_grams row
        db.execute(_GRAMS_INSERT, (cur.lastrowid, tokens))


def _joined(folded: Iterable[str]) -> bytes:
    return SEPARATOR.join(v.encode("utf-8") for v in folded)


def _delete_thread(db: sqlite3.Connection, thread: int) -> None:
    """Remove a thread's rows: the contentless tables are told the exact values they indexed
    (the folded fields, their short column and their space-centred tokens)."""
    rows = db.execute("SELECT id, folded FROM search_docs WHERE thread = ?", (thread,)).fetchall()
    for rowid, folded in rows:
        fields = bytes(folded).decode("utf-8").split("\x00")
        db.execute(_TRI_DELETE, (rowid, *fields, short_text(fields)))
        tokens = gram_tokens(fields)
        if tokens:
            db.execute(_GRAMS_DELETE, (rowid, tokens))
    db.execute("DELETE FROM search_docs WHERE thread = ?", (thread,))


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadMeta:
    """What the filters and the result lines know of a thread."""

    uuid: str
    account: str
    mode: str
    title: str
    path: str
    space_title: str = ""
    space_slug: str = ""
    created: str = ""
    updated: str = ""


def index_thread(db: sqlite3.Connection, meta: ThreadMeta, prose: ThreadProse | None) -> None:
    """Replace a thread's search rows (inside the caller's transaction).

    Without prose (a result that carries none) only the title is indexed.
    """
    ensure_schema(db, committing=meta.uuid)
    rows = prose.rows if prose is not None else (TurnProse(0, meta.created, title=meta.title),)
    thread = db.execute(
        "INSERT INTO search_threads (uuid, account, mode, title, path, space_title, space_slug, "
        "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uuid) DO UPDATE SET "
        "account = excluded.account, mode = excluded.mode, title = excluded.title, "
        "path = excluded.path, space_title = excluded.space_title, "
        "space_slug = excluded.space_slug, created = excluded.created, "
        "updated = excluded.updated RETURNING id",
        (
            meta.uuid,
            meta.account,
            meta.mode,
            clean(meta.title),
            meta.path,
            meta.space_title,
            meta.space_slug,
            meta.created,
            meta.updated,
        ),
    ).fetchone()[0]
    _delete_thread(db, thread)
    for row in rows:
        _insert_row(db, thread, row)


def optimize(db: sqlite3.Connection) -> None:
    """Merge the gram tables' segments, each into one (after a bulk build)."""
    db.execute("INSERT INTO search_tri (search_tri) VALUES ('optimize')")
    db.execute("INSERT INTO search_grams (search_grams) VALUES ('optimize')")


def meta_of(
    uuid: str, account: str, path: str, record: Mapping[str, Any], mode: str, title: str
) -> ThreadMeta:
    """The thread's filter values from its ``thread.json`` record."""
    space = record.get("space")
    space_title = space_slug = ""
    if isinstance(space, Mapping):
        space_title = str(space.get("title") or "")
        space_slug = str(space.get("slug") or "")

    def text(key: str) -> str:
        value = record.get(key)
        return value if isinstance(value, str) else ""

    return ThreadMeta(
        uuid=uuid,
        account=account,
        mode=mode,
        title=title,
        path=path,
        space_title=space_title,
        space_slug=space_slug,
        created=text("created"),
        updated=text("last_updated"),
    )


Hook = Callable[[sqlite3.Connection], None]


@dataclasses.dataclass(frozen=True, slots=True)
class SearchHook:
    """The search rows of one thread, written inside the transaction marking it done.

    Called, it keeps a failure to itself: the rows are rolled back alone (a savepoint) and
    the index is marked stale (the next search rebuilds it), so the thread stays done.
    :meth:`fast` writes them without a savepoint and raises :class:`HookFailed` instead;
    ``Index.mark_done_many`` tries a batch that way first (see there).
    """

    meta: ThreadMeta
    prose: ThreadProse | None

    def __call__(self, db: sqlite3.Connection) -> None:
        db.execute("SAVEPOINT search_index")
        try:
            index_thread(db, self.meta, self.prose)
        except (sqlite3.Error, ValueError) as exc:
            db.execute("ROLLBACK TO search_index")
            log.warning("SEARCH_INDEX_FAILED", thread_uuid=self.meta.uuid, error=str(exc))
            with contextlib.suppress(sqlite3.Error):
                set_meta(db, "state", "stale")
        db.execute("RELEASE search_index")

    def fast(self, db: sqlite3.Connection) -> None:
        try:
            index_thread(db, self.meta, self.prose)
        except (sqlite3.Error, ValueError) as exc:
            raise HookFailed(f"{self.meta.uuid}: {exc}") from exc


def thread_hook(meta: ThreadMeta, prose: ThreadProse | None) -> SearchHook:
    """The callable the store runs inside the transaction marking the thread done."""
    return SearchHook(meta, prose)


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to the archive index (for searching)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
        # A query reads a few hundred rows spread over the file: map it rather than copy
        # every page into a small cache.
        db.execute("PRAGMA mmap_size = 1073741824")
        db.execute("PRAGMA cache_size = -32768")
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the index: {exc}") from exc
    return db


def iter_prose(db: sqlite3.Connection) -> Iterator[tuple[str, int, tuple[str, ...]]]:
    """Every indexed row as (thread uuid, turn, field values): for audits and tests."""
    for uuid, turn, blob in db.execute(
        "SELECT t.uuid, d.turn, d.prose FROM search_docs d "
        "JOIN search_threads t ON t.id = d.thread ORDER BY d.id"
    ):
        yield str(uuid), int(turn), unpack(blob)
