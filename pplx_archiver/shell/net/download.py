"""CDN downloads of asset files: their own client and budget, streamed to disk, size-checked.

Signed asset URLs point at CDN or object-store hosts (CloudFront, S3) and need no session: the
:class:`CdnDownloader` owns a plain :class:`httpx.AsyncClient` without cookies or auth (the
run's proxy applies, :mod:`.proxy`), so nothing of the session ever reaches those hosts, not
even through a redirect (followed by that same client, at most :data:`MAX_REDIRECTS` hops, to
the asset stores only: :mod:`.redirects`). Its concurrency budget (a capacity limiter as large
as its pool) and its :class:`~pplx_archiver.shell.net.ratelimit.RateLimiter` are separate from
the API's. A download from the API's own origin (a server that serves its files itself) also
passes the API's limiter, given as an :class:`OriginBudget`: one server, one budget — what that
limiter learns from 429s is then the server's limit for both kinds of request, not the share
the downloads happened to leave the API.

A download streams into a temp file (``<name>.part`` in a staging folder), counting bytes:
the stream is aborted as soon as it passes ``max_bytes`` (:class:`AssetTooLargeError`), a body
shorter or longer than its ``Content-Length`` is refused and retried, and only a complete
body is fsynced and renamed to its staged name (``durable=False``: not fsynced, for an archive
whose group commit syncs its whole file system before a thread is marked done; a small body
is then written by the event loop itself, without a worker-thread hop). Expired signed URLs
(403/410/400 from the CDN, or an expiry parameter already in the past: :func:`url_expired`)
raise :class:`UrlExpiredError`; the caller refreshes the URL through the API and retries once.

Its errors are those of :mod:`.download_errors`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO
from urllib.parse import parse_qsl, urlsplit

import anyio
import httpx

from pplx_archiver.core.thread.asset_files import HEAD_BYTES
from pplx_archiver.shell.net.cookies import JarlessClient
from pplx_archiver.shell.net.download_errors import (
    AssetDownloadError,
    AssetTooLargeError,
    UrlExpiredError,
)
from pplx_archiver.shell.net.ratelimit import RateLimiter
from pplx_archiver.shell.net.redirects import check_hop, downloading
from pplx_archiver.shell.net.transport import client_transport, release

MAX_REDIRECTS = 5
EXPIRED_STATUSES = frozenset({400, 403, 410})
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
DEFAULT_CDN_RATE = 20.0
DEFAULT_ATTEMPTS = 3
# Bodies up to this size are gathered in memory and written in one worker-thread call.
IN_MEMORY_MAX = 4 * 1024 * 1024
# A body this small, when no fsync is due, is written by the event loop itself: the
# worker-thread hop cost more CPU than the write (page cache, well under a millisecond).
INLINE_MAX = 256 * 1024

Sleep = Callable[[float], Awaitable[None]]


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


@dataclasses.dataclass(frozen=True, slots=True)
class OriginBudget:
    """The API's rate limiter, for downloads from the API's own origin (scheme, host, port)."""

    origin: tuple[str, str]
    limiter: RateLimiter

    @classmethod
    def of(cls, base_url: str, limiter: RateLimiter) -> OriginBudget:
        """The budget of the server at ``base_url``."""
        return cls(_origin(base_url), limiter)

    def covers(self, url: str) -> bool:
        """Whether ``url`` is on this budget's origin."""
        return _origin(url) == self.origin


@dataclasses.dataclass(frozen=True, slots=True)
class Downloaded:
    """A complete downloaded body in the staging folder."""

    path: Path
    size: int
    sha256: str
    content_type: str
    head: bytes = b""  # the body's first HEAD_BYTES bytes (what names its type)


def url_path(url: str | None) -> str | None:
    """The path of a URL, never its query (safe to store and log)."""
    if not url:
        return None
    return urlsplit(url).path or "/"


