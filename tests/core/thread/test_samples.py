"""Every real captured thread payload decodes and renders with what a reader would check."""

from __future__ import annotations

import orjson
import pytest

from pplx_archiver.core.thread.model import RawPage, ThreadInput
from pplx_archiver.core.thread.render import needs_blocks, render_thread
from tests.core.builders import CTX
from tests.samples import REAL

SAMPLES = REAL

# file, mode, turns, unique citations
CASES = [
    ("thread_search_1.json", "search", 2, 25),
    ("thread_research_1.json", "deep-research", 1, 30),
    ("thread_blocks_computer_sim_2_trimmed.json", "computer", 1, 10),
    ("thread_blocks_council_sim_1_prefix.json", "council", 1, 9),
]


def _body(name: str) -> dict:
    return orjson.loads((SAMPLES / name).read_bytes())


def _render(name: str):
    body = _body(name)
    return body, render_thread(ThreadInput("t", (RawPage({}, body),)), CTX)


@pytest.mark.parametrize(("name", "mode", "turns", "cites"), CASES)
def test_sample_renders(name: str, mode: str, turns: int, cites: int) -> None:
    """The sample decodes, keeps its mode, turn count and citation count."""
    _, result = _render(name)
    record = orjson.loads(result.files["thread.json"])
    assert result.mode == mode
    assert record["counts"]["turns"] == turns
    assert len([k for k in result.files if k.startswith("turns/")]) == turns
    sources = orjson.loads(result.files["sources.json"])
    assert sources["count"] == cites == record["counts"]["sources"]
    assert f"# Sources ({cites})" in result.files["sources.md"].decode()


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_sample_answers_present_in_full(name: str) -> None:
    """Each turn's answer text appears in full in its turn file and in conversation.md."""
    body, result = _render(name)
    conversation = result.files["conversation.md"].decode()
    for number, entry in enumerate(body["entries"], 1):
        answers = [
            b["markdown_block"]["answer"]
            for b in entry["blocks"]
            if b["intended_usage"] == "ask_text"
        ]
        if not answers:  # computer: the answer lives in the workflow text only
            answers = [
                i["payload"]["text_payload"]["text"]
                for s in next(
                    b["workflow_block"]["steps"]
                    for b in entry["blocks"]
                    if b["intended_usage"] == "workflow_root"
                )
                for i in s["items"]
                if i["type"] == "WORKFLOW_ITEM_TEXT"
            ]
        turn = result.files[f"turns/turn_{number:04d}.md"].decode()
        for line in answers[-1].splitlines():
            assert line in turn
            assert line in conversation


def test_research_sample_renders_clarifying_questions() -> None:
    """The deep-research work process shows the clarifying questions and insights."""
    _, result = _render("thread_research_1.json")
    turn = result.files["turns/turn_0001.md"].decode()
    assert "Questions to the user" in turn
    assert "Which policy areas should the comparison focus on most?" in turn
    assert turn.count("<details>") == turn.count("</details>")


def test_council_sample_member_block() -> None:
    """The council member run is folded with its queries and sources."""
    _, result = _render("thread_blocks_council_sim_1_prefix.json")
    turn = result.files["turns/turn_0001.md"].decode()
    assert "<summary>Council member: gpt55_thinking</summary>" in turn
    assert "示例检索词（模型甲·第6词）" in turn


def test_needs_blocks_on_samples() -> None:
    """Search with a display model needs no blocks; deep research does."""
    search = RawPage({}, _body("thread_search_1.json"))
    research = RawPage({}, _body("thread_research_1.json"))
    assert needs_blocks([search], None) is False
    assert needs_blocks([research], None) is True
