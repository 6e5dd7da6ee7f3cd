"""One thread end to end: fetch its pages, decide on blocks, fetch assets, render, return.

The paging rules are the core's (:mod:`pplx_archiver.core.paginate`); this module only makes
the requests the generator asks for and keeps each body's bytes verbatim for the raw files.
Assets (issue 8): when the run installed an
:class:`~pplx_archiver.shell.assets.AssetSession` (or one is passed), the asset versions the
core finds are resolved in the same pass — downloaded into staging, reused, or written from
the payload — and the thread is rendered once, with the report versions as ``downloads`` so
``report.md`` exists. The writer commits the staged files with the thread.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

import orjson

from pplx_archiver.core.assets import extract_assets
from pplx_archiver.core.model import ListingRow, RawPage, RenderContext, RenderResult, ThreadInput
from pplx_archiver.core.paginate import BLOCKS, PLAIN, PagingRecord, thread_pages
from pplx_archiver.core.rawfile import encode_raw_pages
from pplx_archiver.core.render import needs_blocks, render_thread
from pplx_archiver.core.scrub import scrub_signed_urls
from pplx_archiver.errors import ConfigError
from pplx_archiver.shell.assets import AssetOutcome, AssetSession, current_session


class JsonApi(Protocol):
    """What the pipeline needs from the HTTP client."""

    async def get_json(
        self, path: str, params: Sequence[tuple[str, str]] | None = None
    ) -> tuple[Any, bytes]: ...


@dataclasses.dataclass(frozen=True, slots=True)
class FetchedPages:
    """All pages of one flavour: decoded for the core, verbatim for the raw file.

    ``raw_file`` and ``pages`` hold the bodies with signed-URL credentials masked
    (:func:`~pplx_archiver.core.scrub.scrub_signed_urls`): that is what is archived and
    rendered, online and offline alike. ``live_pages`` are the bodies as received, used only
    to download the assets while their signed URLs are valid.
    """

    pages: tuple[RawPage, ...]
    raw_file: bytes
    record: PagingRecord
    live_pages: tuple[RawPage, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class FetchedThread:
    """Everything fetched and rendered for one thread."""

    row: ListingRow
    plain: FetchedPages
    blocks: FetchedPages | None
    result: RenderResult
    assets: AssetOutcome | None = None

    @property
    def requests(self) -> int:
        return self.plain.record.pages + (self.blocks.record.pages if self.blocks else 0)

    @property
    def extra_files(self) -> Mapping[str, bytes]:
        """Files to write besides the render's: ``assets/manifest.json`` and inline assets."""
        return self.assets.files if self.assets is not None else {}

    @property
    def staged_files(self) -> Mapping[str, Path]:
        """Downloaded asset files to move into the thread folder (relative path → file)."""
        return self.assets.staged if self.assets is not None else {}

    @property
    def assets_complete(self) -> bool:
        """False when an asset version failed: the thread is retried by the next run."""
        return self.assets.complete if self.assets is not None else True


async def fetch_pages(api: JsonApi, thread_id: str, flavour: str, *, limit: int) -> FetchedPages:
    """Fetch every page of a thread in one flavour by following cursors."""
    gen = thread_pages(thread_id, flavour, limit=limit)
    request = next(gen)
    raw: list[tuple[dict[str, Any], bytes]] = []
    pages: list[RawPage] = []
    live: list[RawPage] = []
    try:
        while True:
            decoded, body = await api.get_json(request.path, request.params)
            record = request.as_record()
            clean = scrub_signed_urls(body)
            raw.append((record, clean))
            live.append(RawPage(request=record, body=decoded))
            stored = decoded if clean is body else orjson.loads(clean)
            pages.append(RawPage(request=record, body=stored))
            request = gen.send(decoded)
    except StopIteration as stop:
        paging: PagingRecord = stop.value
    return FetchedPages(tuple(pages), encode_raw_pages(raw), paging, tuple(live))


async def fetch_thread(
    api: JsonApi,
    row: ListingRow,
    ctx: RenderContext,
    *,
    page_limit: int,
    assets: AssetSession | None = None,
) -> FetchedThread:
    """Fetch plain pages, the schematized pages when the core needs them, the assets, render.

    ``assets`` defaults to the session the running command installed
    (:func:`~pplx_archiver.shell.assets.use_session`); without one, assets are left alone.
    """
    plain = await fetch_pages(api, row.thread_id, PLAIN, limit=page_limit)
    blocks: FetchedPages | None = None
    if needs_blocks(plain.pages, row):
        blocks = await fetch_pages(api, row.thread_id, BLOCKS, limit=page_limit)
    inp = ThreadInput(
        thread_id=row.thread_id,
        plain_pages=plain.pages,
        blocks_pages=blocks.pages if blocks else (),
        listing=row,
    )
    session = assets if assets is not None else current_session()
    outcome: AssetOutcome | None = None
    if session is not None:
        live = dataclasses.replace(
            inp,
            plain_pages=plain.live_pages or plain.pages,
            blocks_pages=(blocks.live_pages or blocks.pages) if blocks else (),
        )
        refs = extract_assets(live)
        if refs:
            outcome = await session.collect(row.thread_id, refs)
            inp = dataclasses.replace(inp, downloads=outcome.reports)
    return FetchedThread(row, plain, blocks, render_thread(inp, ctx), outcome)


_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{2,199}$")


def row_from_arg(arg: str) -> ListingRow:
    """The listing row of a thread named on the command line; a ``/computer/tasks/`` URL
    keeps its computer signal (as the listing mode ``COMPUTER``) for mode detection."""
    computer = "/computer/tasks/" in arg and ("://" in arg or arg.strip().startswith("www."))
    return ListingRow(thread_id=thread_id_from_arg(arg), mode="COMPUTER" if computer else None)


def thread_id_from_arg(arg: str) -> str:
    """A thread id from a uuid, a slug or a thread URL (``/search/<slug>`` and the like)."""
    text = arg.strip()
    if "://" in text or text.startswith("www."):
        parsed = urlparse(text if "://" in text else "https://" + text)
        parts = [p for p in parsed.path.split("/") if p]
        if not parts:
            raise ConfigError(f"no thread id in URL {arg!r}")
        text = parts[-1]
    if not _ID.match(text):
        raise ConfigError(f"{arg!r} is not a thread uuid, slug or thread URL")
    return text
