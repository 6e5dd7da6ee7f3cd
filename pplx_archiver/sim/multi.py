"""Several simulated accounts behind one server: ``create_multi_app(config)``.

With ``SimConfig(accounts=N)`` the server holds N independent simulators (one
:class:`~pplx_archiver.sim.server.SimServer` each, see :func:`account_configs`) and routes
every request by its session: the account whose session cookie the request carries (Era C:
the one named by ``x-pplx-account``, else by ``__Host-pplx-last-active-account``, when the
request carries several accounts' cookies, as a multi-account browser does). A request
with no valid session goes to account 0 (which answers it as logged out). CDN downloads
carry no cookie and go to the account whose asset the URL names. Control endpoints
(``/__sim/*``) take ``?account=K`` (default 0).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from pplx_archiver.sim import sessions
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.faults import FaultMiddleware
from pplx_archiver.sim.server import SimServer, create_app


def account_configs(config: SimConfig) -> list[SimConfig]:
    """The configuration of each simulated account (account 0 is ``config`` itself)."""
    return [
        dataclasses.replace(
            config,
            accounts=1,
            seed=config.seed + k,
            username=config.username if k == 0 else f"{config.username}{k + 1}",
        )
        for k in range(config.accounts)
    ]


class MultiAccountApp:
    """ASGI app routing each request to the simulated account it belongs to."""

    def __init__(self, apps: list[FaultMiddleware]) -> None:
        self.apps = apps
        self.sims: list[SimServer] = [app.sim for app in apps]
        self.sim = self.sims[0]

    def _pick(self, request: Request) -> int:
        path = request.url.path
        if path.startswith("/__sim/"):
            raw = request.query_params.get("account", "0")
            return int(raw) if raw.isdigit() and int(raw) < len(self.apps) else 0
        if path.startswith("/__cdn/"):
            asset = path.split("/")[2] if path.count("/") >= 2 else ""
            for k, sim in enumerate(self.sims):
                if sim.find_asset(asset) is not None:
                    return k
            return 0
        cookies, headers = request.cookies, request.headers
        valid = [
            k
            for k, sim in enumerate(self.sims)
            if sim.sessions.check(cookies, headers, False) != sessions.LOGGED_OUT
        ]
        wanted = headers.get("x-pplx-account") or cookies.get(sessions.LAST_ACTIVE)
        for k in valid:
            if self.sims[k].state.account_id == wanted:
                return k
        return valid[0] if valid else 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.apps[0](scope, receive, send)
            return
        await self.apps[self._pick(Request(scope))](scope, receive, send)


def create_multi_app(
    config: SimConfig, *, clock: Callable[[], float] = time.time
) -> MultiAccountApp | Any:
    """One app serving ``config.accounts`` accounts (a plain simulator app for one)."""
    if config.accounts == 1:
        return create_app(config, clock=clock)
    return MultiAccountApp([create_app(c, clock=clock) for c in account_configs(config)])
