"""The one-door thread flow: what it asks for, what its plan holds, how often it decodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import pytest

from pplx_archiver.core.thread import flow as flow_mod
from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.core.thread.budgets import Budgets
from pplx_archiver.core.thread.decode import DecodeMemo, decode_thread
from pplx_archiver.core.thread.flow import AssetsNeed, PageNeed, ThreadPlan, thread_flow
from pplx_archiver.core.thread.model import AssetFile, ListingRow, RawPage, ThreadInput
from pplx_archiver.core.thread.paginate import BLOCKS, PLAIN
from pplx_archiver.core.thread.rawfile import decode_raw_pages, encode_raw_pages
from pplx_archiver.core.thread.render import needs_blocks, render_thread
from pplx_archiver.core.thread.scrub import scrub_signed_urls
from pplx_archiver.core.thread.values import Thread
from pplx_archiver.errors import BudgetError, PayloadError
from tests.core import builders as b
from tests.core.simcorpus import account

SIGNED = "https://cdn.test/r.md?Expires=4102444800&Signature=sigsig&Key-Pair-Id=KEY"


def _drive(
    inp: ThreadInput,
    *,
    assets: bool = True,
    downloads: tuple[AssetFile, ...] = (),
    budgets: Budgets | None = None,
) -> tuple[ThreadPlan, list[Any]]:
    """Answer the flow from the input's page bodies (as bytes); return the plan and needs."""
    served = {PLAIN: list(inp.plain_pages), BLOCKS: list(inp.blocks_pages)}
    assert inp.listing is not None
    gen = thread_flow(inp.listing, b.CTX, page_limit=100, assets=assets, budgets=budgets)
    needs: list[Any] = []
    answer: Any = None
    try:
        while True:
            need = gen.send(answer)
            needs.append(need)
            if isinstance(need, PageNeed):
                body = orjson.dumps(served[need.flavour].pop(0).body)
                answer = (orjson.loads(body), body)
            else:
                answer = downloads
    except StopIteration as stop:
        return stop.value, needs


def _stored(pages: Sequence[RawPage]) -> tuple[RawPage, ...]:
    """The pages as archived: bodies with the signed-URL credentials masked."""
    return tuple(
        RawPage(p.request, orjson.loads(scrub_signed_urls(orjson.dumps(p.body)))) for p in pages
    )


@pytest.mark.heavy  # pure CPU: `make test` runs it untraced (docs/dev/architecture.md)
def test_plans_match_the_separate_core_calls() -> None:
    """On simulator threads the plan equals needs_blocks + extract_assets + render_thread."""
    checked = 0
    for inp, _truth in account(60, 11):
        plan, needs = _drive(inp, assets=True)
        assert (plan.blocks is not None) == needs_blocks(inp.plain_pages, inp.listing)
        full = ThreadInput(
            inp.thread_id,
            _stored(inp.plain_pages),
            _stored(inp.blocks_pages) if plan.blocks is not None else (),
            inp.listing,
        )
        assert plan.refs == extract_assets(inp)
        assert plan.result == render_thread(full, b.CTX)
        assert [p.body for p in decode_raw_pages(plan.plain.raw_file)] == [
            p.body for p in full.plain_pages
        ]
        asked = [n for n in needs if isinstance(n, AssetsNeed)]
        assert [n.refs for n in asked] == ([plan.refs] if plan.refs else [])
        checked += 1
    assert checked == 60


def test_a_plain_thread_is_decoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread without schematized pages or signed URLs is decoded exactly once."""
    calls: list[int] = []

    def counting(
        plain: Sequence[RawPage],
        blocks: Sequence[RawPage],
        memo: DecodeMemo | None = None,
    ) -> Thread:
        calls.append(len(blocks))
        return decode_thread(plain, blocks, memo)

    monkeypatch.setattr(flow_mod, "decode_thread", counting)
    entry = b.entry("e1", 0, blocks=[b.answer_block("Answer.")])
    entry["display_model"] = "pplx_pro"
    inp = b.thread_input([b.page([entry])], listing=ListingRow(thread_id="thread-1"))
    plan, needs = _drive(inp)
    assert calls == [0]
    assert plan.blocks is None and len(needs) == 1
    assert plan.result == render_thread(inp, b.CTX)


def test_a_thread_certain_to_need_its_schematized_pages_is_decoded_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No plain entry has a search mode: the schematized pages are fetched without
    decoding the plain ones first, and the thread is decoded once, with both flavours."""
    calls: list[int] = []

    def counting(
        plain: Sequence[RawPage], blocks: Sequence[RawPage], memo: DecodeMemo | None = None
    ) -> Thread:
        calls.append(len(blocks))
        return decode_thread(plain, blocks, memo)

    monkeypatch.setattr(flow_mod, "decode_thread", counting)
    plain = [b.entry("e1", 0, text=[b.final_step("Plain.", 1)], search_mode="RESEARCH")]
    blocks = [b.entry("e1", 0, blocks=[b.answer_block("Schematized.")], search_mode="RESEARCH")]
    inp = b.thread_input([b.page(plain)], [b.page(blocks)], listing=ListingRow("thread-1"))
    plan, needs = _drive(inp)
    assert calls == [1]
    assert [n.flavour for n in needs] == [PLAIN, BLOCKS]
    assert plan.result == render_thread(inp, b.CTX)


