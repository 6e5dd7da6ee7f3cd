"""The server's own behaviour: latency, rate limit, faults, Cloudflare challenges, stats.

:class:`FaultMiddleware` wraps the simulator's ASGI app. Every request outside ``/__sim/``
is numbered; its latency jitter and its fault draw come from ``random.Random`` seeded by
``fault_seed`` and that number, so a sequential client sees the same faults on every run.
Order per request: concurrency limit (503 at once beyond ``max_in_flight``) → latency →
challenge window → token bucket (429) → fault → app.
"""

from __future__ import annotations

import asyncio
import collections
import math
import random
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import orjson

from pplx_archiver.sim.config import SimConfig

if TYPE_CHECKING:
    from pplx_archiver.sim.server import SimServer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Clock = Callable[[], float]

CHALLENGE_HTML = (
    b'<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>'
    b'<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper">'
    b"<h1>www.perplexity.ai</h1><p>Verify you are human by completing the action below.</p>"
    b'<script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script>'
    b"</div></body></html>"
)


class SimulatedDisconnect(Exception):
    """Raised inside the app to drop the connection after the response started."""


class TokenBucket:
    """Classic token bucket: ``rate`` tokens per second, at most ``burst`` saved."""

    def __init__(self, rate: float, burst: int, clock: Clock) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.tokens = float(burst)
        self.stamp = clock()

    def take(self) -> float:
        """0.0 when a token was taken, else the seconds until one will be available."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class Stats:
    """Counters served by ``/__sim/stats``."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Zero every counter."""
        self.requests: collections.Counter[str] = collections.Counter()
        self.statuses: collections.Counter[str] = collections.Counter()
        self.rate_limited = 0
        self.challenges = 0
        self.busy = 0  # 503s of the concurrency limit (max_in_flight)
        self.faults: collections.Counter[str] = collections.Counter()
        self.in_flight = 0
        self.peak_concurrency = 0

    def as_json(self) -> dict[str, Any]:
        """A JSON-able snapshot."""
        return {
            "requests": dict(self.requests),
            "total_requests": sum(self.requests.values()),
            "statuses": dict(self.statuses),
            "rate_limited": self.rate_limited,
            "challenges": self.challenges,
            "busy_503": self.busy,
            "faults": dict(self.faults),
            "in_flight": self.in_flight,
            "peak_concurrency": self.peak_concurrency,
        }


def endpoint_name(path: str) -> str:
    """A stable label for the endpoint a path belongs to."""
    if path.startswith("/rest/thread/list_ask_threads"):
        return "list_ask_threads"
    if path.startswith("/rest/thread/"):
        return "thread_detail"
    if path.startswith("/rest/perplexity_ask/graphql"):
        return "graphql"
    if path.startswith("/rest/collections/"):
        return path.rsplit("/", 1)[-1]
    if path.startswith("/rest/assets/"):
        return "asset_data"
    if path.startswith("/__cdn/"):
        return "cdn"
    if path.startswith("/rest/models/"):
        return "models_config"
    if path.startswith("/api/auth/session"):
        return "session"
    return "other"


async def _send_simple(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class FaultMiddleware:
    """ASGI middleware adding latency, rate limiting, faults, challenges and stats."""

    sim: SimServer  # set by ``server.create_app``: the simulator behind the outermost layer

    def __init__(
        self,
        app: ASGIApp,
        config: SimConfig,
        stats: Stats,
        clock: Clock = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.app = app
        self.config = config
        self.stats = stats
        self.clock = clock
        self.sleep = sleep
        self.number = 0
        self.bucket = TokenBucket(config.rate, config.burst, clock) if config.rate > 0 else None
        self.recent_429: collections.deque[float] = collections.deque()
        self.challenge_until = -math.inf
        self.api_in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path.startswith("/__sim/"):
            await self.app(scope, receive, send)
            return
        stats = self.stats
        stats.requests[endpoint_name(path)] += 1
        stats.in_flight += 1
        stats.peak_concurrency = max(stats.peak_concurrency, stats.in_flight)

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                stats.statuses[str(message["status"])] += 1
            await send(message)

        limit = self.config.max_in_flight
        counted = limit > 0 and not path.startswith("/__cdn/")
        try:
            if counted and self.api_in_flight >= limit:
                stats.busy += 1
                body = b"<html><body><h1>503</h1>too many requests in flight</body></html>"
                await _send_simple(counting_send, 503, body, [(b"content-type", b"text/html")])
                return
            if counted:
                self.api_in_flight += 1
            try:
                await self._handle(scope, receive, counting_send)
            finally:
                if counted:
                    self.api_in_flight -= 1
        finally:
            stats.in_flight -= 1

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        cfg = self.config
        number = self.number
        self.number += 1
        rng = random.Random(f"{cfg.fault_seed}:{number}")
        if cfg.latency_ms > 0 or cfg.jitter_ms > 0:
            await self.sleep((cfg.latency_ms + rng.uniform(0, cfg.jitter_ms)) / 1000.0)
        if self._challenged(number):
            self.stats.challenges += 1
            await _send_simple(
                send,
                403,
                CHALLENGE_HTML,
                [
                    (b"content-type", b"text/html; charset=UTF-8"),
                    (b"server", b"cloudflare"),
                    (b"cf-mitigated", b"challenge"),
                    (b"cf-ray", f"{number:016x}-SJC".encode()),
                ],
            )
            return
        if self.bucket is not None:
            wait = self.bucket.take()
            if wait > 0:
                self._note_429()
                headers = [(b"content-type", b"application/json")]
                if cfg.retry_after:
                    headers.append((b"retry-after", str(max(1, math.ceil(wait))).encode()))
                body = orjson.dumps({"detail": {"error_code": "RATE_LIMITED"}})
                await _send_simple(send, 429, body, headers)
                return
        if cfg.fault_rate > 0 and cfg.fault_kinds and rng.random() < cfg.fault_rate:
            kind = rng.choice(cfg.fault_kinds)
            self.stats.faults[kind] += 1
            await self._fault(kind, scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _challenged(self, number: int) -> bool:
        if self.clock() < self.challenge_until:
            return True
        return any(
            start <= number < start + count for start, count in self.config.challenge_windows
        )

    def _note_429(self) -> None:
        self.stats.rate_limited += 1
        cfg = self.config
        if cfg.challenge_after_429s <= 0:
            return
        now = self.clock()
        self.recent_429.append(now)
        while self.recent_429 and self.recent_429[0] < now - cfg.challenge_window_s:
            self.recent_429.popleft()
        if len(self.recent_429) >= cfg.challenge_after_429s:
            self.challenge_until = now + cfg.challenge_duration_s
            self.recent_429.clear()

    async def _fault(self, kind: str, scope: Scope, receive: Receive, send: Send) -> None:
        if kind in ("500", "502", "503"):
            body = b"<html><body><h1>%s</h1>upstream error</body></html>" % kind.encode()
            await _send_simple(send, int(kind), body, [(b"content-type", b"text/html")])
            return
        if kind == "drop":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", b"4096"),
                    ],
                }
            )
            raise SimulatedDisconnect("simulated dropped connection")
        # truncate: run the app, then cut its body short under the full Content-Length.
        chunks: list[bytes] = []
        start: dict[str, Any] = {}

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        body = b"".join(chunks)
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send(
            {"type": "http.response.start", "status": start.get("status", 200), "headers": headers}
        )
        await send(
            {"type": "http.response.body", "body": body[: len(body) // 2], "more_body": False}
        )
