"""Decoding of raw thread pages (plain and schematized) into one typed :class:`Thread`.

Pages are merged, duplicate entries and background entries dropped by uuid
(``backend_uuid``, else ``uuid``), plain and schematized halves joined by that uuid (plain
gives ``text`` steps, schematized gives ``blocks``) and turns ordered by creation time.
Any malformed value raises one :class:`~pplx_archiver.errors.PayloadError` with its path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import orjson

from pplx_archiver.core.blocks import decode_blocks
from pplx_archiver.core.items import decode_item
from pplx_archiver.core.model import RawPage, SpaceRef
from pplx_archiver.core.node import Node, type_name
from pplx_archiver.core.timeparse import node_ts
from pplx_archiver.core.values import (
    Blocks,
    Entry,
    Item,
    PageInfo,
    PlainStep,
    SideBySide,
    Thread,
    WebResult,
)
from pplx_archiver.core.webresults import plain_results, web_results, web_results_at
from pplx_archiver.errors import PayloadError

_FAR_FUTURE = 1 << 62


def _space(node: Node | None) -> SpaceRef | None:
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
    entry: Node, with_items: bool = True, problems: list[tuple[str, str]] | None = None
) -> tuple[tuple[PlainStep, ...], str | None, tuple[WebResult, ...], bool]:
    """Plain ``text`` steps, the FINAL answer text and FINAL web results.

    With a ``problems`` list, a step that cannot be decoded is skipped and listed there.
    """
    doc = entry.json("text")
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
            plain, final = _plain_step(step, with_items)
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
    step: Node, with_items: bool
) -> tuple[PlainStep, tuple[str, tuple[WebResult, ...] | None] | None]:
    """One plain step and, for FINAL, (answer, web results or None when the answer is prose)."""
    step.as_obj()
    kind = step.get_str("step_type")
    content = step.get_obj("content")
    items: tuple[Item, ...] = ()
    if with_items and content is not None and kind.startswith("ASI_TOOL_"):
        items = tuple(decode_item(i, 0) for i in content.get_list("workflow_items"))
    plain = PlainStep(
        step_type=kind,
        uuid=step.get_text("uuid"),
        content=content.v if content is not None else {},
        where=step,
        items=items,
    )
    if kind != "FINAL" or content is None:
        return plain, None
    final = _final_answer(content)
    if final is None:
        return plain, None
    if isinstance(final.v, str):  # results beside a prose answer (the 2023 text object)
        beside = web_results_at(content, "web_results") if content.has("web_results") else None
        return plain, (final.v, beside)
    if isinstance(final.v, dict):
        return plain, (final.get_str("answer"), web_results_at(final, "web_results"))
    return plain, None


def _final_answer(content: Node) -> Node | None:
    """The FINAL ``answer``: embedded JSON (an object or a string), else the string as prose.

    Older payloads put the Markdown answer there directly: a string that does not parse, or
    parses to something other than an object or a string (``42``), is the answer text.
    """
    raw = content.raw("answer")
    if not isinstance(raw, str) or not raw:
        return content.json("answer")
    try:
        decoded = orjson.loads(raw)
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


def decode_entry(node: Node, with_items: bool = True, with_text: bool = True) -> Entry:
    """One entry object (plain or schematized) as a typed :class:`Entry`.

    ``with_items=False`` skips the workflow items of plain ``ASI_TOOL_*`` steps, used when
    the schematized twin of the entry already carries the same workflow as blocks;
    ``with_text=False`` skips the plain ``text`` altogether (a background entry whose
    schematized twin carries its workflow: only the workflow is rendered).

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
            entry = _decode_entry(current, with_items, with_text, skipped)
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
        data[key] = orjson.dumps(value).decode()  # shown as the answer prose
    else:
        del data[key]
    return current.with_value(data)


def _json_string(text: str) -> bool:
    """True when ``text`` is JSON whose value is a string (a prose ``text``, already kept)."""
    try:
        return isinstance(orjson.loads(text), str)
    except orjson.JSONDecodeError:
        return False


