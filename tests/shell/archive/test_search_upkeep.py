"""Search index upkeep and --raw syntax: reindex rebuilds it, a rebuild takes the writer lock,
raw queries agree with SQLite FTS5's own evaluation."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.core.thread.prose import FIELDS, ThreadProse, TurnProse
from pplx_archiver.errors import EXIT_BUSY, SearchQueryError
from pplx_archiver.shell.archive import search as S
from pplx_archiver.shell.archive.lock import writer_lock
from pplx_archiver.shell.archive.store import Archive
from tests.shell.archive_builders import harvest


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No PPLX_* settings from the environment; a private config folder."""
    for name in list(os.environ):
        if name.startswith("PPLX_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PPLX_CONFIG_DIR", str(tmp_path / "config"))


def _archive(out: Path, threads: int) -> list[tuple[str, int, tuple[str, ...]]]:
    with Archive(out) as archive:
        for i in range(1, threads + 1):
            harvest(archive, i)
        with archive.index.transaction() as db:
            return sorted(S.iter_prose(db))


def _cli(*args: str) -> tuple[int, str]:
    _register()
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _state(out: Path) -> str:
    db = S.open_readonly(out / "index" / "archive.sqlite")
    try:
        return S.index_state(db)
    finally:
        db.close()


def test_reindex_rebuilds_the_search_index_with_progress(tmp_path: Path, clean_env: None) -> None:
    """`reindex` leaves a ready search index holding every thread, and says how far it got."""
    out = tmp_path / "a"
    before = _archive(out, 3)
    code, text = _cli("reindex", "-o", str(out))
    assert code == 0, text
    assert "search index: rebuilding 3/3 threads" in text
    assert _state(out) == "ready"
    with Archive(out) as archive, archive.index.transaction() as db:
        assert sorted(S.iter_prose(db)) == before
    code, text = _cli("search", "-o", str(out), "Question 2?", "--json")
    assert code == 0 and "search index: rebuilding" not in text


def test_a_search_rebuild_waits_for_no_writer(tmp_path: Path, clean_env: None) -> None:
    """A rebuild (asked for, or needed by a stale index) exits 6 while another writer runs."""
    out = tmp_path / "a"
    _archive(out, 2)
    with writer_lock(out, "sync"):
        code, text = _cli("search", "-o", str(out), "--rebuild", "Question")
        assert code == EXIT_BUSY and "busy" in text, text
        # A ready index is only read: searching needs no lock.
        assert _cli("search", "-o", str(out), "Question")[0] == 0
        with Archive(out) as archive, archive.index.transaction() as db:
            db.execute("UPDATE search_meta SET value = 'stale' WHERE key = 'state'")
        code, text = _cli("search", "-o", str(out), "Question")
        assert code == EXIT_BUSY and "sync" in text, text
        assert _state(out) == "stale"
    code, text = _cli("search", "-o", str(out), "Question")
    assert code == 0 and "search index: rebuilding 2/2 threads" in text
    assert _state(out) == "ready"


# -- --raw agrees with FTS5 -----------------------------------------------------------------


Pair = tuple[sqlite3.Connection, sqlite3.Connection]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """A search index whose rows share words across fields, and an FTS5 trigram table
    (with content, positions) of the same rows as the reference."""
    out = tmp_path_factory.mktemp("raw") / "a"
    words = ["ledger", "violin", "market", "quantum", "harbor", "经济政策"]
    with Archive(out) as archive, archive.index.transaction() as db:
        for n in range(64):
            picked = [w for i, w in enumerate(words) if (n >> i) & 1]
            row = TurnProse(
                1,
                f"2026-07-{1 + n % 28:02d}T00:00:00Z",
                title=" ".join(picked[:1]),
                query=" ".join(picked[1:3]) + f" question {n}",
                answer=" and ".join(reversed(picked)) + (" Ledger" if n % 3 else ""),
                sources=" ".join(picked[2:]),
            )
            meta = S.ThreadMeta(uuid=f"t{n}", account="me", mode="search", title="", path=f"p{n}")
            S.index_thread(db, meta, ThreadProse(rows=(row,)))
    ref = sqlite3.connect(":memory:")
    ref.execute(
        f"CREATE VIRTUAL TABLE ref USING fts5(key UNINDEXED, {', '.join(FIELDS)}, "
        "tokenize='trigram case_sensitive 0')"
    )
    db = S.open_readonly(out / "index" / "archive.sqlite")
    for uuid, turn, values in S.iter_prose(db):
        ref.execute("INSERT INTO ref VALUES (?, ?, ?, ?, ?, ?)", (f"{uuid}/{turn}", *values))
    yield db, ref
    db.close()
    ref.close()


