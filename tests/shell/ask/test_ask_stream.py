"""The ask request at the HTTP seam: non-200 answers, JSON bodies and broken streams."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from pplx_archiver import errors
from pplx_archiver.settings import Settings
from pplx_archiver.shell.ask.ask import AskOptions, run_ask
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.server import create_app

ASK = "/rest/sse/perplexity_ask"
SSE = {"content-type": "text/event-stream"}
LIMITED = {"detail": {"error_code": "RATE_LIMITED"}}


class AskAnswers(httpx.AsyncBaseTransport):
    """The simulator, except that the ask request gets ``answer``."""

    def __init__(self, answer: httpx.Response) -> None:
        self.app = create_app(SimConfig(threads=2))
        self.sim = httpx.ASGITransport(self.app)
        self.answer = answer

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == ASK:
            return self.answer
        return await self.sim.handle_async_request(request)


async def _ask(tmp_path: Path, answer: httpx.Response) -> None:
    transport = AskAnswers(answer)
    cookies = transport.app.sim.sessions.cookies()
    token = "; ".join(f"{k}={v}" for k, v in cookies.items())
    settings = Settings(
        base_url="http://sim.test",
        session_token=token,
        out_dir=tmp_path / "a",
        config_dir=tmp_path / "cfg",
        rate=1000.0,
        burst=100,
    )
    await run_ask(settings, AskOptions(prompt="q", export=False), transport=transport)


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (httpx.Response(429, json=LIMITED), errors.AskRateLimitedError),
        (httpx.Response(403, html="<html>Just a moment...</html>"), errors.ChallengeError),
        (httpx.Response(200, json={"error_code": "RATE_LIMIT"}), errors.AskRateLimitedError),
        (httpx.Response(200, json={}), errors.AskSessionError),
        (httpx.Response(200, text="", headers=SSE), errors.AskSessionError),
        (
            httpx.Response(200, text='data: {"backend_uuid": "b"}\n\ndata: {"sta', headers=SSE),
            errors.AskIncompleteError,
        ),
    ],
)  # fmt: skip
async def test_ask_answers_map_to_errors(
    tmp_path: Path, answer: httpx.Response, error: type[Exception]
) -> None:
    """Each kind of bad answer to the ask request raises its own error, never a crash."""
    with pytest.raises(error):
        await _ask(tmp_path, answer)
    assert not (tmp_path / "a" / "index" / "archive.sqlite").exists()
