"""One thread end to end: fetch its pages, decide on blocks, fetch assets, render, return.

Every decision is the core's (:func:`~pplx_archiver.core.thread.flow.thread_flow`: paging, whether
the schematized pages are needed, which assets exist, the rendering); this module only makes
the requests the flow asks for and hands back each body's parsed value and bytes.
Assets: when the run installed an
:class:`~pplx_archiver.shell.archive.assets.AssetSession` (or one is passed), the asset versions the
core finds are resolved in the same pass — downloaded into staging, reused, or written from
the payload — and the thread is rendered once, with the report versions as ``downloads`` so
``report.md`` exists. The writer commits the staged files with the thread.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import urlparse

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread.budgets import Budgets
from pplx_archiver.core.thread.flow import FlavourPages, PageNeed, ThreadBuild, thread_flow
from pplx_archiver.core.thread.model import ListingRow, RawPage, RenderContext, RenderResult
from pplx_archiver.errors import ConfigError, IdentityMismatchError
from pplx_archiver.shell.archive.assets import AssetOutcome, AssetSession, current_session


class JsonApi(Protocol):
    """What the pipeline needs from the HTTP client."""

    async def get_json(
        self, path: str, params: Sequence[tuple[str, str]] | None = None
    ) -> tuple[Any, bytes]: ...


@dataclasses.dataclass(frozen=True, slots=True)
class FetchedThread:
    """Everything fetched and rendered for one thread."""

    row: ListingRow
    plain: FlavourPages  # the pages as archived (signed-URL credentials masked)
    blocks: FlavourPages | None
    result: RenderResult
    assets: AssetOutcome | None = None

    @property
    def requests(self) -> int:
        return self.plain.record.pages + (self.blocks.record.pages if self.blocks else 0)

    def commit_plan(self, account: str, run_id: int | None) -> ThreadCommit:
        """The writer's plan of this thread: raw files, rendering, assets, index row."""
        assets = self.assets
        return ThreadCommit(
            account=account,
            result=self.result,
            raw_entries=self.plain.raw_file,
            raw_blocks=self.blocks.raw_file if self.blocks is not None else None,
            listing=self.row,
            listing_updated_at=self.row.updated_at,
            extra_files=assets.files if assets is not None else {},
            staged=assets.staged if assets is not None else (),
            assets_complete=assets.complete if assets is not None else True,
            run_id=run_id,
        )


async def fetch_thread(
    api: JsonApi,
    row: ListingRow,
    ctx: RenderContext,
    *,
    page_limit: int,
    assets: AssetSession | None = None,
    budgets: Budgets | None = None,
) -> FetchedThread:
    """Drive the core's :func:`~pplx_archiver.core.thread.flow.thread_flow` for one thread.

    The flow asks for pages (fetched here, answered with the parsed value and the body
    bytes) and for asset versions (resolved by the asset session into staging); it returns
    the plan. ``assets`` defaults to the session the running command installed
    (:func:`~pplx_archiver.shell.archive.assets.use_session`); without one, assets are left alone.
    """
    session = assets if assets is not None else current_session()
    flow = thread_flow(row, ctx, page_limit=page_limit, assets=session is not None, budgets=budgets)
    outcome: AssetOutcome | None = None
    answer: Any = None
    try:
        while True:
            need = flow.send(answer)
            if isinstance(need, PageNeed):
                answer = await api.get_json(need.request.path, need.request.params)
            else:
                assert session is not None  # the flow asks for assets only when enabled
                outcome = await session.collect(row.thread_id, need.refs)
                answer = outcome.reports
    except StopIteration as stop:
        built: ThreadBuild = stop.value
    check_identity(row, built.result.thread_uuid, built.plain.pages)
    return FetchedThread(row, built.plain, built.blocks, built.result, outcome)


_ID_KEYS = ("thread_url_slug", "uuid", "backend_uuid", "context_uuid", "frontend_uuid")


def payload_identities(pages: Sequence[RawPage]) -> set[str]:
    """Every id a thread payload gives itself (entry slugs, uuids, context uuids)."""
    found: set[str] = set()
    for page in pages:
        body = page.body
        entries = body.get("entries") if isinstance(body, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict):
                found.update(v for k in _ID_KEYS if isinstance(v := entry.get(k), str) and v)
    return found


def check_identity(row: ListingRow, thread_uuid: str, pages: Sequence[RawPage]) -> None:
    """Refuse a payload that claims another thread's identity than the one requested.

    The folder and the index row of a thread are chosen from the payload's own id, so a
    payload answering for thread B to a request for thread A would overwrite B's verbatim
    raw files. The id the archive files the thread under must be the requested one (or its
    listed slug), or the requested id must be one the payload's entries carry.
    """
    requested = {row.thread_id, row.key, *([row.slug] if row.slug else [])}
    if thread_uuid in requested:
        return
    if requested & payload_identities(pages):
        return
    raise IdentityMismatchError(
        f"identity_mismatch: requested thread {row.thread_id}, the payload is thread "
        f"{thread_uuid}; nothing written",
        url=f"/rest/thread/{row.thread_id}",
    )


_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{2,199}$")


def row_from_arg(arg: str) -> ListingRow:
    """The listing row of a thread named on the command line; a thread URL is kept (its
    ``/computer/tasks/`` path is the URL signal of mode detection, ``computer_url``)."""
    text = arg.strip()
    url = text if "://" in text or text.startswith("www.") else ""
    return ListingRow(thread_id=thread_id_from_arg(arg), url=url)


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