RAW_AGREE = [
    "ledger",
    '"ledger"',
    "LEDGER",
    "ledger violin",
    "ledger AND violin",
    "ledger OR violin",
    "ledger NOT violin",
    "ledger NOT violin NOT market",
    "ledger OR violin AND market",
    "ledger AND violin OR market",
    "ledger OR violin NOT market",
    "(ledger OR violin) AND market",
    "ledger violin OR market harbor",
    "ledger NOT violin market",
    "ledger NOT title : violin market",
    '"AND" OR "NEAR"',
    "NEAR",
    '"r and v"',
    "title : ledger",
    "query : violin OR sources : quantum",
    "{title query} : market",
    "- answer : harbor",
    "- {answer sources} : quantum",
    "query : (violin OR harbor)",
    "title : ledger NOT answer : violin",
    "经济政策 AND ledger",
    "经济政 OR quantum",
    "market*",
]


def _keys(hits: list[S.Hit]) -> set[str]:
    return {f"{h.thread_uuid}/{h.turn}" for h in hits}


@pytest.mark.parametrize("query", RAW_AGREE)
def test_raw_queries_match_what_fts5_matches(pair: Pair, query: str) -> None:
    """Boolean operators, precedence, column filters: the same rows as FTS5 itself finds."""
    db, ref = pair
    expected = {k for (k,) in ref.execute("SELECT key FROM ref WHERE ref MATCH ?", (query,))}
    assert _keys(S.search(db, query, limit=10_000, raw=True)) == expected
    assert expected or query in ("- answer : harbor", '"AND" OR "NEAR"', "NEAR")


def test_raw_queries_match_short_text_and_field_starts(pair: Pair) -> None:
    """Unlike FTS5's trigrams, one or two characters match too; ^ anchors at a field start."""
    db, _ref = pair
    rows = list(S.iter_prose(db))
    short = {f"{u}/{t}" for u, t, v in rows if any("经济" in x for x in v)}
    assert short and _keys(S.search(db, "经济", limit=10_000, raw=True)) == short
    start = {f"{u}/{t}" for u, t, v in rows if v[2].lower().startswith("ledger")}
    assert start and _keys(S.search(db, "answer : ^ledger", limit=10_000, raw=True)) == start


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("NEAR(ledger violin)", "NEAR is not supported"),
        ("ledger + violin", "'+' is not supported"),
        ("nosuch : ledger", "no such column: nosuch"),
        ('"open', "unterminated string"),
        ("a.b", "syntax error near '.'"),
        ("(ledger", "syntax error near the end"),
        ("(ledger OR violin) (market OR harbor)", "syntax error near '('"),
        ("AND ledger", "syntax error near 'AND'"),
        ("ledger OR", "syntax error near the end"),
    ],
)
def test_raw_mistakes_are_named(pair: Pair, query: str, says: str) -> None:
    """A raw query FTS5 would refuse, or one speaking of token positions, is one clear error."""
    db, _ref = pair
    with pytest.raises(SearchQueryError, match="--raw") as caught:
        S.search(db, query, raw=True)
    assert says in str(caught.value)
