"""Search terms and the search index of the site."""

from __future__ import annotations

import orjson

from pplx_archiver.site.offline_search import search_index, tokens, turn_terms
from pplx_archiver.site.pages import ThreadMeta


def _meta(page: str, title: str) -> ThreadMeta:
    return ThreadMeta(
        uuid=page,
        page=page,
        title=title,
        created="",
        updated="",
        mode="search",
        space="",
        space_id="",
        turns=1,
        interrupted=False,
        variants=0,
        degraded=False,
    )


def test_tokens_split_chinese_into_unigrams_and_bigrams() -> None:
    """Chinese runs give each character and each bigram; Latin text gives lowercased words."""
    assert tokens("量子计算 Quantum-Bits") == [
        "量",
        "子",
        "计",
        "算",
        "量子",
        "子计",
        "计算",
        "quantum",
        "bits",
    ]


def test_search_index_is_a_script_with_postings() -> None:
    """The index assigns a global; each term lists the docs holding it, in order."""
    turns = {
        ("threads/a.html", "One"): [(1, "量子 alpha")],
        ("threads/b.html", "Two"): [(1, "beta"), (2, "alpha\u2028")],
    }
    data = search_index(
        (_meta(page, title), [(n, text, turn_terms(title, text)) for n, text in items])
        for (page, title), items in turns.items()
    )
    assert data.startswith(b"window.PPLX_SEARCH = ") and data.endswith(b";\n")
    assert b"\xe2\x80\xa8" not in data
    index = orjson.loads(data[len(b"window.PPLX_SEARCH = ") : -2])
    assert index["docs"][0] == ["threads/a.html", 1, "One", "量子 alpha"]
    assert index["terms"]["alpha"] == [0, 2]
    assert index["terms"]["量子"] == [0]
    assert index["terms"]["two"] == [1, 2]
    assert turn_terms("Two", "alpha beta alpha") == ("alpha", "beta", "two")
