"""The site's offline search: ``search-index.js`` and ``fold.js``, and the terms of a text.

Pure: listing rows and each turn's searchable text in, script bytes out. The browser's
query splitter (``site.js``) follows :func:`tokens`'s rules with :func:`fold_script`'s table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from pplx_archiver.shell.archive.search_fold import fold, js_table
from pplx_archiver.site.pages import ThreadMeta

_SNIPPET = 160
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002ebef"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")


def tokens(text: str) -> list[str]:
    """Search terms of ``text``: folded words (width, Chinese script and case, as the
    archive's search folds them), plus each CJK character and CJK bigram.

    The browser's query splitter (``site.js``) follows the same rules, with the script
    table of ``fold.js`` (``window.PPLX_FOLD``).
    """
    out: list[str] = []
    for match in _TOKEN.finditer(fold(text)):
        run = match.group(0)
        if _CJK_RUN.match(run):
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


def turn_terms(title: str, text: str) -> tuple[str, ...]:
    """The distinct terms (sorted) one turn is found by: its thread's title and its text.

    Computed once per built page (in the worker that built it) and kept with the page's
    searchable text, so the search index of a rebuild merges term lists instead of
    tokenizing every turn of the archive again.
    """
    return tuple(sorted(set(tokens(title + " " + text))))


def search_index(
    docs: Iterable[tuple[ThreadMeta, Sequence[tuple[int, str, Sequence[str]]]]],
) -> bytes:
    """The search index as a script assigning ``window.PPLX_SEARCH`` (loads from file://).

    ``docs`` gives each thread's turns as (number, text, :func:`turn_terms`). The script's
    ``docs`` lists ``[page, turn, title, snippet]``; ``terms`` maps each term to the
    ascending doc numbers that hold it. The query is folded with :func:`fold_script`'s table.
    """
    out_docs: list[list[Any]] = []
    terms: dict[str, list[int]] = {}
    for meta, turns in docs:
        for number, text, found in turns:
            doc = len(out_docs)
            out_docs.append([meta.page, number, meta.title, text[:_SNIPPET]])
            for term in found:
                terms.setdefault(term, []).append(doc)
    data = orjson.dumps({"docs": out_docs, "terms": terms}, option=orjson.OPT_SORT_KEYS)
    # orjson leaves "<" as is: "</script" cannot appear because the file is never inline,
    # but U+2028/2029 are escaped so the JSON is also valid JavaScript everywhere.
    data = data.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return b"window.PPLX_SEARCH = " + data + b";\n"


def fold_script() -> bytes:
    """``fold.js``: ``window.PPLX_FOLD``, the script folding table as two strings (the
    characters, and the simplified character each folds to), for the search box and the
    thread pages' highlighting."""
    sources, targets = js_table().split("\n")
    return b"window.PPLX_FOLD = " + orjson.dumps([sources, targets]) + b";\n"