def _decode_entry(
    node: Node, with_items: bool, with_text: bool, problems: list[tuple[str, str]]
) -> Entry:
    node.as_obj()
    backend = node.get_text("backend_uuid")
    uuid = node.get_text("uuid")
    key = backend or uuid
    if not key:
        raise node.error("entry has neither backend_uuid nor uuid")
    created = node_ts(node, "entry_created_datetime")
    if created is None:
        created = node_ts(node, "created_us")
    if created is None:
        created = node_ts(node, "created_datetime")
    if created is None:
        created = node_ts(node, "updated_datetime")
    updated = node_ts(node, "entry_updated_datetime")
    if updated is None:
        updated = node_ts(node, "updated_us")
    if updated is None:
        updated = node_ts(node, "updated_datetime")
    if with_text:
        steps, final_answer, final_results, has_text = _plain_steps(node, with_items, problems)
    else:
        steps, final_answer, final_results, has_text = (), None, (), False
    sources_node = node.opt("sources")
    sources: tuple[WebResult, ...] = ()
    if sources_node is not None and isinstance(sources_node.v, list):
        fast = plain_results(sources_node.v)
        sources = (
            fast
            if fast is not None
            else web_results([s for s in sources_node.list_items() if isinstance(s.v, dict)])
        )
    elif sources_node is not None and not isinstance(sources_node.v, dict):
        raise sources_node.error("expected object or array")
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
        display_model=display_model,
        user_model=user_model,
        status=status,
        trigger=trigger,
        is_background=is_background,
        locked_reason=locked,
        thread_title=title,
        slug=slug,
        context_uuid=context,
        author=author,
        space=_space(node.get_obj("collection_info")),
        side_by_side=_side_by_side(node),
        steps=steps,
        final_answer=final_answer,
        final_web_results=final_results,
        sources=sources,
        blocks=blocks,
        has_text=has_text,
        related=_related(node),
    )


def _join(plain: Entry | None, schem: Entry | None) -> Entry:
    """Join the plain and schematized halves of one entry (plain text, schematized blocks)."""
    if plain is None:
        assert schem is not None
        return schem
    if schem is None:
        return plain
    return replace(
        schem,
        steps=plain.steps or schem.steps,
        final_answer=plain.final_answer if plain.has_text else schem.final_answer,
        final_web_results=plain.final_web_results or schem.final_web_results,
        sources=schem.sources or plain.sources,
        blocks=schem.blocks if schem.blocks.count else plain.blocks,
        has_text=plain.has_text or schem.has_text,
        created_us=schem.created_us if schem.created_us is not None else plain.created_us,
        query=schem.query or plain.query,
        search_mode=schem.search_mode or plain.search_mode,
        display_model=schem.display_model or plain.display_model,
        trigger=schem.trigger or plain.trigger,
        locked_reason=schem.locked_reason or plain.locked_reason,
        side_by_side=schem.side_by_side or plain.side_by_side,
        related=schem.related or plain.related,
    )


def _newer(old: Entry, new: Entry) -> Entry:
    """Of two copies of one entry from different pages, keep the more recently updated."""
    if (new.updated_us or 0) > (old.updated_us or 0):
        return new
    return old


def _version(raw: object) -> tuple[object, ...]:
    """What identifies one copy of an entry: its update fields (a repeat is skipped)."""
    if not isinstance(raw, dict):
        return ()
    return (
        raw.get("entry_updated_datetime"),
        raw.get("updated_datetime"),
        raw.get("updated_us"),
    )


def _same_as_seen(
    raw: object,
    kind: str,
    target: dict[str, Entry],
    seen: dict[tuple[str, str], tuple[object, ...]],
) -> bool:
    """True when this raw entry repeats an already decoded copy (same id, same update)."""
    if not isinstance(raw, dict):
        return False
    key = raw.get("backend_uuid") or raw.get("uuid")
    if not isinstance(key, str) or key not in target:
        return False
    return seen.get((kind, key)) == _version(raw)


