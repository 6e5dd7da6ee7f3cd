"""The gram tables: the fast extraction gives exactly the tokens of the plain reference, the
short column's 3-character pieces are exactly a row's 1- and 2-character pieces, SQLite's
trigram table finds exactly the rows holding a piece of any text, and a removed row leaves
nothing behind in either table."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.prose import ThreadProse, TurnProse
from pplx_archiver.shell.archive import search as S
from pplx_archiver.shell.archive import search_grams, search_index
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.sim.account import plan_thread
from pplx_archiver.sim.build import answer_of


def _reference_token(gram: str) -> str:
    return "w" + "g".join(format(ord(c), "x") for c in gram)


def _reference(values: Iterable[str]) -> str:
    """The ``search_grams`` extraction of search version 4 (version 3's without its 1- and
    2-character pieces, which the trigram table's short column now holds; version 5 folds
    widths and scripts too), plainly."""
    grams: set[str] = set()
    for value in values:
        text = search_grams.fold(value)
        grams |= {text[at - 3 : at + 4] for at in range(3, len(text) - 3) if text[at].isspace()}
    return " ".join(sorted(map(_reference_token, grams)))


def _tokens(values: Iterable[str]) -> str:
    """The extraction's tokens (of the folded values) in the reference's order."""
    found = search_index.gram_tokens([search_grams.fold(v) for v in values])
    return " ".join(sorted(found.split(" "))) if found else ""


def _short_pieces(values: Iterable[str]) -> set[str]:
    """Every 3-character piece of the short column, marks shown as ``|``, as the trigram
    tokenizer cuts it (every window of 3 characters)."""
    text = search_grams.short_text([search_grams.fold(v) for v in values])
    shown = text.replace(search_grams.MARK, "|").replace(search_grams.FIELD_MARK, "#")
    return {shown[at : at + 3] for at in range(len(shown) - 2)}


def _short_reference(values: Iterable[str]) -> set[str]:
    """Each 1-character piece ``c`` of a folded value as ``|c|``, each 2-character piece
    ``cd`` as ``c|d``: the pieces a query of 1 or 2 characters asks for."""
    pieces: set[str] = set()
    for value in values:
        text = search_grams.fold(value)
        pieces |= {f"|{c}|" for c in text}
        pieces |= {f"{a}|{b}" for a, b in itertools.pairwise(text)}
    return pieces


SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200b\u2028\u3000\ufeff"
PIECES = st.text(alphabet=st.sampled_from(SPACES + "aZß İ\u0130ﬁΣς😀\U0010ffff"), max_size=12)
TEXT = st.one_of(st.text(max_size=40), PIECES, st.text(alphabet=SPACES + "ab", max_size=9))


@settings(max_examples=400, deadline=None)
@given(st.lists(TEXT, max_size=5))
def test_tokens_equal_the_reference_on_any_text(values: list[str]) -> None:
    """Unicode, every kind of white space (str.isspace and `\\s` agree), short strings."""
    assert _tokens(values) == _reference(values)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\x00\x01\x02|#")), max_size=5))
def test_the_short_column_holds_exactly_the_short_pieces(values: list[str]) -> None:
    """Apart from the pieces holding a field mark (no query asks for one), the short
    column's 3-character pieces are the 1- and 2-character pieces of the values."""
    pieces = {p for p in _short_pieces(values) if "#" not in p}
    assert pieces == _short_reference(values)
    query = search_grams.query_grams
    for value in values:
        folded = search_grams.fold(value)
        for at in range(len(folded)):
            for size in (1, 2):
                gram = folded[at : at + size]
                if len(gram) == size:
                    phrase = query(gram).tri
                    assert phrase is not None
                    shown = phrase[1:-1].replace('""', '"').replace(search_grams.MARK, "|")
                    assert shown in pieces, gram


def test_a_query_holding_an_unindexed_character_asks_for_a_token_no_row_has() -> None:
    """NUL and the marks are never in an indexed value (``clean``): such a query matches no
    row, whatever its length, and says so exactly."""
    for text in ("\x01", "a\x02", "ab\x00c", "abc\x01def"):
        grams = search_grams.query_grams(text)
        assert grams.tri is None and grams.short == '"z"' and grams.exact, repr(text)
    assert search_index.clean("a\x00b\x01c\x02d") == "a b c d"


def test_tokens_equal_the_reference_on_the_simulated_corpus() -> None:
    """Rows of the simulator's threads (the benchmark's corpus), twice: memo cold and warm."""
    rows = []
    for index in range(40):
        plan = plan_thread(7, index, 400)
        rows += [[plan.title]] + [[t.query, answer_of(plan, t)] for t in plan.turns if not t.stub]
    for _ in range(2):
        assert [_tokens(r) for r in rows] == [_reference(r) for r in rows]


