"""Full-text search: exact literal matching against a naive scan, hostile input, ranking, upkeep."""

from __future__ import annotations

import functools
import itertools
import os
import random
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import opencc
import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.core.thread.prose import ThreadProse, TurnProse
from pplx_archiver.errors import SearchQueryError
from pplx_archiver.shell.archive import search as S
from pplx_archiver.shell.archive import search_grams, search_index, search_query
from pplx_archiver.shell.archive.store import Archive
from tests.shell.archive_builders import harvest, slug_of

Key = tuple[str, int]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One simulated account archived by `pplx-export demo` in-process, shared by the module."""
    out = tmp_path_factory.mktemp("search") / "demo"
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith("PPLX_"):
                mp.delenv(name)
        mp.setenv("PPLX_CONFIG_DIR", str(out.parent / "config"))
        _register()
        result = CliRunner().invoke(
            app, ["demo", "--out", str(out), "--threads", "40", "--log-format", "json"]
        )
    assert result.exit_code == 0, result.output
    yield out


@pytest.fixture(scope="module")
def db(demo: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the demo archive's index."""
    conn = S.open_readonly(demo / "index" / "archive.sqlite")
    yield conn
    conn.close()


def _rows(db: sqlite3.Connection) -> list[tuple[Key, tuple[str, ...]]]:
    return [((uuid, turn), values) for uuid, turn, values in S.iter_prose(db)]


# The naive reading folds each stored text once (the same texts are scanned for every query).
_folded = functools.cache(S.fold)


def _naive(rows: list[tuple[Key, tuple[str, ...]]], query: str) -> set[Key]:
    needle = S.fold(query)
    return {key for key, values in rows if any(needle in _folded(v) for v in values)}


def _found(db: sqlite3.Connection, query: str, **filters: str) -> set[Key]:
    hits = S.search(db, query, S.Filters(**filters), limit=1_000_000)
    keys = [(h.thread_uuid, h.turn) for h in hits]
    assert len(keys) == len(set(keys))
    return set(keys)


def _is_cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"


def test_commits_kept_the_index_ready_with_one_row_per_turn_file(
    demo: Path, db: sqlite3.Connection
) -> None:
    """Archiving indexed every thread as it committed: a thread row plus one per turn file."""
    assert S.index_state(db) == "ready"
    turns: dict[str, set[int]] = {}
    for (uuid, turn), _values in _rows(db):
        turns.setdefault(uuid, set()).add(turn)
    folders = dict(db.execute("SELECT uuid, path FROM threads WHERE status = 'done'").fetchall())
    assert set(turns) == set(folders)
    for uuid, numbers in turns.items():
        files = sorted((demo / folders[uuid] / "turns").glob("turn_*.md"))
        assert numbers == {0, *range(1, len(files) + 1)}


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_random_substrings_find_exactly_the_turns_containing_them(db: sqlite3.Connection) -> None:
    """Hundreds of random English and Chinese substrings (1-12 chars) match a naive scan."""
    rows = _rows(db)
    rng = random.Random(17)
    texts = [v for _key, values in rows for v in values if v]
    cjk_spots = [(t, i) for t in texts for i, ch in enumerate(t) if _is_cjk(ch)]
    assert cjk_spots, "the demo account holds Chinese text"
    queries: list[str] = []
    for n in range(360):
        size = 1 + n % 12
        if n % 3 == 0:
            text, at = rng.choice(cjk_spots)
            queries.append(text[at : at + size])
        else:
            text = rng.choice(texts)
            at = rng.randrange(len(text))
            queries.append(text[at : at + size])
    queries += ["zzqx", "新西兰经济学", "Q", "quantum policy violin garden"]
    checked = 0
    for query in queries:
        expected = _naive(rows, query)
        assert _found(db, query) == expected, query
        checked += bool(expected)
    assert checked >= 350


