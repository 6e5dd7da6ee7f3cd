"""Full-text search over the archive: an FTS5 index inside ``index/archive.sqlite``.

Tables (all named ``search_*``, next to the state index so one transaction covers both):

``search_docs``     one row per searchable unit: turn ``0`` is the thread (title, conclusions
                    of unplaced background sub-agents), turns ``1..N`` the turns; the prose
                    is kept zlib-compressed (it feeds snippets and exact index deletes).
``search_text``     contentless FTS5, trigram tokenizer (case-insensitive), columns title,
                    query, answer, subagents, sources: literal queries of >= 3 characters
                    are one phrase of trigrams, i.e. an exact substring match, ranked by bm25.
``search_grams``    contentless FTS5 (``detail=none``) of the distinct 1- and 2-character
                    grams of each row, hex-encoded: queries of 1 or 2 characters, which the
                    trigram tokenizer cannot see, look up one gram token - also exact.
``search_threads``  per thread: account, mode, title, folder, space, dates (the filters).
``search_meta``     ``version`` (:data:`SEARCH_VERSION`) and ``state`` (``ready`` or ``stale``).

The index is written by :func:`thread_hook`, called by the store inside the transaction
that marks a thread done. When the stored version differs from :data:`SEARCH_VERSION`
(tokenizer, schema or prose extraction changed) the tables are dropped and recreated as
``stale``; :func:`ensure_ready` then rebuilds them from the stored raw files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import itertools
import re
import sqlite3
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import structlog

from pplx_archiver.core.prose import FIELDS, ThreadProse, TurnProse
from pplx_archiver.errors import PplxError, SearchQueryError, StoreError

log = structlog.get_logger()

# Bump on any change of the tables, the tokenizers, the gram encoding or the prose taken
# from a thread: an index of another version is dropped and rebuilt.
SEARCH_VERSION = 1
DEFAULT_LIMIT = 20
# bm25 weights per column (title, query, answer, subagents, sources): a hit in what was
# asked ranks above one in the title, above one in the answer.
WEIGHTS = (4.0, 8.0, 1.0, 1.0, 0.5)
_SNIPPET_CHARS = 60
# Matches ordered per query at most (the newest ones): keeps a word found in most turns fast.
RANK_CAP = 300

_TABLES = ("search_text", "search_grams", "search_docs", "search_threads", "search_meta")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS search_threads (id INTEGER PRIMARY KEY, uuid TEXT UNIQUE, "
    "account TEXT, "
    "mode TEXT, title TEXT, path TEXT, space_title TEXT, space_slug TEXT, created TEXT, "
    "updated TEXT)",
    "CREATE TABLE IF NOT EXISTS search_docs (id INTEGER PRIMARY KEY, thread INTEGER NOT NULL, "
    "turn INTEGER NOT NULL, created TEXT, prose BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS search_docs_thread ON search_docs (thread)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5("
    + ", ".join(FIELDS)
    + ", content='', tokenize='trigram case_sensitive 0')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_grams USING fts5("
    "grams, content='', detail=none, tokenize='ascii')",
)


# -- schema and version ----------------------------------------------------------------------


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    try:
        row = db.execute("SELECT value FROM search_meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:  # no search tables yet
        return None
    return None if row is None else str(row[0])


def _set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO search_meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def _create(db: sqlite3.Connection, *, state: str) -> None:
    for table in _TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in _SCHEMA:
        db.execute(statement)
    _set_meta(db, "version", str(SEARCH_VERSION))
    _set_meta(db, "state", state)


def ensure_schema(db: sqlite3.Connection, *, committing: str = "") -> None:
    """Create the search tables (or recreate them for another version), inside a transaction.

    A new index of an archive that already holds threads (other than ``committing``, the
    one being marked done) is ``stale`` until rebuilt.
    """
    if _meta(db, "version") == str(SEARCH_VERSION):
        return
    done = db.execute(
        "SELECT COUNT(*) FROM threads WHERE status = 'done' AND uuid != ?", (committing,)
    ).fetchone()[0]
    _create(db, state="stale" if done else "ready")


def index_state(db: sqlite3.Connection) -> str:
    """``ready``, ``stale`` (needs a rebuild) or ``missing`` / ``old`` (other version)."""
    version = _meta(db, "version")
    if version is None:
        return "missing"
    if version != str(SEARCH_VERSION):
        return "old"
    return _meta(db, "state") or "stale"


# -- what a row holds ----------------------------------------------------------------------


def fold(text: str) -> str:
    """The case folding the gram table uses (the trigram table folds the same letters)."""
    return text.lower()


_TOKENS: dict[str | tuple[str, str], str] = {}  # gram -> token, memoized (bounded)


def _gram_token(gram: str | tuple[str, str]) -> str:
    token = _TOKENS.get(gram)
    if token is None:
        token = "g".join(format(ord(c), "x") for c in gram)
        if len(_TOKENS) < 100_000:
            _TOKENS[gram] = token
    return token


def gram_tokens(values: Iterable[str]) -> str:
    """The distinct 1- and 2-character grams of the values as ``ascii`` tokens, sorted.

    A character is its code point in hex (``4e2d``); a pair joins two with ``g``
    (``61g62``), never a hex digit, so no pair reads as a character.
    """
    grams: set[str | tuple[str, str]] = set()
    for value in values:
        text = fold(value)
        grams.update(text)
        grams.update(itertools.pairwise(text))
    return " ".join(sorted(map(_gram_token, grams)))


def _pack(row: TurnProse) -> bytes:
    return zlib.compress(orjson.dumps(list(row.values())), 9)


def _unpack(blob: bytes) -> tuple[str, ...]:
    values = orjson.loads(zlib.decompress(blob))
    return tuple(str(v) for v in values)


def _clean(text: str) -> str:
    """Text safe for the FTS tables: no NUL (FTS5 stops reading at one), no lone surrogates."""
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")


def _insert_row(db: sqlite3.Connection, thread: int, row: TurnProse) -> None:
    values = tuple(_clean(v) for v in row.values())
    row = TurnProse(row.turn, row.created, *values)
    cur = db.execute(
        "INSERT INTO search_docs (thread, turn, created, prose) VALUES (?, ?, ?, ?)",
        (thread, row.turn, row.created or None, _pack(row)),
    )
    rowid = cur.lastrowid
    db.execute(
        f"INSERT INTO search_text (rowid, {', '.join(FIELDS)}) VALUES (?, ?, ?, ?, ?, ?)",
        (rowid, *values),
    )
    db.execute(
        "INSERT INTO search_grams (rowid, grams) VALUES (?, ?)", (rowid, gram_tokens(values))
    )


def _delete_thread(db: sqlite3.Connection, thread: int) -> None:
    """Remove a thread's rows: contentless tables are told the exact values they indexed."""
    rows = db.execute("SELECT id, prose FROM search_docs WHERE thread = ?", (thread,)).fetchall()
    for rowid, blob in rows:
        values = _unpack(blob)
        db.execute(
            f"INSERT INTO search_text (search_text, rowid, {', '.join(FIELDS)}) "
            "VALUES ('delete', ?, ?, ?, ?, ?, ?)",
            (rowid, *values),
        )
        db.execute(
            "INSERT INTO search_grams (search_grams, rowid, grams) VALUES ('delete', ?, ?)",
            (rowid, gram_tokens(values)),
        )
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
            _clean(meta.title),
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


