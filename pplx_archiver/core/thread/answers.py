"""The answer of a turn, in the extraction order of docs/dev/api.md §5 plus mode fallbacks.

Order: ``ask_text`` markdown answer → the numbered ``ask_text_<N>_markdown`` sections
joined → the last non-empty workflow ``WORKFLOW_ITEM_TEXT`` with variant ``answer`` →
the plain FINAL ``content.answer`` → (computer, council) the last non-empty text of the
workflow block, then the answer of the matching sub-agent or council member → the longest
plan goal description. A stub turn's answer is never backfilled from a sub-agent.
"""

from __future__ import annotations

from collections.abc import Sequence

from pplx_archiver.core.thread import mode_table
from pplx_archiver.core.thread.values import Entry, Workflow


def workflow_answer(workflow: Workflow | None, *, any_variant: bool = False) -> str:
    """The last non-empty top-level TEXT item with variant ``answer`` (or any variant)."""
    if workflow is None:
        return ""
    found = ""
    for step in workflow.steps:
        for item in step.items:
            if item.type != "WORKFLOW_ITEM_TEXT" or not item.text.strip():
                continue
            if any_variant or item.variant == "answer":
                found = item.text
    return found


def _member_answers(workflow: Workflow | None) -> list[str]:
    answers: list[str] = []
    if workflow is None:
        return answers
    for step in workflow.steps:
        for item in step.items:
            if item.workflow is not None:
                text = workflow_answer(item.workflow) or workflow_answer(
                    item.workflow, any_variant=True
                )
                if text:
                    answers.append(text)
    return answers


def extract_answer(
    entry: Entry, mode: str, subagents: Sequence[Workflow | None] = (), *, stub: bool = False
) -> str:
    """The full answer text of a turn ('' when the API returned none)."""
    blocks = entry.blocks
    if blocks.answer and blocks.answer.strip():
        return blocks.answer
    joined = "".join(blocks.sections)
    if joined.strip():
        return joined
    text = workflow_answer(blocks.workflow)
    if text:
        return text
    if entry.final_answer and entry.final_answer.strip():
        return entry.final_answer
    if mode in mode_table.VIEWS.agents and not stub:
        text = workflow_answer(blocks.workflow, any_variant=True)
        if text:
            return text
        for workflow in reversed(subagents):
            text = workflow_answer(workflow) or workflow_answer(workflow, any_variant=True)
            if text:
                return text
        members = _member_answers(blocks.workflow)
        if members:
            return members[-1]
    goals = [g for g in blocks.goals if g.strip()]
    if goals:
        return max(goals, key=len)
    return ""