def test_a_traditional_spelling_of_simplified_text_finds_its_turn(
    db: sqlite3.Connection,
) -> None:
    """2-character simplified strings taken at random from the archive, written in
    traditional script by OpenCC (Taiwan and Hong Kong forms too), find their turn."""
    rows = _rows(db)
    rng = random.Random(43)
    spots = [
        (key, v[at : at + 2])
        for key, values in rows
        for v in values
        for at in range(len(v) - 1)
        if _is_cjk(v[at]) and _is_cjk(v[at + 1]) and "\u4e00" <= v[at] <= "\u9fff"
    ]
    converters = [opencc.OpenCC(c) for c in ("s2t", "s2tw", "s2hk")]
    changed = 0
    for key, text in rng.sample(spots, 60):
        for converter in converters:
            query = converter.convert(text)
            changed += query != text
            assert key in _found(db, query), (text, query)
    assert changed >= 20


def test_filters_narrow_to_the_naive_scan_of_matching_threads(db: sqlite3.Connection) -> None:
    """--mode and --since/--until keep exactly the naive matches of those threads and dates."""
    rows = _rows(db)
    modes = dict(db.execute("SELECT uuid, mode FROM search_threads").fetchall())
    created = {
        (u, t): c or ""
        for u, t, c in db.execute(
            "SELECT t.uuid, d.turn, d.created FROM search_docs d "
            "JOIN search_threads t ON t.id = d.thread"
        )
    }
    computer = [k for k, _ in rows if modes[k[0]] == "computer"]
    assert computer, "the demo account holds computer threads"
    text = " ".join(v for k, values in rows if k == computer[0] for v in values)
    word = max(sorted(set(re.findall(r"[a-z]{5,}", text.lower()))), key=len)
    cjk = next((c for _, values in rows for v in values for c in v if "\u4e00" <= c <= "\u9fff"))
    for query in (word, cjk, "e"):
        expected = {k for k in _naive(rows, query) if modes[k[0]] == "computer"}
        assert _naive(rows, query), query
        assert _found(db, query, mode="computer") == expected
        day = sorted(created[k] for k in _naive(rows, query))[len(_naive(rows, query)) // 2][:10]
        later = {k for k in _naive(rows, query) if created[k] >= day}
        earlier = {k for k in _naive(rows, query) if created[k][:10] <= day}
        assert _found(db, query, since=day) == later
        assert _found(db, query, until=day) == earlier


HOSTILE = [
    "-",
    "--",
    "-x",
    ".",
    "..",
    "/",
    "a/b",
    "'",
    '"',
    '""',
    '"unbalanced',
    "(",
    ")",
    "(a",
    "a)",
    "*",
    "a*",
    "^",
    ":",
    "title:x",
    "{title}:x",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(a b)",
    "a AND",
    "OR OR OR",
    "%",
    "_",
    "\\",
    "\x00",
    "a\x00b",
    "\ud800",
    "\n",
    " ",
    "\t\t\t",
    "🚀",
    "👩‍💻",
    "\u202e",
    "x" * 2000,
    "c++",
    "v1.2.3",
    "https://example.com/t1/article-1",
    "[1]",
    "<details>",
    "SELECT * FROM threads;",
]


def test_hostile_queries_never_error(db: sqlite3.Connection) -> None:
    """Punctuation, FTS keywords, NUL, surrogates and huge input are searched as plain text."""
    rows = _rows(db)
    for query in HOSTILE:
        hits = S.search(db, query, limit=50)
        if "\x00" not in query and "\ud800" not in query:
            assert {(h.thread_uuid, h.turn) for h in hits} <= _naive(rows, query), query


def test_raw_queries_pass_fts5_syntax_and_report_mistakes(db: sqlite3.Connection) -> None:
    """--raw accepts FTS5 operators and names a syntax mistake instead of failing."""
    rows = _rows(db)
    both = _naive(rows, "ledger") & _naive(rows, "violin")
    assert _raw(db, "ledger AND violin") == both
    for bad in ('"open', "a AND", "(x", "NEAR("):
        with pytest.raises(SearchQueryError, match="--raw"):
            S.search(db, bad, raw=True)


def test_raw_queries_mixing_short_and_long_phrases_match_the_naive_scan(
    db: sqlite3.Connection,
) -> None:
    """Phrases of 1-2 characters are in one gram table, longer ones in the other: AND, OR and
    NOT across the two (and an OR that narrows nothing, so every row is tested) still give
    exactly the naive scan's answer."""
    rows = _rows(db)

    def n(text: str) -> set[Key]:
        return _naive(rows, text)

    cases = {
        "q OR ledger": n("q") | n("ledger"),
        "le AND violin": n("le") & n("violin"),
        "ledger NOT q": n("ledger") - n("q"),
        "(经 OR violin) AND le": (n("经") | n("violin")) & n("le"),
        "vio OR xq": n("vio") | n("xq"),
        "ledger AND 经济": n("ledger") & n("经济"),
    }
    for query, expected in cases.items():
        assert _raw(db, query) == expected, query
    assert any(cases.values())


def _raw(db: sqlite3.Connection, query: str) -> set[Key]:
    return {(h.thread_uuid, h.turn) for h in S.search(db, query, limit=1_000_000, raw=True)}


def _meta(uuid: str, mode: str = "search", title: str = "") -> S.ThreadMeta:
    return S.ThreadMeta(uuid=uuid, account="me", mode=mode, title=title, path=f"me/{mode}/{uuid}")


@pytest.mark.parametrize("cap", [S.RANK_CAP, 1])
def test_bm25_ranks_query_above_title_above_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    """A word in the query outranks it in the title, which outranks it in the answer.

    The rank cap (how many newest matches are scored) never drops a match below the limit.
    """
    monkeypatch.setattr(search_query, "RANK_CAP", cap)
    with Archive(tmp_path / "a") as archive, archive.index.transaction() as db:
        docs = {
            "in-answer": TurnProse(1, "2026-07-01T00:00:00Z", answer="about the zebra crossing"),
            "in-title": TurnProse(0, "2026-07-02T00:00:00Z", title="zebra crossing"),
            "in-query": TurnProse(1, "2026-07-03T00:00:00Z", query="zebra crossing rules"),
        }
        for uuid, row in docs.items():
            S.index_thread(db, _meta(uuid), ThreadProse(rows=(row,)))
        for n in range(8):
            filler = TurnProse(1, "", query=f"filler {n}", answer="nothing to see")
            S.index_thread(db, _meta(f"filler-{n}"), ThreadProse(rows=(filler,)))
        order = [h.thread_uuid for h in S.search(db, "zebra", limit=3)]
        short = [h.thread_uuid for h in S.search(db, "ze", limit=3)]
        scores = [h.score for h in S.search(db, "zebra", limit=3)]
    assert order == ["in-query", "in-title", "in-answer"]
    assert short == ["in-query", "in-title", "in-answer"]  # newest first
    assert all(a is not None and b is not None and a < b for a, b in itertools.pairwise(scores))


def test_recommit_replaces_rows_and_group_commit_indexes_at_done(tmp_path: Path) -> None:
    """A thread committed twice has one set of rows; a group commit indexes it when flushed."""
    with Archive(tmp_path / "a") as archive:
        harvest(archive, 1)
        harvest(archive, 1)
        with archive.index.transaction() as db:
            keys = [(u, t) for u, t, _v in S.iter_prose(db)]
            assert len(keys) == len(set(keys)) == 4  # thread row + 3 turns
            assert S.search(db, "Question 2?")[0].path.endswith("/turns/turn_0003.md")
    with Archive(tmp_path / "b", group_commit=True) as archive:
        harvest(archive, 2)
        with archive.index.transaction() as db:
            assert not S.search(db, "Answer 1 of")
        archive.flush_done()
        with archive.index.transaction() as db:
            assert len(S.search(db, "Answer 1 of")) == 1


def test_old_version_or_pre_search_archive_is_rebuilt(tmp_path: Path) -> None:
    """An index of another version, or none at all, is rebuilt from the raw files."""
    with Archive(tmp_path / "a") as archive:
        harvest(archive, 1)
        harvest(archive, 2)
        with archive.index.transaction() as db:
            before = sorted(S.iter_prose(db))
            db.execute("UPDATE search_meta SET value = '0' WHERE key = 'version'")
            assert S.index_state(db) == "old"
        seen: list[tuple[int, int]] = []
        summary = S.ensure_ready(archive, progress=lambda d, t: seen.append((d, t)))
        assert summary is not None and summary.threads == 2 and seen[-1] == (2, 2)
        with archive.index.transaction() as db:
            assert S.index_state(db) == "ready"
            assert sorted(S.iter_prose(db)) == before
            for table in ("search_grams", "search_docs", "search_meta"):
                db.execute(f"DROP TABLE {table}")
        harvest(archive, 3)  # a first commit into an archive that already holds threads
        with archive.index.transaction() as db:
            assert S.index_state(db) == "stale"
        assert S.ensure_ready(archive) is not None
        assert S.ensure_ready(archive) is None
        with archive.index.transaction() as db:
            assert len({u for u, _t, _v in S.iter_prose(db)}) == 3


def _cli(*args: str) -> tuple[int, str]:
    _register()
    result = CliRunner().invoke(app, ["search", *args])
    return result.exit_code, result.output


def _common(rows: list[tuple[Key, tuple[str, ...]]], pattern: str, size: int) -> str:
    """A piece of text (``pattern``, ``size`` characters) found in at least three turns."""
    seen: dict[str, set[Key]] = {}
    for key, values in rows:
        for v in values:
            for m in re.finditer(pattern, v.lower()):
                seen.setdefault(m.group(0)[:size], set()).add(key)
    return sorted(k for k, keys in seen.items() if len(keys) >= 3 and len(k) == size)[0]


def test_cli_exit_codes_json_and_grouped_text(demo: Path, db: sqlite3.Connection) -> None:
    """Hits exit 0 (grouped text or one JSON object per hit), none exit 1, bad input exit 2."""
    rows = _rows(db)
    word = _common(rows, r"[a-z]{6}", 6)
    pair = _common(rows, r"[\u4e00-\u9fff]{2}", 2)
    code, text = _cli("-o", str(demo), word, "--limit", "5")
    assert code == 0 and ("/turns/turn_" in text or "conversation.md" in text)
    assert word in text.lower()
    code, text = _cli("-o", str(demo), pair, "--json", "--limit", "3")
    lines = [orjson.loads(line) for line in text.splitlines()]
    assert code == 0 and len(lines) == 3
    assert all(pair in hit["snippet"] and (demo / hit["path"]).is_file() for hit in lines)
    assert _cli("-o", str(demo), "no such text anywhere")[0] == 1
    assert _cli("-o", str(demo), "--raw", '"open')[0] == 2
    assert _cli("-o", str(demo), "x", "--since", "2026-13")[0] == 2
    assert _cli("-o", str(tmp_missing(demo)), "x")[0] == 2


def tmp_missing(demo: Path) -> Path:
    """A folder that holds no archive."""
    return demo.parent / "nothing-here"


def test_a_failing_index_update_leaves_the_thread_done_and_the_index_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search-index error rolls back only the search rows; the next search rebuilds."""
    with Archive(tmp_path / "a") as archive:
        harvest(archive, 1)

        def broken(db: sqlite3.Connection, meta: S.ThreadMeta, prose: object) -> None:
            db.execute("INSERT INTO search_docs (thread, turn, prose) VALUES (999, 1, x'00')")
            raise sqlite3.OperationalError("disk trouble")

        monkeypatch.setattr(search_index, "index_thread", broken)
        harvest(archive, 2)
        monkeypatch.undo()
        row = archive.get(slug_of(2))
        assert row is not None and row.status == "done"
        with archive.index.transaction() as db:
            assert S.index_state(db) == "stale"
            assert (
                db.execute("SELECT COUNT(*) FROM search_docs WHERE thread = 999").fetchone()[0] == 0
            )
        S.ensure_ready(archive)
        with archive.index.transaction() as db:
            assert len({u for u, _t, _v in S.iter_prose(db)}) == 2


def test_a_phrase_of_both_gram_kinds_scans_the_trigram_table_once_in_rowid_order(
    db: sqlite3.Connection,
) -> None:
    """A phrase with trigrams and space-centred grams reads the trigram table once, newest
    first, with the space-centred rows as a filter: were those rows to drive it (a rowid
    constraint, ``=`` in FTS5's plan), FTS5 would run the trigram query again at each of
    them, seconds for a common phrase on a large archive."""
    grams = search_grams.query_grams("for thread")
    assert grams.tri is not None and grams.short is not None
    sql, args = search_query.candidate_query(grams, search_query.Filters())
    plan = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", args)]
    scans = [step for step in plan if step.startswith("SCAN s VIRTUAL TABLE")]
    assert len(scans) == 1 and "=" not in scans[0].split(":", 1)[1], plan
    assert not any("TEMP B-TREE" in step for step in plan), plan
    assert _found(db, "for thread") == _naive(_rows(db), "for thread")
