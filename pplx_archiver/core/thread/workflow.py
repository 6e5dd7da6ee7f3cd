"""Rendering of work processes: workflow steps and items, sub-agents, council members.

Every ``WORKFLOW_ITEM_*`` type and every plain step type of docs/dev/api.md §5 has a
rendering; an unknown type gets an explicit placeholder (and an ``UNKNOWN_STEP_TYPE``
finding), never silence. What the web UI folds is rendered in full inside ``<details>``.
Plain ``text`` steps are rendered by :mod:`pplx_archiver.core.thread.plainsteps`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pplx_archiver.core.thread import labels
from pplx_archiver.core.thread import markdown as md
from pplx_archiver.core.thread.answers import workflow_answer
from pplx_archiver.core.thread.citations import dedupe, workflow_sources
from pplx_archiver.core.thread.interruptions import annotation, kind_of, record
from pplx_archiver.core.thread.node import Node, dump_json
from pplx_archiver.core.thread.subagents import Payload, run_lock
from pplx_archiver.core.thread.values import Item, Step, WebResult, Workflow

_INLINE = {ord(c): "\\" + c for c in "\\`*_[]<>#|"}  # each markup character, escaped
_BACKTICKS = re.compile(r"`+")
_NEEDS_WORK = re.compile(r"[\\`*_\[\]<>#|]|\s\s|[^\S ]|^\s|\s$")
_URL_BAD = re.compile(r"[\s<>]")
# step status (upper case) → label of its heading note; completed and unknown ones are silent
_STEP_STATUS = {
    **dict.fromkeys(
        (
            "WORKFLOW_PENDING",
            "PENDING",
            "WORKFLOW_EXECUTING_STEPS",
            "IN_PROGRESS",
            "WORKFLOW_AWAITING_NEXT_STEPS",
            "WORKFLOW_AWAITING_USER",
        ),
        "step_unfinished",
    ),
    **dict.fromkeys(("WORKFLOW_FAILED", "FAILED"), "step_failed"),
    **dict.fromkeys(("WORKFLOW_CANCELED", "CANCELED"), "canceled"),
}


@dataclasses.dataclass(slots=True)
class Scope:
    """Mutable state of one thread's rendering: language, findings, interruption records."""

    lang: str
    thread_uuid: str
    by_id: Mapping[str, Sequence[Payload]]
    locked: str = ""  # the thread's own lock reason (thread_metadata.locked_reason)
    # payload index → the lock reason of the stub turn the run lands on (Placement.notices)
    notices: Mapping[int, str] = dataclasses.field(default_factory=dict)
    findings: list[tuple[str, dict[str, Any]]] = dataclasses.field(default_factory=list)
    interruptions: list[dict[str, str]] = dataclasses.field(default_factory=list)
    rendered_payloads: set[int] = dataclasses.field(default_factory=set)
    here: frozenset[int] | None = None  # payloads that may be shown where rendering is now
    shown: dict[str, str] = dataclasses.field(default_factory=dict)

    def label(self, key: str, **fields: object) -> str:
        """A label in this scope's language."""
        return labels.label(key, self.lang, **fields)

    def block(self, text: str) -> str:
        """:func:`block_text` of ``text``, computed once per thread (answers repeat)."""
        done = self.shown.get(text)
        if done is None:
            done = self.shown[text] = block_text(text)
        return done


def inline(text: str) -> str:
    """One-line, structure-safe Markdown text (newlines folded, markup escaped)."""
    if not _NEEDS_WORK.search(text):
        return text
    return " ".join(text.split()).translate(_INLINE)  # split(): the whitespace of \s


