"""The CDN downloader: no credentials, streamed to staging, size checked, expiry recognised."""

from __future__ import annotations

import gc
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pplx_archiver.shell.net.download import (
    CdnDownloader,
    url_expired,
    url_path,
)
from pplx_archiver.shell.net.download_errors import (
    AssetDownloadError,
    AssetTooLargeError,
    UrlExpiredError,
)

CDN = "https://d2z0o16i8xm8ak.cloudfront.net/files/report.md?Expires=99&Signature=abc"


async def _no_sleep(_seconds: float) -> None:
    return None


def _downloader(handler: httpx.MockTransport, **kw: Any) -> CdnDownloader:
    return CdnDownloader(transport=handler, sleep=_no_sleep, **kw)


class _Chunks(httpx.AsyncByteStream):
    """A body without Content-Length, sent in chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk


async def test_streams_to_staging_with_hash(tmp_path: Path) -> None:
    """A body lands complete under its staged name with its size and sha256; no part file."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b"# hello\n", headers={"content-type": "text/markdown"})

    async with _downloader(httpx.MockTransport(handler)) as cdn:
        got = await cdn.download(CDN, tmp_path / "0.bin")
    assert got.path.read_bytes() == b"# hello\n"
    assert got.size == 8
    assert got.sha256 == hashlib.sha256(b"# hello\n").hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.bin"]
    assert "cookie" not in seen[0].headers and "authorization" not in seen[0].headers


async def test_redirects_carry_no_credentials(tmp_path: Path) -> None:
    """A redirect to another host is followed by the credential-less client: no cookie anywhere."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "d2z0o16i8xm8ak.cloudfront.net":
            return httpx.Response(
                302,
                headers={
                    "location": "https://ppl-ai-file-upload.s3.amazonaws.com/x.md?X-Amz-Signature=s",
                    "set-cookie": "tracker=1; Domain=amazonaws.com",
                },
            )
        return httpx.Response(200, content=b"body")

    async with _downloader(httpx.MockTransport(handler)) as cdn:
        got = await cdn.download(CDN, tmp_path / "1.bin")
    assert got.path.read_bytes() == b"body"
    assert len(seen) == 2
    for request in seen:
        assert "cookie" not in request.headers
        assert "authorization" not in request.headers


async def test_announced_size_above_cap_is_refused(tmp_path: Path) -> None:
    """A Content-Length above the cap is refused before any byte is written."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * 100)

    async with _downloader(httpx.MockTransport(handler), max_bytes=50) as cdn:
        with pytest.raises(AssetTooLargeError) as info:
            await cdn.download(CDN, tmp_path / "2.bin")
    assert info.value.seen == 100 and info.value.limit == 50
    assert list(tmp_path.iterdir()) == []


async def test_stream_above_cap_is_aborted(tmp_path: Path) -> None:
    """Without Content-Length the stream stops as soon as it passes the cap; nothing is kept."""
    body = _Chunks([b"a" * 40, b"b" * 40, b"c" * 40, b"d" * 40])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=body)

    async with _downloader(httpx.MockTransport(handler), max_bytes=50) as cdn:
        with pytest.raises(AssetTooLargeError) as info:
            await cdn.download(CDN, tmp_path / "3.bin")
    assert info.value.seen == 80
    assert body.sent == 2
    assert list(tmp_path.iterdir()) == []


