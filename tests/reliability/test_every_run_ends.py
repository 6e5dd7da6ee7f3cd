"""Every run ends: a trickling response and a huge body fail their thread, the run goes on."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pplx_archiver.errors import PplxError
from pplx_archiver.settings import Settings, load_settings
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.reliability.conftest import index_statuses, run_cli, sim_args, sim_get

THREADS = 20


class Misbehave:
    """ASGI middleware: detail requests of chosen threads trickle or send an endless body."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.trickle: set[str] = set()
        self.huge: set[str] = set()
        self.hits: Counter[str] = Counter()
        self.huge_bytes_sent = 0
        self.stop = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        last = path.rsplit("/", 1)[-1]
        if scope["type"] == "http" and path.startswith("/rest/thread/"):
            gone = asyncio.Event()

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone.set()

            if last in self.trickle or last in self.huge:
                watcher = asyncio.create_task(watch())
            if last in self.trickle:
                self.hits[last] += 1
                await self._start(send)
                while not (self.stop or gone.is_set()):  # one byte every 0.2 s until hung up
                    await send({"type": "http.response.body", "body": b" ", "more_body": True})
                    await asyncio.sleep(0.2)
                await send({"type": "http.response.body", "body": b"{}"})
                watcher.cancel()
                return
            if last in self.huge:
                self.hits[last] += 1
                await self._start(send)
                chunk = b"x" * 65536
                for _ in range(3000):  # up to ~200 MB, until the client hangs up
                    if self.stop or gone.is_set():
                        break
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    self.huge_bytes_sent += len(chunk)
                    await asyncio.sleep(0)
                await send({"type": "http.response.body", "body": b""})
                watcher.cancel()
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _start(send: Any) -> None:
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})


@pytest.fixture
def bad_sim() -> Iterator[tuple[RunningSim, Misbehave]]:
    """A small simulated account behind the misbehaving middleware."""
    holder: list[Misbehave] = []

    def wrap(app: Any) -> Any:
        holder.append(Misbehave(app))
        return holder[0]

    with serve_in_thread(SimConfig(threads=THREADS, seed=31), wrap=wrap) as sim:
        try:
            yield sim, holder[0]
        finally:
            holder[0].stop = True


def _ids(thread: dict[str, Any]) -> set[str]:
    return {str(thread[k]) for k in ("uuid", "slug") if thread.get(k)}


def test_trickle_and_huge_body_fail_their_threads_only(
    bad_sim: tuple[RunningSim, Misbehave], tmp_path: Path
) -> None:
    """With small limits the trickling thread fails on its deadline, the huge one on the size
    cap (read once, not retried), every other thread is archived and the run ends (exit 1)."""
    sim, bad = bad_sim
    threads = sim_get(sim, "/__sim/truth")["threads"]
    trickle, huge = threads[3], threads[7]
    bad.trickle, bad.huge = _ids(trickle), _ids(huge)
    out = tmp_path / "a"
    args = ["batch", *sim_args(sim, out, "--rate", "1000", "--burst", "100")]
    args += ["--request-deadline", "2", "--total-deadline", "8", "--max-body-bytes", "4194304"]
    result = run_cli(args, out)
    assert result.exit_code == 1, result.output
    statuses = index_statuses(out)
    assert statuses[trickle["uuid"]] == "failed"
    assert statuses[huge["uuid"]] == "failed"
    assert sum(1 for s in statuses.values() if s == "done") == THREADS - 2, [
        (e["thread_uuid"][:8], e["error_kind"], e["error"][-90:])
        for e in result.events
        if e["event"] == "THREAD_FAILED"
    ]
    failed = {e["thread_uuid"]: e for e in result.events if e["event"] == "THREAD_FAILED"}
    assert failed[trickle["uuid"]]["error_kind"] == "DeadlineError"
    assert "deadline" in failed[trickle["uuid"]]["error"]
    assert failed[huge["uuid"]]["error_kind"] == "BodyTooLargeError"
    assert sum(bad.hits[i] for i in _ids(huge)) == 1  # a cap breach is not retried
    assert bad.huge_bytes_sent < 64 * 1024 * 1024  # reading stopped long before the end


@pytest.mark.parametrize(
    "name", ["rate", "request_deadline", "download_deadline", "total_deadline"]
)
@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_bad_numbers_are_usage_errors(name: str, value: str) -> None:
    """nan, inf and negative limits are refused as configuration errors."""
    with pytest.raises(PplxError) as info:
        load_settings({name: value}, env={})
    assert info.value.exit_code == 2


def test_default_limits_bound_a_trickle_to_five_minutes() -> None:
    """With the defaults a request, retries included, is cut at 5 minutes at the latest."""
    settings = Settings()
    assert settings.total_deadline <= 300
    assert settings.request_deadline <= settings.total_deadline
    assert settings.download_deadline <= settings.total_deadline


def test_trickling_download_fails_on_its_deadline(tmp_path: Path) -> None:
    """An asset download that trickles is cut by its deadline, retries included."""
    import anyio
    import httpx

    from pplx_archiver.shell.net.download import CdnDownloader
    from pplx_archiver.shell.net.download_errors import AssetDownloadError

    calls: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        calls.append(1)
        headers = [(b"content-type", b"application/octet-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        while True:
            await send({"type": "http.response.body", "body": b"x", "more_body": True})
            await anyio.sleep(0.05)

    async def main() -> str:
        downloader = CdnDownloader(
            deadline=0.3, total_deadline=1.0, transport=httpx.ASGITransport(app=app)
        )
        try:
            await downloader.download("http://cdn.test/a.bin", tmp_path / "a.bin")
        except AssetDownloadError as exc:
            return exc.reason
        finally:
            await downloader.aclose()
        return "completed"

    reason = anyio.run(main)
    assert "within" in reason
    assert calls  # it was tried
    assert not list(tmp_path.glob("*.part"))
