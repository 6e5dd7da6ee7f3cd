"""The API client of a run: one httpx client, browser-like requests, and the one error seam.

:class:`ApiClient` owns one :class:`httpx.AsyncClient` per run (pool sized to the run's
concurrency, redirects never followed), the account-wide
:class:`~pplx_archiver.shell.net.ratelimit.RateLimiter` and the
:class:`~pplx_archiver.shell.net.retry.Retrier`. Every call goes concurrency window → limiter →
request → seam → retry policy; a 503 shrinks the
:class:`~pplx_archiver.shell.net.window.ConcurrencyWindow` to what the server took
(``SERVER_BUSY``), so a server that limits requests in flight is not flooded with retries.
``/rest/*`` calls carry ``version=2.18&source=default``; every call carries the browser-like
headers of docs/dev/api.md §1 with a fresh ``x-request-id`` and, once known, ``x-pplx-account``.

Cookies: httpx's cookie jar is disabled. The ``Cookie`` header is built from the session's
cookies and attached only to requests for the API origin (scheme, host and port of the base
URL), so nothing of the session reaches a CDN, an asset host or a redirect target.
``Set-Cookie`` answers of the API origin are applied to the session; when a session cookie
rotates, ``on_cookie_rotated`` receives the new set and ``SESSION_COOKIE_ROTATED`` is logged
(names only, never values). A request rejected as logged out (401 / JSON 403) that was sent
with a session cookie the server has rotated since (another response's ``Set-Cookie`` arrived
while it was in flight) is sent once more with the newest cookie (``STALE_COOKIE_RESENT``)
before the rejection counts: concurrent requests race every rotation.

:func:`~pplx_archiver.shell.net.seam.map_response` and
:func:`~pplx_archiver.shell.net.seam.map_transport_error` (the seam, re-exported here) are the
only places where HTTP statuses, bodies and httpx exceptions become errors.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import anyio
import httpx

from pplx_archiver.errors import (
    BodyTooLargeError,
    DeadlineError,
    FetchError,
    SessionExpiredError,
    TransientError,
)
from pplx_archiver.logconfig import get_logger, register_secret
from pplx_archiver.settings import Settings
from pplx_archiver.shell.net.client_stats import ClientStats
from pplx_archiver.shell.net.cookies import LAST_ACTIVE_COOKIE, JarlessClient, cookie_header
from pplx_archiver.shell.net.download import OriginBudget
from pplx_archiver.shell.net.ratelimit import Clock, RateLimiter, Sleep
from pplx_archiver.shell.net.retry import Retrier, RetryPolicy
from pplx_archiver.shell.net.seam import (
    apply_set_cookies,
    map_response,
    map_transport_error,
    parse_retry_after,
    parse_set_cookie,
    read_capped,
    request_kind,
)
from pplx_archiver.shell.net.transport import client_transport, release
from pplx_archiver.shell.net.window import ConcurrencyWindow

__all__ = ["ApiClient", "ClientStats", "map_response", "parse_retry_after", "parse_set_cookie"]

API_VERSION = "2.18"
REST_PARAMS: tuple[tuple[str, str], ...] = (("version", API_VERSION), ("source", "default"))
USER_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
)
SESSION_COOKIE_ROTATED = "SESSION_COOKIE_ROTATED"
# A request rejected with a session cookie rotated while it was in flight, sent again with the
# newest one (fields: path).
STALE_COOKIE_RESENT = "STALE_COOKIE_RESENT"
# A 503 made the concurrency window shrink (fields: path, concurrency, was).
SERVER_BUSY = "SERVER_BUSY"

Params = Mapping[str, Any] | Sequence[tuple[str, Any]]
CookieCallback = Callable[[Mapping[str, str]], None]

_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


# --------------------------------------------------------------------------- the client


class ApiClient:
    """One run's connection to the API: pooled, paced, retried, with a private cookie set."""

    def __init__(
        self,
        settings: Settings,
        *,
        cookies: Mapping[str, str],
        account_id: str | None = None,
        limiter: RateLimiter | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = anyio.sleep,
        clock: Clock = time.monotonic,
        rand: Callable[[], float] = random.random,
        on_cookie_rotated: CookieCallback | None = None,
    ) -> None:
        base = httpx.URL(settings.base_url.rstrip("/"))
        self._base = str(base)
        self._origin = (base.scheme, base.host, base.port)
        self._origin_text = f"{base.scheme}://{base.netloc.decode('ascii')}"
        self._cookies: dict[str, str] = dict(cookies)
        for name, value in self._cookies.items():
            if name != LAST_ACTIVE_COOKIE:  # an account id, not a secret
                register_secret(value)
        self.account_id = account_id
        self.limiter = limiter or RateLimiter(
            settings.rate, settings.burst, clock=clock, sleep=sleep
        )
        self.window = ConcurrencyWindow(settings.concurrency)
        self.retrier = Retrier(
            RetryPolicy.from_settings(settings), self.limiter, sleep=sleep, rand=rand
        )
        self._on_cookie_rotated = on_cookie_rotated
        self._deadline = settings.request_deadline
        self._total_deadline = settings.total_deadline
        self._max_body, self._max_values = settings.max_body_bytes, settings.max_thread_values
        transport, mounts = client_transport(
            settings.concurrency,
            proxy=settings.proxy,
            transport=transport,
            impersonate=settings.impersonate,
            timeout=settings.request_timeout,
        )
        self._http = JarlessClient(
            transport=transport,
            mounts=mounts,
            limits=httpx.Limits(
                max_connections=settings.concurrency,
                max_keepalive_connections=settings.concurrency,
            ),
            timeout=httpx.Timeout(
                settings.request_timeout, connect=min(30.0, settings.request_timeout)
            ),
            follow_redirects=False,
            trust_env=False,
        )
        self._log = get_logger()
        self._requests: Counter[str] = Counter()
        self._statuses: Counter[int] = Counter()
        self._errors: Counter[str] = Counter()
        self._rotations = 0

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    @property
    def base_url(self) -> str:
        """The API base URL of this run."""
        return self._base

    def budget(self) -> OriginBudget:
        """This server's request budget, for downloads from the API's own origin."""
        return OriginBudget.of(self._base, self.limiter)

    @property
    def cookies(self) -> Mapping[str, str]:
        """The session's current cookies (rotations applied). Secret: never log them."""
        return dict(self._cookies)

    def stats(self) -> ClientStats:
        """A snapshot of the request counters."""
        return ClientStats(
            requests_by_kind=dict(self._requests),
            responses_by_status=dict(self._statuses),
            errors_by_kind=dict(self._errors),
            retries=self.retrier.retries,
            rate_limited=self.retrier.rate_limited,
            challenges=self.retrier.challenges,
            cookie_rotations=self._rotations,
            limiter=self.limiter.snapshot(),
        )

    async def get_json(
        self,
        path: str,
        params: Params | None = None,
        *,
        kind: str | None = None,
        auth_fatal: bool = False,
    ) -> tuple[Any, bytes]:
        """GET an API path; returns the decoded JSON and the body bytes verbatim."""
        return await self.request_json("GET", path, params=params, kind=kind, auth_fatal=auth_fatal)

    async def post_json(
        self,
        path: str,
        json: Any,
        params: Params | None = None,
        *,
        kind: str | None = None,
        auth_fatal: bool = False,
    ) -> tuple[Any, bytes]:
        """POST a JSON body to an API path; returns the decoded JSON and the body bytes."""
        return await self.request_json(
            "POST", path, params=params, json=json, kind=kind, auth_fatal=auth_fatal
        )

    async def request_json(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        json: Any = None,
        kind: str | None = None,
        auth_fatal: bool = False,
        attempts: int | None = None,
    ) -> tuple[Any, bytes]:
        """One API call through the rate limiter, the seam and the retry policy."""
        if not path.startswith("/"):
            raise ValueError(f"API path must start with '/', got {path!r}")
        label = kind or request_kind(path)

        async def attempt() -> tuple[Any, bytes]:
            await self.window.acquire()
            try:
                await self.limiter.acquire()
                generation = self._rotations
                try:
                    answer = await self._send_once(method, path, params, json, label)
                except SessionExpiredError:
                    if self._rotations == generation:
                        raise
                    self._log.info(STALE_COOKIE_RESENT, path=path)
                    await self.limiter.acquire()
                    answer = await self._send_once(method, path, params, json, label)
            except TransientError as exc:
                if exc.status == 503:
                    before = self.window.limit
                    limit = self.window.on_overload()
                    if limit != before:
                        self._log.info(SERVER_BUSY, path=path, concurrency=limit, was=before)
                raise
            finally:
                self.window.release()
            self.window.on_success()
            return answer

        try:
            with anyio.fail_after(self._total_deadline):
                return await self.retrier.call(
                    attempt, path=path, auth_fatal=auth_fatal, attempts=attempts
                )
        except TimeoutError:
            self._errors["deadline"] += 1
            raise DeadlineError(
                f"{path}: no complete answer within {self._total_deadline:g} s, retries "
                "included (total deadline)",
                url=path,
            ) from None

    @contextlib.asynccontextmanager
    async def stream_post(
        self, path: str, json: Any, *, kind: str | None = None
    ) -> AsyncIterator[httpx.Response]:
        """POST and yield the open response of a 200 stream; other answers raise via the seam.

        Paced by the limiter but never retried: a request that starts an ask must not be
        sent twice. The caller reads the body (``aiter_text``) inside the block.
        """
        label = kind or request_kind(path)
        await self.limiter.acquire()
        url = self._url(path, None)
        headers = self._headers(url) | {"Accept": "text/event-stream"}
        request = self._http.build_request("POST", url, json=json, headers=headers)
        self._requests[label] += 1
        try:
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise map_transport_error(exc, path) from exc
        try:
            self._statuses[response.status_code] += 1
            self._absorb_cookies(response)
            ctype = response.headers.get("content-type", "").lower()
            if response.status_code != 200 or "text/html" in ctype:
                await response.aread()
                map_response(response, expect_json=False)
                raise FetchError(
                    f"expected an event stream, got {ctype or 'no content type'}",
                    status=response.status_code,
                    url=path,
                )
            yield response
        except httpx.HTTPError as exc:
            raise map_transport_error(exc, path) from exc
        finally:
            await response.aclose()
            release(response)

    def _query(self, path: str, params: Params | None) -> list[tuple[str, Any]]:
        pairs = list(params.items()) if isinstance(params, Mapping) else list(params or ())
        if path.startswith("/rest/"):
            present = {name for name, _ in pairs}
            pairs += [(k, v) for k, v in REST_PARAMS if k not in present]
        return pairs

    def _url(self, path: str, params: Params | None) -> httpx.URL:
        """The request URL with its query (replacing any in ``path``, as httpx's ``params=``
        does), parsed once: a parsed URL given ``params`` would be parsed again."""
        return httpx.URL(self._base + path, params=self._query(path, params))

    def _is_api_origin(self, url: httpx.URL) -> bool:
        return (url.scheme, url.host, url.port) == self._origin

    def _headers(self, url: httpx.URL) -> dict[str, str]:
        headers = {
            "User-Agent": USER_AGENT,
            "Accept": "application/json, text/plain, */*",
            "Accept-Language": "en-US,en;q=0.9",
            "Referer": self._origin_text + "/",
            "Origin": self._origin_text,
            "x-app-apiclient": "default",
            "x-app-apiversion": API_VERSION,
            "x-request-id": str(uuid.uuid4()),
            "sec-fetch-dest": "empty",
            "sec-fetch-mode": "cors",
            "sec-fetch-site": "same-origin",
        }
        if self.account_id:
            headers["x-pplx-account"] = self.account_id
        if self._cookies and self._is_api_origin(url):
            headers["Cookie"] = cookie_header(self._cookies)
        return headers

    async def _send_once(
        self, method: str, path: str, params: Params | None, json: Any, kind: str
    ) -> tuple[Any, bytes]:
        url = self._url(path, params)
        request = self._http.build_request(method, url, json=json, headers=self._headers(url))
        self._requests[kind] += 1
        try:
            # One deadline for the whole request: connect, headers and every body byte.
            with anyio.fail_after(self._deadline):
                streamed = await self._http.send(request, stream=True)
                try:
                    body = await read_capped(streamed, self._max_body)
                finally:
                    await streamed.aclose()
                    release(streamed)
        except TimeoutError:
            self._errors["deadline"] += 1
            raise DeadlineError(
                f"{path}: no complete answer within {self._deadline:g} s (request deadline)",
                url=path,
            ) from None
        except BodyTooLargeError:
            self._errors["too_large"] += 1
            raise
        except httpx.HTTPError as exc:
            error = map_transport_error(exc, path)
            self._errors["transient" if isinstance(error, TransientError) else "fetch"] += 1
            raise error from exc
        headers = [
            (k, v) for k, v in streamed.headers.multi_items() if k.lower() not in _DROPPED_HEADERS
        ]
        response = httpx.Response(
            streamed.status_code, headers=headers, content=body, request=request
        )
        self._statuses[response.status_code] += 1
        self._absorb_cookies(response)
        try:
            return map_response(response, max_values=self._max_values)
        except FetchError as exc:
            self._errors[type(exc).__name__] += 1
            raise

    def _absorb_cookies(self, response: httpx.Response) -> None:
        """Apply ``Set-Cookie`` answers of the API origin; report session rotations."""
        if not self._is_api_origin(response.request.url):
            return
        host = (response.request.url.host or "").lower()
        rotated = apply_set_cookies(self._cookies, response.headers.get_list("set-cookie"), host)
        if rotated:
            self._rotations += 1
            self._log.info(
                SESSION_COOKIE_ROTATED, cookie_names=rotated, path=response.request.url.path
            )
            if self._on_cookie_rotated is not None:
                self._on_cookie_rotated(dict(self._cookies))