def test_the_token_memo_stays_bounded() -> None:
    """The memo is cleared when full, so it never holds more than its bound."""
    bound = search_grams._MEMO
    # ~3 bounds of distinct 3-character pieces each side of a space
    text = " ".join(chr(0x4E00 + n) * 3 for n in range(3 * bound))
    assert _tokens([text]) == _reference([text])
    assert 0 < len(search_grams._TOKENS) <= bound
    assert 0 < len(search_grams._WIDE_TOKENS) <= bound
    assert search_grams.gram_token("abc def") == _reference_token("abc def")


def test_a_row_is_removed_whatever_the_order_of_its_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokens come in set order, which differs between processes: the gram table keeps no
    positions, so a thread indexed in one order and re-indexed (its old row removed) in
    another leaves none of the old grams behind."""
    with Archive(tmp_path / "a") as archive, archive.index.transaction() as db:
        meta = S.ThreadMeta(uuid="t1", account="me", mode="search", title="", path="me/t1")
        old = ThreadProse(rows=(TurnProse(1, "", query="zebra crossing", answer="quokka"),))
        S.index_thread(db, meta, old)
        real = search_index.gram_tokens
        # the removal computes the tokens again: reversed, as another process might order them
        monkeypatch.setattr(
            search_index, "gram_tokens", lambda values: " ".join(reversed(real(values).split()))
        )
        new = ThreadProse(rows=(TurnProse(1, "", query="walrus", answer="narwhal"),))
        S.index_thread(db, meta, new)
        monkeypatch.undo()
        assert not S.search(db, "zebra") and not S.search(db, "qu")
        assert [h.thread_uuid for h in S.search(db, "narwhal")] == ["t1"]
        token = search_grams.gram_token("bra cro")
        query = "SELECT rowid FROM search_grams WHERE search_grams MATCH ?"
        assert not db.execute(query, (f'"{token}"',)).fetchall()
        for gram in ("z", "ze", "zeb", "a c", "okk"):
            phrase = search_grams.query_grams(gram).tri
            query = "SELECT rowid FROM search_tri WHERE search_tri MATCH ?"
            assert not db.execute(query, (phrase,)).fetchall(), gram
        assert db.execute("SELECT rowid FROM search_tri WHERE search_tri MATCH 'rus'").fetchall()
        db.execute("INSERT INTO search_grams (search_grams) VALUES ('integrity-check')")
        db.execute("INSERT INTO search_tri (search_tri) VALUES ('integrity-check')")


# Letters whose case folding changes their length or differs by position, quotes and FTS5
# syntax, white space of every kind, astral characters, Chinese.
TRICKY = "aAbB ß İıΣσς\"'*()^:-{}\t\n\u3000\u00a0😀\U0010ffff经济政策ﬁ"


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_any_piece_of_any_text_finds_exactly_the_rows_holding_it(tmp_path: Path) -> None:
    """300 rows of random text over a tricky alphabet; 600 random pieces of them (1 to 8
    characters, across white space and field ends included) and 60 absent ones give exactly
    the rows a plain scan of the case-folded fields finds, through both gram tables."""
    rng = random.Random(3)

    def text() -> str:
        return "".join(rng.choice(TRICKY) for _ in range(rng.randrange(0, 24)))

    rows: dict[str, list[str]] = {}
    with Archive(tmp_path / "a") as archive, archive.index.transaction() as db:
        for n in range(300):
            values = [text(), text()]
            rows[f"t{n}"] = values
            meta = S.ThreadMeta(uuid=f"t{n}", account="me", mode="search", title="", path=f"p{n}")
            prose = TurnProse(1, "", query=values[0], answer=values[1])
            S.index_thread(db, meta, ThreadProse(rows=(prose,)))
        pieces = []
        for _ in range(600):
            value = rng.choice([v for vs in rows.values() for v in vs if v])
            at = rng.randrange(len(value))
            pieces.append(value[at : at + rng.randrange(1, 9)])
        pieces += [text() + "q" for _ in range(60)]
        for piece in pieces:
            needle = search_grams.fold(piece)
            fold = search_grams.fold
            expected = {u for u, vs in rows.items() if any(needle in fold(v) for v in vs)}
            hits = S.search(db, piece, limit=1_000_000)
            assert {h.thread_uuid for h in hits if h.turn == 1} == expected, repr(piece)
