"""Variant folding in search: traditional ↔ simplified Chinese, full ↔ half width, case.

A corpus where each query in {traditional, simplified, full-width, half-width} × {1–4
characters} finds its target, through ``search()`` and the command line; ``--exact``
turns the folding off.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path

import opencc
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.core.thread.prose import ThreadProse, TurnProse
from pplx_archiver.errors import SearchQueryError
from pplx_archiver.shell.archive import search as S
from pplx_archiver.shell.archive import search_fold
from pplx_archiver.shell.archive.store import Archive

SIMPLIFIED = "查询经济"
TRADITIONAL = "查詢經濟"
HALF = "ABCD"
FULL = "ＷＸＹＺ"
CORPUS = {
    "simplified": f"我们的{SIMPLIFIED}学报告",
    "traditional": f"我們的{TRADITIONAL}學報告",
    "half": f"model {HALF} test",
    "full": f"ｍｏｄｅｌ {FULL} ｔｅｓｔ",
    "kana-full": "テスト カタカナ です",  # full-width katakana, found by half-width
    "kana-half": "ﾃｽﾄ ｼﾗﾄﾘ ﾃﾞｽ",  # half-width katakana, found by full-width
}
# query -> the documents it must find
QUERIES: dict[str, set[str]] = {}
for n in range(1, 5):
    for text in (SIMPLIFIED[:n], TRADITIONAL[:n]):
        QUERIES[text] = {"simplified", "traditional"}
    QUERIES[HALF[:n]] = {"half"}
    QUERIES[unicodedata.normalize("NFKC", FULL)[:n].lower()] = {"full"}  # half-width of it
    QUERIES["".join(chr(ord(c) + 0xFEE0) for c in HALF[:n])] = {"half"}  # full-width
    QUERIES[FULL[:n]] = {"full"}
    QUERIES["カタカナ"[:n]] = QUERIES["ｶﾀｶﾅ"[:n]] = {"kana-full"}
    QUERIES["シラトリ"[:n]] = QUERIES["ｼﾗﾄﾘ"[:n]] = {"kana-half"}


def _meta(uuid: str) -> S.ThreadMeta:
    return S.ThreadMeta(uuid=uuid, account="me", mode="search", title="", path=f"me/s/{uuid}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An archive whose search index holds the corpus and some filler."""
    out = tmp_path_factory.mktemp("fold") / "a"
    with Archive(out) as archive, archive.index.transaction() as db:
        for n, (uuid, answer) in enumerate(CORPUS.items()):
            row = TurnProse(1, f"2026-07-0{n + 1}T00:00:00Z", query="q", answer=answer)
            S.index_thread(db, _meta(uuid), ThreadProse(rows=(row,)))
        for n in range(6):
            row = TurnProse(1, "2026-06-01T00:00:00Z", query=f"filler {n}", answer="数据 data")
            S.index_thread(db, _meta(f"filler-{n}"), ThreadProse(rows=(row,)))
    yield out


def test_the_table_comes_from_opencc_and_folds_one_character_to_one() -> None:
    """Thousands of pairs read from the package's own files; folding is idempotent."""
    table = search_fold.table()
    assert len(table) > 4000
    assert table["詢"] == "询" and table["臺"] == "台" and table["經"] == "经"
    assert table["乾"] == table["幹"] == "干" and table["髮"] == table["發"] == "发"
    assert all(len(v) == 1 and S.fold(v) == v for v in table.values())
    for text in ("查詢 ＡＩ", "Ｈｅｌｌｏ 世界", "㎞ ﬁ İ"):
        assert S.fold(S.fold(text)) == S.fold(text)
    assert S.fold("ＡＩ 查詢") == "ai 查询"
    sources, targets = search_fold.js_table().split("\n")
    assert len(sources) == len(targets) == len(table)


_TABLE_CHARS = sorted(search_fold.table())
_ASTRAL = [c for c in _TABLE_CHARS if ord(c) > 0xFFFF]


