"""Decoding of schematized ``blocks[]`` and (nested) workflows into typed values.

Each block is ``{"intended_usage": name, "<kind>_block": {...}}`` (see docs/dev/api.md); workflows
and their items follow §4.2–§4.6. Unknown blocks and unknown item types are kept (items as
raw values) so the renderer can show a placeholder instead of dropping them.
"""

from __future__ import annotations

import re
from typing import Any

from pplx_archiver.core.node import Node
from pplx_archiver.core.timeparse import node_ts
from pplx_archiver.core.values import Blocks, Item, Step, TodoItem, WebResult, Workflow
from pplx_archiver.errors import PayloadError

MAX_WORKFLOW_DEPTH = 32
_SECTION = re.compile(r"ask_text_(\d+)_markdown")


def web_result(node: Node) -> WebResult:
    """A web result (source) object; a bare string is read as a URL."""
    value = node.v
    if isinstance(value, str):
        return WebResult(name=value, url=value)
    if type(value) is dict:  # fast path: the usual all-string object
        name = value.get("name")
        url = value.get("url")
        snippet = value.get("snippet")
        stamp = value.get("timestamp")
        if (
            type(name) is str
            and type(url) is str
            and (snippet is None or type(snippet) is str)
            and (stamp is None or type(stamp) is str)
        ):
            return WebResult(name=name, url=url, snippet=snippet or "", timestamp=stamp or "")
    return WebResult(
        name=node.get_text("name") or node.get_text("title"),
        url=node.get_text("url"),
        snippet=node.get_text("snippet"),
        timestamp=node.get_text("timestamp"),
    )


def web_results(nodes: list[Node]) -> tuple[WebResult, ...]:
    """Web results of an array, in order."""
    return tuple(web_result(n) for n in nodes)


def plain_results(values: object) -> tuple[WebResult, ...] | None:
    """An array of the usual all-string source objects read without path bookkeeping.

    None when ``values`` is not such an array (any other element shape): the caller then
    takes the path-aware route, which gives the same results or names the bad value.
    """
    if type(values) is not list:
        return None
    out: list[WebResult] = []
    for value in values:
        if type(value) is not dict:
            return None
        name = value.get("name")
        url = value.get("url")
        snippet = value.get("snippet")
        stamp = value.get("timestamp")
        if not (
            type(name) is str
            and type(url) is str
            and (snippet is None or type(snippet) is str)
            and (stamp is None or type(stamp) is str)
        ):
            return None
        out.append(WebResult(name, url, snippet or "", stamp or ""))
    return tuple(out)


def web_results_at(parent: Node, key: str) -> tuple[WebResult, ...]:
    """Web results of the array under ``key`` (() when absent/null); same as
    ``web_results(parent.get_list(key))``, faster for the usual all-string objects."""
    fast = plain_results(parent.raw(key))
    return fast if fast is not None else web_results(parent.get_list(key))


