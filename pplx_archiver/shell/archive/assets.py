"""A thread's assets: which versions to fetch or write, where they go, and ``assets/manifest.json``.

:class:`AssetSession` turns the :class:`~pplx_archiver.core.model.AssetRef` versions the core
found in a thread into an :class:`AssetOutcome`, without touching the thread folder:

- a version whose file is already in the archive with the manifest's size and sha256 (same
  uuid and version) is reused — no download on ``--force``, ``sync`` or a retry;
- a version with a URL is downloaded by the :class:`~pplx_archiver.shell.net.download.CdnDownloader`
  into the session's staging folder (``<out>/index/staging/``, same file system as the
  archive); an expired signed URL is refreshed through ``GET /rest/assets/{uuid}/data`` (the
  API client: API rate limit, session cookie on the API origin only) and retried once;
- a version without URL whose payload carries the content (diffs, code, report source, text
  content) is written from the payload;
- ``toolu_`` handles and versions with no download channel are recorded, not fetched.

The store's writer moves the staged files into ``<thread>/assets/`` and writes the manifest
before it marks the thread done (see ``Archive.commit_thread(staged_files=…)``), so a crash
never leaves a partial file in the archive. Files are named ``assets/<stem>.v<N><ext>`` (stem
from the file name, sanitized; extension by :func:`choose_extension`). The manifest lists every
version, sorted, with no URL query and no timestamp of the run, so an unchanged thread gives
the same bytes. A version that failed (not too large: that is final) makes the thread's
assets incomplete: the index records ``assets_complete: false`` and the next run retries it.

Log events: ``ASSET_URL_REFRESHED``, ``ASSET_FAILED``, ``ASSET_TOO_LARGE``, ``ASSETS_ARCHIVED``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import os
import re
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import quote, unquote, urlsplit

import anyio
import httpx
import orjson
import structlog

from pplx_archiver.core.assets import FILE_KEYS
from pplx_archiver.core.layout import safe_component, uuid8
from pplx_archiver.core.model import AssetFile, AssetRef
from pplx_archiver.errors import FetchError, NotFoundError
from pplx_archiver.shell.net.download import (
    AssetDownloadError,
    AssetTooLargeError,
    CdnDownloader,
    UrlExpiredError,
    url_expired,
    url_path,
)

log = structlog.get_logger()

ASSETS_DIR = "assets"
MANIFEST = f"{ASSETS_DIR}/manifest.json"
MANIFEST_FORMAT = 1
REPORT_TYPE = "RESEARCH_REPORT"

# Entry statuses of the manifest.
STORED = "stored"
HANDLE = "handle"
NO_CHANNEL = "no_channel"
TOO_LARGE = "too_large"
FAILED = "failed"
MISSING = "missing"  # offline backfill: downloadable, not fetched yet
INCOMPLETE = frozenset({FAILED, MISSING})

_EXT = re.compile(r"^\.[A-Za-z0-9]{1,8}$")
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", ".pdf"),
    (b"\x89PNG", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"GIF8", ".gif"),
    (b"PK\x03\x04", ".zip"),
    (b"PK\x05\x06", ".zip"),
    (b"\x1f\x8b", ".gz"),
    (b"\xd0\xcf\x11\xe0", ".doc"),
    (b"7z\xbc\xaf\x27\x1c", ".7z"),
    (b"Rar!", ".rar"),
    (b"ID3", ".mp3"),
    (b"OggS", ".ogg"),
    (b"glTF", ".glb"),
)
_TYPE_EXT = {
    "RESEARCH_REPORT": ".md",
    "DOC_FILE": ".md",
    "ASSET_DIFF": ".diff",
    "CODE_FILE": ".txt",
    "CODE_ASSET": ".txt",
    "SLIDES": ".pptx",
}


# --------------------------------------------------------------------------- pure helpers


def _suffix(name: str) -> str | None:
    suffix = PurePosixPath(name).suffix
    return suffix.lower() if _EXT.match(suffix) else None


def _magic_ext(head: bytes) -> str | None:
    for magic, ext in _MAGIC:
        if head.startswith(magic):
            return ext
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return ".webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return ".wav"
    return None


def _text_ext(head: bytes) -> str | None:
    """Recognizable text formats; None for plain or undecidable text and for binary."""
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", "ignore").lstrip("\ufeff").lstrip()
    lower = text[:64].lower()
    if lower.startswith(("<!doctype html", "<html")):
        return ".html"
    if lower.startswith("<?xml"):
        return ".xml"
    if lower.startswith("<svg"):
        return ".svg"
    if text.startswith(("diff --git", "--- ", "@@ ")):
        return ".diff"
    if text.startswith("#!") and "python" in text.split("\n", 1)[0]:
        return ".py"
    if text.startswith(("{", "[")) and text.rstrip().endswith(("}", "]")):
        return ".json"
    if text.startswith("# ") or "\n## " in text:
        return ".md"
    return None


def _is_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a character cut at the end of the head
    return True


def choose_extension(url: str | None, head: bytes, asset_type: str, file_name: str) -> str:
    """File extension: from the URL path, then magic bytes, then text heuristics, then the
    asset type, then the file name; ``.txt`` for other text and ``.bin`` for other bytes."""
    if url:
        ext = _suffix(unquote(urlsplit(url).path))
        if ext:
            return ext
    return (
        _magic_ext(head)
        or _text_ext(head)
        or _TYPE_EXT.get(asset_type)
        or _suffix(file_name)
        or (".txt" if _is_text(head) else ".bin")
    )


def file_stem(file_name: str) -> str:
    """The sanitized stem of an asset file name (its extension dropped)."""
    stem = file_name[: -len(_suffix(file_name) or "")] if _suffix(file_name) else file_name
    return safe_component(stem, fallback="asset", max_len=100)


def dump_manifest(thread_uuid: str, entries: Sequence[Mapping[str, Any]]) -> bytes:
    """``assets/manifest.json`` bytes: sorted keys, entries by (file name, version, uuid)."""
    ordered = sorted(
        entries, key=lambda e: (str(e["file_name"]), int(e["version"]), str(e["uuid"]))
    )
    body = {"format": MANIFEST_FORMAT, "thread_uuid": thread_uuid, "assets": ordered}
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def read_manifest(folder: Path | None) -> list[dict[str, Any]]:
    """The entries of a thread folder's manifest ([] when absent or unreadable)."""
    if folder is None:
        return []
    try:
        data = orjson.loads((folder / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    entries = data.get("assets") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return []
    return [dict(e) for e in entries if isinstance(e, dict)]


def refreshed_url(decoded: Any) -> str | None:
    """The fresh signed URL of a ``/rest/assets/{uuid}/data`` answer, if it holds one."""
    if not isinstance(decoded, dict):
        return None
    data = decoded.get("asset_data")
    if not isinstance(data, dict):
        return None
    for key in FILE_KEYS:
        obj = data.get(key)
        if isinstance(obj, dict) and isinstance(obj.get("url"), str) and obj["url"]:
            return str(obj["url"])
    infos = data.get("download_info")
    for info in infos if isinstance(infos, list) else ():
        if isinstance(info, dict):
            for key in ("url", "s3_url"):
                if isinstance(info.get(key), str) and info[key]:
                    return str(info[key])
    image = data.get("generated_image")
    if isinstance(image, dict) and isinstance(image.get("url"), str) and image["url"]:
        return str(image["url"])
    return None


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _head(path: Path, size: int = 4096) -> bytes:
    with path.open("rb") as fh:
        return fh.read(size)


def _confined(folder: Path, rel: str) -> Path | None:
    """``folder/rel`` when ``rel`` is a plain relative path inside ``assets/``."""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] != ASSETS_DIR or any(p in ("", ".", "..") for p in parts):
        return None
    path = folder.joinpath(*parts)
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None
    return path


def reusable(folder: Path | None, entry: Mapping[str, Any]) -> Path | None:
    """The stored file of a manifest entry when it exists with the recorded size and sha256."""
    if folder is None or entry.get("status") != STORED:
        return None
    rel, want, size = entry.get("path"), entry.get("sha256"), entry.get("bytes")
    if not isinstance(rel, str) or not isinstance(want, str) or not isinstance(size, int):
        return None
    path = _confined(folder, rel)
    if path is None or not path.is_file() or path.stat().st_size != size:
        return None
    return path if _sha256_file(path) == want else None


# --------------------------------------------------------------------------- outcome


@dataclasses.dataclass(frozen=True, slots=True)
class AssetOutcome:
    """What a thread's assets add to its commit.

    ``files``: bytes to write (``assets/manifest.json``, inline assets); ``staged``: downloaded
    files to move into the thread folder (relative path → staged file); ``reports``: the
    stored report versions for the render core (``report.md``); ``complete``: False when a
    version failed or is still missing (the thread is retried next run).
    """

    entries: tuple[Mapping[str, Any], ...]
    files: Mapping[str, bytes]
    staged: Mapping[str, Path]
    reports: tuple[AssetFile, ...]
    complete: bool

    def counts(self) -> dict[str, int]:
        """Versions per status (and per source for stored ones), for ``ASSETS_ARCHIVED``."""
        out: dict[str, int] = {}
        for entry in self.entries:
            key = str(entry["status"])
            if key == STORED:
                key = f"stored_{entry.get('source', 'download')}"
            out[key] = out.get(key, 0) + 1
        return out


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


Locate = Callable[[str], Path | None]


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
    ) -> None:
        self.root = Path(staging)
        self.staging = self.root / f"run-{os.getpid()}-{secrets.token_hex(4)}"
        self.downloader = downloader
        self.api = api
        self.locate = locate
        self.clock = clock

    @property
    def online(self) -> bool:
        """True when versions can be downloaded."""
        return self.downloader is not None

    def cleanup(self) -> None:
        """Remove this session's staging folder (files the writer did not take)."""
        shutil.rmtree(self.staging, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.root.rmdir()

    async def collect(
        self, thread_uuid: str, refs: Sequence[AssetRef], *, folder: Path | None = None
    ) -> AssetOutcome:
        """Resolve every version of one thread; nothing in the archive is touched."""
        if folder is None:
            folder = self.locate(thread_uuid)
        previous = {(str(e.get("uuid")), e.get("version")): e for e in read_manifest(folder)}
        stage = self.staging / f"{safe_component(thread_uuid, max_len=60)}-{secrets.token_hex(3)}"
        items = [_Item(ref, _base_entry(ref)) for ref in refs]
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
            item.ext = choose_extension(None, data[:4096], ref.asset_type, ref.file_name)
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
        head = await anyio.to_thread.run_sync(_head, got.path)
        item.ext = choose_extension(url, head, ref.asset_type, ref.file_name)
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
        taken = {str(i.entry["path"]) for i in items if i.reused is not None}
        files: dict[str, bytes] = {}
        staged: dict[str, Path] = {}
        for item in items:
            if item.entry["status"] != STORED or item.reused is not None:
                continue
            ref = item.ref
            rel = f"{ASSETS_DIR}/{file_stem(ref.file_name)}.v{ref.version}{item.ext}"
            if rel in taken or rel == MANIFEST:
                rel = (
                    f"{ASSETS_DIR}/{file_stem(ref.file_name)}."
                    f"{safe_component(uuid8(ref.uuid), fallback='x')}.v{ref.version}{item.ext}"
                )
            taken.add(rel)
            item.entry["path"] = rel
            if item.staged is not None:
                staged[rel] = item.staged
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
            staged=staged,
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


def _base_entry(ref: AssetRef) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "uuid": ref.uuid,
        "asset_type": ref.asset_type,
        "file_name": ref.file_name,
        "title": ref.title,
        "version": ref.version,
        "created_at": ref.created_at,
        "found_at": ref.path,
    }
    path = url_path(ref.url)
    if path is not None:
        entry["url_path"] = path
    return entry


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


