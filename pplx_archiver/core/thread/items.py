"""Decoding of (nested) workflows, their steps and their ``WORKFLOW_ITEM_*`` items.

Workflows and their items follow docs/dev/api.md §4.2–§4.6. Each item type has one small
reader in :data:`ITEM_KINDS` returning the fields of its kind; an unknown type keeps its raw
payload so the renderer can show a placeholder instead of dropping it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pplx_archiver.core.thread.node import Node
from pplx_archiver.core.thread.timeparse import node_ts
from pplx_archiver.core.thread.values import Item, Step, TodoItem, Workflow
from pplx_archiver.core.thread.webresults import web_results_at

MAX_WORKFLOW_DEPTH = 32


def _prompts(chunks: Iterable[str]) -> str:
    """The prompt of ``objective_chunks``: the chunks joined as streamed, except where one
    prompt would run into the next (a chunk starting with a capital letter right after a
    chunk ending in a non-space character): a blank line keeps them apart."""
    out = ""
    for chunk in chunks:
        if not chunk:
            continue
        if out and not out[-1].isspace() and chunk[0].isupper():
            out += "\n\n"
        out += chunk
    return out


def decode_workflow(node: Node, depth: int) -> Workflow:
    """A workflow block or nested workflow payload, recursively (bounded depth)."""
    if depth > MAX_WORKFLOW_DEPTH:
        raise node.error(f"workflows nested deeper than {MAX_WORKFLOW_DEPTH} levels")
    node.as_obj()
    steps = tuple([_decode_step(s, depth) for s in node.get_list("steps")])
    objective = _prompts(
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
        items=tuple([decode_item(i, depth) for i in node.get_list("items")]),
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


# -- one reader per item type: (payload, depth) → the fields of its kind -------------------

ItemReader = Callable[[Node, int], dict[str, Any]]


def _text(payload: Node, depth: int) -> dict[str, Any]:
    return {}


def _sources(payload: Node, depth: int) -> dict[str, Any]:
    sp = payload.get_obj("sources_payload")
    if sp is None:
        return {"sources": (), "raw": None}
    return {"sources": web_results_at(sp, "sources"), "raw": [a.v for a in sp.get_list("assets")]}


def _queries(payload: Node, depth: int) -> dict[str, Any]:
    qp = payload.get_obj("queries_payload")
    queries = tuple(
        q.as_str() if not isinstance(q.v, dict) else q.get_text("query")
        for q in (qp.get_list("queries") if qp is not None else [])
    )
    return {"queries": queries}


def _table_item(payload: Node, depth: int) -> dict[str, Any]:
    tp = payload.get_obj("table_payload")
    cols, rows = _table(tp) if tp is not None else ((), ())
    return {"columns": cols, "rows": rows}


def _todo_list(payload: Node, depth: int) -> dict[str, Any]:
    tl = payload.get_obj("todo_list_payload")
    if tl is None:
        return {}
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
    return {"title": tl.get_text("title"), "todo": todo, "todo_diff": diff}


def _user_questions(payload: Node, depth: int) -> dict[str, Any]:
    uq = payload.get_obj("user_questions_payload")
    questions: list[str] = []
    if uq is not None:
        for q in uq.get_list("questions"):
            questions.append(
                q.as_str() if isinstance(q.v, str) else q.get_text("question") or q.get_text("text")
            )
        for f in uq.get_list("fields"):
            opts = [o.get_text("title") for o in f.get_list("options") if o.get_text("title")]
            line = f.get_text("field_name")
            questions.append(line + (f" ({' / '.join(opts)})" if opts else ""))
    return {"title": uq.get_text("title") if uq else "", "questions": tuple(questions)}


def _user_response(payload: Node, depth: int) -> dict[str, Any]:
    ur = payload.get_obj("user_response_payload")
    responses = tuple(
        (r.get_text("question"), r.get_text("answer"))
        if isinstance(r.v, dict)
        else ("", r.as_str())
        for r in (ur.get_list("responses") if ur is not None else [])
    )
    return {"title": ur.get_text("title") if ur else "", "responses": responses}


def _content(payload: Node, depth: int) -> dict[str, Any]:
    cp = payload.get_obj("content_payload")
    entities = tuple(
        e.get_text("description") or e.get_text("title") if isinstance(e.v, dict) else e.as_str()
        for e in (cp.get_list("entities") if cp is not None else [])
    )
    return {"entities": entities}


def _nested(payload: Node, depth: int) -> dict[str, Any]:
    wp = payload.get_obj("workflow_payload")
    return {"workflow": decode_workflow(wp, depth + 1) if wp is not None else None}


ITEM_KINDS: dict[str, ItemReader] = {
    "WORKFLOW_ITEM_TEXT": _text,
    "WORKFLOW_ITEM_SOURCES": _sources,
    "WORKFLOW_ITEM_QUERIES": _queries,
    "WORKFLOW_ITEM_TABLE": _table_item,
    "WORKFLOW_ITEM_TODO_LIST": _todo_list,
    "WORKFLOW_ITEM_USER_QUESTIONS": _user_questions,
    "WORKFLOW_ITEM_USER_RESPONSE": _user_response,
    "WORKFLOW_ITEM_CONTENT": _content,
    "WORKFLOW_ITEM_WORKFLOW": _nested,
}


def decode_item(node: Node, depth: int) -> Item:
    """One workflow item, typed by ``type``; unknown types keep their raw payload."""
    data = node.as_obj()
    kind = data.get("type")
    if type(kind) is not str:
        kind = node.get_str("type")
    ident = data.get("id")
    if type(ident) is not str:
        ident = node.get_str("id") if not isinstance(ident, int) else node.get_text("id")
    payload = node.get_obj("payload")
    if payload is None:
        return Item(id=ident, type=kind, where=node)
    text_p = payload.get_obj("text_payload")
    text = variant = header = ""
    if text_p is not None:
        text = text_p.get_str("text") or "".join(c.as_str() for c in text_p.get_list("chunks"))
        variant = text_p.get_str("variant")
        header = text_p.get_str("header")
    reader = ITEM_KINDS.get(kind)
    extra = reader(payload, depth) if reader is not None else {"raw": payload.v}
    return Item(id=ident, type=kind, where=node, text=text, variant=variant, header=header, **extra)
