"""Full-text search over the archive: a gram index inside ``index/archive.sqlite``.

The parts live in their own modules; this one gathers the names callers use:

``search_index``    the ``search_*`` tables and rows, the hook the store runs in the
                    transaction that marks a thread done (:func:`thread_hook`);
``search_grams``    the grams a row is indexed by and those a query asks for;
``search_rebuild``  rebuilding the index from the raw files (:func:`rebuild`, by the writer);
``search_query``    running a query: candidates, exact confirmation, ranking, hits;
``search_raw``      the ``--raw`` FTS5 query syntax;
``search_snippet``  the one-line snippet of a hit.
"""

from __future__ import annotations

from pplx_archiver.shell.archive.search_grams import fold, gram_tokens
from pplx_archiver.shell.archive.search_index import (
    SEARCH_VERSION,
    Hook,
    ThreadMeta,
    index_state,
    index_thread,
    iter_prose,
    meta_of,
    open_readonly,
    thread_hook,
)
from pplx_archiver.shell.archive.search_paging import SHORT_WINDOW, page_window, search_page
from pplx_archiver.shell.archive.search_query import (
    DEFAULT_LIMIT,
    RANK_CAP,
    WEIGHTS,
    Filters,
    Hit,
    bm25_rank,
    check_date,
    grouped,
    query_rows,
    search,
)
from pplx_archiver.shell.archive.search_rebuild import (
    Progress,
    RebuildSummary,
    ensure_ready,
    print_progress,
)
from pplx_archiver.shell.archive.search_snippet import make_snippet, printable

__all__ = [
    "DEFAULT_LIMIT",
    "RANK_CAP",
    "SEARCH_VERSION",
    "SHORT_WINDOW",
    "WEIGHTS",
    "Filters",
    "Hit",
    "Hook",
    "Progress",
    "RebuildSummary",
    "ThreadMeta",
    "bm25_rank",
    "check_date",
    "ensure_ready",
    "fold",
    "gram_tokens",
    "grouped",
    "index_state",
    "index_thread",
    "iter_prose",
    "make_snippet",
    "meta_of",
    "open_readonly",
    "page_window",
    "print_progress",
    "printable",
    "query_rows",
    "search",
    "search_page",
    "thread_hook",
]
