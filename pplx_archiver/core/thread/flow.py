"""One thread from first request to everything it becomes, as a pure sans-I/O generator.

:func:`thread_flow` is the one door the shell goes through to archive a thread, in the
manner of h11 or httpx's ``auth_flow``: it yields what it needs and receives the answers —

- :class:`PageNeed`: GET this page; send back ``(decoded, body)``, the JSON value and the
  body bytes exactly as received (``decoded`` must be ``orjson.loads(body)``: the shell has
  already parsed it to check the answer, so the flow never parses a clean body again);
- :class:`AssetsNeed`: resolve these asset versions; send back the downloaded report files
  (a tuple of :class:`~pplx_archiver.core.thread.model.AssetFile`, empty when assets are off);

and returns a :class:`ThreadBuild`: both raw files (signed-URL credentials masked), their
paging records, the asset versions and the rendered files. Each body is parsed once (only a
body the scrub changed is parsed again, as the text that is archived), and the thread is
decoded once: the same decoded thread decides whether the schematized pages are needed, names
the assets and is rendered. The assets are named from the pages as archived (an inline asset's
text keeps its credentials masked, as every archived byte does); only the URLs to download
must be the ones as received, with valid signatures: each masked URL is read back from the
bodies the scrub changed (:func:`~pplx_archiver.core.thread.scrub.signed_urls`), and only when one
cannot be told exactly are the pages as received decoded for it.

When no plain entry has a search mode the decision is certainly "fetch the schematized
pages" (:func:`~pplx_archiver.core.thread.modes.may_stay_plain`) and the plain pages are decoded
only with them. Otherwise a thread with schematized pages is decoded more than once (its plain
pages to decide, then both flavours, and the pages as received in the rare case above);
its decodes share one :class:`~pplx_archiver.core.thread.decode.DecodeMemo`, so each embedded JSON
text is parsed once and an entry already decoded the same way from an equal value is not
decoded again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Mapping
from typing import Any

import orjson

from pplx_archiver.core.thread.assets import assets_of
from pplx_archiver.core.thread.budgets import Budgets, PageTally, output_bytes
from pplx_archiver.core.thread.decode import DecodeMemo, decode_thread
from pplx_archiver.core.thread.model import (
    AssetFile,
    AssetRef,
    ListingRow,
    RawPage,
    RenderContext,
    RenderResult,
    ThreadInput,
)
from pplx_archiver.core.thread.modes import blocks_needed, may_stay_plain
from pplx_archiver.core.thread.paginate import (
    BLOCKS,
    PLAIN,
    PageRequest,
    PagingRecord,
    thread_pages,
)
from pplx_archiver.core.thread.rawfile import encode_checked_pages
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.core.thread.scrub import MASK_TEXT, scrub_signed_urls, signed_urls
from pplx_archiver.core.thread.values import Thread
from pplx_archiver.errors import PayloadError


@dataclasses.dataclass(frozen=True, slots=True)
class PageNeed:
    """The flow needs this page: answer with ``(decoded JSON value, body bytes)``."""

    request: PageRequest
    flavour: str


@dataclasses.dataclass(frozen=True, slots=True)
class AssetsNeed:
    """The flow found these asset versions: answer with the report files downloaded."""

    refs: tuple[AssetRef, ...]


Need = PageNeed | AssetsNeed


@dataclasses.dataclass(frozen=True, slots=True)
class FlavourPages:
    """The pages of one flavour: as archived (masked) for the core, and the raw file bytes."""

    pages: tuple[RawPage, ...]
    raw_file: bytes
    record: PagingRecord
    scrubbed: bool  # the scrub changed at least one page


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadBuild:
    """Everything one thread becomes: raw files, paging records, asset versions, rendering."""

    thread_id: str
    plain: FlavourPages
    blocks: FlavourPages | None
    refs: tuple[AssetRef, ...]
    result: RenderResult

    @property
    def requests(self) -> int:
        """Thread-detail pages fetched (both flavours)."""
        return self.plain.record.pages + (self.blocks.record.pages if self.blocks else 0)


@dataclasses.dataclass(slots=True)
class _Pages:
    stored: list[RawPage]
    live: list[RawPage]
    raw: list[tuple[Mapping[str, Any], bytes]]
    changed: list[bytes]  # the bodies the scrub changed, as received
    scrubbed: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class _Live:
    """One flavour's pages as received, for the asset URLs (empty when nothing was masked)."""

    pages: tuple[RawPage, ...] = ()
    changed: tuple[bytes, ...] = ()


def _flavour(
    thread_id: str, flavour: str, limit: int, budgets: Budgets
) -> Generator[PageNeed, tuple[Any, bytes], tuple[FlavourPages, _Live]]:
    """Fetch every page of one flavour; return its pages as archived and the pages as received.

    Each page is held to the thread's budgets (entries, blocks, depth) as it arrives."""
    gen = thread_pages(thread_id, flavour, limit=limit)
    acc = _Pages([], [], [], [])
    tally = PageTally()
    request = next(gen)
    try:
        while True:
            decoded, body = yield PageNeed(request, flavour)
            tally.add(thread_id, decoded, budgets)
            record = request.as_record()
            clean = scrub_signed_urls(body)
            acc.raw.append((record, clean))
            acc.live.append(RawPage(request=record, body=decoded))
            if clean is body:
                acc.stored.append(acc.live[-1])
            else:
                acc.scrubbed = True
                acc.changed.append(body)
                acc.stored.append(RawPage(request=record, body=orjson.loads(clean)))
            request = gen.send(decoded)
    except StopIteration as stop:
        paging: PagingRecord = stop.value
    # Every body above is valid JSON: its value came from parsing it (or its masked copy).
    raw_file = encode_checked_pages(acc.raw)
    pages = FlavourPages(tuple(acc.stored), raw_file, paging, acc.scrubbed)
    return pages, _Live(tuple(acc.live), tuple(acc.changed))


