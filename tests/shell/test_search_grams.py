"""The fast gram extraction gives exactly the tokens of the plain reference (no version bump)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from pplx_archiver.shell.archive import search_index
from pplx_archiver.sim.account import plan_thread
from pplx_archiver.sim.build import answer_of


def _reference_token(gram: str) -> str:
    token = "g".join(format(ord(c), "x") for c in gram)
    return "w" + token if len(gram) > 3 else token


def _reference(values: Iterable[str]) -> str:
    """The extraction of search version 2 as first written, one plain step at a time."""
    grams: set[str] = set()
    for value in values:
        text = value.lower()
        grams |= set(text)
        grams |= set(map("".join, itertools.pairwise(text)))
        grams |= set(map("".join, zip(text, text[1:], text[2:], strict=False)))
        grams |= {text[at - 3 : at + 4] for at in range(3, len(text) - 3) if text[at].isspace()}
    return " ".join(sorted(map(_reference_token, grams)))


SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200b\u2028\u3000\ufeff"
PIECES = st.text(alphabet=st.sampled_from(SPACES + "aZß İ\u0130ﬁΣς😀\U0010ffff"), max_size=12)
TEXT = st.one_of(st.text(max_size=40), PIECES, st.text(alphabet=SPACES + "ab", max_size=9))


@settings(max_examples=400, deadline=None)
@given(st.lists(TEXT, max_size=5))
def test_tokens_equal_the_reference_on_any_text(values: list[str]) -> None:
    """Unicode, every kind of white space (str.isspace and `\\s` agree), short strings."""
    assert search_index.gram_tokens(values) == _reference(values)


def test_tokens_equal_the_reference_on_the_simulated_corpus() -> None:
    """Rows of the simulator's threads (the benchmark's corpus), twice: memo cold and warm."""
    rows = []
    for index in range(40):
        plan = plan_thread(7, index, 400)
        rows += [[plan.title]] + [[t.query, answer_of(plan, t)] for t in plan.turns if not t.stub]
    for _ in range(2):
        assert [search_index.gram_tokens(r) for r in rows] == [_reference(r) for r in rows]


def test_the_token_memo_stays_bounded() -> None:
    """The memo is cleared when full, so it never holds more than its bound."""
    bound = search_index._MEMO
    text = "".join(chr(0x4E00 + n) for n in range(3 * bound))  # ~3 bounds of distinct grams
    assert search_index.gram_tokens([text]) == _reference([text])
    assert 0 < len(search_index._TOKENS) <= bound
    assert search_index.gram_token("abc") == _reference_token("abc")
    assert search_index.gram_token("ab cdef") == _reference_token("ab cdef")