def test_signed_urls_are_masked_in_the_plan_and_live_for_downloads() -> None:
    """The raw file and rendering hold masked credentials; the asset refs keep the live URL."""
    asset = {
        "uuid": "a1",
        "asset_type": "RESEARCH_REPORT",
        "created_at": "1",
        "title": "r.md",
        "research_report": {"url": SIGNED, "file_name": "r.md"},
    }
    block = {"intended_usage": "unified_assets", "unified_assets_block": {"assets": [asset]}}
    entry = b.entry("e1", 0, blocks=[block, b.answer_block("Answer.")])
    entry["search_mode"] = "RESEARCH"
    inp = b.thread_input([b.page([entry])], [b.page([entry])], listing=ListingRow("thread-1"))
    report = AssetFile("a1", 1, "r.md", b"# Report\n")
    plan, needs = _drive(inp, downloads=(report,))
    assert plan.blocks is not None and plan.blocks.scrubbed
    assert [r.url for r in plan.refs] == [SIGNED]
    assert isinstance(needs[-1], AssetsNeed)
    for raw in (plan.plain.raw_file, plan.blocks.raw_file):
        assert b"sigsig" not in raw and b"Signature=REDACTED" in raw
    assert all(b"sigsig" not in data for data in plan.result.files.values())
    assert "report.md" in plan.result.files
    expected = encode_raw_pages(
        [(n.request.as_record(), scrub_signed_urls(orjson.dumps(p.body)))
         for n, p in zip(needs[:1], inp.plain_pages, strict=True)]
    )  # fmt: skip
    assert plan.plain.raw_file == expected


def test_without_assets_nothing_is_asked_and_bad_pages_raise() -> None:
    """assets=False yields no AssetsNeed; a page that is not an object is a PayloadError."""
    inp = next(i for i, _t in account(60, 11) if extract_assets(i))
    _plan, needs = _drive(inp, assets=False)
    assert not any(isinstance(n, AssetsNeed) for n in needs)
    gen = thread_flow(ListingRow("t"), b.CTX, page_limit=100)
    next(gen)
    with pytest.raises(PayloadError):
        gen.send(([1, 2], b"[1,2]"))


def _asset_entry(assets: list[dict[str, Any]]) -> dict[str, Any]:
    block = {"intended_usage": "unified_assets", "unified_assets_block": {"assets": assets}}
    entry = b.entry("e1", 0, blocks=[block, b.answer_block("Answer.")])
    entry["search_mode"] = "RESEARCH"
    return entry


def test_only_the_download_url_keeps_its_credentials() -> None:
    """An inline asset whose text holds a signed URL is archived masked; the URL to
    download is the one as received, read back without decoding the pages again."""
    script = f"fetch('{SIGNED}')\n"
    code = {"uuid": "c1", "asset_type": "CODE_FILE", "created_at": "1", "title": "a.py",
            "code_file": {"file_name": "a.py"}, "code": {"script": script}}  # fmt: skip
    report = {"uuid": "a1", "asset_type": "RESEARCH_REPORT", "created_at": "2", "title": "r.md",
              "research_report": {"url": SIGNED, "file_name": "r.md"}}  # fmt: skip
    entry = _asset_entry([code, report])
    inp = b.thread_input([b.page([entry])], [b.page([entry])], listing=ListingRow("thread-1"))
    plan, _needs = _drive(inp)
    by_uuid = {r.uuid: r for r in plan.refs}
    assert by_uuid["a1"].url == SIGNED
    assert by_uuid["c1"].inline_content is not None
    assert "sigsig" not in by_uuid["c1"].inline_content
    assert "Signature=REDACTED" in by_uuid["c1"].inline_content


@pytest.mark.parametrize("how", ["fallback", "direct"])
def test_urls_the_bodies_do_not_tell_are_read_from_a_decode(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the changed bodies cannot tell a URL (here: none is found), the pages as
    received are decoded for it, and the other fields stay as archived."""
    calls: list[int] = []
    real = flow_mod.decode_thread

    def counting(plain: Sequence[RawPage], blocks: Sequence[RawPage], memo: Any = None) -> Thread:
        calls.append(1)
        return real(plain, blocks, memo)

    monkeypatch.setattr(flow_mod, "decode_thread", counting)
    if how == "fallback":
        monkeypatch.setattr(flow_mod, "signed_urls", lambda _bodies: {})
    report = {"uuid": "a1", "asset_type": "RESEARCH_REPORT", "created_at": "2", "title": "r.md",
              "research_report": {"url": SIGNED, "file_name": "r.md"}}  # fmt: skip
    entry = _asset_entry([report])
    inp = b.thread_input([b.page([entry])], [b.page([entry])], listing=ListingRow("thread-1"))
    plan, _needs = _drive(inp)
    assert [r.url for r in plan.refs] == [SIGNED]
    assert len(calls) == (2 if how == "fallback" else 1)


def test_turns_and_sources_are_held_to_their_budgets_before_the_rendering() -> None:
    """A decoded thread past the turn or source budget fails naming it (issue 44)."""
    inp = max(
        (inp for inp, _ in account(30, 11)), key=lambda i: len(i.plain_pages[0].body["entries"])
    )
    plan, _ = _drive(inp)
    turns = plan.result.record["counts"]["turns"]
    assert turns >= 2
    with pytest.raises(BudgetError) as caught:
        _drive(inp, budgets=Budgets(turns=1))
    assert caught.value.budget == "turns"
    assert plan.result.record["counts"]["sources"] > 0
    with pytest.raises(BudgetError) as caught:
        _drive(inp, budgets=Budgets(sources=0))
    assert caught.value.budget == "sources"
