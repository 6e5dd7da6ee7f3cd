"""What a thread's flow saves between its decodes changes nothing it decodes or decides.

- ``may_stay_plain`` is False only when the decision ``blocks_needed`` is True (or the plain
  pages cannot be decoded): the thread's flow then fetches the schematized pages without
  decoding the plain ones to decide;
- a :class:`DecodeMemo` shared by several decodes gives the thread each would give alone,
  reusing an entry only where the value is equal (the pages before and after the scrub).
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.decode import DecodeMemo, decode_thread
from pplx_archiver.core.thread.model import ListingRow, RawPage, ThreadInput
from pplx_archiver.core.thread.modes import blocks_needed, may_stay_plain
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.core.thread.scrub import scrub_signed_urls
from pplx_archiver.errors import PayloadError
from tests.core import builders as b
from tests.core.scenarios import SCENARIOS
from tests.core.simcorpus import account

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decision(pages: tuple[RawPage, ...], listing: ListingRow | None) -> Any:
    """blocks_needed of the plain pages' decode (or where and why it fails)."""
    try:
        return blocks_needed(decode_thread(pages, ()), listing)
    except PayloadError as exc:
        return (exc.path, exc.message)


@pytest.mark.heavy  # pure CPU: run untraced (docs/dev/architecture.md, the gate)
def test_may_stay_plain_is_sound_on_the_simulated_account() -> None:
    """Every simulated thread: may_stay_plain False only for a True decision."""
    skipped = 0
    for inp, _truth in account(300, 7):
        if not may_stay_plain(inp.plain_pages):
            assert _decision(inp.plain_pages, inp.listing) is True
            skipped += 1
    assert skipped > 100  # most threads needing blocks are fetched without deciding first


MODES = st.sampled_from(["SEARCH", "search", "Studio", "RESEARCH", "ASI", "STUDY", "", None, 3])
MODELS = st.sampled_from(["turbo", "pplx_pro", "pplx_asi", "pplx_study", "", None, ["x"]])


@SETTINGS
@given(
    name=st.sampled_from(sorted(SCENARIOS)),
    modes=st.lists(MODES, min_size=1, max_size=6),
    models=st.lists(MODELS, min_size=1, max_size=6),
    listing_mode=st.sampled_from([None, "ASI", "search", "COMPUTER"]),
    break_item=st.booleans(),
)
def test_may_stay_plain_is_sound_on_any_modes(
    name: str,
    modes: list[Any],
    models: list[Any],
    listing_mode: str | None,
    break_item: bool,
) -> None:
    """Any search modes and display models on the scenarios' entries (and a broken plain
    workflow item): may_stay_plain is False only for a True decision (or an error)."""
    inp = SCENARIOS[name]()
    bodies = [copy.deepcopy(p.body) for p in inp.plain_pages]
    raws = [e for body in bodies for k in ("entries", "background_entries") for e in body[k]]
    for index, raw in enumerate(raws):
        raw["search_mode"] = modes[index % len(modes)]
        raw["display_model"] = models[index % len(models)]
    if break_item and raws:
        step = {"step_type": "ASI_TOOL_OUTPUT", "content": {"workflow_items": [{"type": 7}]}}
        raws[0]["text"] = orjson.dumps([step]).decode()
    pages = tuple(RawPage(p.request, body) for p, body in zip(inp.plain_pages, bodies, strict=True))
    listing = ListingRow("t", mode=listing_mode)
    if not may_stay_plain(pages):
        decision = _decision(pages, listing)
        assert decision is True or isinstance(decision, tuple)


def _signed_thread() -> ThreadInput:
    """A research thread whose schematized page holds one signed asset URL."""
    url = "https://cdn.test/r.md?Expires=4102444800&Signature=sigsig&Key-Pair-Id=KEY"
    asset = {"uuid": "a1", "asset_type": "RESEARCH_REPORT", "created_at": "1", "title": "r.md",
             "research_report": {"url": url, "file_name": "r.md"}}  # fmt: skip
    block = {"intended_usage": "unified_assets", "unified_assets_block": {"assets": [asset]}}
    first = b.entry("e1", 0, blocks=[block, b.answer_block("One.")], search_mode="RESEARCH")
    second = b.entry("e2", 60, blocks=[b.answer_block("Two.")], search_mode="RESEARCH")
    plain = [b.entry(e, s, text=[b.final_step(f"{e}.", 1)]) for e, s in (("e1", 0), ("e2", 60))]
    return b.thread_input([b.page(plain)], [b.page([first, second])])


def _scrubbed(pages: tuple[RawPage, ...]) -> tuple[RawPage, ...]:
    return tuple(
        RawPage(p.request, orjson.loads(scrub_signed_urls(orjson.dumps(p.body)))) for p in pages
    )


def test_a_shared_memo_reuses_only_entries_of_equal_value() -> None:
    """The pages as received after the scrubbed ones: the entry with the signed URL is
    decoded again (its live URL kept), the unchanged one is the entry decoded before."""
    live = _signed_thread()
    stored = _scrubbed(live.blocks_pages)
    assert stored[0].body != live.blocks_pages[0].body
    memo = DecodeMemo()
    first = decode_thread(live.plain_pages, stored, memo)
    again = decode_thread(live.plain_pages, live.blocks_pages, memo)
    alone = decode_thread(live.plain_pages, live.blocks_pages)
    by_key = {e.key: e for e in first.entries}
    assert [e.key for e in again.entries] == [e.key for e in alone.entries] == ["e1", "e2"]
    changed, same = again.entries
    assert changed is not by_key["e1"]
    assert "sigsig" in orjson.dumps(changed.blocks.asset_nodes[0].v).decode()
    assert "sigsig" not in orjson.dumps(by_key["e1"].blocks.asset_nodes[0].v).decode()
    assert changed.blocks.asset_nodes[0].v == alone.entries[0].blocks.asset_nodes[0].v
    assert same.steps[0].content is by_key["e2"].steps[0].content  # the plain half reused


def test_a_shared_memo_renders_what_separate_decodes_render() -> None:
    """Simulated threads decoded plain-only, then in full, then as received, all through
    one memo: each decision and rendering equals the one of a decode on its own."""
    for inp, _truth in account(40, 13):
        memo = DecodeMemo()
        plain = decode_thread(inp.plain_pages, (), memo)
        plain_alone = decode_thread(inp.plain_pages, ())
        assert blocks_needed(plain, inp.listing) == blocks_needed(plain_alone, inp.listing)
        stored = ThreadInput(
            inp.thread_id,
            _scrubbed(inp.plain_pages),
            _scrubbed(inp.blocks_pages),
            inp.listing,
        )
        for pages in (stored, inp):
            thread = decode_thread(pages.plain_pages, pages.blocks_pages, memo)
            assert render_thread(pages, b.CTX, thread=thread) == render_thread(pages, b.CTX)
