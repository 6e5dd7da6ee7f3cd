"""Mode and placement rules checked clause by clause against crafted payloads."""

from __future__ import annotations

from typing import Any

from pplx_archiver.core.thread.model import ListingRow, RawPage, ThreadInput
from pplx_archiver.core.thread.render import needs_blocks, render_thread
from pplx_archiver.shell.run.pipeline import row_from_arg
from tests.core import builders as b
from tests.core.scenarios import SCENARIOS


def _plain(*entries: dict[str, Any]) -> tuple[RawPage, ...]:
    return (RawPage({}, b.page(list(entries))),)


def test_unmapped_display_model_alone_still_fetches_blocks() -> None:
    """``turbo`` or ``pplx_alpha`` without a RESEARCH_ANSWER step is no mapped signal."""
    for model in ("turbo", "pplx_alpha"):
        entry = b.entry("e1", 1, search_mode=None, display_model=model, text=[b.final_step("a")])
        assert needs_blocks(_plain(entry), None), model


def test_mapped_search_mode_with_a_display_model_needs_no_blocks() -> None:
    """A search thread with ``search_mode`` SEARCH and a display model is certain: no blocks."""
    entry = b.entry("e1", 1, text=[b.final_step("a")])
    assert not needs_blocks(_plain(entry), None)


def test_unknown_search_mode_is_ignored() -> None:
    """An unknown ``search_mode`` value is no signal: the mapped display model decides."""
    entry = b.entry("e1", 1, search_mode="ZZ_FUTURE", display_model="pplx_study")
    entry["text"] = b.final_step("a")["content"]["answer"]
    result = render_thread(ThreadInput("t", _plain(entry)), b.CTX)
    assert result.mode == "study"


def test_computer_task_url_reaches_mode_detection() -> None:
    """``export <…/computer/tasks/…>``: no search_mode, no metadata mode, still computer."""
    row = row_from_arg("https://www.perplexity.ai/computer/tasks/abc-123")
    url = "https://www.perplexity.ai/computer/tasks/abc-123"
    assert row == ListingRow(thread_id="abc-123", url=url)
    entry = b.entry("e1", 1, search_mode=None, display_model=None, text=[b.final_step("a")])
    pages = _plain(entry)
    assert needs_blocks(pages, row)
    result = render_thread(ThreadInput("abc-123", pages, listing=row), b.CTX)
    assert result.mode == "computer"
    assert result.record["mode_signals"]["computer_url"] is True
    plain = row_from_arg("https://www.perplexity.ai/search/abc-123")
    assert plain.mode is None and "/computer/tasks/" not in plain.url


def _stub_thread(completed: str) -> ThreadInput:
    stub = b.entry("stub", 100, text=[b.final_step("stub answer")], trigger="subagent_result")
    first = b.entry("e1", 1, text=[b.final_step("a")])
    bg = b.entry(
        "bg", 95, is_background=True, blocks=[b.workflow([b.payload("p1", completed=completed)])]
    )
    return ThreadInput(
        "t", (RawPage({}, b.page([first, stub], [bg])),), (RawPage({}, b.page([], [bg])),)
    )


def test_run_without_completion_time_is_matched_by_its_entry_update() -> None:
    """A payload with no ``completed_at`` is matched by its background entry's update time.

    The entry was updated right at the stub's creation time: the stub is its notification
    (issue 39; tests/core/thread/test_fidelity.py has the far side of the window).
    """
    result = render_thread(_stub_thread(""), b.CTX)
    assert [x["landing"] for x in result.record["background"]] == ["stub"]


def test_stub_window_boundary() -> None:
    """Exactly 10 s from the stub is inside the window; 10.000001 s is outside."""
    inside = render_thread(_stub_thread(b.ts(90)), b.CTX)  # stub created at second 100
    assert [x["landing"] for x in inside.record["background"]] == ["stub"]
    outside = render_thread(_stub_thread(b.ts(89)[:-13] + ".999999+00:00"), b.CTX)
    assert [x["landing"] for x in outside.record["background"]] == ["appendix"]


def test_background_entry_with_a_plain_answer_renders_in_the_appendix() -> None:
    """A background entry with a FINAL answer and no workflow shows its answer and sources."""
    first = b.entry("e1", 1, text=[b.final_step("a")])
    bg = b.entry(
        "bg", 50, is_background=True, query="Side task", text=[b.final_step("Found it.", 7)]
    )
    result = render_thread(ThreadInput("t", (RawPage({}, b.page([first], [bg])),)), b.CTX)
    conversation = result.files["conversation.md"].decode()
    appendix = conversation.split("## Background tasks (unassigned to turns)")[1]
    assert "Sub-agent: Side task" in appendix and "Found it." in appendix
    assert "https://example.com/7" in appendix
    assert b"https://example.com/7" in result.files["sources.json"]


