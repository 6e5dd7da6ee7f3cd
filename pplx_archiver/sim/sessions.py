"""Simulated sessions: Era B / Era C cookies, the account header, token rotation.

Era B: ``__Secure-next-auth.session-token`` alone authenticates. Era C:
``__Secure-pplx.session.<account>`` + ``__Host-pplx-last-active-account`` authenticate, and
thread endpoints also need ``x-pplx-account: <account>``. With ``rotate_session_every`` the
server hands out a new token value through ``Set-Cookie``; the old one keeps working for a
grace number of requests. The ``Set-Cookie`` has no ``Secure`` attribute because the
simulator is served over plain HTTP on loopback (a client jar would not send it back).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from pplx_archiver.sim.config import SimConfig

ERA_B_COOKIE = "__Secure-next-auth.session-token"
ERA_C_PREFIX = "__Secure-pplx.session."
LAST_ACTIVE = "__Host-pplx-last-active-account"

OK = "ok"
LOGGED_OUT = "logged_out"
NO_ACCOUNT = "no_account"


def token_for(seed: int, generation: int) -> str:
    """The session token value of one rotation generation."""
    digest = hashlib.sha256(f"session:{seed}:{generation}".encode()).hexdigest()
    return f"eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..{digest[:22]}.{digest[22:60]}.{digest[60:]}"


class Sessions:
    """Checks request cookies/headers and rotates the token."""

    def __init__(self, config: SimConfig, account_id: str) -> None:
        self.config = config
        self.account_id = account_id
        self.generation = 0
        self.count = 0  # authenticated requests seen in this generation
        self.cookie_name = ERA_B_COOKIE if config.era == "b" else f"{ERA_C_PREFIX}{account_id}"

    def current_token(self) -> str:
        """The token value a fresh client should send now."""
        return token_for(self.config.seed, self.generation)

    def cookies(self) -> dict[str, str]:
        """Cookie jar (name → value) for the configured era."""
        jar = {self.cookie_name: self.current_token()}
        if self.config.era == "c":
            jar[LAST_ACTIVE] = self.account_id
        return jar

    def _valid(self, token: str | None) -> bool:
        if not self.config.logged_in or not token:
            return False
        if token == self.current_token():
            return True
        grace = self.config.rotation_grace
        return (
            self.generation > 0
            and token == token_for(self.config.seed, self.generation - 1)
            and (grace is None or self.count < grace)
        )

    def check(
        self, cookies: Mapping[str, str], headers: Mapping[str, str], thread_endpoint: bool
    ) -> str:
        """``ok`` / ``logged_out`` / ``no_account`` for one request."""
        if not self._valid(cookies.get(self.cookie_name)):
            return LOGGED_OUT
        if (
            self.config.era == "c"
            and thread_endpoint
            and headers.get("x-pplx-account") != self.account_id
        ):
            return NO_ACCOUNT
        return OK

    def after_ok(self) -> str | None:
        """Count one authenticated request; a ``Set-Cookie`` value when the token rotates."""
        self.count += 1
        every = self.config.rotate_session_every
        if every > 0 and self.count >= every:
            self.generation += 1
            self.count = 0
            return (
                f"{self.cookie_name}={self.current_token()}; Path=/; Secure; HttpOnly; SameSite=Lax"
            )
        return None
