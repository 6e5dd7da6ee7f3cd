"""Running a search: candidate rows from the gram tables, confirmed and ranked, as hits.

A literal query of 1 to 3 characters is one gram: the rows holding it are exactly the
matches. A longer one asks for the rows holding all its 3-character and space-centred
grams (``search_grams.query_grams``), newest first, and keeps those whose prose contains
the text (a substring test of the stored, case-folded fields), stopping after
``max(RANK_CAP, limit)`` matches. Those are ranked: by bm25 (see :func:`bm25_rank`) for
text of 3 characters or more, by turn date for 1 or 2. A ``--raw`` query (``search_raw``)
runs the same way with its own exact test. Snippets and thread columns are read for the
hits returned only.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.errors import SearchQueryError, StoreError
from pplx_archiver.shell.archive import search_raw
from pplx_archiver.shell.archive.search_grams import GramQuery, fold, query_grams
from pplx_archiver.shell.archive.search_index import (
    SEPARATOR,
    clean,
    index_state,
    unpack,
)
from pplx_archiver.shell.archive.search_snippet import make_snippet

DEFAULT_LIMIT = 20
# bm25 weights per column (title, query, answer, subagents, sources): a hit in what was
# asked ranks above one in the title, above one in the answer.
WEIGHTS = (4.0, 8.0, 1.0, 1.0, 0.5)
# Matches ranked per query at most (the newest ones): keeps a word found in most turns fast.
RANK_CAP = 300
_K1, _B = 1.2, 0.75  # FTS5's bm25 constants


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


def _matching(grams: GramQuery) -> tuple[str, str, list[str]]:
    """The table a query's rows come from, its condition and the condition's arguments."""
    if grams.tri is not None and grams.short is not None:
        # `+s.rowid`: the rowids of the sub-select must not drive the trigram table (an
        # FTS5 query at each of them: seconds for a common phrase); it is a filter only.
        where = (
            "search_tri MATCH ? AND +s.rowid IN "
            "(SELECT rowid FROM search_grams WHERE search_grams MATCH ?)"
        )
        return "search_tri", where, [grams.tri, grams.short]
    if grams.tri is not None:
        return "search_tri", "search_tri MATCH ?", [grams.tri]
    if grams.short is not None:
        return "search_grams", "search_grams MATCH ?", [grams.short]
    return "search_docs", "1", []  # nothing narrows it: every row is a candidate


def candidate_query(
    grams: GramQuery,
    filters: Filters,
    *,
    limit: int | None = None,
    fields: bool = True,
    prose: bool = False,
) -> tuple[str, list[Any]]:
    """The SQL (and its arguments) of :func:`candidates`."""
    extra, args = _filter_sql(filters)
    threads = " JOIN search_threads t ON t.id = d.thread" if extra else ""
    folded = "d.prose" if prose else "d.folded" if fields else "x''"
    table, where, match_args = _matching(grams)
    source = (
        f"{table} s JOIN search_docs d ON d.id = s.rowid"
        if table != "search_docs"
        else ("search_docs s JOIN search_docs d ON d.id = s.id")
    )
    key = "s.id" if table == "search_docs" else "s.rowid"
    sql = (
        f"SELECT {key}, d.created, {folded} FROM {source}{threads} WHERE {where}{extra} "
        f"ORDER BY {key} DESC"
    )
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return sql, [*match_args, *args]


def candidates(
    db: sqlite3.Connection,
    grams: GramQuery,
    filters: Filters,
    *,
    limit: int | None = None,
    fields: bool = True,
    prose: bool = False,
) -> Iterator[tuple[int, str | None, bytes]]:
    """(rowid, turn date, folded fields or b"" — or the stored prose when ``prose``) of the
    rows whose grams match, newest first."""
    sql, args = candidate_query(grams, filters, limit=limit, fields=fields, prose=prose)
    try:
        yield from db.execute(sql, args)
    except sqlite3.OperationalError as exc:
        raise StoreError(f"search failed: {exc}") from exc


def bm25_rank(
    rows: Sequence[tuple[int, Sequence[bytes]]], needles: Sequence[bytes]
) -> list[tuple[int, float]]:
    """(rowid, score) best first: FTS5's bm25 formula without its constant IDF factor.

    ``rows`` hold the case-folded field values (UTF-8); term frequency is the number of
    occurrences of the needles per field, field length its number of UTF-8 bytes, the
    average length that of the rows scored; scores are negative (lower is better) as
    FTS5's are.
    """
    sizes = [[len(v) for v in values] for _rowid, values in rows]
    count = max(1, len(rows))
    average = [max(1.0, sum(column) / count) for column in zip(*sizes, strict=True)]
    scored: list[tuple[int, float]] = []
    for (rowid, values), lengths in zip(rows, sizes, strict=True):
        score = 0.0
        for column, value in enumerate(values):
            tf = sum(value.count(n) for n in needles) if value else 0
            if tf:
                norm = 1 - _B + _B * lengths[column] / average[column]
                score += WEIGHTS[column] * tf * (_K1 + 1) / (tf + _K1 * norm)
        scored.append((rowid, -score))
    scored.sort(key=lambda r: (r[1], -r[0]))
    return scored


Ranked = list[tuple[int, float | None]]
Found = list[tuple[int, str | None, list[bytes]]]


def _newest(
    db: sqlite3.Connection,
    grams: GramQuery,
    filters: Filters,
    limit: int,
    test: bytes | Callable[[bytes], bool] | None,
    *,
    fields: bool = True,
) -> Found:
    """The newest ``max(RANK_CAP, limit)`` candidates passing ``test`` (all without one).

    ``test`` is a needle the folded fields must contain, or a function of them.
    """
    cap = max(RANK_CAP, limit)
    found: Found = []
    for rowid, created, folded in candidates(
        db, grams, filters, limit=cap if test is None else None, fields=fields
    ):
        if test is None or (test in folded if isinstance(test, bytes) else test(folded)):
            found.append((int(rowid), created, folded.split(SEPARATOR)))
            if len(found) >= cap:
                break
    return found


def _exact(db: sqlite3.Connection, text: str, filters: Filters, limit: int) -> Found:
    """The newest ``max(RANK_CAP, limit)`` rows holding ``text`` as written (``--exact``).

    The folded grams narrow (a row holding the text holds its folding); each candidate's
    stored prose is then read and compared without folding.
    """
    cap = max(RANK_CAP, limit)
    found: Found = []
    for rowid, created, blob in candidates(db, query_grams(fold(text)), filters, prose=True):
        values = unpack(blob)
        if any(text in value for value in values):
            found.append((int(rowid), created, [v.encode("utf-8") for v in values]))
            if len(found) >= cap:
                break
    return found


def query_rows(
    db: sqlite3.Connection,
    query: str,
    filters: Filters,
    limit: int,
    *,
    raw: bool = False,
    exact: bool = False,
) -> tuple[Ranked, list[str]]:
    """The best ``limit`` matching rowids with their score (or None), and the needles."""
    text = clean(query)
    if exact and not raw:
        found = _exact(db, text, filters, limit)
        if len(text) < 3:
            found.sort(key=lambda r: (r[1] or "", r[0]), reverse=True)
            return [(r[0], None) for r in found[:limit]], [text]
        scored: Ranked = list(bm25_rank([(r[0], r[2]) for r in found], [text.encode("utf-8")]))
        return scored[:limit], [text]
    if raw:
        node = search_raw.parse(text)
        needles = node.needles()
        found = _newest(
            db, node.grams(), filters, limit, lambda f: node.matches(f.split(SEPARATOR))
        )
    else:
        needles = [fold(text)]
        grams = query_grams(needles[0])
        # Up to 3 characters the gram is the answer; longer text is confirmed
        # (the folded fields are NUL-separated and a needle holds no NUL).
        confirm = None if grams.exact else needles[0].encode("utf-8")
        # One or two characters are ordered by date: their fields are not read.
        found = _newest(db, grams, filters, limit, confirm, fields=len(needles[0]) > 2)
        if len(needles[0]) < 3:
            found.sort(key=lambda r: (r[1] or "", r[0]), reverse=True)
            return [(r[0], None) for r in found[:limit]], needles
    keys = [n.encode("utf-8") for n in needles]
    ranked = bm25_rank([(r[0], r[2]) for r in found], keys)[:limit]
    return list(ranked), needles


_COLUMNS = (
    "d.id, t.uuid, d.turn, d.created, d.prose, t.title, t.mode, t.account, "
    "t.space_title, t.space_slug, t.path"
)


def search(
    db: sqlite3.Connection,
    query: str,
    filters: Filters = Filters(),
    limit: int = DEFAULT_LIMIT,
    *,
    raw: bool = False,
    exact: bool = False,
) -> list[Hit]:
    """The turns matching ``query`` (literal text unless ``raw``), best first; ``exact``
    compares the text as written (no width, script or case folding)."""
    if not query:
        raise SearchQueryError("search: the query is empty")
    if exact and raw:
        raise SearchQueryError("search: --exact does not combine with --raw")
    if index_state(db) in ("missing", "old"):
        return []  # nothing indexed yet (or only by another version): rebuild first
    ranked, needles = query_rows(db, query, filters, limit, raw=raw, exact=exact)
    return hits_of(db, ranked, query if not raw else (needles[0] if needles else None), exact)


def hits_of(
    db: sqlite3.Connection, ranked: Ranked, shown: str | None, exact: bool = False
) -> list[Hit]:
    """The hits of ranked rowids, in their order (snippets of ``shown``)."""
    if not ranked:
        return []
    ids = [r[0] for r in ranked]
    rows: dict[int, tuple[Any, ...]] = {}
    for first in range(0, len(ids), 500):
        chunk = ids[first : first + 500]
        for row in db.execute(
            f"SELECT {_COLUMNS} FROM search_docs d JOIN search_threads t ON t.id = d.thread "
            f"WHERE d.id IN ({', '.join('?' for _ in chunk)})",
            chunk,
        ):
            rows[int(row[0])] = tuple(row)
    return [_hit(rows[rowid], score, shown, exact) for rowid, score in ranked if rowid in rows]


def _hit(row: tuple[Any, ...], score: float | None, query: str | None, exact: bool) -> Hit:
    _rowid, uuid, turn, created, blob, title, mode, account, sp_title, sp_slug, path = row
    field, snippet, match = make_snippet(unpack(blob), query, exact=exact)
    rel = f"{path}/{outputs.TURN.at(turn) if turn else outputs.CONVERSATION.path}"
    return Hit(
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


def grouped(hits: Sequence[Hit]) -> list[list[Hit]]:
    """Hits grouped by thread, threads in the order of their best hit."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(hit.thread_uuid, []).append(hit)
    return list(groups.values())
