"""Decoding of raw thread pages (plain and schematized) into one typed :class:`Thread`.

Pages are merged, duplicate entries and background entries dropped by uuid
(``backend_uuid``, else ``uuid``), plain and schematized halves joined by that uuid (plain
gives ``text`` steps, schematized gives ``blocks``) and turns ordered by creation time.
Any malformed value raises one :class:`~pplx_archiver.errors.PayloadError` with its path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pplx_archiver.core.blocks import (
    decode_blocks,
    decode_item,
    plain_results,
    web_results,
    web_results_at,
)
from pplx_archiver.core.model import RawPage, SpaceRef
from pplx_archiver.core.node import Node
from pplx_archiver.core.timeparse import node_ts
from pplx_archiver.core.values import (
    Entry,
    Item,
    PageInfo,
    PlainStep,
    SideBySide,
    Thread,
    WebResult,
)

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
    entry: Node, with_items: bool = True
) -> tuple[tuple[PlainStep, ...], str | None, tuple[WebResult, ...], bool]:
    """Plain ``text`` steps, the FINAL answer text and FINAL web results."""
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
        step.as_obj()
        kind = step.get_str("step_type")
        content = step.get_obj("content")
        items: tuple[Item, ...] = ()
        if with_items and content is not None and kind.startswith("ASI_TOOL_"):
            items = tuple(decode_item(i, 0) for i in content.get_list("workflow_items"))
        steps.append(
            PlainStep(
                step_type=kind,
                uuid=step.get_text("uuid"),
                content=content.v if content is not None else {},
                where=step,
                items=items,
            )
        )
        if kind == "FINAL" and content is not None:
            final = content.json("answer")
            if final is not None:
                if isinstance(final.v, str):
                    answer = final.v
                elif isinstance(final.v, dict):
                    text = final.get_str("answer")
                    answer = text or answer
                    results = web_results_at(final, "web_results")
    return tuple(steps), answer, results, True


def decode_entry(node: Node, with_items: bool = True, with_text: bool = True) -> Entry:
    """One entry object (plain or schematized) as a typed :class:`Entry`.

    ``with_items=False`` skips the workflow items of plain ``ASI_TOOL_*`` steps, used when
    the schematized twin of the entry already carries the same workflow as blocks;
    ``with_text=False`` skips the plain ``text`` altogether (a background entry whose
    schematized twin carries its workflow: only the workflow is rendered).
    """
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
        steps, final_answer, final_results, has_text = _plain_steps(node, with_items)
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
        blocks=decode_blocks(node),
        has_text=has_text,
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
    )


def _newer(old: Entry, new: Entry) -> Entry:
    """Of two copies of one entry from different pages, keep the more recently updated."""
    if (new.updated_us or 0) > (old.updated_us or 0):
        return new
    return old


def _version(raw: object) -> tuple[object, ...]:
    """What identifies one copy of an entry: its update fields (a repeat is skipped)."""
    assert isinstance(raw, dict)
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
    for body in s_bodies + p_bodies:
        meta = body.get_obj("thread_metadata")
        if meta is None:
            continue
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
    )