def thread_hook(meta: ThreadMeta, prose: ThreadProse | None) -> Hook:
    """The callable the store runs inside the transaction marking the thread done."""

    def hook(db: sqlite3.Connection) -> None:
        # A failure here must not cost the thread its "done": the search rows are rolled
        # back alone and the index is marked stale (the next search rebuilds it).
        db.execute("SAVEPOINT search_index")
        try:
            index_thread(db, meta, prose)
        except (sqlite3.Error, ValueError) as exc:
            db.execute("ROLLBACK TO search_index")
            log.warning("SEARCH_INDEX_FAILED", thread_uuid=meta.uuid, error=str(exc))
            with contextlib.suppress(sqlite3.Error):
                _set_meta(db, "state", "stale")
        db.execute("RELEASE search_index")

    return hook


# -- rebuild -----------------------------------------------------------------------------------


@dataclasses.dataclass(slots=True)
class RebuildSummary:
    """Counts of one rebuild."""

    threads: int = 0
    rows: int = 0
    failed: int = 0


Progress = Callable[[int, int], None]


def rebuild(archive: Any, *, progress: Progress | None = None, batch: int = 100) -> RebuildSummary:
    """Rebuild the search index of ``archive`` (a store ``Archive``) from its raw files.

    Every thread marked done is rendered again offline (the same render core, no network)
    and its prose indexed; the index is ``stale`` until the last thread is in, so an
    interrupted rebuild starts over next time. ``progress(done, total)`` is called as it goes.
    """
    from pplx_archiver.core.render import render_thread
    from pplx_archiver.shell.archive.fsutil import safe_join
    from pplx_archiver.shell.care.rerender import build_input, context_for

    rows = [r for r in archive.iter_threads("done") if r.path]
    summary = RebuildSummary()
    with archive.index.transaction() as db:
        _create(db, state="stale")
    pending: list[tuple[ThreadMeta, ThreadProse]] = []

    def flush() -> None:
        with archive.index.transaction() as db:
            for meta, prose in pending:
                index_thread(db, meta, prose)
        pending.clear()

    for number, row in enumerate(rows, 1):
        try:
            folder = safe_join(archive.out, *row.path.split("/"))
            inp, record = build_input(folder, row.uuid, row.listing)
            result = render_thread(inp, context_for(record, row.account, None))
        except (PplxError, OSError, ValueError) as exc:
            summary.failed += 1
            log.warning(
                "SEARCH_REBUILD_FAILED", thread_uuid=row.uuid, path=row.path, error=str(exc)
            )
            continue
        meta = meta_of(row.uuid, row.account, row.path, result.record, result.mode, result.title)
        pending.append((meta, result.prose or ThreadProse(rows=())))
        summary.threads += 1
        summary.rows += len(result.prose.rows) if result.prose else 0
        if len(pending) >= batch:
            flush()
        if progress is not None:
            progress(number, len(rows))
    flush()
    with archive.index.transaction() as db:
        db.execute("INSERT INTO search_text (search_text) VALUES ('optimize')")
        db.execute("INSERT INTO search_grams (search_grams) VALUES ('optimize')")
        _set_meta(db, "state", "ready")
    log.info("SEARCH_INDEX_REBUILT", **dataclasses.asdict(summary))
    return summary


