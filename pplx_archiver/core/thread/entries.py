"""Decoding of one entry (a turn or a background entry) into a typed :class:`Entry`.

The plain half gives the ``text`` steps (a JSON string of steps, or of one object in 2023
payloads), the FINAL answer and its web results; the schematized half gives the blocks.
Decoding is tolerant per value: a field that cannot be read is left out and recorded in
``Entry.problems`` (the turn is then *degraded*), see docs/dev/formats.md.
"""

from __future__ import annotations

import re
from dataclasses import replace

import orjson

from pplx_archiver.core.thread.blocks import decode_blocks
from pplx_archiver.core.thread.items import decode_item
from pplx_archiver.core.thread.model import SpaceRef
from pplx_archiver.core.thread.node import JsonMemo, Node, loads_memo, type_name
from pplx_archiver.core.thread.timeparse import node_ts
from pplx_archiver.core.thread.values import Blocks, Entry, Item, PlainStep, SideBySide, WebResult
from pplx_archiver.core.thread.webresults import plain_results, web_results, web_results_at
from pplx_archiver.errors import PayloadError


def space_of(node: Node | None) -> SpaceRef | None:
    if node is None:
        return None
    uuid = node.get_str("uuid") or node.get_str("spaceUuid") or node.get_str("id")
    slug = node.get_str("slug")
    title = node.get_str("title")
    if not (uuid or slug or title):
        return None
    return SpaceRef(uuid=uuid, slug=slug, title=title)


def _side_by_side(entry: Node) -> SideBySide | None:
    meta = entry.get_obj("side_by_side_metadata")
    if meta is None:
        return None
    override = meta.raw("experiment_override")
    return SideBySide(
        sibling_uuid=meta.get_text("sibling_uuid"),
        selection_status=meta.get_str("selection_status"),
        experiment_role=meta.get_str("experiment_role"),
        experiment_override=override if override not in (None, {}, "") else None,
    )


def _plain_steps(
    entry: Node,
    with_items: bool = True,
    problems: list[tuple[str, str]] | None = None,
    memo: JsonMemo | None = None,
) -> tuple[tuple[PlainStep, ...], str | None, tuple[WebResult, ...], bool]:
    """Plain ``text`` steps, the FINAL answer text and FINAL web results.

    With a ``problems`` list, a step that cannot be decoded is skipped and listed there;
    ``memo`` holds the embedded JSON already parsed (see :meth:`Node.json`).
    """
    doc = entry.json("text", memo)
    if doc is None:
        return (), None, (), False
    if isinstance(doc.v, str):  # Era A: the answer itself
        return (), doc.v, (), True
    if isinstance(doc.v, dict):  # a single object: treat like a FINAL content
        doc = Node([{"step_type": "FINAL", "content": doc.v}], doc, "")
    steps: list[PlainStep] = []
    answer: str | None = None
    results: tuple[WebResult, ...] = ()
    for step in doc.list_items():
        try:
            plain, final = _plain_step(step, with_items, memo)
        except PayloadError as exc:
            if problems is None:
                raise
            problems.append((exc.path, exc.message))
            continue
        steps.append(plain)
        if final is not None:
            text, found = final
            answer = text if found is None else (text or answer)
            results = results if found is None else found
    return tuple(steps), answer, results, True


def _plain_step(
    step: Node, with_items: bool, memo: JsonMemo | None = None
) -> tuple[PlainStep, tuple[str, tuple[WebResult, ...] | None] | None]:
    """One plain step and, for FINAL, (answer, web results or None when the answer is prose)."""
    step.as_obj()
    kind = step.get_str("step_type")
    content = step.get_obj("content")
    items: tuple[Item, ...] = ()
    if with_items and content is not None and kind.startswith("ASI_TOOL_"):
        items = tuple([decode_item(i, 0) for i in content.get_list("workflow_items")])
    plain = PlainStep(
        step_type=kind,
        uuid=step.get_text("uuid"),
        content=content.v if content is not None else {},
        where=step,
        items=items,
    )
    if kind != "FINAL" or content is None:
        return plain, None
    final = _final_answer(content, memo)
    if final is None:
        return plain, None
    if isinstance(final.v, str):  # results beside a prose answer (the 2023 text object)
        beside = web_results_at(content, "web_results") if content.has("web_results") else None
        return plain, (final.v, beside)
    if isinstance(final.v, dict):
        return plain, (final.get_str("answer"), web_results_at(final, "web_results"))
    return plain, None


