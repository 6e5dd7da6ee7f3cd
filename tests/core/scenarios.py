"""Hand-made thread scenarios, one per mode and per special case (golden files, rules)."""

from __future__ import annotations

from typing import Any

from pplx_archiver.core.thread.model import ThreadInput
from tests.core import builders as b

AWAIT = "WORKFLOW_AWAITING_NEXT_STEPS"
CANCEL = "WORKFLOW_CANCELED"


def search_plain() -> ThreadInput:
    """Search thread fetched plain only: text steps and FINAL answers."""
    steps = [
        {"step_type": "INITIAL_QUERY", "content": {"query": "capital?"}, "uuid": "1"},
        {
            "step_type": "SEARCH_WEB",
            "content": {"queries": [{"engine": "web", "query": "cap"}]},
            "uuid": "2",
        },
        {
            "step_type": "SEARCH_RESULTS",
            "content": {"web_results": [b.web(1), b.web(2)]},
            "uuid": "3",
        },
        {
            "step_type": "CODE",
            "content": {"script": "print('```')", "language": "python", "stdout": "```"},
            "uuid": "4",
        },
        {"step_type": "BRAND_NEW_STEP", "content": {"x": 1}, "uuid": "5"},
        b.final_step("Canberra is the capital.[1]", 1, 2),
    ]
    turn2 = [b.final_step("Because of a compromise.[2]", 2, 3)]
    return b.thread_input([b.page([b.entry("e1", 0, text=steps), b.entry("e2", 100, text=turn2)])])


def deep_research() -> ThreadInput:
    """Deep research: workflow with questions, queries, sources, content and a hostile table."""
    table = {
        "id": "tb",
        "type": "WORKFLOW_ITEM_TABLE",
        "payload": {
            "table_payload": {
                "columns": ["Name", "Notes"],
                "rows": [{"cells": {"Name": "a|b", "Notes": "line1\nline2"}}, ["x", "y", "extra"]],
            }
        },
    }
    questions = {
        "id": "q",
        "type": "WORKFLOW_ITEM_USER_QUESTIONS",
        "payload": {
            "user_questions_payload": {
                "title": "Focus",
                "fields": [
                    {
                        "field_name": "Which area?",
                        "options": [{"title": "Fiscal"}, {"title": "Money"}],
                    }
                ],
            }
        },
    }
    content = {
        "id": "c",
        "type": "WORKFLOW_ITEM_CONTENT",
        "payload": {"content_payload": {"entities": [{"description": "Insight one"}]}},
    }
    wf = b.workflow(
        [b.step([questions]), b.step([b.sources_item(1, 2)]), b.step([content, table])],
        mode="DEEP_RESEARCH",
    )
    answer = (
        "# Report\n\nInline $x$ and \\(y\\).\n\n```\n</details>\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |"
    )
    e = b.entry(
        "r1",
        0,
        search_mode="RESEARCH",
        display_model="pplx_alpha",
        blocks=[b.answer_block(answer), wf],
    )
    return b.thread_input([], [b.page([e])])