def test_disagreeing_display_models_resolve_to_the_most_specific_mode() -> None:
    """Without search_mode, pplx_study and pplx_agentic_research turns make council, reported."""
    study = b.entry("e1", 1, search_mode=None, display_model="pplx_study", text=[b.final_step("a")])
    council = b.entry(
        "e2", 20, search_mode=None, display_model="pplx_agentic_research", text=[b.final_step("b")]
    )
    result = render_thread(ThreadInput("t", _plain(study, council)), b.CTX)
    assert result.mode == "council"
    switch = [f for f in result.findings if f.event == "MODE_SWITCH"]
    assert switch and switch[0].fields["display_model_modes"] == ["council", "study"]


def _member(status: str) -> dict[str, Any]:
    member = b.payload(
        "m1", status, steps=[b.step([b.text_item("member answer")])], mode="LLM_COUNCIL"
    )
    return member


def test_canceled_council_member_and_stepless_subagent_are_recorded() -> None:
    """A canceled council member and a step-less nested sub-agent go into interruptions."""
    council = b.workflow([_member("WORKFLOW_CANCELED")])
    stepless = b.workflow([b.payload("s1", "WORKFLOW_AWAITING_NEXT_STEPS", anchor=True)])
    first = b.entry("e1", 1, blocks=[b.answer_block("a"), council], search_mode="AGENTIC_RESEARCH")
    second = b.entry(
        "e2", 20, blocks=[b.answer_block("b"), stepless], search_mode="AGENTIC_RESEARCH"
    )
    page = b.page([first, second])
    result = render_thread(ThreadInput("t", (RawPage({}, page),), (RawPage({}, page),)), b.CTX)
    found = {(r["location"], r["kind"]) for r in result.record.get("interruptions", [])}
    assert ("turn_0001/council_member", "canceled") in found
    assert ("turn_0002/subagent", "interrupted") in found
    turn = result.files["turns/turn_0001.md"].decode()
    assert "⛔ canceled" in turn


def test_thread_locked_reason_makes_a_limit_interruption() -> None:
    """``thread_metadata.locked_reason`` alone makes an awaiting workflow limit-interrupted."""
    awaiting = b.workflow([b.step([b.text_item("partial")])], "WORKFLOW_AWAITING_NEXT_STEPS")
    stepless = b.workflow([b.payload("s1", "WORKFLOW_AWAITING_NEXT_STEPS", anchor=True)])
    first = b.entry("e1", 1, blocks=[b.answer_block("a"), awaiting], search_mode="COMPUTER")
    second = b.entry("e2", 20, blocks=[b.answer_block("b"), stepless], search_mode="COMPUTER")
    page = b.page([first, second], locked_reason="spending_limit_exceeded")
    result = render_thread(ThreadInput("t", (RawPage({}, page),), (RawPage({}, page),)), b.CTX)
    kinds = {(r["location"], r["kind"]) for r in result.record["interruptions"]}
    assert kinds == {
        ("turn_0001", "limit_interrupted"),
        ("turn_0002/subagent", "limit_interrupted"),
    }
    assert "⏸ limit-interrupted" in result.files["turns/turn_0001.md"].decode()
    unlocked = b.page([first, second])
    plain = render_thread(
        ThreadInput("t", (RawPage({}, unlocked),), (RawPage({}, unlocked),)), b.CTX
    )
    assert {r["kind"] for r in plain.record["interruptions"]} == {"interrupted"}


def test_stub_turn_reads_the_same_in_conversation_and_turn_file() -> None:
    """The sub-agent work of a stub turn is in conversation.md as in its turn file."""
    result = render_thread(SCENARIOS["computer"](), b.CTX)
    turn = result.files["turns/turn_0002.md"].decode()
    work = turn.split("## Sub-agent work\n\n", 1)[1].split("\n\n## Answer\n\n", 1)[0]
    assert "#### Sub-agent: Agent toolu\\_B" in work
    conversation = result.files["conversation.md"].decode()
    section = conversation.split("## Turn 2\n\n", 1)[1].split("\n\n## Turn 3\n\n", 1)[0]
    assert f"### Sub-agent work\n\n{work}\n\n### Answer\n\n" in section