def _final_answer(content: Node, memo: JsonMemo | None = None) -> Node | None:
    """The FINAL ``answer``: embedded JSON (an object or a string), else the string as prose.

    Older payloads put the Markdown answer there directly: a string that does not parse, or
    parses to something other than an object or a string (``42``), is the answer text.
    """
    raw = content.raw("answer")
    if not isinstance(raw, str) or not raw:
        return content.json("answer", memo)
    try:
        decoded = loads_memo(raw, memo)
    except orjson.JSONDecodeError:
        decoded = None
    if isinstance(decoded, (str, dict)):
        return Node(decoded, content, "answer")
    return Node(raw, content, "answer")  # the answer as Markdown prose


def _related(entry: Node) -> tuple[str, ...]:
    """``related_queries``: strings, or objects with ``text`` (other elements are skipped)."""
    out: list[str] = []
    for item in entry.get_list("related_queries"):
        if isinstance(item.v, str):
            out.append(item.v)
        elif isinstance(item.v, dict) and isinstance(item.v.get("text"), str):
            out.append(item.v["text"])
    return tuple(q for q in out if q.strip())


def decode_entry(
    node: Node, with_items: bool = True, with_text: bool = True, memo: JsonMemo | None = None
) -> Entry:
    """One entry object (plain or schematized) as a typed :class:`Entry`.

    ``with_items=False`` skips the workflow items of plain ``ASI_TOOL_*`` steps, used when
    the schematized twin of the entry already carries the same workflow as blocks;
    ``with_text=False`` skips the plain ``text`` altogether (a background entry whose
    schematized twin carries its workflow: only the workflow is rendered); ``memo`` holds
    the embedded JSON already parsed (:func:`~pplx_archiver.core.thread.node.loads_memo`).

    Tolerant: a step or block that cannot be decoded is skipped, a top-level field that
    cannot be read is left out (a plain ``text`` that is not JSON is read as the answer
    prose), an entry without an id gets one from its JSON path, and one that is not an
    object becomes an empty turn. Each such value is listed in ``Entry.problems`` with its
    path and reason; the entry is then *degraded*. Nothing here raises for one entry.
    """
    problems: list[tuple[str, str]] = []
    if not isinstance(node.v, dict):
        return _empty_entry(node, f"expected object, got {type_name(node.v)}")
    current = node
    for _ in range(len(node.v) + 2):
        skipped: list[tuple[str, str]] = []  # steps and blocks left out by this attempt
        try:
            entry = _decode_entry(current, with_items, with_text, skipped, memo)
        except PayloadError as exc:
            current = _repair(current, exc, problems)
            continue
        problems.extend(skipped)
        return replace(entry, problems=tuple(problems)) if problems else entry
    return _empty_entry(node, "entry cannot be decoded")


def _empty_entry(node: Node, reason: str) -> Entry:
    """A placeholder turn for an entry of which nothing can be read."""
    key = f"entry:{node.path}"
    return Entry(
        key=key,
        uuid=key,
        where=node,
        query="",
        created_us=None,
        updated_us=None,
        updated_raw="",
        search_mode="",
        display_model="",
        user_model="",
        status="",
        trigger="",
        is_background=False,
        locked_reason="",
        thread_title="",
        slug="",
        context_uuid="",
        author="",
        space=None,
        side_by_side=None,
        steps=(),
        final_answer=None,
        final_web_results=(),
        sources=(),
        blocks=Blocks(),
        problems=((node.path, reason),),
    )


_TOP_KEY = re.compile(r"\.([^.\[]+)")