def computer() -> ThreadInput:
    """Computer: anchored (status lag), stub-window and appendix sub-agents, interruptions."""

    def bg(
        uid: str,
        pid: str,
        status: str,
        completed: str,
        sources: tuple[int, ...],
        locked: bool = False,
    ) -> dict[str, Any]:
        nested = b.payload(
            pid,
            status,
            completed=completed,
            model="claude48opus",
            steps=[b.step([b.sources_item(*sources)]), b.step([b.text_item(f"Result of {pid}")])],
        )
        extra: dict[str, Any] = {"locked_reason": "spending_limit_exceeded"} if locked else {}
        return b.entry(
            uid,
            10,
            search_mode="ASI",
            display_model="pplx_asi",
            query="",
            is_background=True,
            blocks=[
                b.workflow([b.step([], id=pid, tool_name="run_subagent"), nested], status=status)
            ],
            **extra,
        )

    main1 = b.entry(
        "m1",
        0,
        search_mode="ASI",
        display_model="pplx_asi",
        blocks=[
            b.workflow(
                [
                    b.step([b.sources_item(1)]),
                    b.step([b.text_item("thinking hard", "thought")]),
                    b.payload("toolu_A", anchor=True),
                    b.step([b.text_item("Computer answer one")]),
                ],
                status=AWAIT,
            ),
        ],
        locked_reason="spending_limit_exceeded",
    )
    stub = b.entry(
        "m2",
        60,
        search_mode="ASI",
        display_model="pplx_asi",
        query="",
        blocks=[],
        trigger="subagent_result",
    )
    main3 = b.entry(
        "m3",
        200,
        search_mode="ASI",
        display_model="pplx_asi",
        blocks=[b.workflow([b.step([b.text_item("Third answer")])])],
    )
    backgrounds = [
        bg("b1", "toolu_A", CANCEL, "", (2,)),
        bg("b2", "toolu_B", "WORKFLOW_COMPLETED", b.ts(57), (3,)),
        bg("b3", "toolu_C", CANCEL, b.ts(58), (4,)),
        bg("b4", "toolu_D", AWAIT, "", (5,), locked=True),
        bg("b5", "toolu_E", "WORKFLOW_COMPLETED", b.ts(40), ()),
    ]
    page = b.page([main1, stub, main3], backgrounds, mode="4")
    return b.thread_input([], [page])


def council() -> ThreadInput:
    """Council: per-model runs with queries, sources and answers; synthesis answer."""

    def member(model: str, n: int) -> dict[str, Any]:
        return {
            "id": f"x_{model}",
            "type": "WORKFLOW_ITEM_WORKFLOW",
            "payload": {
                "workflow_payload": {
                    "mode": "LLM_COUNCIL",
                    "model": model,
                    "status": "WORKFLOW_COMPLETED",
                    "headline": f"{model} run",
                    "steps": [
                        b.step(
                            [
                                {
                                    "id": "q",
                                    "type": "WORKFLOW_ITEM_QUERIES",
                                    "payload": {"queries_payload": {"queries": [f"q {model}"]}},
                                }
                            ]
                        ),
                        b.step([b.sources_item(n)]),
                        b.step([b.text_item(f"{model} says hi")]),
                    ],
                }
            },
        }

    wf = b.workflow(
        [
            b.step(
                [member("gpt55_thinking", 1), member("gemini31pro_high", 2)],
                tool_name="council_research",
            )
        ],
        mode="LLM_COUNCIL",
    )
    e = b.entry(
        "c1",
        0,
        search_mode="AGENTIC_RESEARCH",
        display_model="pplx_agentic_research",
        blocks=[b.answer_block("Synthesis answer"), wf],
    )
    return b.thread_input([], [b.page([e])])


def study_variant() -> ThreadInput:
    """Study thread with a real answer variant and a near miss; a mode switch."""
    hit = {
        "sibling_uuid": "sib-1",
        "selection_status": "SELECTED",
        "experiment_role": "[control]default",
        "experiment_override": {"model": "q"},
    }
    miss = {
        "sibling_uuid": "sib-2",
        "selection_status": "SELECTION_STATUS_UNSPECIFIED",
        "experiment_role": "[control]default",
    }
    e1 = b.entry(
        "s1", 0, search_mode="SEARCH", blocks=[b.answer_block("first")], side_by_side_metadata=miss
    )
    e2 = b.entry(
        "s2",
        50,
        search_mode="STUDY",
        display_model="pplx_study",
        blocks=[b.answer_block("second")],
        side_by_side_metadata=hit,
    )
    return b.thread_input([], [b.page([e1, e2], title='Hostile "title": </details> | ---')])


SCENARIOS = {
    "search_plain": search_plain,
    "deep_research": deep_research,
    "computer": computer,
    "council": council,
    "study_variant": study_variant,
}
