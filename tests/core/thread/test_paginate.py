"""Thread paging follows cursors, stops on every end condition and reports loops."""

from __future__ import annotations

from typing import Any

import pytest

from pplx_archiver.core.thread.paginate import BLOCKS, PLAIN, PagingRecord, thread_pages
from pplx_archiver.errors import PayloadError


def _drive(
    bodies: list[Any], flavour: str = PLAIN, max_pages: int = 200
) -> tuple[list[Any], PagingRecord]:
    gen = thread_pages("abc", flavour, limit=10, max_pages=max_pages)
    requests = [next(gen)]
    it = iter(bodies)
    try:
        while True:
            requests.append(gen.send(next(it)))
    except StopIteration as stop:
        return requests, stop.value


def test_follows_cursor_until_last_page() -> None:
    """Each next_cursor is passed verbatim; the chain and page count are recorded."""
    bodies = [
        {"has_next_page": True, "next_cursor": "c1"},
        {"has_next_page": True, "next_cursor": "c2"},
        {"has_next_page": False, "next_cursor": None},
    ]
    reqs, rec = _drive(bodies)
    assert [dict(r.params).get("cursor") for r in reqs] == [None, "c1", "c2"]
    assert rec == PagingRecord(3, ("c1", "c2"), True, "last_page")
    assert reqs[0].path == "/rest/thread/abc"


def test_empty_cursor_and_loop_and_cap() -> None:
    """An empty cursor ends paging; a repeated cursor or the page cap marks it incomplete."""
    _, rec = _drive([{"has_next_page": True, "next_cursor": ""}])
    assert rec.complete and rec.stop_reason == "empty_cursor"
    loop = [{"has_next_page": True, "next_cursor": "x"}] * 3
    _, rec = _drive(loop)
    assert not rec.complete and rec.stop_reason == "cursor_loop" and rec.pages == 2
    many = [{"has_next_page": True, "next_cursor": f"c{i}"} for i in range(10)]
    _, rec = _drive(many, max_pages=3)
    assert not rec.complete and rec.stop_reason == "page_cap" and rec.pages == 3


def test_blocks_flavour_params() -> None:
    """The schematized flavour asks for the schematized response and the block use cases."""
    reqs, _ = _drive([{"has_next_page": False}], flavour=BLOCKS)
    params = reqs[0].params
    assert ("with_schematized_response", "true") in params
    assert sum(1 for k, _ in params if k == "supported_block_use_cases") == 8


def test_bad_paging_fields_raise_payload_error() -> None:
    """A non-object page or wrong-typed paging fields raise PayloadError with the path."""
    with pytest.raises(PayloadError, match=r"^\$"):
        _drive([[1, 2]])
    with pytest.raises(PayloadError, match="next_cursor"):
        _drive([{"has_next_page": True, "next_cursor": 5}])
