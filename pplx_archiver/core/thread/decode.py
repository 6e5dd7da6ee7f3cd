"""Decoding of raw thread pages (plain and schematized) into one typed :class:`Thread`.

Pages are merged, duplicate entries and background entries dropped by uuid
(``backend_uuid``, else ``uuid``), plain and schematized halves joined by that uuid (plain
gives ``text`` steps, schematized gives ``blocks``) and turns ordered by creation time.
Each entry is decoded by :mod:`pplx_archiver.core.thread.entries`. A page that cannot be read at
all raises one :class:`~pplx_archiver.errors.PayloadError` with its path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pplx_archiver.core.thread.entries import decode_entry, space_of
from pplx_archiver.core.thread.model import RawPage, SpaceRef
from pplx_archiver.core.thread.node import JsonMemo, Node
from pplx_archiver.core.thread.timeparse import node_ts
from pplx_archiver.core.thread.values import Entry, PageInfo, Thread
from pplx_archiver.errors import PayloadError

_FAR_FUTURE = 1 << 62

_Slot = tuple[str, int, str, int, bool, bool]  # root, page, list, index, with_items, with_text


@dataclasses.dataclass(slots=True)
class DecodeMemo:
    """What one decode of a thread's pages leaves for the next decode of the same pages.

    ``json``: the embedded JSON parsed (:func:`~pplx_archiver.core.thread.node.loads_memo`).
    ``entries``: each entry decoded, by its place in the pages and how it was decoded, with
    the raw value it was decoded from; an entry at the same place, decoded the same way from
    an equal value, is that entry again. Only for the pages of one thread: the same pages,
    or the same pages before and after the signed-URL scrub (which changes only the text of
    strings, so equal values there are the same JSON). Decoding never changes a value.
    """

    json: JsonMemo = dataclasses.field(default_factory=dict)
    entries: dict[_Slot, tuple[Any, Entry]] = dataclasses.field(default_factory=dict)


def _entry(raw: Node, slot: _Slot, memo: DecodeMemo | None) -> Entry:
    """:func:`decode_entry` of ``raw`` at ``slot`` (place and flags), from ``memo`` if there."""
    with_items, with_text = slot[4], slot[5]
    if memo is None:
        return decode_entry(raw, with_items, with_text)
    seen = memo.entries.get(slot)
    if seen is not None and (seen[0] is raw.v or seen[0] == raw.v):
        return seen[1]
    entry = decode_entry(raw, with_items, with_text, memo.json)
    memo.entries[slot] = (raw.v, entry)
    return entry


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
    memo: DecodeMemo | None = None,
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
        counts: list[int] = []
        for target, key in ((entries, "entries"), (background, "background_entries")):
            raws = body.get_list(key)
            counts.append(len(raws))
            for at, raw in enumerate(raws):
                if _same_as_seen(raw.v, key, target, seen_raw):
                    continue
                raw_key = (
                    raw.v.get("backend_uuid") or raw.v.get("uuid") if type(raw.v) is dict else None
                )
                # A malformed id (a list, a dict) is not hashable: decode_entry names it.
                fresh = not (isinstance(raw_key, str) and raw_key in covered)
                slot = (root, index, key, at, fresh, fresh or key == "entries")
                entry = _entry(raw, slot, memo)
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
                entries=counts[0],
                background_entries=counts[1],
            )
        )
    return entries, background, infos, bodies


def _merge(plain: dict[str, Entry], schem: dict[str, Entry]) -> tuple[Entry, ...]:
    keys = list(plain) + [k for k in schem if k not in plain]
    joined = [_join(plain.get(k), schem.get(k)) for k in keys]
    joined.sort(key=lambda e: (_FAR_FUTURE if e.created_us is None else e.created_us, e.key))
    return tuple(joined)


@dataclasses.dataclass(slots=True)
class _Meta:
    """The thread's metadata as read from the pages so far (the first value of each wins)."""

    title: str = ""
    created: int | None = None
    updated_raw: str = ""
    mode: str = ""
    locked: str = ""
    space: SpaceRef | None = None
    shared: list[Node] = dataclasses.field(default_factory=list)
    problems: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    def read(self, body: Node) -> None:
        """Take what this page's ``thread_metadata`` adds (optional: a bad value is listed)."""
        try:
            meta = body.get_obj("thread_metadata")
        except PayloadError as exc:
            self.problems.append((exc.path, exc.message))
            return
        if meta is None:
            return
        try:
            self.title = self.title or meta.get_text("title")
            if self.created is None:
                self.created = node_ts(meta, "created_at")
            self.updated_raw = self.updated_raw or meta.get_text("updated_at")
            self.mode = self.mode or meta.get_text("mode")
            self.locked = self.locked or meta.get_str("locked_reason")
            self.space = self.space or space_of(meta.get_obj("collection_info"))
            snaps = meta.get_obj("workflow_snapshots")
            if snaps is not None and not self.shared:
                files = snaps.get_obj("SHARED_FILES")
                holder = files.get_obj("shared_files") if files is not None else None
                for item in holder.get_list("items") if holder is not None else []:
                    self.shared.append(item)
        except PayloadError as exc:  # the metadata is optional: the turns still render
            self.problems.append((exc.path, exc.message))


def decode_thread(
    plain_pages: Sequence[RawPage],
    blocks_pages: Sequence[RawPage],
    memo: DecodeMemo | None = None,
) -> Thread:
    """The typed thread of all fetched pages; PayloadError names any malformed value.

    ``memo`` keeps what one decode parsed and decoded for the next decode of the same
    pages (:class:`DecodeMemo`); the thread is the same with or without it.
    """
    s_entries, s_back, s_info, s_bodies = _collect(
        blocks_pages, "blocks", "blocks_pages", memo=memo
    )
    covered = frozenset(
        key
        for group in (s_entries, s_back)
        for key, entry in group.items()
        if entry.blocks.workflow is not None
    )
    p_entries, p_back, p_info, p_bodies = _collect(
        plain_pages, "plain", "plain_pages", covered, memo
    )
    meta = _Meta()
    for body in s_bodies + p_bodies:
        meta.read(body)
    return Thread(
        entries=_merge(p_entries, s_entries),
        background=_merge(p_back, s_back),
        title=meta.title,
        created_us=meta.created,
        updated_raw=meta.updated_raw,
        metadata_mode=meta.mode,
        locked_reason=meta.locked,
        space=meta.space,
        shared_nodes=tuple(meta.shared),
        pages=tuple(p_info + s_info),
        problems=tuple(meta.problems),
    )