def ensure_ready(archive: Any, *, progress: Progress | None = None) -> RebuildSummary | None:
    """Rebuild the index when it is missing, of another version or stale; else None."""
    with archive.index.transaction() as db:
        state = index_state(db)
    if state == "ready":
        return None
    log.info("SEARCH_INDEX_REBUILDING", reason=state)
    return rebuild(archive, progress=progress)


# -- queries -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions on which turns a search may return."""

    mode: str | None = None
    space: str | None = None
    since: str | None = None
    until: str | None = None
    account: str | None = None


_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2})?)?)?)?)?$")


def check_date(value: str | None, option: str) -> str | None:
    """A ``--since``/``--until`` value as a comparable prefix (``YYYY[-MM[-DD[Thh[:mm]]]]``)."""
    if value is None:
        return None
    text = value.strip().replace(" ", "T")
    if not _DATE.match(text) or not _valid_date(text):
        raise SearchQueryError(
            f"{option} {value!r}: expected a date like 2026-07-20 (or 2026-07, 2026-07-20T08:30)"
        )
    return text


def _valid_date(text: str) -> bool:
    full = "2000-01-01T00:00:00"
    try:
        datetime.datetime.fromisoformat(text + full[len(text) :])
    except ValueError:
        return False
    return True


@dataclasses.dataclass(frozen=True, slots=True)
class Hit:
    """One matching turn (``turn`` 0: the thread's title row)."""

    thread_uuid: str
    turn: int
    title: str
    mode: str
    account: str
    space: str
    date: str
    path: str
    field: str
    snippet: str
    match: tuple[int, int] | None
    score: float | None

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` object of this hit."""
        data = dataclasses.asdict(self)
        data["match"] = list(self.match) if self.match else None
        return data


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _filter_sql(filters: Filters) -> tuple[str, list[Any]]:
    where: list[str] = []
    args: list[Any] = []
    if filters.mode:
        where.append("t.mode = ?")
        args.append(filters.mode)
    if filters.account:
        where.append("t.account = ?")
        args.append(filters.account)
    if filters.space:
        where.append("(t.space_title = ? OR t.space_slug = ?)")
        args += [filters.space, filters.space]
    if filters.since:
        where.append("d.created >= ?")
        args.append(filters.since)
    if filters.until:
        where.append("substr(d.created, 1, ?) <= ?")
        args += [len(filters.until), filters.until]
    return "".join(f" AND {w}" for w in where), args


_COLUMNS = (
    "d.id, t.uuid, d.turn, d.created, d.prose, t.title, t.mode, t.account, "
    "t.space_title, t.space_slug, t.path"
)


_K1, _B = 1.2, 0.75  # FTS5's bm25 constants


def bm25_rank(rows: Sequence[tuple[int, Sequence[str]]], text: str) -> list[tuple[int, float]]:
    """(rowid, score) best first: FTS5's bm25 of one phrase without its constant IDF factor.

    Term frequency is the phrase's occurrences per column, column length its trigram count,
    the average length that of the rows scored; scores are negative (lower is better) as
    FTS5's are.
    """
    needle = fold(text)
    sizes = [[len(v) for v in values] for _rowid, values in rows]
    count = max(1, len(rows))
    average = [max(1.0, sum(column) / count) for column in zip(*sizes, strict=True)]
    scored: list[tuple[int, float]] = []
    for (rowid, values), lengths in zip(rows, sizes, strict=True):
        score = 0.0
        for column, value in enumerate(values):
            if not value:
                continue
            tf = fold(value).count(needle)
            if tf:
                norm = 1 - _B + _B * lengths[column] / average[column]
                score += WEIGHTS[column] * tf * (_K1 + 1) / (tf + _K1 * norm)
        scored.append((rowid, -score))
    scored.sort(key=lambda r: (r[1], -r[0]))
    return scored


def _run(db: sqlite3.Connection, sql: str, args: Sequence[Any], query: str, raw: bool) -> Any:
    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        if raw:
            raise SearchQueryError(f"search --raw {query!r}: {exc}") from None
        raise StoreError(f"search {query!r} failed: {exc}") from exc


def _by_ids(db: sqlite3.Connection, sql: str, ids: Sequence[int]) -> list[Any]:
    """Rows of ``sql`` (ending in ``IN``) for the ids, asked in chunks SQLite accepts."""
    out: list[Any] = []
    for first in range(0, len(ids), 500):
        chunk = ids[first : first + 500]
        out += db.execute(f"{sql} ({', '.join('?' for _ in chunk)})", chunk).fetchall()
    return out


def query_rows(
    db: sqlite3.Connection, query: str, filters: Filters, limit: int, *, raw: bool = False
) -> list[tuple[Any, ...]]:
    """The matching rows (best first) with their thread columns and a score (or None).

    A literal query reads its newest ``max(RANK_CAP, limit)`` matches (by index row, i.e.
    the most recently archived; all of them when there are fewer) in one pass of the index,
    which stops there, and orders those: by bm25 for text of >= 3 characters, by turn date
    for 1 or 2. A raw query is ordered by FTS5's own bm25 over every match.
    """
    extra, args = _filter_sql(filters)
    text = _clean(query)
    gram = not raw and len(text) < 3
    table = "search_grams" if gram else "search_text"
    literal = _phrase(_gram_token(fold(text)) if gram else text)
    match = text if raw else literal
    joins = f"FROM {table} s WHERE {table} MATCH ?"
    if extra:
        joins = (
            f"FROM {table} s JOIN search_docs d ON d.id = s.rowid "
            f"JOIN search_threads t ON t.id = d.thread WHERE {table} MATCH ?{extra}"
        )
    ranked: Sequence[tuple[int, float | None]]
    if raw:
        weights = ", ".join(str(w) for w in WEIGHTS)
        ranked = _run(
            db,
            f"SELECT s.rowid, bm25(search_text, {weights}) AS score {joins} "
            "ORDER BY score, s.rowid DESC LIMIT ?",
            (match, *args, limit),
            query,
            raw,
        )
    else:
        found = _run(
            db,
            f"SELECT s.rowid {joins} ORDER BY s.rowid DESC LIMIT ?",
            (match, *args, max(RANK_CAP, limit)),
            query,
            raw,
        )
        ids = [int(r[0]) for r in found]
        if gram:
            dated = _by_ids(db, "SELECT id, created FROM search_docs WHERE id IN", ids)
            dated.sort(key=lambda r: (r[1] or "", r[0]), reverse=True)
            ranked = [(int(r[0]), None) for r in dated[:limit]]
        else:
            texts = _by_ids(db, "SELECT id, prose FROM search_docs WHERE id IN", ids)
            ranked = bm25_rank([(int(r[0]), _unpack(r[1])) for r in texts], text)[:limit]
    if not ranked:
        return []
    rows = _by_ids(
        db,
        f"SELECT {_COLUMNS} FROM search_docs d JOIN search_threads t ON t.id = d.thread "
        "WHERE d.id IN",
        [r[0] for r in ranked],
    )
    by_id = {row[0]: tuple(row) for row in rows}
    return [(*by_id[r[0]], r[1]) for r in ranked if r[0] in by_id]


def search(
    db: sqlite3.Connection,
    query: str,
    filters: Filters = Filters(),
    limit: int = DEFAULT_LIMIT,
    *,
    raw: bool = False,
) -> list[Hit]:
    """The turns matching ``query`` (literal text unless ``raw``), best first."""
    if not query:
        raise SearchQueryError("search: the query is empty")
    if index_state(db) in ("missing", "old"):
        return []  # nothing indexed yet (or only by another version): ensure_ready() first
    hits: list[Hit] = []
    for row in query_rows(db, query, filters, limit, raw=raw):
        _rowid, uuid, turn, created, blob, title, mode, account, sp_title, sp_slug, path, score = (
            row
        )
        values = _unpack(blob)
        field, snippet, match = make_snippet(values, None if raw else query)
        rel = f"{path}/turns/turn_{turn:04d}.md" if turn else f"{path}/conversation.md"
        hits.append(
            Hit(
                thread_uuid=uuid,
                turn=int(turn),
                title=title or "",
                mode=mode or "",
                account=account or "",
                space=sp_title or sp_slug or "",
                date=(created or "")[:10],
                path=rel,
                field=field,
                snippet=snippet,
                match=match,
                score=None if score is None else float(score),
            )
        )
    return hits


def grouped(hits: Sequence[Hit]) -> list[list[Hit]]:
    """Hits grouped by thread, threads in the order of their best hit."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(hit.thread_uuid, []).append(hit)
    return list(groups.values())


def printable(text: str) -> str:
    """One line for a terminal: control and format characters become spaces."""
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)


def _find(text: str, query: str) -> tuple[int, int] | None:
    low = fold(text)
    at = low.find(fold(query))
    if at >= 0 and len(low) == len(text):
        return at, at + len(fold(query))
    found = re.search(re.escape(query), text, re.IGNORECASE)
    return found.span() if found else None


def make_snippet(
    values: Sequence[str], query: str | None
) -> tuple[str, str, tuple[int, int] | None]:
    """(field, one-line snippet, match span in the snippet) for a row's values."""
    order = (1, 0, 2, 3, 4)  # query, title, answer, subagents, sources
    if query is not None:
        for index in order:
            span = _find(values[index], query)
            if span is None:
                continue
            start = max(0, span[0] - _SNIPPET_CHARS)
            end = min(len(values[index]), span[1] + _SNIPPET_CHARS)
            lead = "…" if start else ""
            tail = "…" if end < len(values[index]) else ""
            snippet = lead + printable(values[index][start:end]) + tail
            at = len(lead) + span[0] - start
            return FIELDS[index], snippet, (at, at + span[1] - span[0])
    for index in order:
        if values[index].strip():
            text = values[index]
            cut = text[: 2 * _SNIPPET_CHARS]
            return FIELDS[index], printable(cut) + ("…" if len(text) > len(cut) else ""), None
    return FIELDS[0], "", None


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to the archive index (for searching)."""
    try:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the index: {exc}") from exc


def iter_prose(db: sqlite3.Connection) -> Iterator[tuple[str, int, tuple[str, ...]]]:
    """Every indexed row as (thread uuid, turn, field values): for audits and tests."""
    for uuid, turn, blob in db.execute(
        "SELECT t.uuid, d.turn, d.prose FROM search_docs d "
        "JOIN search_threads t ON t.id = d.thread ORDER BY d.id"
    ):
        yield str(uuid), int(turn), _unpack(blob)


__all__ = [
    "DEFAULT_LIMIT",
    "SEARCH_VERSION",
    "Filters",
    "Hit",
    "ThreadMeta",
    "ensure_ready",
    "index_thread",
    "rebuild",
    "search",
    "thread_hook",
]
