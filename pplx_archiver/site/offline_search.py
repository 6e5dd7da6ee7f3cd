"""The site's offline search: ``search-index.js`` with its shards, ``fold.js``, and the
terms of a text.

Pure: listing rows and each turn's searchable text in, script bytes out. The browser's
query splitter (``site.js``) follows :func:`tokens`'s rules with :func:`fold_script`'s table.
"""

from __future__ import annotations

import operator
import re
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from pplx_archiver.shell.archive.search_fold import fold, js_table
from pplx_archiver.site.pages import SEARCH_JS, ThreadMeta

_SNIPPET = 160
_POSTING = "I" if array("I").itemsize >= 4 else "L"  # a doc number, packed
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002ebef"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")


def tokens(text: str) -> list[str]:
    """Search terms of ``text``: folded words (width, Chinese script and case, as the
    archive's search folds them), plus each CJK character and CJK bigram.

    The browser's query splitter (``site.js``) follows the same rules, with the script
    table of ``fold.js`` (``window.PPLX_FOLD``).
    """
    out: list[str] = []
    for match in _TOKEN.finditer(fold(text)):
        out.extend(_run_terms(match.group(0)))
    return out


def _run_terms(run: str) -> list[str]:
    """The terms of one run of :data:`_TOKEN`: a word, or (a run is all CJK or has none)
    each CJK character and each CJK bigram."""
    if not _CJK_CHAR.match(run):
        return [run]
    return [*run, *(run[i : i + 2] for i in range(len(run) - 1))]


def turn_terms(title: str, text: str) -> tuple[str, ...]:
    """The distinct terms (sorted) one turn is found by: its thread's title and its text.

    Computed once per built page (in the worker that built it) and kept with the page's
    searchable text, so the search index of a rebuild merges term lists instead of
    tokenizing every turn of the archive again. The set of :func:`tokens`.
    """
    found: set[str] = set()
    for run in set(_TOKEN.findall(fold(title + " " + text))):  # each distinct run once
        found.update(_run_terms(run))
    return tuple(sorted(found))


SEARCH_DIR = "search"
FORMAT = 2
DOCS_PER_SHARD = 128
_SHARD_BYTES = 256 * 1024  # aimed-for size of a term shard
_MAX_TERM_SHARDS = 4096
_KEY_CHARS = 3  # a prefix query (3+ letters) shares its first 3 characters with its words


def term_key(term: str) -> str:
    """The part of a term its shard is chosen by: its first three characters, so every
    word a 3+ letter query begins sits in the query's own shard."""
    return term[:_KEY_CHARS]


def shard_of(term: str, shards: int) -> int:
    """The term shard holding ``term``: 32-bit FNV-1a of the code points of
    :func:`term_key`, modulo ``shards`` (``site.js`` computes the same)."""
    h = 0x811C9DC5
    for ch in term_key(term):
        h = ((h ^ ord(ch)) * 0x01000193) & 0xFFFFFFFF
    return h % shards


