"""Decoding of an entry's schematized ``blocks[]`` into typed values.

Each block is ``{"intended_usage": name, "<kind>_block": {...}}`` (see docs/dev/api.md). Each
block kind has one small reader in :data:`BLOCK_KINDS`; a block of another kind is ignored.
Workflows and their items are read by :mod:`pplx_archiver.core.thread.items`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from pplx_archiver.core.thread.items import decode_workflow
from pplx_archiver.core.thread.node import Node
from pplx_archiver.core.thread.values import Blocks, WebResult, Workflow
from pplx_archiver.core.thread.webresults import web_results_at
from pplx_archiver.errors import PayloadError

_SECTION = re.compile(r"ask_text_(\d+)_markdown")


@dataclasses.dataclass(slots=True)
class _Found:
    """What the blocks of one entry gave so far."""

    answer: str | None = None
    sections: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    workflow: Workflow | None = None
    results: list[WebResult] = dataclasses.field(default_factory=list)
    has_web_block: bool = False
    mode_results: list[WebResult] = dataclasses.field(default_factory=list)  # without the above
    goals: list[str] = dataclasses.field(default_factory=list)
    assets: list[Node] = dataclasses.field(default_factory=list)

    def mark(self) -> tuple[int, ...]:
        return (
            len(self.sections),
            len(self.results),
            len(self.goals),
            len(self.assets),
            len(self.mode_results),
        )

    def undo(self, mark: tuple[int, ...]) -> None:
        """Forget what a block that failed half-way had added."""
        del self.sections[mark[0] :], self.results[mark[1] :], self.goals[mark[2] :]
        del self.assets[mark[3] :], self.mode_results[mark[4] :]


BlockReader = Callable[[Node, _Found], None]


def _ask_text(block: Node, found: _Found) -> None:
    md = block.get_obj("markdown_block")
    if md is not None:
        found.answer = _markdown_text(md)


def _section(block: Node, found: _Found) -> None:
    """``ask_text_<n>_markdown``: the n-th section of a multi-part answer."""
    md = block.get_obj("markdown_block")
    match = _SECTION.fullmatch(block.get_str("intended_usage"))
    if md is not None and match is not None:
        found.sections.append((int(match.group(1)), _markdown_text(md)))


def _workflow_root(block: Node, found: _Found) -> None:
    wf = block.get_obj("workflow_block")
    if wf is not None:
        found.workflow = decode_workflow(wf, 0)


def _web_results(block: Node, found: _Found) -> None:
    wr = block.get_obj("web_result_block")
    if wr is not None:
        found.results.extend(web_results_at(wr, "web_results"))
        found.has_web_block = True


def _sources_answer_mode(block: Node, found: _Found) -> None:
    """2025 payloads: the answer's source list."""
    sm = block.get_obj("sources_mode_block")
    if sm is not None:
        found.mode_results.extend(web_results_at(sm, "web_results"))


def _plan(block: Node, found: _Found) -> None:
    plan = block.get_obj("plan_block")
    if plan is None:
        return
    found.goals.extend(g.get_text("description") for g in plan.get_list("goals") if g.as_obj())
    for step in plan.get_list("steps"):
        for asset in step.get_list("assets") if isinstance(step.v, dict) else ():
            found.assets.append(asset)


def _unified_assets(block: Node, found: _Found) -> None:
    ua = block.get_obj("unified_assets_block")
    if ua is not None:
        found.assets.extend(ua.get_list("assets"))


BLOCK_KINDS: dict[str, BlockReader] = {
    "ask_text": _ask_text,
    "workflow_root": _workflow_root,
    "web_results": _web_results,
    "sources_answer_mode": _sources_answer_mode,
    "plan": _plan,
    "pro_search_steps": _plan,
    "unified_assets": _unified_assets,
}


def _reader(usage: str) -> BlockReader | None:
    reader = BLOCK_KINDS.get(usage)
    if reader is None and usage.startswith("ask_text_") and usage.endswith("_markdown"):
        return _section
    return reader


def decode_blocks(entry: Node, tolerant: bool = False) -> Blocks:
    """The typed content of an entry's ``blocks`` (empty when it has none).

    ``tolerant=True`` skips a block that cannot be decoded and lists it in ``problems``
    (JSON path, reason) instead of raising.
    """
    nodes = entry.get_list("blocks")
    if not nodes:
        return Blocks()
    found = _Found()
    problems: list[tuple[str, str]] = []
    for block in nodes:
        # One block that cannot be decoded is skipped and reported; the others still count.
        mark = found.mark()
        try:
            block.as_obj()
            reader = _reader(block.get_str("intended_usage"))
            if reader is not None:
                reader(block, found)
        except PayloadError as exc:
            if not tolerant:
                raise
            problems.append((exc.path, exc.message))
            found.undo(mark)
    found.sections.sort(key=lambda pair: pair[0])
    return Blocks(
        answer=found.answer,
        sections=tuple(text for _, text in found.sections),
        workflow=found.workflow,
        web_results=tuple(found.results if found.has_web_block else found.mode_results),
        goals=tuple(found.goals),
        asset_nodes=tuple(found.assets),
        count=len(nodes),
        problems=tuple(problems),
    )


def _markdown_text(md: Node) -> str:
    """The text of a markdown block: ``answer``, else the joined ``chunks``."""
    answer = md.get_str("answer")
    if answer:
        return answer
    return "".join(c.as_str() for c in md.get_list("chunks"))