def archive_locator(archive: Any) -> Locate:
    """``thread uuid → stored folder`` from an archive's index (:class:`Archive`)."""

    def locate(thread_uuid: str) -> Path | None:
        row = archive.get(thread_uuid)
        if row is None or not row.path:
            return None
        folder: Path = archive.folder(row.path)
        return folder if folder.is_dir() else None

    return locate


def remove_dead_staging(staging: Path) -> int:
    """Remove staging folders of runs whose process is gone; return how many.

    A folder is ``run-<pid>-<random>``: one whose PID is alive belongs to a running command
    (the writer lock makes that impossible for a writer, but a folder is never taken from a
    live process on that assumption alone). Folders of other shapes are leftovers too.
    """
    from pplx_archiver.shell.archive.lock import pid_alive

    removed = 0
    try:
        children = list(staging.iterdir())
    except OSError:
        return 0
    for child in children:
        parts = child.name.split("-")
        if len(parts) == 3 and parts[1].isdigit() and pid_alive(int(parts[1])):
            continue
        shutil.rmtree(child, ignore_errors=True)
        removed += 1
    return removed


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
) -> AsyncIterator[AssetSession]:
    """The run's asset session (CDN client, staging under ``<out>/index/staging``), installed
    for the block; staged leftovers of this or a crashed earlier run are removed.

    ``sleep``/``clock`` pace the CDN budget (pauses, backoffs); a run passes the ones of its
    API client so that every wait of the run is on one clock."""
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