def _term_shards(postings: int) -> int:
    """How many term shards: a power of two giving about ``_SHARD_BYTES`` each (a doc number
    costs ~3 bytes delta-coded), at most ``_MAX_TERM_SHARDS``."""
    want = max(1, postings * 3 // _SHARD_BYTES)
    shards = 1
    while shards < want and shards < _MAX_TERM_SHARDS:
        shards *= 2
    return shards


def _deltas(numbers: array[int]) -> list[int]:
    """Ascending doc numbers as the first, then the differences."""
    if not numbers:
        return []
    return [numbers[0], *map(operator.sub, numbers[1:], numbers[:-1])]


def _script(kind: str, number: int, payload: Any) -> bytes:
    data = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    # orjson leaves U+2028/2029 as they are: escaped so the JSON is valid JavaScript too.
    data = data.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return b'PPLX_SEARCH_PART("%s", %d, ' % (kind.encode(), number) + data + b");\n"


def search_files(
    docs: Iterable[tuple[ThreadMeta, Sequence[tuple[int, str, Sequence[str]]]]],
) -> dict[str, bytes]:
    """The search index as scripts (they load from file://, where a page may not fetch
    JSON), by relative path.

    ``docs`` gives each thread's turns as (number, text, :func:`turn_terms`); every turn is a
    doc, numbered in order. ``search-index.js`` (``window.PPLX_SEARCH``) holds only the
    counts the browser needs to find the rest:

    - ``search/t<k>.js``: the terms of shard k (:func:`shard_of`), each with the ascending
      numbers of the docs that hold it, delta-coded (the first number, then differences);
    - ``search/d<k>.js``: docs ``k × DOCS_PER_SHARD`` onwards, each
      ``[page, turn, title, snippet]``.

    A query loads the term shards of its terms, then the doc shards of the hits it shows,
    so its cost grows with what it finds, not with the archive.
    """
    # Held while the docs stream in: each term's doc numbers packed (4 bytes each, not a
    # list of int objects), and the doc shards already made into script bytes.
    terms: dict[str, array[int]] = {}
    files: dict[str, bytes] = {}
    chunk: list[list[Any]] = []
    count = postings = 0

    def flush() -> None:  # the doc shard holding doc ``count - 1``
        shard = (count - 1) // DOCS_PER_SHARD
        files[f"{SEARCH_DIR}/d{shard}.js"] = _script("d", shard, chunk)
        chunk.clear()

    for meta, turns in docs:
        for number, text, found in turns:
            chunk.append([meta.page, number, meta.title, text[:_SNIPPET]])
            for term in found:
                numbers = terms.get(term)
                if numbers is None:
                    numbers = terms[term] = array(_POSTING)
                numbers.append(count)
            postings += len(found)
            count += 1
            if len(chunk) == DOCS_PER_SHARD:
                flush()
    if chunk:
        flush()
    shards = _term_shards(postings)
    by_shard: list[list[str]] = [[] for _ in range(shards)]
    for term in terms:
        by_shard[shard_of(term, shards)].append(term)
    for k, names in enumerate(by_shard):
        payload = {term: _deltas(terms.pop(term)) for term in names}
        files[f"{SEARCH_DIR}/t{k}.js"] = _script("t", k, payload)
    head = {"format": FORMAT, "docs": count, "doc_shard": DOCS_PER_SHARD}
    head["term_shards"] = shards
    files[SEARCH_JS] = (
        b"window.PPLX_SEARCH = " + orjson.dumps(head, option=orjson.OPT_SORT_KEYS) + b";\n"
    )
    return files


def read_head(data: bytes) -> dict[str, Any]:
    """The counts of a ``search-index.js`` (ValueError when it is not one of this format)."""
    prefix = b"window.PPLX_SEARCH = "
    if not data.startswith(prefix) or not data.endswith(b";\n"):
        raise ValueError("not a search head")
    try:
        head = orjson.loads(data[len(prefix) : -2])
    except orjson.JSONDecodeError as exc:
        raise ValueError(str(exc)) from exc
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise ValueError("not a search head of this format")
    for key in ("docs", "doc_shard", "term_shards"):
        if not isinstance(head.get(key), int) or head[key] < (0 if key == "docs" else 1):
            raise ValueError(f"search head: bad {key}")
    return head


def shard_names(head: dict[str, Any]) -> list[str]:
    """The file names (in ``SEARCH_DIR``) of every shard a head counts."""
    docs = -(-head["docs"] // head["doc_shard"])
    return [f"t{k}.js" for k in range(head["term_shards"])] + [f"d{k}.js" for k in range(docs)]


def fold_script() -> bytes:
    """``fold.js``: ``window.PPLX_FOLD``, the script folding table as two strings (the
    characters, and the simplified character each folds to), for the search box and the
    thread pages' highlighting."""
    sources, targets = js_table().split("\n")
    return b"window.PPLX_FOLD = " + orjson.dumps([sources, targets]) + b";\n"