def url_expired(url: str, now: float) -> bool:
    """True when a signed URL's expiry parameter is already in the past at ``now`` (epoch s).

    Understands CloudFront/S3-v2 ``Expires=<epoch>`` and S3-v4 ``X-Amz-Date`` +
    ``X-Amz-Expires``; a URL without them is not known to be expired.
    """
    params = {k.lower(): v for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
    expires = params.get("expires", "")
    if expires.isdigit():
        return int(expires) <= now
    amz_date, amz_expires = params.get("x-amz-date", ""), params.get("x-amz-expires", "")
    if amz_date and amz_expires.isdigit():
        try:
            start = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        except ValueError:
            return False
        return start.timestamp() + int(amz_expires) <= now
    return False


class CdnDownloader:
    """Downloads signed URLs under the CDN budget into a staging folder (see module docstring)."""

    def __init__(
        self,
        *,
        concurrency: int = 4,
        max_bytes: int = 200 * 1024 * 1024,
        rate: float = DEFAULT_CDN_RATE,
        timeout: float = 60.0,
        attempts: int = DEFAULT_ATTEMPTS,
        deadline: float = 240.0,
        total_deadline: float = 300.0,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = anyio.sleep,
        clock: Callable[[], float] = time.monotonic,
        shared: OriginBudget | None = None,
        durable: bool = True,
        proxy: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"asset concurrency must be at least 1, got {concurrency}")
        if max_bytes < 0:
            raise ValueError(f"max asset bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self.attempts = max(1, attempts)
        self.deadline = deadline
        self.total_deadline = total_deadline
        self.capacity = anyio.CapacityLimiter(concurrency)
        self.limiter = RateLimiter(rate, max(1, concurrency), clock=clock, sleep=sleep)
        self.shared = shared
        # False: the archive's group commit syncs the staging folder's file system too.
        self.durable = durable
        self._sleep = sleep
        transport, mounts = client_transport(concurrency, proxy=proxy, transport=transport)
        self._http = JarlessClient(
            transport=transport,
            mounts=mounts,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            timeout=httpx.Timeout(timeout, connect=min(30.0, timeout)),
            follow_redirects=True,
            max_redirects=MAX_REDIRECTS,
            trust_env=False,
            event_hooks={"request": [check_hop]},
            headers={"Accept": "*/*", "Accept-Encoding": "identity"},
        )
        self.requests = 0

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> CdnDownloader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def download(self, url: str, dest: Path) -> Downloaded:
        """Stream ``url`` to ``dest`` (a staging path); retry transient failures a few times.

        Each attempt must finish (headers and whole body) within ``deadline`` seconds, all
        attempts with their waits within ``total_deadline``; a breach fails this download.
        """
        try:
            with anyio.fail_after(self.total_deadline):
                return await self._download(url, dest)
        except TimeoutError:
            _discard(dest.with_name(dest.name + ".part"))
            raise AssetDownloadError(
                f"download not complete within {self.total_deadline:g} s, retries included"
            ) from None

    async def _download(self, url: str, dest: Path) -> Downloaded:
        # The limiters this download passes: the CDN's, and the API's for its own origin.
        limiters = [self.limiter]

        if self.shared is not None and self.shared.covers(url):
            limiters.append(self.shared.limiter)
        for attempt in range(1, self.attempts + 1):
            try:
                async with self.capacity:
                    for limiter in limiters:
                        await limiter.acquire()
                    try:
                        with anyio.fail_after(self.deadline):
                            done = await self._fetch_once(url, dest)
                    except TimeoutError:
                        raise AssetDownloadError(
                            f"download not complete within {self.deadline:g} s (deadline)",
                            transient=True,
                        ) from None
                    for limiter in limiters:
                        limiter.on_success()
                    return done
            except AssetDownloadError as exc:
                if not exc.transient or attempt == self.attempts:
                    raise
                wait = 0.5 * 2 ** (attempt - 1)
                if exc.status == 429:
                    # Only this download waits (its Retry-After); the others go on at the
                    # rate the limiters learnt from the grants.
                    wait = max(limiter.on_rate_limited(exc.retry_after) for limiter in limiters)
                await self._sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _fetch_once(self, url: str, dest: Path) -> Downloaded:
        self.requests += 1
        part = dest.with_name(dest.name + ".part")
        downloading(url)  # each redirect is checked against it (check_hop) before it is sent
        try:
            async with self._http.stream("GET", url) as response:
                try:
                    self._check_status(response)
                    announced = _content_length(response)
                    if announced is not None and announced > self.max_bytes:
                        raise AssetTooLargeError(self.max_bytes, announced)
                    size, digest, head = await self._stream_to(response, part, dest, announced)
                    ctype = response.headers.get("content-type", "")
                finally:  # closed first: the connection goes back with the real stream
                    await response.aclose()
                    release(response)
        except httpx.TooManyRedirects:
            _discard(part)
            raise AssetDownloadError(f"more than {MAX_REDIRECTS} redirects") from None
        except httpx.HTTPError as exc:
            _discard(part)
            raise AssetDownloadError(
                f"connection failed ({type(exc).__name__})", transient=True
            ) from None
        except BaseException:
            _discard(part)
            raise
        return Downloaded(dest, size, digest, ctype, head)

    def _check_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status == 200:
            return
        if status in EXPIRED_STATUSES:
            raise UrlExpiredError(f"CDN refused the signed URL (HTTP {status})", status=status)
        if status in TRANSIENT_STATUSES:
            raise AssetDownloadError(
                f"CDN error (HTTP {status})",
                status=status,
                transient=True,
                retry_after=_retry_after(response.headers.get("retry-after")),
            )
        if status == 404:
            raise AssetDownloadError("not on the CDN (HTTP 404)", status=404)
        raise AssetDownloadError(f"unexpected CDN answer (HTTP {status})", status=status)

    async def _stream_to(
        self, response: httpx.Response, part: Path, dest: Path, announced: int | None
    ) -> tuple[int, str, bytes]:
        """Write the body to ``part``, fsync it and rename it to ``dest``; abort as soon as it
        passes ``max_bytes``, refuse it when its size is not the ``announced`` one.

        A body of up to ``IN_MEMORY_MAX`` bytes is gathered in memory and written, fsynced,
        closed and renamed in one worker-thread call (a thread hop per chunk cost more CPU
        than the download itself); a larger one is streamed to the file chunk by chunk.
        """
        digest = hashlib.sha256()
        size = 0
        head = b""
        held: list[bytes] = []
        fh: BinaryIO | None = None
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self.max_bytes:
                    raise AssetTooLargeError(self.max_bytes, size)
                digest.update(chunk)
                if len(head) < HEAD_BYTES:
                    head += chunk[: HEAD_BYTES - len(head)]
                if fh is not None:
                    await anyio.to_thread.run_sync(fh.write, chunk)
                    continue
                held.append(chunk)
                if size > IN_MEMORY_MAX:
                    fh = await anyio.to_thread.run_sync(_open_part, part, b"".join(held))
                    held = []
            if announced is not None and announced != size:
                raise AssetDownloadError(
                    f"body of {size} bytes, Content-Length said {announced}", transient=True
                )
            if fh is None and not self.durable and size <= INLINE_MAX:
                _write_part(part, b"".join(held), dest, durable=False)  # no thread hop
            elif fh is None:
                await anyio.to_thread.run_sync(
                    _write_part, part, b"".join(held), dest, self.durable
                )
            else:
                await anyio.to_thread.run_sync(_sync_close, fh, part, dest, self.durable)
                fh = None
        finally:
            if fh is not None:
                fh.close()
        return size, digest.hexdigest(), head


def _open_part(part: Path, head: bytes) -> BinaryIO:
    part.parent.mkdir(parents=True, exist_ok=True)
    fh = part.open("wb")
    fh.write(head)
    return fh


def _sync_close(fh: BinaryIO, part: Path, dest: Path, durable: bool = True) -> None:
    """Flush, fsync (when ``durable``) and close the staging file, then rename it to its
    staged name."""
    fh.flush()
    if durable:
        os.fsync(fh.fileno())
    fh.close()
    part.replace(dest)


def _write_part(part: Path, data: bytes, dest: Path, durable: bool = True) -> None:
    _sync_close(_open_part(part, data), part, dest, durable)


def _content_length(response: httpx.Response) -> int | None:
    """The announced body size, when it describes the bytes we store (no content coding)."""
    if response.headers.get("content-encoding", "identity").lower() not in ("", "identity"):
        return None
    value = response.headers.get("content-length", "").strip()
    return int(value) if value.isdigit() else None


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header given as a number (dates and junk: None)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return min(seconds, 300.0) if seconds >= 0 else None