def _collect(
    pages: Sequence[RawPage],
    flavour: str,
    root: str,
    covered: frozenset[str] = frozenset(),
) -> tuple[dict[str, Entry], dict[str, Entry], list[PageInfo], list[Node]]:
    entries: dict[str, Entry] = {}
    background: dict[str, Entry] = {}
    infos: list[PageInfo] = []
    bodies: list[Node] = []
    seen_raw: dict[tuple[str, str], tuple[object, ...]] = {}
    for index, page in enumerate(pages):
        body = Node(page.body, None, f"{root}[{index}]")
        body.as_obj()
        bodies.append(body)
        for target, key in ((entries, "entries"), (background, "background_entries")):
            for raw in body.get_list(key):
                if _same_as_seen(raw.v, key, target, seen_raw):
                    continue
                raw_key = (
                    raw.v.get("backend_uuid") or raw.v.get("uuid") if type(raw.v) is dict else None
                )
                # A malformed id (a list, a dict) is not hashable: decode_entry names it.
                fresh = not (isinstance(raw_key, str) and raw_key in covered)
                entry = decode_entry(raw, fresh, fresh or key == "entries")
                seen_raw[key, entry.key] = _version(raw.v)
                seen = target.get(entry.key)
                target[entry.key] = entry if seen is None else _newer(seen, entry)
        params = page.request.get("params") if isinstance(page.request, dict) else None
        cursor = None
        for pair in params or ():
            if isinstance(pair, (list, tuple)) and len(pair) == 2 and pair[0] == "cursor":
                cursor = str(pair[1])
        next_cursor = body.raw("next_cursor")
        infos.append(
            PageInfo(
                flavour=flavour,
                cursor=cursor,
                next_cursor=next_cursor if isinstance(next_cursor, str) else None,
                has_next_page=body.get_bool("has_next_page"),
                entries=len(body.get_list("entries")),
                background_entries=len(body.get_list("background_entries")),
            )
        )
    return entries, background, infos, bodies


def _merge(plain: dict[str, Entry], schem: dict[str, Entry]) -> tuple[Entry, ...]:
    keys = list(plain) + [k for k in schem if k not in plain]
    joined = [_join(plain.get(k), schem.get(k)) for k in keys]
    joined.sort(key=lambda e: (_FAR_FUTURE if e.created_us is None else e.created_us, e.key))
    return tuple(joined)


def decode_thread(plain_pages: Sequence[RawPage], blocks_pages: Sequence[RawPage]) -> Thread:
    """The typed thread of all fetched pages; PayloadError names any malformed value."""
    s_entries, s_back, s_info, s_bodies = _collect(blocks_pages, "blocks", "blocks_pages")
    covered = frozenset(
        key
        for group in (s_entries, s_back)
        for key, entry in group.items()
        if entry.blocks.workflow is not None
    )
    p_entries, p_back, p_info, p_bodies = _collect(plain_pages, "plain", "plain_pages", covered)
    entries = _merge(p_entries, s_entries)
    background = _merge(p_back, s_back)
    title = ""
    created: int | None = None
    updated_raw = ""
    meta_mode = ""
    locked = ""
    space: SpaceRef | None = None
    shared: list[Node] = []
    problems: list[tuple[str, str]] = []
    for body in s_bodies + p_bodies:
        try:
            meta = body.get_obj("thread_metadata")
        except PayloadError as exc:
            problems.append((exc.path, exc.message))
            continue
        if meta is None:
            continue
        try:
            title = title or meta.get_text("title")
            if created is None:
                created = node_ts(meta, "created_at")
            updated_raw = updated_raw or meta.get_text("updated_at")
            meta_mode = meta_mode or meta.get_text("mode")
            locked = locked or meta.get_str("locked_reason")
            space = space or _space(meta.get_obj("collection_info"))
            snaps = meta.get_obj("workflow_snapshots")
            if snaps is not None and not shared:
                files = snaps.get_obj("SHARED_FILES")
                holder = files.get_obj("shared_files") if files is not None else None
                for item in holder.get_list("items") if holder is not None else []:
                    shared.append(item)
        except PayloadError as exc:  # the metadata is optional: the turns still render
            problems.append((exc.path, exc.message))
    return Thread(
        entries=entries,
        background=background,
        title=title,
        created_us=created,
        updated_raw=updated_raw,
        metadata_mode=meta_mode,
        locked_reason=locked,
        space=space,
        shared_nodes=tuple(shared),
        pages=tuple(p_info + s_info),
        problems=tuple(problems),
    )