async def test_short_body_is_retried_then_refused(tmp_path: Path) -> None:
    """A body shorter than its Content-Length is transient: retried, then reported."""
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(200, stream=_Chunks([b"abc"]), headers={"content-length": "10"})

    async with _downloader(httpx.MockTransport(handler), attempts=3) as cdn:
        with pytest.raises(AssetDownloadError) as info:
            await cdn.download(CDN, tmp_path / "4.bin")
    assert calls == 3
    assert "Content-Length said 10" in info.value.reason
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("status", [400, 403, 410])
async def test_refused_signature_is_expired(tmp_path: Path, status: int) -> None:
    """403/410/400 from the CDN mean the signed URL is no longer accepted."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=b"<Error><Code>AccessDenied</Code></Error>")

    async with _downloader(httpx.MockTransport(handler)) as cdn:
        with pytest.raises(UrlExpiredError):
            await cdn.download(CDN, tmp_path / "5.bin")


def test_url_expiry_parameters() -> None:
    """CloudFront Expires and S3 X-Amz-Date + X-Amz-Expires are read; others are not expired."""
    assert url_expired("https://c/x?Expires=100&Signature=s", 100.0)
    assert not url_expired("https://c/x?Expires=100&Signature=s", 99.0)
    amz = "https://b.s3.amazonaws.com/x?X-Amz-Date=20260101T000000Z&X-Amz-Expires=900"
    assert url_expired(amz, 1767225600 + 900)
    assert not url_expired(amz, 1767225600 + 899)
    assert not url_expired("https://c/x.md", 1e12)
    assert url_path(CDN) == "/files/report.md"


async def test_a_body_past_the_memory_bound_is_streamed_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past IN_MEMORY_MAX the chunks go to the part file one by one; the result is the same."""
    from pplx_archiver.shell.net import download

    monkeypatch.setattr(download, "IN_MEMORY_MAX", 10)
    chunks = [bytes([65 + i]) * 7 for i in range(6)]
    body = b"".join(chunks)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Chunks(chunks))

    async with _downloader(httpx.MockTransport(handler)) as cdn:
        got = await cdn.download(CDN, tmp_path / "big.bin")
    assert got.path.read_bytes() == body and got.size == 42
    assert got.sha256 == hashlib.sha256(body).hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin"]
    assert got.head == body  # shorter than HEAD_BYTES: all of it, across the chunks

    monkeypatch.setattr(download, "HEAD_BYTES", 10)
    async with _downloader(httpx.MockTransport(handler)) as cdn:
        got = await cdn.download(CDN, tmp_path / "head.bin")
    assert got.head == body[:10]  # the first bytes only, across two chunks
    (tmp_path / "head.bin").unlink()

    async with _downloader(httpx.MockTransport(handler), max_bytes=30) as cdn:
        with pytest.raises(AssetTooLargeError):
            await cdn.download(CDN, tmp_path / "huge.bin")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin"]  # no part file left

    def short(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Chunks(chunks), headers={"content-length": "50"})

    async with _downloader(httpx.MockTransport(short), attempts=1) as cdn:
        with pytest.raises(AssetDownloadError, match="Content-Length said 50"):
            await cdn.download(CDN, tmp_path / "short.bin")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin"]  # neither part nor name


