"""A thread's assets: which versions to fetch or write, where they go, and ``assets/manifest.json``.

:class:`AssetSession` turns the :class:`~pplx_archiver.core.thread.model.AssetRef` versions the core
found in a thread into an :class:`AssetOutcome`, without touching the thread folder:

- a version whose file is already in the archive with the manifest's size and sha256 (same
  uuid and version) is reused — no download on ``--force``, ``sync`` or a retry;
- a version with a URL is downloaded by the :class:`~pplx_archiver.shell.net.download.CdnDownloader`
  into the session's staging folder (``<out>/index/staging/``, same file system as the
  archive); an expired signed URL is refreshed through ``GET /rest/assets/{uuid}/data`` (the
  API client: API rate limit, session cookie on the API origin only) and retried once;
- a version without URL whose payload carries the content (diffs, code, text) is inline;
- ``toolu_`` handles and versions with no download channel are recorded, not fetched.

The archive's writer moves the staged files into ``<thread>/assets/`` and writes the manifest
before it marks the thread done (the :class:`~pplx_archiver.core.archive.writes.ThreadCommit` or
:class:`~pplx_archiver.core.archive.writes.AssetPlacement` plan), so a crash never leaves a partial
file in the archive. Names, extensions and the manifest are the core's (``asset_files``).
A failed version (too large is final) makes the thread's assets incomplete (the index
records ``assets_complete: false``; the next run retries). Log events: ``ASSET_URL_REFRESHED``,
``ASSET_FAILED``, ``ASSET_TOO_LARGE``, ``ASSETS_ARCHIVED``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import anyio
import httpx
import structlog

from pplx_archiver.core.archive.writes import StagedFile
from pplx_archiver.core.thread.asset_files import (
    FAILED,
    HANDLE,
    HEAD_BYTES,
    MANIFEST,
    MISSING,
    NO_CHANNEL,
    REPORT_TYPE,
    STORED,
    TOO_LARGE,
    Resolved,
    base_entry,
    choose_extension,
    dump_manifest,
    name_files,
    refreshed_url,
    status_counts,
)
from pplx_archiver.core.thread.asset_files import INCOMPLETE as INCOMPLETE
from pplx_archiver.core.thread.asset_files import file_stem as file_stem
from pplx_archiver.core.thread.layout import safe_component
from pplx_archiver.core.thread.model import AssetFile, AssetRef
from pplx_archiver.errors import FetchError, NotFoundError
from pplx_archiver.shell.archive.asset_store import Locate, archive_locator, reusable
from pplx_archiver.shell.archive.asset_store import read_manifest as read_manifest
from pplx_archiver.shell.archive.disk import Disk
from pplx_archiver.shell.archive.disk import remove_dead_staging as remove_dead_staging
from pplx_archiver.shell.net.download import CdnDownloader, OriginBudget, url_expired, url_path
from pplx_archiver.shell.net.download_errors import (
    AssetDownloadError,
    AssetTooLargeError,
    UrlExpiredError,
)

log = structlog.get_logger()

# --------------------------------------------------------------------------- outcome


@dataclasses.dataclass(frozen=True, slots=True)
class AssetOutcome:
    """What a thread's assets add to its commit.

    ``files``: bytes to write (``assets/manifest.json``, inline assets); ``staged``: downloaded
    files to move into the thread folder; ``reports``: the
    stored report versions for the render core (``report.md``); ``complete``: False when a
    version failed or is still missing (the thread is retried next run).
    """

    entries: tuple[Mapping[str, Any], ...]
    files: Mapping[str, bytes]
    staged: tuple[StagedFile, ...]
    reports: tuple[AssetFile, ...]
    complete: bool

    def counts(self) -> dict[str, int]:
        """Versions per status (and per source for stored ones), for ``ASSETS_ARCHIVED``."""
        return status_counts(self.entries)

    def staged_paths(self) -> dict[str, Path]:
        """Archive path → staged file of each download to move in."""
        return {s.rel: Path(s.source) for s in self.staged}


@dataclasses.dataclass(slots=True)
class _Item:
    """One version being resolved: its manifest entry and where its bytes are."""

    ref: AssetRef
    entry: dict[str, Any]
    staged: Path | None = None
    inline: bytes | None = None
    reused: Path | None = None
    ext: str = ".bin"


class AssetApi(Protocol):
    """What the asset session needs from the API client (URL refresh)."""

    async def get_json(
        self, path: str, params: Any = None, *, kind: str | None = None
    ) -> tuple[Any, bytes]: ...


def _no_folder(_thread_uuid: str) -> Path | None:
    return None


class AssetSession:
    """Resolves the asset versions of threads for one run (see the module docstring).

    ``downloader``/``api`` None means offline: downloadable versions not yet in the archive
    are recorded as ``missing``. ``locate`` gives the stored folder of a thread (for reuse).
    """

    def __init__(
        self,
        staging: Path,
        *,
        downloader: CdnDownloader | None = None,
        api: AssetApi | None = None,
        locate: Locate = _no_folder,
        clock: Callable[[], float] = time.time,
        disk: Disk | None = None,
    ) -> None:
        self.root = Path(staging)
        self.staging = self.root / f"run-{os.getpid()}-{secrets.token_hex(4)}"
        self.downloader = downloader
        self.api = api
        self.locate = locate
        self.clock = clock
        self.disk = disk or Disk()

    @property
    def online(self) -> bool:
        """True when versions can be downloaded."""
        return self.downloader is not None

    def cleanup(self) -> None:
        """Remove this session's staging folder (files the writer did not take)."""
        self.disk.remove_tree(self.staging)
        self.disk.remove_empty_dir(self.root)

    async def collect(
        self, thread_uuid: str, refs: Sequence[AssetRef], *, folder: Path | None = None
    ) -> AssetOutcome:
        """Resolve every version of one thread; nothing in the archive is touched."""
        if folder is None:
            folder = self.locate(thread_uuid)
        previous = {(str(e.get("uuid")), e.get("version")): e for e in read_manifest(folder)}
        stage = self.staging / f"{safe_component(thread_uuid, max_len=60)}-{secrets.token_hex(3)}"
        items = [_Item(ref, base_entry(ref, url_path(ref.url))) for ref in refs]
        with structlog.contextvars.bound_contextvars(thread_uuid=thread_uuid):
            async with anyio.create_task_group() as tg:
                for number, item in enumerate(items):
                    old = previous.get((item.ref.uuid, item.ref.version))
                    tg.start_soon(self._resolve, item, old, folder, stage / f"{number}.bin")
        return self._outcome(thread_uuid, items, folder)

    # -- one version -----------------------------------------------------------------------

    async def _resolve(
        self, item: _Item, old: Mapping[str, Any] | None, folder: Path | None, dest: Path
    ) -> None:
        ref, entry = item.ref, item.entry
        if old is not None:
            found = await anyio.to_thread.run_sync(reusable, folder, old)
            if found is not None:
                item.reused = found
                entry.update(
                    status=STORED,
                    source=old.get("source", "download"),
                    path=old["path"],
                    bytes=old["bytes"],
                    sha256=old["sha256"],
                )
                return
        if ref.is_handle:
            entry.update(status=HANDLE, reason="toolu_ handle: no download channel")
        elif ref.url:
            await self._download(item, dest, old)
        elif ref.inline_content is not None:
            data = ref.inline_content.encode("utf-8")
            item.inline = data
            item.ext = choose_extension(None, data[:HEAD_BYTES], ref.asset_type, ref.file_name)
            entry.update(
                status=STORED,
                source="inline",
                bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
            )
        else:
            entry.update(status=NO_CHANNEL, reason="no URL and no inline content")

    async def _download(self, item: _Item, dest: Path, old: Mapping[str, Any] | None) -> None:
        ref, entry = item.ref, item.entry
        url = ref.url or ""
        if self.downloader is None:
            if old is not None and old.get("status") in (TOO_LARGE, FAILED):
                # Offline: keep what the last online attempt found.
                keep = ("status", "reason", "bytes_seen")
                entry.update({k: old[k] for k in keep if k in old})
            else:
                entry.update(status=MISSING, reason="not downloaded (offline)")
            return
        refreshed = False
        try:
            if url_expired(url, self.clock()):
                url = await self._refresh(ref, "expired")
                refreshed = True
            try:
                got = await self.downloader.download(url, dest)
            except UrlExpiredError:
                if refreshed:
                    raise
                url = await self._refresh(ref, "refused")
                got = await self.downloader.download(url, dest)
        except AssetTooLargeError as exc:
            entry.update(status=TOO_LARGE, reason=exc.reason, bytes_seen=exc.seen)
            log.warning(
                "ASSET_TOO_LARGE",
                asset_uuid=ref.uuid,
                version=ref.version,
                file_name=ref.file_name,
                limit=exc.limit,
                bytes_seen=exc.seen,
            )
            return
        except AssetDownloadError as exc:
            entry.update(status=FAILED, reason=exc.reason)
            log.warning(
                "ASSET_FAILED",
                asset_uuid=ref.uuid,
                version=ref.version,
                file_name=ref.file_name,
                reason=exc.reason,
                status=exc.status,
                url_path=url_path(url),
            )
            return
        item.staged = got.path
        item.ext = choose_extension(url, got.head, ref.asset_type, ref.file_name)
        entry.update(status=STORED, source="download", bytes=got.size, sha256=got.sha256)

    async def _refresh(self, ref: AssetRef, why: str) -> str:
        """A fresh signed URL from ``GET /rest/assets/{uuid}/data`` (API budget)."""
        if self.api is None:
            raise AssetDownloadError("signed URL expired and no session to refresh it")
        path = f"/rest/assets/{quote(ref.uuid, safe='')}/data"
        try:
            decoded, _raw = await self.api.get_json(path, None, kind="asset")
        except NotFoundError:
            raise AssetDownloadError("asset not found on refresh (HTTP 404)", status=404) from None
        except FetchError as exc:
            raise AssetDownloadError(
                f"URL refresh failed ({type(exc).__name__})", status=exc.status
            ) from None
        url = refreshed_url(decoded)
        if url is None:
            raise AssetDownloadError("URL refresh answered without a URL")
        log.info("ASSET_URL_REFRESHED", asset_uuid=ref.uuid, version=ref.version, reason=why)
        return url

    # -- naming and the manifest -------------------------------------------------------------

    def _outcome(self, thread_uuid: str, items: list[_Item], folder: Path | None) -> AssetOutcome:
        resolved = [Resolved(i.ref, i.entry, i.ext, i.reused is not None) for i in items]
        files: dict[str, bytes] = {}
        staged: list[StagedFile] = []
        for item, rel in zip(items, name_files(resolved), strict=True):
            if rel is None:
                continue
            item.entry["path"] = rel
            if item.staged is not None:
                staged.append(StagedFile(rel, str(item.staged)))
            elif item.inline is not None:
                files[rel] = item.inline
        entries = tuple(i.entry for i in items)
        files[MANIFEST] = dump_manifest(thread_uuid, entries)
        reports = tuple(
            AssetFile(i.ref.uuid, i.ref.version, i.ref.file_name, _bytes_of(i))
            for i in items
            if i.entry["status"] == STORED and i.ref.asset_type == REPORT_TYPE
        )
        outcome = AssetOutcome(
            entries=entries,
            files=files,
            staged=tuple(staged),
            reports=reports,
            complete=not any(e["status"] in INCOMPLETE for e in entries),
        )
        if entries:
            log.info(
                "ASSETS_ARCHIVED",
                thread_uuid=thread_uuid,
                versions=len(entries),
                complete=outcome.complete,
                **outcome.counts(),
            )
        return outcome


