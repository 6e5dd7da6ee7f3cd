"""Paged search (the `mcp` server's `search`, #42): pages of one query neither overlap nor
skip a match, for one- and two-character text (ordered by date) and longer (ranked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pplx_archiver.shell.archive import search as S
from pplx_archiver.shell.archive.store import Archive
from tests.shell.archive_builders import build


@pytest.mark.parametrize("query", ["an", "Answer", "question"])
def test_pages_cover_every_match_once(tmp_path: Path, query: str) -> None:
    build(tmp_path / "a", 12)
    with Archive(tmp_path / "a") as archive:
        db = archive.index._db
        whole, more = S.search_page(db, query, S.Filters(), 0, 1000)
        assert whole and not more
        keys: list[tuple[str, int]] = []
        offset = 0
        while True:
            page, more = S.search_page(db, query, S.Filters(), offset, 4)
            keys += [(h.thread_uuid, h.turn) for h in page]
            offset += len(page)
            if not more:
                break
        assert keys == [(h.thread_uuid, h.turn) for h in whole]
        assert len(set(keys)) == len(keys)
        some = {whole[0].thread_uuid}
        kept, _ = S.search_page(db, query, S.Filters(), 0, 1000, allow=lambda u: u & some)
        assert kept and {h.thread_uuid for h in kept} == some


def test_the_window_is_fixed_per_query() -> None:
    assert S.page_window("経済") == S.SHORT_WINDOW
    assert S.page_window("abc") == S.RANK_CAP
    assert S.page_window("ab", raw=True) == S.RANK_CAP