# One branch per block kind, each inside the per-block tolerance guard; splitting it by kind
# (as the strict decoder was) is still to do.
def decode_blocks(entry: Node, tolerant: bool = False) -> Blocks:  # noqa: C901
    """The typed content of an entry's ``blocks`` (empty when it has none).

    ``tolerant=True`` skips a block that cannot be decoded and lists it in ``problems``
    (JSON path, reason) instead of raising.
    """
    nodes = entry.get_list("blocks")
    if not nodes:
        return Blocks()
    answer: str | None = None
    sections: list[tuple[int, str]] = []
    workflow: Workflow | None = None
    results: list[WebResult] = []
    goals: list[str] = []
    assets: list[Node] = []
    problems: list[tuple[str, str]] = []
    mode_results: list[WebResult] = []  # used only when no web_results block exists
    has_web_block = False
    for block in nodes:
        # One block that cannot be decoded is skipped and reported; the others still count.
        size = (len(sections), len(results), len(goals), len(assets), len(mode_results))
        try:
            block.as_obj()
            usage = block.get_str("intended_usage")
            if usage == "ask_text":
                md = block.get_obj("markdown_block")
                if md is not None:
                    answer = _markdown_text(md)
            elif usage.startswith("ask_text_") and usage.endswith("_markdown"):
                md = block.get_obj("markdown_block")
                match = _SECTION.fullmatch(usage)
                if md is not None and match is not None:
                    sections.append((int(match.group(1)), _markdown_text(md)))
            elif usage == "workflow_root":
                wf = block.get_obj("workflow_block")
                if wf is not None:
                    workflow = decode_workflow(wf, 0)
            elif usage == "web_results":
                wr = block.get_obj("web_result_block")
                if wr is not None:
                    results.extend(web_results_at(wr, "web_results"))
                    has_web_block = True
            elif usage == "sources_answer_mode":  # 2025 payloads: the answer's source list
                sm = block.get_obj("sources_mode_block")
                if sm is not None:
                    mode_results.extend(web_results_at(sm, "web_results"))
            elif usage in ("plan", "pro_search_steps"):
                plan = block.get_obj("plan_block")
                if plan is not None:
                    goals.extend(
                        g.get_text("description") for g in plan.get_list("goals") if g.as_obj()
                    )
                    for step in plan.get_list("steps"):
                        for asset in step.get_list("assets") if isinstance(step.v, dict) else ():
                            assets.append(asset)
            elif usage == "unified_assets":
                ua = block.get_obj("unified_assets_block")
                if ua is not None:
                    for asset in ua.get_list("assets"):
                        assets.append(asset)
        except PayloadError as exc:
            if not tolerant:
                raise
            problems.append((exc.path, exc.message))
            del sections[size[0] :], results[size[1] :], goals[size[2] :], assets[size[3] :]
            del mode_results[size[4] :]
    sections.sort(key=lambda pair: pair[0])
    return Blocks(
        answer=answer,
        sections=tuple(text for _, text in sections),
        workflow=workflow,
        web_results=tuple(results if has_web_block else mode_results),
        goals=tuple(goals),
        asset_nodes=tuple(assets),
        count=len(nodes),
        problems=tuple(problems),
    )


def _markdown_text(md: Node) -> str:
    """The text of a markdown block: ``answer``, else the joined ``chunks``."""
    answer = md.get_str("answer")
    if answer:
        return answer
    return "".join(c.as_str() for c in md.get_list("chunks"))


def decode_workflow(node: Node, depth: int) -> Workflow:
    """A workflow block or nested workflow payload, recursively (bounded depth)."""
    if depth > MAX_WORKFLOW_DEPTH:
        raise node.error(f"workflows nested deeper than {MAX_WORKFLOW_DEPTH} levels")
    node.as_obj()
    steps = tuple(_decode_step(s, depth) for s in node.get_list("steps"))
    objective = "".join(
        c.get_text("text") if isinstance(c.v, dict) else c.as_str()
        for c in node.get_list("objective_chunks")
    )
    ident, status, headline, mode, model, locked = node.get_strs(
        "id", "status", "headline", "mode", "model", "locked_reason"
    )
    return Workflow(
        id=ident,
        status=status,
        headline=headline,
        mode=mode,
        model=model,
        objective=objective,
        is_anchor=node.get_bool("is_background_anchor"),
        completed_us=node_ts(node, "completed_at"),
        steps=steps,
        where=node,
        locked_reason=locked,
    )


def _decode_step(node: Node, depth: int) -> Step:
    ident, title, status, tool = node.get_strs("id", "title", "status", "tool_name")
    return Step(
        id=ident,
        title=title,
        status=status,
        tool_name=tool,
        items=tuple(decode_item(i, depth) for i in node.get_list("items")),
        where=node,
    )


def _cell(node: Node) -> str:
    value = node.v
    if isinstance(value, dict):
        return node.get_text("value")
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return _scalar(value)
    raise node.error(f"expected a table cell, got {type(value).__name__}")