def test_the_table_has_astral_characters() -> None:
    """The table reaches beyond the Basic Multilingual Plane, the case the pattern of
    characters to convert treats apart (see ``_translation``)."""
    assert len(_ASTRAL) > 10


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_TABLE_CHARS),
            st.sampled_from(_ASTRAL),
            st.characters(codec="utf-8"),
            st.sampled_from("aZ ＡＩ﹏é—“"),
        ),
        max_size=40,
    ).map("".join)
)
def test_fold_is_nfkc_then_the_table_then_lower_case(text: str) -> None:
    """The quick path (ASCII, already normalised, no character to convert) changes nothing
    of the definition: NFKC, the table character for character, lower case."""
    table = search_fold.table()
    plain = "".join(table.get(c, c) for c in unicodedata.normalize("NFKC", text)).lower()
    assert S.fold(text) == plain


@pytest.mark.parametrize(("query", "targets"), sorted(QUERIES.items()))
def test_each_variant_query_finds_its_target(corpus: Path, query: str, targets: set[str]) -> None:
    """Traditional, simplified, full- and half-width queries of 1–4 characters."""
    with Archive(corpus) as archive, archive.index.transaction() as db:
        found = {h.thread_uuid for h in S.search(db, query, limit=1000)}
    assert targets <= found, (query, found)


def _cli(*args: str) -> tuple[int, str]:
    _register()
    result = CliRunner().invoke(app, ["search", *args])
    return result.exit_code, result.output


def test_the_command_line_folds_and_exact_does_not(corpus: Path) -> None:
    """`search` finds every variant; `--exact` only the text as written."""
    for query, targets in sorted(QUERIES.items()):
        code, out = _cli("-o", str(corpus), query, "--json", "-n", "1000")
        hits = [orjson.loads(line) for line in out.splitlines()]
        assert code == 0 and targets <= {h["thread_uuid"] for h in hits}, query
        for hit in hits:
            if hit["thread_uuid"] in targets:
                a, b = hit["match"]
                assert S.fold(hit["snippet"][a:b]) == S.fold(query)
    code, out = _cli("-o", str(corpus), "查詢經濟", "--json", "--exact")
    assert code == 0 and {orjson.loads(x)["thread_uuid"] for x in out.splitlines()} == {
        "traditional"
    }
    code, out = _cli("-o", str(corpus), "ＷＸ", "--json", "--exact")
    assert code == 0 and {orjson.loads(x)["thread_uuid"] for x in out.splitlines()} == {"full"}
    assert _cli("-o", str(corpus), "wx", "--exact")[0] == 1  # case is kept too
    assert _cli("-o", str(corpus), "Model ABCD", "--exact")[0] == 1
    assert _cli("-o", str(corpus), "model ABCD", "--exact")[0] == 0
    assert _cli("-o", str(corpus), "a", "--exact", "--raw")[0] == 2


def test_exact_with_raw_is_refused(corpus: Path) -> None:
    """The FTS5 syntax has no unfolded form."""
    with (
        Archive(corpus) as archive,
        archive.index.transaction() as db,
        pytest.raises(SearchQueryError),
    ):
        S.search(db, "a", exact=True, raw=True)


def test_a_snippet_match_spans_the_original_characters() -> None:
    """Where folding changes a character's length (NFKC), the span is in the text's units."""
    field, snippet, match = S.make_snippet(("", "", "10 ㎞ 查詢 road", "", ""), "km 查询")
    assert field == "answer" and match is not None
    assert snippet[match[0] : match[1]] == "㎞ 查詢"


def test_text_converted_by_opencc_either_way_folds_as_the_original() -> None:
    """OpenCC's own converters (phrase tables included, any region) change nothing the
    folding sees: every character of the table, and sentences."""
    converters = [opencc.OpenCC(c) for c in ("s2t", "s2tw", "s2hk", "t2s", "tw2s", "hk2s")]
    sentences = [
        "头发干燥，什么时候去台湾？",
        "我们的查询经济学报告里面只有一只猫。",
        "後來他發現乾隆皇帝的著作",
        "量子计算利用叠加和纠缠来处理信息。",
    ]
    texts = sentences + sorted(set(search_fold.table()) | set(search_fold.table().values()))
    for text in texts:
        for converter in converters:
            assert S.fold(converter.convert(text)) == S.fold(text), (text, converter.conversion)