def code(text: str) -> str:
    """An inline code span for any one-line text (backtick runs inside are fenced around)."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    runs = [len(r) for r in _BACKTICKS.findall(flat)] if "`" in flat else []
    ticks = "`" * (max(runs, default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or runs else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def link(result: WebResult) -> str:
    """A Markdown link to a source, safe for any name and URL."""
    url = result.url.strip()
    if _URL_BAD.search(url):
        url = _URL_BAD.sub(lambda m: f"%{ord(m.group(0)):02X}", url)
    name = inline(result.name) or inline(result.url) or url
    return f"[{name}](<{url}>)" if url else name


@functools.lru_cache(maxsize=8192)
def _source_line(name: str, url: str, snippet: str) -> str:
    """The list-item text of one source (memoized: sources repeat across sections).

    Keyed by the three shown fields, whose tuple hashes faster than the value object.
    """
    line = link(WebResult(name, url, snippet))
    if snippet.strip():
        line += f" — {inline(snippet)}"
    return line


def source_list(results: Sequence[WebResult]) -> str:
    """A numbered list of sources with snippets."""
    return "\n".join(
        f"{number}. {_source_line(r.name, r.url, r.snippet)}" for number, r in enumerate(results, 1)
    )


def bullets(values: Sequence[str]) -> str:
    return "\n".join(f"- {inline(v)}" for v in values if v.strip())


def block_text(text: str) -> str:
    """API Markdown made structure-safe, with LaTeX delimiters normalized (code protected)."""
    return md.safe_markdown(md.normalize_latex(text))


def _status_note(status: str, scope: Scope) -> str:
    """A step heading's status note: a label for a known unfinished, failed or canceled
    status; nothing for a completed one and nothing for a status not known (never the raw
    value: the raw JSON keeps it)."""
    key = _STEP_STATUS.get(status.strip().upper())
    return f" · {scope.label(key)}" if key else ""


def render_item(item: Item, scope: Scope, where: str, depth: int) -> str:
    """One workflow item as Markdown."""
    parts: list[str] = []
    if item.header.strip():
        parts.append(f"**{inline(item.header)}**")
    render = _ITEM_RENDERERS.get(item.type)
    if render is None:
        parts.append(unknown(item.type, item.raw, item.path, scope))
    else:
        parts.extend(render(item, scope, where, depth))
    return "\n\n".join(p for p in parts if p)


def _text_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    if not item.text.strip():
        return []
    if item.variant in ("thought", "thinking"):
        return [md.details(scope.label("thoughts"), scope.block(item.text), trusted=True)]
    return [scope.block(item.text)]


def _sources_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    parts = [scope.block(item.text)] if item.text.strip() else []
    if item.sources:
        parts.append(f"**{scope.label('sources')}** ({len(item.sources)})")
        parts.append(source_list(item.sources))
    return parts


def _queries_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    if not item.queries:
        return []
    return [f"**{scope.label('queries')}**", bullets(item.queries)]


def _table_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    return [f"**{scope.label('table')}**", md.md_table(item.columns, item.rows).rstrip("\n")]


def _todo_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    title = f": {inline(item.title)}" if item.title.strip() else ""
    lines = [
        f"- [{'x' if t.status == 'COMPLETED' else ' '}] {inline(t.description)}"
        + (f" ({inline(t.status)})" if t.status not in ("COMPLETED", "") else "")
        for t in item.todo
    ]
    lines += [f"- {inline(t.status)}: {inline(t.description)}" for t in item.todo_diff]
    return [f"**{scope.label('todo_list')}**{title}", "\n".join(lines)]


def _questions_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    title = f": {inline(item.title)}" if item.title.strip() else ""
    return [f"**{scope.label('user_questions')}**{title}", bullets(item.questions)]


def _responses_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    lines = (f"- {inline(q)}: {inline(a)}" if q else f"- {inline(a)}" for q, a in item.responses)
    return [f"**{scope.label('user_response')}**", "\n".join(lines)]


def _content_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    return [bullets(item.entities)]


def _workflow_item(item: Item, scope: Scope, where: str, depth: int) -> list[str]:
    if item.workflow is None:
        return []
    return [render_nested(item.workflow, item.id, scope, where, depth + 1)]


# How each known item type renders; an unknown type gets the explicit placeholder.
_ITEM_RENDERERS: dict[str, Callable[[Item, Scope, str, int], list[str]]] = {
    "WORKFLOW_ITEM_TEXT": _text_item,
    "WORKFLOW_ITEM_SOURCES": _sources_item,
    "WORKFLOW_ITEM_QUERIES": _queries_item,
    "WORKFLOW_ITEM_TABLE": _table_item,
    "WORKFLOW_ITEM_TODO_LIST": _todo_item,
    "WORKFLOW_ITEM_USER_QUESTIONS": _questions_item,
    "WORKFLOW_ITEM_USER_RESPONSE": _responses_item,
    "WORKFLOW_ITEM_CONTENT": _content_item,
    "WORKFLOW_ITEM_WORKFLOW": _workflow_item,
}


def unknown(kind: str, raw: Any, path: str, scope: Scope) -> str:
    """The explicit placeholder for an unrecognised item or step type."""
    scope.findings.append(("UNKNOWN_STEP_TYPE", {"step_type": kind, "path": path}))
    body = f"> ⚠ {scope.label('unknown_item', type=inline(kind) or '?')}"
    if raw not in (None, {}, []):
        body += "\n\n" + md.details(
            kind or "?", md.fence(dump_json(Node(raw, None, path)), "json"), trusted=True
        )
    return body


def render_steps(steps: Sequence[Step], scope: Scope, where: str, depth: int) -> str:
    """Every step of a workflow with its items."""
    out: list[str] = []
    for number, step in enumerate(steps, 1):
        title = inline(step.title) or inline(step.tool_name) or inline(step.id) or str(number)
        head = f"**{number}. {title}**"
        if step.tool_name and inline(step.tool_name) != title:
            head += f" · {code(step.tool_name)}"
        head += _status_note(step.status, scope)
        body = [render_item(item, scope, where, depth) for item in step.items]
        out.append("\n\n".join([head, *(b for b in body if b)]))
    return "\n\n".join(out)


def subagent_location(where: str) -> str:
    """The interruption location of a sub-agent rendered inside ``where``: ``turn_NNNN/subagent``
    under a turn's own workflow; inside another sub-agent (any depth) its enclosing
    sub-agent's location, so the registry only knows the four forms of the contract."""
    return where if "/" in where or where == "background_unassigned" else f"{where}/subagent"