async def test_a_429_waits_its_retry_after_and_pauses_no_other_download(tmp_path: Path) -> None:
    """The refused download sleeps its Retry-After; the limiter sets no shared pause."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    answers = iter([429, 200])

    def handler(request: httpx.Request) -> httpx.Response:
        if next(answers) == 429:
            return httpx.Response(429, headers={"retry-after": "3"})
        return httpx.Response(200, content=b"ok")

    async with CdnDownloader(transport=httpx.MockTransport(handler), sleep=record) as cdn:
        got = await cdn.download(CDN, tmp_path / "0.bin")
        snap = cdn.limiter.snapshot()
    assert got.path.read_bytes() == b"ok"
    assert 3.0 in waits
    assert snap.throttles == 1 and snap.pauses == 0 and cdn.limiter.pause_remaining() == 0.0


async def test_downloads_from_the_api_origin_share_its_budget(tmp_path: Path) -> None:
    """A file served by the API's own server passes the API's limiter too (one server, one
    budget: its 429 cuts that limiter); a file on another host passes the CDN's only."""
    from pplx_archiver.shell.net.download import OriginBudget
    from pplx_archiver.shell.net.ratelimit import RateLimiter

    refuse = {"https://www.perplexity.ai/__cdn/a.png?Signature=x": 1}

    def handler(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if refuse.get(url):
            refuse[url] -= 1
            return httpx.Response(429, headers={"retry-after": "0"})
        return httpx.Response(200, content=b"png")

    api = RateLimiter(10.0, 5)
    shared = OriginBudget.of("HTTPS://www.perplexity.ai", api)
    async with _downloader(httpx.MockTransport(handler), shared=shared) as cdn:
        await cdn.download("https://www.perplexity.ai/__cdn/a.png?Signature=x", tmp_path / "a")
        assert api.snapshot().acquired == 2 and api.snapshot().throttles == 1
        await cdn.download(CDN, tmp_path / "b")
        assert api.snapshot().acquired == 2  # another origin: the CDN's budget only
        assert cdn.limiter.snapshot().acquired == 3
    assert not shared.covers("https://www.perplexity.ai:8443/x")
    assert not shared.covers("http://www.perplexity.ai/x")


@pytest.mark.parametrize("durable", [True, False])
async def test_fsync_and_thread_hops_follow_durability(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool
) -> None:
    """A durable download is fsynced in a worker thread; without durability (a group-committed
    archive) nothing is fsynced and a small body is written without a thread hop, a larger
    one still in a worker thread."""
    import os

    import anyio.to_thread

    from pplx_archiver.shell.net import download

    fsynced: list[int] = []
    hops: list[str] = []
    real_hop = anyio.to_thread.run_sync

    async def counting_hop(func: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(func, "__name__", "?"))
        return await real_hop(func, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", lambda fd: fsynced.append(fd))
    monkeypatch.setattr(download.anyio.to_thread, "run_sync", counting_hop)
    monkeypatch.setattr(download, "INLINE_MAX", 100)
    small, large = b"s" * 50, b"L" * 500

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=large if "large" in request.url.path else small)

    async with _downloader(httpx.MockTransport(handler), durable=durable) as cdn:
        got_small = await cdn.download(CDN, tmp_path / "small.bin")
        got_large = await cdn.download(CDN.replace("report", "large"), tmp_path / "large.bin")
    assert got_small.path.read_bytes() == small and got_large.path.read_bytes() == large
    assert sorted(p.name for p in tmp_path.iterdir()) == ["large.bin", "small.bin"]
    assert len(fsynced) == (2 if durable else 0)
    assert hops == ["_write_part", "_write_part"] if durable else hops == ["_write_part"]


async def test_a_finished_download_leaves_no_cyclic_garbage(tmp_path: Path) -> None:
    """A download's response is freed by reference counting once its body is staged."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"# report\n")

    async with _downloader(httpx.MockTransport(handler)) as cdn:
        await cdn.download(CDN, tmp_path / "warm.bin")
        gc.collect()
        gc.disable()
        try:
            for n in range(20):
                await cdn.download(CDN, tmp_path / f"{n}.bin")
            found = gc.collect()
        finally:
            gc.enable()
    assert found < 20


@pytest.mark.parametrize(
    "location",
    ["https://evil.example/x.md", "http://ppl-ai-file-upload.s3.amazonaws.com/x.md"],
    ids=["other-host", "https-to-http"],
)
async def test_a_redirect_off_the_asset_stores_is_not_stored(tmp_path: Path, location: str) -> None:
    """A CDN redirect to another host (or down to http) is refused, nothing staged (issue 44)."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "d2z0o16i8xm8ak.cloudfront.net":
            return httpx.Response(302, headers={"location": location})
        return httpx.Response(200, content=b"not the asset")

    seen: list[str] = []

    async def hosts(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        return handler(request)

    async with _downloader(httpx.MockTransport(hosts)) as cdn:
        with pytest.raises(AssetDownloadError, match="not stored") as caught:
            await cdn.download(CDN, tmp_path / "2.bin")
    assert not caught.value.transient
    assert list(tmp_path.iterdir()) == []
    assert seen == ["d2z0o16i8xm8ak.cloudfront.net"]  # the refused hop is never sent