def _repair(current: Node, exc: PayloadError, problems: list[tuple[str, str]]) -> Node:
    """``current`` without the top-level field ``exc`` points into (recorded in ``problems``).

    A plain ``text`` string that is not JSON is kept as the answer prose instead; an entry
    without a usable id is given one made of its JSON path.
    """
    data = dict(current.v)
    prefix = current.path
    match = _TOP_KEY.match(exc.path, len(prefix)) if exc.path.startswith(prefix) else None
    if match is None or match.group(1) not in data:
        if "neither backend_uuid nor uuid" in exc.message:
            problems.append((exc.path, exc.message))
            data["uuid"] = f"entry:{prefix}"
            data.pop("backend_uuid", None)
            return current.with_value(data)
        raise exc
    key = match.group(1)
    value = data[key]
    problems.append((exc.path, exc.message))
    if key == "text" and isinstance(value, str) and not _json_string(value):
        prose = value.encode("utf-8", "replace").decode("utf-8")  # orjson refuses surrogates
        data[key] = orjson.dumps(prose).decode()  # shown as the answer prose
    else:
        del data[key]
    return current.with_value(data)


def _json_string(text: str) -> bool:
    """True when ``text`` is JSON whose value is a string (a prose ``text``, already kept)."""
    try:
        return isinstance(orjson.loads(text), str)
    except orjson.JSONDecodeError:
        return False


_CREATED = ("entry_created_datetime", "created_us", "created_datetime", "updated_datetime")
_UPDATED = ("entry_updated_datetime", "updated_us", "updated_datetime")


def _first_ts(node: Node, keys: tuple[str, ...]) -> int | None:
    """The first of ``keys`` that holds a time (µs), in order; a bad value raises."""
    for key in keys:
        found = node_ts(node, key)
        if found is not None:
            return found
    return None


def _entry_sources(node: Node) -> tuple[WebResult, ...]:
    """``sources`` of an entry when it is a list of source objects (an object in 2025)."""
    sources_node = node.opt("sources")
    if sources_node is not None and isinstance(sources_node.v, list):
        fast = plain_results(sources_node.v)
        if fast is not None:
            return fast
        return web_results([s for s in sources_node.list_items() if isinstance(s.v, dict)])
    if sources_node is not None and not isinstance(sources_node.v, dict):
        raise sources_node.error("expected object or array")
    return ()


def _decode_entry(
    node: Node,
    with_items: bool,
    with_text: bool,
    problems: list[tuple[str, str]],
    memo: JsonMemo | None = None,
) -> Entry:
    node.as_obj()
    backend = node.get_text("backend_uuid")
    uuid = node.get_text("uuid")
    key = backend or uuid
    if not key:
        raise node.error("entry has neither backend_uuid nor uuid")
    created = _first_ts(node, _CREATED)
    updated = _first_ts(node, _UPDATED)
    steps, final_answer, final_results, has_text = (
        _plain_steps(node, with_items, problems, memo) if with_text else ((), None, (), False)
    )
    sources = _entry_sources(node)
    updated_raw = node.raw("updated_datetime") or node.raw("entry_updated_datetime") or ""
    query = node.get_text("query_str")
    # string fields read in batches, in the same order (the first bad one is reported)
    search_mode, display_model, user_model, status, trigger = node.get_strs(
        "search_mode", "display_model", "user_selected_model", "status", "trigger"
    )
    is_background = node.get_bool("is_background")
    blocks = decode_blocks(node, tolerant=True)
    problems.extend(blocks.problems)
    locked, title, slug, context, author = node.get_strs(
        "locked_reason", "thread_title", "thread_url_slug", "context_uuid", "author_username"
    )
    return Entry(
        key=key,
        uuid=uuid or backend,
        where=node,
        query=query,
        created_us=created,
        updated_us=updated,
        updated_raw=updated_raw if isinstance(updated_raw, str) else "",
        search_mode=search_mode.upper(),
        display_model=display_model or ("gpt4" if node.raw("gpt4") is True else ""),
        user_model=user_model,
        status=status,
        trigger=trigger,
        is_background=is_background,
        locked_reason=locked,
        thread_title=title,
        slug=slug,
        context_uuid=context,
        author=author,
        space=space_of(node.get_obj("collection_info")),
        side_by_side=_side_by_side(node),
        steps=steps,
        final_answer=final_answer,
        final_web_results=final_results,
        sources=sources,
        blocks=blocks,
        has_text=has_text,
        related=_related(node),
    )