def _scalar(value: bool | int | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _table(payload: Node) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    columns: list[str] = []
    for col in payload.get_list("columns"):
        columns.append(
            col.get_text("name") or col.get_text("key") or col.get_text("title")
            if isinstance(col.v, dict)
            else _cell(col)
        )
    rows: list[tuple[str, ...]] = []
    for row in payload.get_list("rows"):
        if isinstance(row.v, list):
            rows.append(tuple(_cell(row.child(i, v)) for i, v in enumerate(row.v)))
            continue
        cells = row.get_obj("cells")
        if cells is None:
            row.as_obj()
            rows.append(tuple("" for _ in columns))
            continue
        if isinstance(cells.v, dict):
            by_name = {k: _cell(v) for k, v in cells.items()}
            extra = [k for k in by_name if k not in columns]
            columns.extend(extra)
            rows.append(tuple(by_name.get(c, "") for c in columns))
    width = len(columns)
    fixed = tuple(r + ("",) * (width - len(r)) if len(r) < width else r for r in rows)
    if fixed and max(len(r) for r in fixed) > width:
        wide = max(len(r) for r in fixed)
        columns.extend(f"col{i + 1}" for i in range(width, wide))
        fixed = tuple(r + ("",) * (wide - len(r)) for r in fixed)
    return tuple(columns), fixed


def decode_item(node: Node, depth: int) -> Item:  # noqa: C901 (one branch per item type)
    """One workflow item, typed by ``type``; unknown types keep their raw payload."""
    node.as_obj()
    kind = node.get_str("type")
    ident = node.get_str("id") if not isinstance(node.raw("id"), int) else node.get_text("id")
    payload = node.get_obj("payload")
    if payload is None:
        return Item(id=ident, type=kind, where=node)
    text_p = payload.get_obj("text_payload")
    text = variant = header = ""
    if text_p is not None:
        text = text_p.get_str("text") or "".join(c.as_str() for c in text_p.get_list("chunks"))
        variant = text_p.get_str("variant")
        header = text_p.get_str("header")

    def make(**extra: Any) -> Item:
        return Item(
            id=ident, type=kind, where=node, text=text, variant=variant, header=header, **extra
        )

    if kind == "WORKFLOW_ITEM_TEXT":
        return make()
    if kind == "WORKFLOW_ITEM_SOURCES":
        sp = payload.get_obj("sources_payload")
        sources = web_results_at(sp, "sources") if sp is not None else ()
        return make(
            sources=sources,
            raw=[a.v for a in sp.get_list("assets")] if sp is not None else None,
        )
    if kind == "WORKFLOW_ITEM_QUERIES":
        qp = payload.get_obj("queries_payload")
        queries = tuple(
            q.as_str() if not isinstance(q.v, dict) else q.get_text("query")
            for q in (qp.get_list("queries") if qp is not None else [])
        )
        return make(queries=queries)
    if kind == "WORKFLOW_ITEM_TABLE":
        tp = payload.get_obj("table_payload")
        cols, rows = _table(tp) if tp is not None else ((), ())
        return make(columns=cols, rows=rows)
    if kind == "WORKFLOW_ITEM_TODO_LIST":
        tl = payload.get_obj("todo_list_payload")
        if tl is None:
            return make()
        todo = tuple(
            TodoItem(i.get_str("status"), i.get_text("description")) for i in tl.get_list("items")
        )
        diff_node = tl.get_obj("diff")
        diff = tuple(
            TodoItem(
                " → ".join(x for x in (d.get_str("old_status"), d.get_str("new_status")) if x)
                or d.get_str("action"),
                d.get_text("description"),
            )
            for d in (diff_node.get_list("items") if diff_node is not None else [])
        )
        return make(title=tl.get_text("title"), todo=todo, todo_diff=diff)
    if kind == "WORKFLOW_ITEM_USER_QUESTIONS":
        uq = payload.get_obj("user_questions_payload")
        questions: list[str] = []
        if uq is not None:
            for q in uq.get_list("questions"):
                questions.append(
                    q.as_str()
                    if isinstance(q.v, str)
                    else q.get_text("question") or q.get_text("text")
                )
            for f in uq.get_list("fields"):
                opts = [o.get_text("title") for o in f.get_list("options") if o.get_text("title")]
                line = f.get_text("field_name")
                questions.append(line + (f" ({' / '.join(opts)})" if opts else ""))
        return make(title=uq.get_text("title") if uq else "", questions=tuple(questions))
    if kind == "WORKFLOW_ITEM_USER_RESPONSE":
        ur = payload.get_obj("user_response_payload")
        responses = tuple(
            (r.get_text("question"), r.get_text("answer"))
            if isinstance(r.v, dict)
            else ("", r.as_str())
            for r in (ur.get_list("responses") if ur is not None else [])
        )
        return make(title=ur.get_text("title") if ur else "", responses=responses)
    if kind == "WORKFLOW_ITEM_CONTENT":
        cp = payload.get_obj("content_payload")
        entities = tuple(
            e.get_text("description") or e.get_text("title")
            if isinstance(e.v, dict)
            else e.as_str()
            for e in (cp.get_list("entities") if cp is not None else [])
        )
        return make(entities=entities)
    if kind == "WORKFLOW_ITEM_WORKFLOW":
        wp = payload.get_obj("workflow_payload")
        nested = decode_workflow(wp, depth + 1) if wp is not None else None
        return make(workflow=nested)
    return make(raw=payload.v)
