"""Shared builders for the network-layer tests: a client on a MockTransport, in virtual time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from pplx_archiver.settings import Settings
from pplx_archiver.shell.net.cookies import NEXT_AUTH_COOKIE
from pplx_archiver.shell.net.http import ApiClient
from tests.shell.fake_time import StepTime

TOKEN = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..first-session-token-value"
BASE = "https://www.perplexity.ai"

Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


def settings(**overrides: Any) -> Settings:
    """Fast settings: a generous rate so pacing never hides what a test looks at."""
    values: dict[str, Any] = {
        "base_url": BASE,
        "rate": 1000.0,
        "burst": 1000,
        "config_dir": Path("/nonexistent-config-dir"),
    }
    values.update(overrides)
    return Settings(**values)


def make_client(
    handler: Handler,
    *,
    time: StepTime | None = None,
    cookies: Mapping[str, str] | None = None,
    rand: float = 0.0,
    **kwargs: Any,
) -> ApiClient:
    """An ApiClient whose requests go to ``handler`` and whose waits take no real time."""
    t = time or StepTime()
    setting_keys = {k: kwargs.pop(k) for k in list(kwargs) if k in Settings.__dataclass_fields__}
    return ApiClient(
        settings(**setting_keys),
        cookies=dict(cookies) if cookies is not None else {NEXT_AUTH_COOKIE: TOKEN},
        transport=httpx.MockTransport(handler),  # type: ignore[arg-type]  # httpx awaits either
        sleep=t.sleep,
        clock=t.clock,
        rand=lambda: rand,
        **kwargs,
    )


def json_response(body: Any, status: int = 200, **headers: str) -> httpx.Response:
    """A JSON answer with the given status and headers."""
    return httpx.Response(status, json=body, headers=headers)