def _decode(
    tid: str, plain: tuple[RawPage, ...], blocks: tuple[RawPage, ...], memo: DecodeMemo
) -> Thread:
    """:func:`decode_thread` with hostile nesting or values reported as a PayloadError."""
    try:
        return decode_thread(plain, blocks, memo)
    except RecursionError:
        raise PayloadError(tid, "payload nested too deeply to render") from None
    except (TypeError, ValueError) as exc:
        raise PayloadError(tid, f"payload cannot be decoded: {exc}") from None


def _check_decoded(tid: str, thread: Thread, budgets: Budgets) -> Thread:
    """Hold a decoded thread to the turn and source budgets, before it is rendered."""
    budgets.check(tid, "turns", len(thread.entries) + len(thread.background))
    every = (*thread.entries, *thread.background)
    budgets.check(tid, "sources", sum(len(e.sources) + len(e.final_web_results) for e in every))
    return thread


def thread_flow(
    row: ListingRow,
    ctx: RenderContext,
    *,
    page_limit: int,
    assets: bool = True,
    budgets: Budgets | None = None,
) -> Generator[Need, Any, ThreadBuild]:
    """Yield the pages and assets one thread needs; return all it becomes.

    A malformed page raises :class:`~pplx_archiver.errors.PayloadError` as every decode does;
    a thread that would become more than ``budgets`` allow raises
    :class:`~pplx_archiver.errors.BudgetError` (a PayloadError) before it is written.
    With ``assets`` false no :class:`AssetsNeed` is yielded and nothing is downloaded.
    """
    tid = row.thread_id
    budgets = budgets or Budgets()
    memo = DecodeMemo()  # each embedded JSON text parsed once, each entry decoded once
    plain, plain_live = yield from _flavour(tid, PLAIN, page_limit, budgets)
    # Without a search-mode entry the schematized pages are certainly needed: the plain
    # pages are then decoded only once, with them (which checks them as well).
    thread: Thread | None = None
    if may_stay_plain(plain.pages):
        thread = _check_decoded(tid, _decode(tid, plain.pages, (), memo), budgets)
    blocks: FlavourPages | None = None
    blocks_live = _Live()
    if thread is None or blocks_needed(thread, row):
        blocks, blocks_live = yield from _flavour(tid, BLOCKS, page_limit, budgets)
        thread = None  # the schematized pages change the decoded thread
    inp = ThreadInput(
        thread_id=tid,
        plain_pages=plain.pages,
        blocks_pages=blocks.pages if blocks else (),
        listing=row,
    )
    if thread is None:
        thread = _decode(tid, inp.plain_pages, inp.blocks_pages, memo)
        _check_decoded(tid, thread, budgets)
    refs: tuple[AssetRef, ...] = ()
    if assets:
        refs = assets_of(thread)
        changed = plain_live.changed + blocks_live.changed
        if refs and changed:  # the URLs to download are the ones as received
            found = _live_urls(refs, changed)
            if found is None:
                live = _decode(tid, plain_live.pages, blocks_live.pages, memo)
                found = _paired_urls(refs, assets_of(live))
            refs = found
        if refs:
            downloads: tuple[AssetFile, ...] = yield AssetsNeed(refs)
            inp = dataclasses.replace(inp, downloads=tuple(downloads))
    result = render_thread(inp, ctx, thread=thread)
    raw = (plain.raw_file, blocks.raw_file if blocks else None)
    budgets.check(tid, "bytes", output_bytes(result.files, *raw))
    return ThreadBuild(tid, plain, blocks, refs, result)


def _live_urls(
    refs: tuple[AssetRef, ...], changed: tuple[bytes, ...]
) -> tuple[AssetRef, ...] | None:
    """``refs`` with each masked URL as received (read from the changed bodies); None when
    one cannot be told exactly (then the pages as received are decoded)."""
    table: dict[str, str | None] | None = None
    out: list[AssetRef] = []
    for ref in refs:
        if ref.url and MASK_TEXT in ref.url:
            table = signed_urls(changed) if table is None else table
            url = table.get(ref.url)
            if url is None:
                return None
            ref = dataclasses.replace(ref, url=url)
        out.append(ref)
    return tuple(out)


def _paired_urls(refs: tuple[AssetRef, ...], live: tuple[AssetRef, ...]) -> tuple[AssetRef, ...]:
    """The URLs of ``live`` (the decode of the pages as received) on ``refs``, version by
    version, so every other field stays masked; ``live`` itself if they do not pair up."""
    if [_version(r) for r in refs] != [_version(r) for r in live]:
        return live
    return tuple(
        ref if ref.url == got.url else dataclasses.replace(ref, url=got.url)
        for ref, got in zip(refs, live, strict=True)
    )


def _version(ref: AssetRef) -> tuple[str, str, str, int]:
    return (ref.uuid, ref.created_at, ref.file_name, ref.version)
