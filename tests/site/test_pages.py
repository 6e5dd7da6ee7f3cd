"""Search terms and the search index of the site."""

from __future__ import annotations

import itertools
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pplx_archiver.site import offline_search
from pplx_archiver.site.offline_search import SEARCH_DIR, search_files, shard_of, tokens, turn_terms
from pplx_archiver.site.pages import SEARCH_JS, ThreadMeta


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


def _part(data: bytes) -> tuple[str, int, Any]:
    """A shard script's kind, number and payload."""
    match = re.fullmatch(rb'PPLX_SEARCH_PART\("([td])", (\d+), (.*)\);\n', data, re.S)
    assert match is not None, data[:80]
    return match.group(1).decode(), int(match.group(2)), orjson.loads(match.group(3))


class Shards:
    """The files of :func:`search_files` read back the way ``site.js`` reads them."""

    def __init__(self, files: dict[str, bytes]) -> None:
        head = files[SEARCH_JS]
        assert head.startswith(b"window.PPLX_SEARCH = ") and head.endswith(b";\n")
        self.head = orjson.loads(head[len(b"window.PPLX_SEARCH = ") : -2])
        self.parts: dict[tuple[str, int], Any] = {}
        for rel, data in files.items():
            if rel != SEARCH_JS:
                kind, number, payload = _part(data)
                assert rel == f"{SEARCH_DIR}/{kind}{number}.js"
                self.parts[kind, number] = payload

    def postings(self, term: str) -> list[int]:
        """The docs holding exactly ``term``, from the term's own shard only."""
        shard = self.parts["t", shard_of(term, self.head["term_shards"])]
        return list(itertools.accumulate(shard.get(term, [])))

    def doc(self, number: int) -> list[Any]:
        size = self.head["doc_shard"]
        return list(self.parts["d", number // size][number % size])


def test_search_index_is_a_head_and_shards_with_postings() -> None:
    """The head assigns a global with the counts; each term's shard lists the docs holding
    it, in order; the doc shards give page, turn, title and snippet."""
    turns = {
        ("threads/a.html", "One"): [(1, "量子 alpha")],
        ("threads/b.html", "Two"): [(1, "beta"), (2, "alpha\u2028")],
    }
    files = search_files(
        (_meta(page, title), [(n, text, turn_terms(title, text)) for n, text in items])
        for (page, title), items in turns.items()
    )
    assert all(b"\xe2\x80\xa8" not in data for data in files.values())
    index = Shards(files)
    assert index.head == {"format": 2, "docs": 3, "doc_shard": 128, "term_shards": 1}
    assert index.doc(0) == ["threads/a.html", 1, "One", "量子 alpha"]
    assert index.doc(2) == ["threads/b.html", 2, "Two", "alpha\u2028"]
    assert index.postings("alpha") == [0, 2]
    assert index.postings("量子") == [0]
    assert index.postings("two") == [1, 2]
    assert turn_terms("Two", "alpha beta alpha") == ("alpha", "beta", "two")


def test_shard_of_follows_fnv1a_of_the_first_three_characters() -> None:
    """The shard function ``site.js`` repeats: FNV-1a (32 bits) of the code points of the
    term's first three characters; a word and its 3-letter beginning share a shard."""
    assert shard_of("a", 1 << 32) == 0xE40C292C  # FNV-1a 32 of "a" (its published vector)
    assert shard_of("foobar", 1 << 32) == 0xA9F37ED7  # of "foo"
    assert shard_of("photosynthesis", 64) == shard_of("pho", 64)
    assert shard_of("\U00020000x", 1 << 32) != shard_of("x", 1 << 32)


_WORDS = st.text(alphabet="abcdeéß量子计算", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    threads=st.lists(st.lists(st.lists(_WORDS, max_size=6), min_size=1, max_size=4), max_size=12),
    shard_bytes=st.sampled_from([1, 16, 256, 1 << 18]),
    per_shard=st.integers(1, 5),
)
def test_shards_give_every_term_and_prefix_the_postings_of_a_full_scan(
    threads: list[list[list[str]]], shard_bytes: int, per_shard: int
) -> None:
    """Whatever the shard sizes, a term's postings read from its own shard are the docs a
    scan of every turn finds, each doc reads back from its doc shard, and every term a
    3+ character beginning starts sits in that beginning's shard (the prefix rule)."""
    docs = []
    expected_docs = []
    for t, turns in enumerate(threads):
        meta = _meta(f"threads/{t}.html", f"T{t}")
        rows = []
        for n, words in enumerate(turns, 1):
            text = " ".join(words)
            rows.append((n, text, turn_terms(meta.title, text)))
            expected_docs.append([meta.page, n, meta.title, text[:160]])
        docs.append((meta, rows))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(offline_search, "_SHARD_BYTES", shard_bytes)
        mp.setattr(offline_search, "DOCS_PER_SHARD", per_shard)
        index = Shards(search_files(docs))
    assert index.head["docs"] == len(expected_docs)
    assert [index.doc(d) for d in range(len(expected_docs))] == expected_docs
    found: dict[str, list[int]] = {}
    doc = 0
    for _, rows in docs:
        for _n, _text, terms in rows:
            for term in terms:
                found.setdefault(term, []).append(doc)
            doc += 1
    for term, numbers in found.items():
        assert index.postings(term) == numbers, term
        if len(term) >= 3:
            shard = index.parts["t", shard_of(term[:3], index.head["term_shards"])]
            assert term in shard


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab Z9_-量子计算カタカナ한국ＡＩ查詢\u00e9\u3000\U00020001", max_size=40),
    st.text(alphabet="xy 量子", max_size=8),
)
def test_turn_terms_are_the_sorted_set_of_the_tokens(text: str, title: str) -> None:
    """The distinct runs' terms, computed once each, are the set of every run's terms."""
    assert turn_terms(title, text) == tuple(sorted(set(tokens(title + " " + text))))
