"""A turn degraded by an older decoder renders in full after an upgrade, offline.

The archive is made while the decoder cannot read one block kind (the ``web_results``
reader fails, as an older release failed on a shape it did not know); the raw file keeps the
payload as received. ``re-render`` with the normal decoder then writes the full turn
without the note, and the thread record and the index forget the degraded turn.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pplx_archiver.core.thread import blocks
from pplx_archiver.core.thread.model import ListingRow, RawPage, RenderContext, ThreadInput
from pplx_archiver.core.thread.node import Node
from pplx_archiver.core.thread.rawfile import encode_raw_pages
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.rerender import rerender
from tests.commit_door import commit_thread
from tests.core import builders as b

UUID = "0badc0de-1111-4000-8000-000000000001"
CTX = RenderContext(exported_at="2026-09-01T00:00:00Z", account="me")
NOTE = "Partly unreadable"


def _old_web_results(block: Node, found: object) -> None:
    raise block.error("block kind not understood by this version")


def _degraded_in_index(arc: Archive) -> int:
    row = arc.index.get(UUID)
    assert row is not None
    return row.degraded_turns


def _input() -> tuple[ThreadInput, bytes]:
    sources = {"intended_usage": "web_results", "web_result_block": {"web_results": [b.web(7)]}}
    first = b.entry(UUID, 1, text=[b.final_step("Full answer")], blocks=[sources])
    first["thread_url_slug"] = UUID
    second = b.entry("e2", 20, query="second", text=[b.final_step("Second answer")])
    second["thread_url_slug"] = UUID
    body = orjson.dumps(b.page([first, second]))
    request = {"method": "GET", "path": f"/rest/thread/{UUID}", "params": [["limit", "100"]]}
    row = ListingRow(thread_id=UUID, title="Thread one", slug=UUID, updated_at=b.ts(30))
    page = RawPage(request, orjson.loads(body))
    return ThreadInput(UUID, (page,), listing=row), encode_raw_pages([(request, body)])


def test_rerender_after_upgrade_renders_the_degraded_turn_fully(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inp, raw = _input()
    with monkeypatch.context() as old:
        old.setitem(blocks.BLOCK_KINDS, "web_results", _old_web_results)
        degraded = render_thread(inp, CTX)
    assert degraded.record["counts"]["degraded_turns"] == 1
    full = render_thread(inp, CTX)
    assert "degraded" not in full.record
    with Archive(tmp_path) as arc:
        rel = commit_thread(arc, "me", degraded, raw, None, b.ts(30), listing=inp.listing).path
        assert _degraded_in_index(arc) == 1
    folder = tmp_path / rel
    turn = folder / "turns" / "turn_0001.md"
    assert NOTE in turn.read_text() and "Source 7" not in turn.read_text()

    with Archive(tmp_path) as arc:
        summary = rerender(arc, jobs=1)
        assert not summary.failures
        assert _degraded_in_index(arc) == 0
    assert turn.read_bytes() == full.files["turns/turn_0001.md"]
    assert NOTE not in turn.read_text() and "Source 7" in turn.read_text()
    assert (folder / "conversation.md").read_bytes() == full.files["conversation.md"]
    record = orjson.loads((folder / "thread.json").read_bytes())
    assert "degraded" not in record and "degraded_turns" not in record["counts"]