def render_nested(workflow: Workflow, item_id: str, scope: Scope, where: str, depth: int) -> str:
    """A nested workflow: sub-agent (anchored payloads), council member, or plain nested run."""
    if workflow.mode == "LLM_COUNCIL":
        return render_member(workflow, scope, where, depth)
    location = subagent_location(where)
    pid = workflow.id or item_id
    payloads = scope.by_id.get(pid, ())
    if payloads:
        blocks = []
        for payload in payloads:
            if payload.index in scope.rendered_payloads:
                continue
            if scope.here is not None and payload.index not in scope.here:
                continue  # placed elsewhere (another turn, a stub, the appendix): shown there
            scope.rendered_payloads.add(payload.index)
            blocks.append(
                render_subagent(
                    payload.workflow,
                    scope,
                    location,
                    depth,
                    anchor=workflow,
                    record_it=True,
                    locked=run_lock(payload, scope.notices),
                )
            )
        return "\n\n".join(blocks)
    return render_subagent(
        workflow,
        scope,
        location,
        depth,
        anchor=None,
        record_it=True,  # annotated, so recorded too, with or without steps
        locked=workflow.locked_reason,
    )


def render_member(workflow: Workflow, scope: Scope, where: str, depth: int) -> str:
    """One council member: rounds of queries and sources, then its full answer."""
    kind = kind_of(workflow.status, workflow.locked_reason or scope.locked)
    name = workflow.model or workflow.headline or "?"
    summary = f"{scope.label('council_member')}: {name}{annotation(kind, scope.lang)}"
    if kind is not None:  # every annotated interruption is recorded
        scope.interruptions.append(
            record(f"{where}/council_member", kind, workflow.headline, workflow.status)
        )
    rounds: list[str] = []
    answer = workflow_answer(workflow) or ""
    for number, step in enumerate(workflow.steps, 1):
        items = [
            i
            for i in step.items
            if not (i.type == "WORKFLOW_ITEM_TEXT" and i.variant == "answer" and i.text == answer)
        ]
        body = [render_item(i, scope, where, depth) for i in items]
        title = f" — {inline(step.title)}" if step.title.strip() else ""
        rounds.append(
            "\n\n".join([f"**{scope.label('round')} {number}**{title}", *(b for b in body if b)])
        )
    if workflow.headline.strip() and workflow.headline != name:
        rounds.insert(0, f"*{inline(workflow.headline)}*")
    if answer:
        rounds.append(f"**{scope.label('answer')}**\n\n{scope.block(answer)}")
    return md.details(summary, "\n\n".join(rounds), trusted=True)


def render_subagent(
    workflow: Workflow | None,
    scope: Scope,
    location: str,
    depth: int,
    *,
    anchor: Workflow | None,
    record_it: bool,
    locked: str,
) -> str:
    """A sub-agent block: heading with annotation, prompt, steps, conclusion, citations."""
    shown = workflow or anchor
    status = workflow.status if workflow is not None else (anchor.status if anchor else "")
    kind = kind_of(status, locked or scope.locked)
    headline = ""
    if shown is not None:
        headline = shown.headline or (anchor.headline if anchor else "")
    if kind is not None and record_it:
        scope.interruptions.append(record(location, kind, headline, status))
    title = inline(headline) or inline(shown.id if shown else "") or "?"
    model = f" · {code(workflow.model)}" if workflow is not None and workflow.model else ""
    parts = [f"#### {scope.label('subagent')}: {title}{model}{annotation(kind, scope.lang)}"]
    prompt = (workflow.objective if workflow else "") or (anchor.objective if anchor else "")
    if prompt.strip():
        parts.append(f"**{scope.label('prompt')}**\n\n{scope.block(prompt)}")
    steps = (
        workflow.steps
        if workflow is not None and workflow.steps
        else (anchor.steps if anchor is not None else ())
    )
    if steps:
        summary = f"{scope.label('steps')} ({len(steps)}){annotation(kind, scope.lang)}"
        parts.append(md.details(summary, render_steps(steps, scope, location, depth), trusted=True))
    conclusion = workflow_answer(workflow) or workflow_answer(workflow, any_variant=True)
    if conclusion:
        parts.append(f"**{scope.label('conclusion')}**\n\n{scope.block(conclusion)}")
    cited = dedupe(workflow_sources(workflow))
    if cited:
        parts.append(f"**{scope.label('citations')}** ({len(cited)})\n\n{source_list(cited)}")
    return "\n\n".join(parts)