def _bytes_of(item: _Item) -> bytes:
    if item.inline is not None:
        return item.inline
    path = item.staged or item.reused
    return path.read_bytes() if path is not None else b""


# --------------------------------------------------------------------------- the run's session

_CURRENT: contextvars.ContextVar[AssetSession | None] = contextvars.ContextVar(
    "pplx_asset_session", default=None
)


def current_session() -> AssetSession | None:
    """The asset session installed by the running command (None: assets are not handled)."""
    return _CURRENT.get()


@contextlib.contextmanager
def use_session(session: AssetSession | None) -> Any:
    """Install ``session`` for the tasks started inside the block (the run's workers)."""
    token = _CURRENT.set(session)
    try:
        yield session
    finally:
        _CURRENT.reset(token)


@contextlib.asynccontextmanager
async def open_assets(
    settings: Any,
    api: AssetApi | None,
    archive: Any,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    online: bool = True,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    clock: Callable[[], float] = time.monotonic,
    shared: OriginBudget | None = None,
) -> AsyncIterator[AssetSession]:
    """The run's asset session (CDN client, staging under ``<out>/index/staging``) for the
    block; staged leftovers of this or a crashed earlier run are removed. ``sleep``/``clock``
    pace the CDN budget (a run passes its API client's: one clock for every wait);
    downloads from the API's own origin also pass ``shared``, the API's budget."""
    staging = Path(archive.out) / "index" / "staging"
    remove_dead_staging(staging)  # leftovers of an interrupted run, never a live run's
    downloader = (
        CdnDownloader(
            concurrency=settings.asset_concurrency,
            max_bytes=settings.max_asset_bytes,
            rate=settings.asset_rate,
            timeout=settings.request_timeout,
            deadline=settings.download_deadline,
            total_deadline=settings.total_deadline,
            transport=transport,
            sleep=sleep,
            clock=clock,
            shared=shared,
            durable=not getattr(archive, "group_commit", False),
            proxy=settings.proxy,
        )
        if online
        else None
    )
    session = AssetSession(staging, downloader=downloader, api=api, locate=archive_locator(archive))
    try:
        with use_session(session):
            yield session
    finally:
        session.cleanup()
        if downloader is not None:
            await downloader.aclose()
