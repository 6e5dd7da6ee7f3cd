"""Rendering of the plain ``text`` steps of a turn (docs/dev/api.md §5).

Every known step type has a rendering, shown under its label ("Initial query", "Web search",
…); FINAL renders apart as the answer; an unknown type gets an explicit placeholder and an
``UNKNOWN_STEP_TYPE`` finding.
"""

from __future__ import annotations

from collections.abc import Sequence

from pplx_archiver.core.thread import labels
from pplx_archiver.core.thread import markdown as md
from pplx_archiver.core.thread.node import Node, dump_json
from pplx_archiver.core.thread.values import PlainStep
from pplx_archiver.core.thread.webresults import web_results_at
from pplx_archiver.core.thread.workflow import Scope, bullets, inline, render_item, source_list

KNOWN_PLAIN = frozenset(
    {
        "INITIAL_QUERY",
        "SEARCH_WEB",
        "SEARCH_RESULTS",
        "THOUGHT",
        "GET_URL_CONTENT",
        "CODE",
        "RESEARCH_ANSWER",
        "RESEARCH_CLARIFYING_QUESTIONS",
        "COUNCIL_RESEARCH",
        "ASI_TOOL_INPUT",
        "ASI_TOOL_OUTPUT",
        "LOAD_SKILL",
        "LOAD_SKILL_RESPONSE",
        "ATTACHMENT",
        "URL_NAVIGATE",
        "CREATE_CHART",
        "GENERATE_IMAGE_RESULTS",
        "DOCX",
        "READ",
        "PROMPT_INPUT",
        "FINAL",
    }
)


_SKIP_ALWAYS = frozenset({"goal_id"})
_SKIP_ASI = frozenset({"goal_id", "workflow_items", "workflow_snapshots"})


def _generic(content: Node, scope: Scope, skip: frozenset[str] = _SKIP_ALWAYS) -> str:
    """Any content object: short strings as a list, long text and structures fenced."""
    lines: list[str] = []
    blocks: list[str] = []
    for key, value in content.items():
        if key in skip or value.v in (None, "", [], {}):
            continue
        if isinstance(value.v, str) and "\n" not in value.v and len(value.v) < 300:
            lines.append(f"- {inline(key)}: {inline(value.v)}")
        elif isinstance(value.v, (bool, int, float)):
            lines.append(f"- {inline(key)}: {value.v!r}")
        elif isinstance(value.v, str):
            blocks.append(f"{inline(key)}:\n\n{md.fence(value.v)}")
        else:
            blocks.append(f"{inline(key)}:\n\n{md.fence(dump_json(value), 'json')}")
    return "\n\n".join(p for p in ("\n".join(lines), *blocks) if p)


def render_plain_step(step: PlainStep, scope: Scope, where: str = "") -> str:
    """One plain ``text`` step as Markdown ('' for FINAL, whose answer renders apart)."""
    kind = step.step_type
    content = Node(step.content, step.where, "content")
    head = f"**{labels.step_label(kind, scope.lang) or inline(kind) or '?'}**"
    if kind == "FINAL":
        return ""
    if kind == "INITIAL_QUERY":
        return f"{head}\n\n{inline(content.get_text('query'))}"
    if kind == "SEARCH_WEB":
        queries = [
            q.get_text("query") if isinstance(q.v, dict) else q.as_str()
            for q in content.get_list("queries")
        ]
        return f"{head}\n\n{bullets(queries)}"
    if kind == "SEARCH_RESULTS":
        results = web_results_at(content, "web_results")
        return f"{head} ({len(results)})\n\n{source_list(results)}"
    if kind == "URL_NAVIGATE":
        urls = [
            u.as_str() if isinstance(u.v, str) else u.get_text("url")
            for u in content.get_list("urls")
        ]
        return f"{head}\n\n{bullets(urls)}"
    if kind == "GET_URL_CONTENT":
        urls = [
            p.get_text("url") if isinstance(p.v, dict) else p.as_str()
            for p in content.get_list("pages")
        ]
        return f"{head}\n\n{bullets(urls)}"
    if kind == "CODE":
        parts = [head]
        script = content.get_text("script")
        if script:
            parts.append(md.fence(script, inline(content.get_text("language"))))
        for key in ("stdout", "stderr", "output", "error"):
            text = content.get_text(key)
            if text:
                parts.append(f"{scope.label('output')} ({key}):\n\n{md.fence(text)}")
        return "\n\n".join(parts)
    if step.items:
        rendered = [render_item(item, scope, where, 0) for item in step.items]
        return "\n\n".join([head, *(r for r in rendered if r)])
    if kind == "THOUGHT":
        text = content.get_text("thought") or content.get_text("text")
        if text:
            return md.details(scope.label("thoughts"), scope.block(text), trusted=True)
    body = _generic(content, scope, _SKIP_ASI if kind.startswith("ASI_TOOL_") else _SKIP_ALWAYS)
    if kind in KNOWN_PLAIN or kind.startswith("MCP_TOOL_"):
        return f"{head}\n\n{body}" if body else head
    scope.findings.append(("UNKNOWN_STEP_TYPE", {"step_type": kind, "path": step.path}))
    note = f"> ⚠ {scope.label('unknown_item', type=inline(kind) or '?')}"
    return f"{note}\n\n{body}" if body else note


def render_plain_steps(steps: Sequence[PlainStep], scope: Scope, where: str = "") -> str:
    """All plain steps of a turn, in order."""
    return "\n\n".join(p for p in (render_plain_step(s, scope, where) for s in steps) if p)
