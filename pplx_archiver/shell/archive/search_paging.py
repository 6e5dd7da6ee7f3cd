"""Paged search (the MCP server's ``search``): pages that neither overlap nor skip.

Each page of one query is cut from the same window of ranked matches (:func:`page_window`),
so asking for the next page gives the matches after the previous one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from pplx_archiver.errors import SearchQueryError
from pplx_archiver.shell.archive.search_grams import fold
from pplx_archiver.shell.archive.search_index import clean, index_state
from pplx_archiver.shell.archive.search_query import RANK_CAP, Filters, Hit, hits_of, query_rows

# Matches of a one- or two-character query a paged search orders (by date; no field read).
SHORT_WINDOW = 1000


def page_window(query: str, raw: bool = False) -> int:
    """How many ranked matches every page of a paged search is cut from: the same for each
    page of one query, so pages neither overlap nor skip. One or two characters (ordered by
    date, no field read): :data:`SHORT_WINDOW`; longer text: the :data:`RANK_CAP` ranked."""
    return SHORT_WINDOW if not raw and len(fold(clean(query))) < 3 else RANK_CAP


def search_page(
    db: sqlite3.Connection,
    query: str,
    filters: Filters,
    offset: int,
    limit: int,
    *,
    raw: bool = False,
    allow: Callable[[set[str]], set[str]] | None = None,
) -> tuple[list[Hit], bool]:
    """One page of ``search`` (``offset``, ``limit``) and whether another follows.

    ``allow`` keeps the matches of the thread uuids it returns (a filter the index does not
    hold), applied before the page is cut. Snippets are made for the page's hits only.
    """
    if not query:
        raise SearchQueryError("search: the query is empty")
    if index_state(db) in ("missing", "old"):
        return [], False
    ranked, needles = query_rows(db, query, filters, page_window(query, raw), raw=raw)
    if allow is not None and ranked:
        owners = _owners(db, [r[0] for r in ranked])
        kept = allow(set(owners.values()))
        ranked = [r for r in ranked if owners.get(r[0]) in kept]
    page = ranked[offset : offset + limit]
    shown = query if not raw else (needles[0] if needles else None)
    return hits_of(db, page, shown), len(ranked) > offset + limit


def _owners(db: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    owners: dict[int, str] = {}
    for first in range(0, len(ids), 500):
        chunk = ids[first : first + 500]
        owners.update(
            (int(rowid), str(uuid))
            for rowid, uuid in db.execute(
                "SELECT d.id, t.uuid FROM search_docs d JOIN search_threads t "
                f"ON t.id = d.thread WHERE d.id IN ({', '.join('?' for _ in chunk)})",
                chunk,
            )
        )
    return owners
