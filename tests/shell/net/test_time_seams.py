"""Waits of a run end under virtual time: no limiter spin on float rounding, no real-time CDN.

A virtual clock advances by exactly the wait it is asked for. Two ways a whole run under such
a clock never finished: the limiter asked for waits below the clock's resolution forever, and
the CDN downloader paused on the real clock while the server's budget refilled only in
virtual time.
"""

from __future__ import annotations

import types
from pathlib import Path

import anyio
import httpx
import pytest

from pplx_archiver.shell.archive.assets import open_assets
from pplx_archiver.shell.net.ratelimit import RateLimiter
from tests.shell.fake_time import StepTime, VirtualTime

# Real seconds a test may take before it fails instead of hanging (each needs well under 1 s).
DEADLINE_S = 20


@pytest.mark.parametrize(
    ("start", "rate"), [(1000.0, 100.0), (1001.02, 25.0), (4096.0, 7.0), (86400.0, 0.3)]
)
async def test_acquire_ends_when_the_clock_advances_by_exactly_the_wait(
    start: float, rate: float
) -> None:
    """Paced acquires finish on a step clock at any magnitude (rounding left 0.999… tokens)."""
    t = StepTime(start)
    lim = RateLimiter(rate, 1, clock=t.clock, sleep=t.sleep)
    with anyio.fail_after(DEADLINE_S):
        for _ in range(200):
            await lim.acquire()
    assert t.now - start == pytest.approx(199 / rate)
    assert len(t.sleeps) < 400  # one wait per token (a few more for rounding), no spin
    assert lim.snapshot().acquired == 200


async def test_concurrent_acquires_end_under_virtual_time() -> None:
    """Eight tasks sharing one limiter under VirtualTime get 50 tokens each at the set rate."""
    vt = VirtualTime(start=1001.02)
    lim = RateLimiter(100.0, 4, clock=vt.clock, sleep=vt.sleep)
    start = vt.now

    async def worker() -> None:
        for _ in range(50):
            await lim.acquire()

    with anyio.fail_after(DEADLINE_S):
        await vt.run(*[worker] * 8)
    assert lim.snapshot().acquired == 400
    assert vt.now - start == pytest.approx((400 - 4) / 100.0)


async def test_nested_and_parallel_virtual_clocks_finish() -> None:
    """A run nested in a run of the same clock, beside another clock's run, all finish."""
    a, b = VirtualTime(), VirtualTime(start=5.0)

    async def nap_a() -> None:
        await a.sleep(3.0)

    async def nested() -> None:
        await a.run(nap_a, nap_a)
        await a.sleep(2.0)

    async def nap_b() -> None:
        for _ in range(10):
            await b.sleep(0.5)

    with anyio.fail_after(DEADLINE_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(a.run, nested)
            tg.start_soon(b.run, nap_b)
    assert (a.now, b.now) == (1005.0, 10.0)


async def test_cdn_downloads_wait_on_the_run_clock(tmp_path: Path) -> None:
    """open_assets paces the CDN with the sleep and clock it is given (a 429's 30 s wait)."""
    answers = iter([httpx.Response(429, headers={"retry-after": "30"})])

    def cdn(request: httpx.Request) -> httpx.Response:
        return next(answers, httpx.Response(200, content=b"report body"))

    t = StepTime()
    start = t.now
    settings = types.SimpleNamespace(
        asset_concurrency=2,
        max_asset_bytes=1000,
        asset_rate=5.0,
        request_timeout=10.0,
        download_deadline=240.0,
        total_deadline=300.0,
        proxy=None,
    )
    archive = types.SimpleNamespace(out=tmp_path)
    transport = httpx.MockTransport(cdn)
    with anyio.fail_after(DEADLINE_S):
        async with open_assets(
            settings, None, archive, transport=transport, sleep=t.sleep, clock=t.clock
        ) as session:
            assert session.downloader is not None
            dest = tmp_path / "staged.bin"
            got = await session.downloader.download("https://cdn.test/a/r.md?Expires=9", dest)
    assert got.path.read_bytes() == b"report body"
    # The refused download's wait (its Retry-After) passed on the injected clock.
    assert t.sleeps == [30.0] and t.now - start == 30.0
