"""The turns of a thread: each turn's sections, its turn file, its degraded fallback.

:class:`Turns` renders the turns of one thread in order with the thread's shared
:class:`~pplx_archiver.core.thread.workflow.Scope` (findings, interruption records, payloads already
shown) and sub-agent placement; it keeps the search prose and the degraded turns for the
rest of the rendering.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from pplx_archiver.core.thread import labels
from pplx_archiver.core.thread import markdown as md
from pplx_archiver.core.thread.answers import extract_answer, workflow_answer
from pplx_archiver.core.thread.citations import dedupe, entry_sources, source_key, workflow_sources
from pplx_archiver.core.thread.interruptions import annotation, kind_of, record
from pplx_archiver.core.thread.plainsteps import render_plain_steps
from pplx_archiver.core.thread.prose import TurnProse, joined, sources_text
from pplx_archiver.core.thread.subagents import STUB_TRIGGER, Payload, Placement, run_lock
from pplx_archiver.core.thread.timeparse import iso
from pplx_archiver.core.thread.values import Entry, WebResult
from pplx_archiver.core.thread.workflow import (
    Scope,
    code,
    inline,
    render_steps,
    render_subagent,
    source_list,
)
from pplx_archiver.errors import PayloadError


@dataclasses.dataclass(frozen=True, slots=True)
class TurnParts:
    """The sections of one rendered turn, each structure-safe Markdown (``turns/`` files are
    assembled from them; other readers such as the static site render them their own way)."""

    number: int
    entry_uuid: str
    query: str
    work: tuple[str, ...]
    work_note: str
    subagents: tuple[str, ...]
    answer: str
    citations: tuple[WebResult, ...]
    note: str = ""  # the one-line note of a degraded turn
    answer_note: str = ""  # the turn's interruption annotation (" ⏸ …"), on its Answer heading
    related: str = ""  # the "Related questions" section, when the turn has related queries


class Turns:
    """Renders the turns of one thread; keeps their sections, prose and degraded turns."""

    def __init__(
        self, scope: Scope, placement: Placement, mode: str, strings: Mapping[str, str]
    ) -> None:
        self.scope = scope
        self.placement = placement
        self.mode = mode
        self.lang = scope.lang
        self.labels = strings
        self.prose: list[TurnProse] = []
        self.parts: list[TurnParts] = []
        # turn number → (JSON path, reason) of what could not be read in that turn
        self.degraded: dict[int, tuple[tuple[str, str], ...]] = {}

    def label(self, key: str) -> str:
        return self.labels[key]

    def note(self, problems: tuple[tuple[str, str], ...]) -> str:
        """The one-line note of a degraded turn ('' when nothing was left out)."""
        if not problems:
            return ""
        path, reason = problems[0]
        more = f" (+{len(problems) - 1})" if len(problems) > 1 else ""
        return "> " + labels.label(
            "degraded", self.lang, path=code(path), reason=inline(reason), more=more
        )

    def turn(self, number: int, entry: Entry) -> tuple[str, TurnParts]:
        """(turn file text, its sections) of one turn.

        A turn whose rendering meets a value it cannot read is rendered again from what
        the decoder recovered (query, answer, sources), as a degraded turn.
        """
        scope = self.scope
        mark = (len(scope.findings), len(scope.interruptions), set(scope.rendered_payloads))
        prose_mark = len(self.prose)
        try:
            part = self.turn_parts(number, entry)
        except PayloadError as exc:
            del scope.findings[mark[0] :], scope.interruptions[mark[1] :]
            del self.prose[prose_mark:]
            scope.rendered_payloads = mark[2]
            problems = (*entry.problems, (exc.path, exc.message))
            self.degraded[number] = problems
            part = self.plain_parts(number, entry, problems)
        self.parts.append(part)
        parts = [f"# {self.label('turn')} {number}"]
        if part.note:
            parts.append(part.note)
        parts.append(f"## {self.label('query')}\n\n{part.query}")
        if part.work:
            parts.append(
                f"## {self.label('work_process')}{part.work_note}\n\n" + "\n\n".join(part.work)
            )
        if part.subagents:
            parts.append(f"## {self.subagent_work(part)}")
        parts.append(f"## {self.label('answer')}{part.answer_note}\n\n{part.answer}")
        if part.citations:
            parts.append(self.cited(part, "##"))
        if part.related:
            parts.append(part.related)
        return "\n\n".join(parts) + "\n", part

    def cited(self, part: TurnParts, marks: str) -> str:
        """A turn's citation list under a ``marks`` heading: the list its answer's ``[n]``
        index, the same in the turn file and in ``conversation.md``."""
        unique = part.citations
        return f"{marks} {self.label('citations')} ({len(unique)})\n\n{source_list(unique)}"

    def subagent_work(self, part: TurnParts) -> str:
        """The "Sub-agent work" section of a stub turn, without its heading marks: the same
        text in the turn file (``##``) and in ``conversation.md`` (``###``)."""
        return f"{self.label('subagent_work')}\n\n" + "\n\n".join(part.subagents)

    def plain_parts(
        self, number: int, entry: Entry, problems: tuple[tuple[str, str], ...]
    ) -> TurnParts:
        """A turn from the decoded query, answer and sources only, with its note."""
        query = self.query(entry)
        answer = entry.final_answer or entry.blocks.answer or ""
        shown = self.scope.block(answer) if answer.strip() else f"*{self.label('no_answer')}*"
        unique = dedupe([*entry.sources, *entry.final_web_results, *entry.blocks.web_results])
        self.prose.append(
            TurnProse(
                turn=number,
                created=iso(entry.created_us),
                query=entry.query,
                answer=answer,
                sources=sources_text(unique),
            )
        )
        return TurnParts(
            number=number,
            entry_uuid=entry.key,
            query=query,
            work=(),
            work_note="",
            subagents=(),
            answer=shown,
            citations=unique,
            note=self.note(problems),
            related=self.related(entry),
        )

    def related(self, entry: Entry) -> str:
        """The "Related questions" section of a turn ('' without related queries)."""
        if not entry.related:
            return ""
        items = "\n".join(f"- {inline(q)}" for q in entry.related)
        return f"## {self.label('related')}\n\n{items}"

    def turn_parts(self, number: int, entry: Entry) -> TurnParts:
        """The sections of one turn, each as structure-safe Markdown; PayloadError on a value
        it cannot read."""
        scope = self.scope
        where = f"turn_{number:04d}"
        index = number - 1
        anchored = self.placement.anchored.get(index, ())
        on_stub = self.placement.stubs.get(index, ())
        scope.here = self.placement.allowed((*anchored, *on_stub))  # runs placed in this turn
        cited: list[WebResult] = entry_sources(entry)
        conclusions: list[str] = []
        work, heading_note = self.workflow_work(entry, where)
        for payload in anchored:
            for shown in self.placement.family(payload):
                cited.extend(workflow_sources(shown.workflow))
            if payload.index not in scope.rendered_payloads:
                scope.rendered_payloads.add(payload.index)
                work.append(self.payload_block(payload, f"{where}/subagent"))
                conclusions.append(conclusion(payload))
        plain = render_plain_steps(entry.steps, scope, where)
        if plain:
            summary = f"{self.label('steps')} ({len(entry.steps)})"
            work.append(md.details(summary, plain, trusted=True))
        blocks = self.stub_blocks(on_stub, where, cited, conclusions)
        stub = entry.trigger == STUB_TRIGGER
        answer = extract_answer(entry, self.mode, [p.workflow for p in anchored], stub=stub)
        unique = dedupe(cited)
        self.prose.append(
            TurnProse(
                turn=number,
                created=iso(entry.created_us),
                query=entry.query,
                answer=answer,
                subagents=joined(conclusions),
                sources=sources_text(unique),
            )
        )
        return TurnParts(
            number=number,
            entry_uuid=entry.key,
            query=self.query(entry),
            work=tuple(work),
            work_note=heading_note,
            subagents=tuple(blocks),
            answer=self.shown_answer(answer),
            citations=unique,
            note=self.note(entry.problems),
            related=self.related(entry),
            answer_note=heading_note,
        )

    def stub_blocks(
        self,
        on_stub: tuple[Payload, ...],
        where: str,
        cited: list[WebResult],
        conclusions: list[str],
    ) -> list[str]:
        """The blocks of the runs placed on a stub turn (sources and conclusions collected)."""
        scope = self.scope
        blocks = []
        for payload in on_stub:
            if payload.index in scope.rendered_payloads:
                continue  # already shown inside another run's block: once only
            for shown in self.placement.family(payload):
                cited.extend(workflow_sources(shown.workflow))
            scope.rendered_payloads.add(payload.index)
            # the stub turn's own lock reason counts too (Placement.notices): it is the
            # notification of the run and of the runs shown inside its block
            blocks.append(self.payload_block(payload, f"{where}/subagent_stub"))
            conclusions.append(conclusion(payload))
        return blocks

    def query(self, entry: Entry) -> str:
        """The query as shown; a turn without one (a stub turn) says so, never an empty
        section."""
        if entry.query.strip():
            return md.safe_markdown(entry.query)
        key = "stub_query" if entry.trigger == STUB_TRIGGER else "no_query"
        return f"*{self.label(key)}*"

    def shown_answer(self, answer: str) -> str:
        """The answer as shown, or the "no answer" line."""
        return self.scope.block(answer) if answer.strip() else f"*{self.label('no_answer')}*"

    def workflow_work(self, entry: Entry, where: str) -> tuple[list[str], str]:
        """The folded steps of a turn's own workflow and its interruption annotation."""
        workflow = entry.blocks.workflow
        if workflow is None:
            return [], ""
        scope = self.scope
        locked = workflow.locked_reason or entry.locked_reason or scope.locked
        kind = kind_of(workflow.status, locked)
        if kind is not None:
            scope.interruptions.append(record(where, kind, workflow.headline, workflow.status))
        heading_note = annotation(kind, self.lang)
        work: list[str] = []
        if workflow.steps:
            summary = f"{self.label('steps')} ({len(workflow.steps)}){heading_note}"
            steps_md = render_steps(workflow.steps, scope, where, 0)
            work.append(md.details(summary, steps_md, trusted=True))
        return work, heading_note

    def payload_block(self, payload: Payload, location: str) -> str:
        """A payload's block at ``location``; the lock reason of the stub turn it lands on
        counts when the run and its entry carry none (:func:`run_lock`)."""
        if payload.workflow is None:  # a background entry with a plain answer, no workflow
            return self.plain_payload(payload)
        return render_subagent(
            payload.workflow,
            self.scope,
            location,
            0,
            anchor=None,
            record_it=True,
            locked=run_lock(payload, self.scope.notices),
        )

    def appendix(self, cited: list[WebResult]) -> list[str]:
        """The blocks of the payloads placed in no turn (their sources added to ``cited``)."""
        scope = self.scope
        scope.here = self.placement.allowed(self.placement.appendix)
        blocks: list[str] = []
        for payload in self.placement.appendix:
            if payload.index in scope.rendered_payloads:
                continue  # already shown inside another run's block: once only
            for shown in self.placement.family(payload):
                cited.extend(workflow_sources(shown.workflow))
            if payload.workflow is None:
                cited.extend(entry_sources(payload.entry))
            scope.rendered_payloads.add(payload.index)
            blocks.append(self.payload_block(payload, "background_unassigned"))
        return blocks

    def plain_payload(self, payload: Payload) -> str:
        """A workflow-less background entry: its query as heading, its answer and sources."""
        entry = payload.entry
        title = inline(entry.query) or inline(payload.id) or "?"
        parts = [f"#### {self.label('subagent')}: {title}"]
        answer = entry.final_answer or entry.blocks.answer or ""
        if answer.strip():
            parts.append(f"**{self.label('conclusion')}**\n\n{self.scope.block(answer)}")
        cited = dedupe(entry_sources(entry))
        if cited:
            parts.append(f"**{self.label('citations')}** ({len(cited)})\n\n{source_list(cited)}")
        return "\n\n".join(parts)

    # -- whole thread -------------------------------------------------------------------


def conclusion(payload: Payload) -> str:
    """A sub-agent's conclusion as its block shows it ('' when it has none)."""
    return workflow_answer(payload.workflow) or workflow_answer(payload.workflow, any_variant=True)


def sources_markdown(
    sources: tuple[WebResult, ...], parts: list[TurnParts], strings: Mapping[str, str]
) -> str:
    """``sources.md``: the thread's sources numbered once, then for each turn with citations
    which of them its ``[n]`` are (a turn's ``[n]`` is the n-th item of its own list)."""
    head = f"# {strings['sources']} ({len(sources)})"
    if not sources:
        return head + "\n"
    number = {source_key(r): n for n, r in enumerate(sources, 1)}
    rows = []
    for part in parts:
        pairs = [
            f"[{n}] → {number.get(source_key(r), '?')}" for n, r in enumerate(part.citations, 1)
        ]
        if pairs:
            rows.append(f"- {strings['turn']} {part.number}: " + " · ".join(pairs))
    text = f"{head}\n\n{source_list(sources)}\n"
    if rows:
        text += (
            f"\n## {strings['by_turn']}\n\n{strings['by_turn_note']}\n\n" + "\n".join(rows) + "\n"
        )
    return text
