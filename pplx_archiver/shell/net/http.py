"""The API client of a run: one httpx client, browser-like requests, and the one error seam.

:class:`ApiClient` owns one :class:`httpx.AsyncClient` per run (pool sized to the run's
concurrency, redirects never followed), the account-wide
:class:`~pplx_archiver.shell.net.ratelimit.RateLimiter` and the
:class:`~pplx_archiver.shell.net.retry.Retrier`. Every call goes concurrency window → limiter →
request → seam → retry policy; a 503 shrinks the
:class:`~pplx_archiver.shell.net.ratelimit.ConcurrencyWindow` to what the server took
(``SERVER_BUSY``), so a server that limits requests in flight is not flooded with retries.
``/rest/*`` calls carry ``version=2.18&source=default``; every call carries the browser-like
headers of docs/dev/api.md §1 with a fresh ``x-request-id`` and, once known, ``x-pplx-account``.

Cookies: httpx's cookie jar is disabled. The ``Cookie`` header is built from the session's
cookies and attached only to requests for the API origin (scheme, host and port of the base
URL), so nothing of the session reaches a CDN, an asset host or a redirect target.
``Set-Cookie`` answers of the API origin are applied to the session; when a session cookie
rotates, ``on_cookie_rotated`` receives the new set and ``SESSION_COOKIE_ROTATED`` is logged
(names only, never values).

:func:`map_response` and :func:`map_transport_error` are the only places where HTTP
statuses, bodies and httpx exceptions become the error tree of :mod:`pplx_archiver.errors`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import email.utils
import random
import re
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import anyio
import httpx
import orjson

from pplx_archiver.errors import (
    BodyTooLargeError,
    ChallengeError,
    ConnectionFailedError,
    DeadlineError,
    FetchError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    SessionExpiredError,
    TerminalThreadError,
    TransientError,
)
from pplx_archiver.logconfig import get_logger, register_secret
from pplx_archiver.settings import Settings
from pplx_archiver.shell.net.cookies import (
    LAST_ACTIVE_COOKIE,
    cookie_header,
    empty_cookie_jar,
    is_session_cookie,
)
from pplx_archiver.shell.net.ratelimit import (
    Clock,
    ConcurrencyWindow,
    LimiterSnapshot,
    RateLimiter,
    Sleep,
)
from pplx_archiver.shell.net.retry import Retrier, RetryPolicy

API_VERSION = "2.18"
REST_PARAMS: tuple[tuple[str, str], ...] = (("version", API_VERSION), ("source", "default"))
USER_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
)
SESSION_COOKIE_ROTATED = "SESSION_COOKIE_ROTATED"
# A 503 made the concurrency window shrink (fields: path, concurrency, was).
SERVER_BUSY = "SERVER_BUSY"

Params = Mapping[str, Any] | Sequence[tuple[str, Any]]
CookieCallback = Callable[[Mapping[str, str]], None]

_CHALLENGE_MARKERS = (
    b"just a moment",
    b"challenge-platform",
    b"verify you are human",
    b"cf-chl",
    b"cf_chl",
    b"attention required! | cloudflare",
)
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$")
_TERMINAL = ((b"ENTRY_DELETED", "deleted"), (b"ENTRY_EXPIRED", "expired"))


# --------------------------------------------------------------------------- the seam


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _error_code(decoded: Any) -> str:
    """The API error code of a JSON error body (``detail.error_code`` and variants), or ""."""
    if not isinstance(decoded, dict):
        return ""
    candidates: list[Any] = []
    detail = decoded.get("detail")
    if isinstance(detail, dict):
        candidates += [detail.get("error_code"), detail.get("code")]
    elif isinstance(detail, str):
        candidates.append(detail)
    candidates += [decoded.get("error_code"), decoded.get("code"), decoded.get("error")]
    if decoded.get("status") == "failed":
        candidates.append(decoded.get("_response_type"))
    for value in candidates:
        if isinstance(value, str) and _CODE.match(value):
            return value
    return ""


def _is_html(response: httpx.Response, head: bytes) -> bool:
    ctype = response.headers.get("content-type", "").lower()
    return "text/html" in ctype or head.startswith((b"<!doctype", b"<html"))


def map_response(
    response: httpx.Response, *, expect_json: bool = True, now: float | None = None
) -> tuple[Any, bytes]:
    """Return ``(decoded, raw bytes)`` of a good answer, or raise the matching FetchError."""
    status = response.status_code
    raw = response.content
    where = response.request.url.path
    head = raw[:8192].lstrip().lower()
    html = _is_html(response, head)
    mitigated = response.headers.get("cf-mitigated", "").lower() == "challenge"
    # a 403 carrying a challenge page is one whatever its content type or first tag says
    marked = (html or status == 403) and any(marker in head for marker in _CHALLENGE_MARKERS)
    if mitigated or (html and status == 403) or (marked and status in (403, 429, 503)):
        raise ChallengeError(f"Cloudflare challenge (HTTP {status})", status=status, url=where)
    decoded: Any = None
    is_json = False
    if raw and not html:
        try:
            decoded = orjson.loads(raw)
            is_json = True
        except orjson.JSONDecodeError:
            is_json = False
    code = _error_code(decoded) if is_json else ""
    if status == 429 or code == "RATE_LIMITED":
        retry_after = parse_retry_after(response.headers.get("retry-after"), now)
        raise RateLimitedError(
            f"rate limited (HTTP {status})", status=status, url=where, retry_after=retry_after
        )
    if status == 401:
        raise SessionExpiredError(f"session rejected (HTTP 401) at {where}")
    if status == 403:
        if code:
            raise ForbiddenError(f"forbidden: {code}", status=403, url=where, code=code)
        raise SessionExpiredError(f"session rejected (HTTP 403 without an error code) at {where}")
    if status == 404:
        raise NotFoundError(f"not found (HTTP 404) at {where}", status=404, url=where)
    if status == 400:
        for marker, state in _TERMINAL:
            if marker in raw:
                raise TerminalThreadError(
                    f"thread {state} ({marker.decode()})", status=400, url=where, state=state
                )
    if 300 <= status < 400:
        target = httpx.URL(response.headers.get("location", "")).host or "the same host"
        raise FetchError(
            f"unexpected redirect (HTTP {status}) to {target}; not followed",
            status=status,
            url=where,
        )
    if status >= 500 or status == 408:
        raise TransientError(f"server error (HTTP {status})", status=status, url=where)
    if status >= 400:
        suffix = f": {code}" if code else ""
        raise FetchError(f"request refused (HTTP {status}){suffix}", status=status, url=where)
    if marked:
        raise ChallengeError(f"Cloudflare challenge (HTTP {status})", status=status, url=where)
    if expect_json and not is_json:
        what = "an HTML page" if html else ("an empty body" if not raw else "a truncated body")
        raise TransientError(f"expected JSON, got {what} (HTTP {status})", status=status, url=where)
    return decoded, raw


def map_transport_error(exc: httpx.HTTPError, where: str) -> FetchError:
    """The FetchError for an httpx exception (timeouts and broken connections are transient)."""
    if isinstance(exc, httpx.TimeoutException):
        return TransientError(f"timeout ({type(exc).__name__})", url=where)
    if isinstance(exc, httpx.UnsupportedProtocol):
        return FetchError(f"unsupported URL: {exc}", url=where)
    if isinstance(exc, httpx.ConnectError):
        host = _host_of(exc)
        return ConnectionFailedError(
            f"cannot connect to {host} ({type(exc).__name__}: {exc or 'refused'})",
            url=where,
            host=host,
        )
    if isinstance(exc, httpx.TransportError | httpx.DecodingError):
        return TransientError(f"connection failed ({type(exc).__name__})", url=where)
    return FetchError(f"request failed ({type(exc).__name__})", url=where)


def _host_of(exc: httpx.HTTPError) -> str:
    try:
        url = exc.request.url
    except RuntimeError:
        return "the API host"
    return f"{url.host}:{url.port}" if url.port else str(url.host)


async def read_capped(response: httpx.Response, cap: int) -> bytes:
    """The whole (decoded) body of a streamed response, refusing more than ``cap`` bytes.

    A ``Content-Length`` above the cap is refused before anything is read; otherwise the
    body is read chunk by chunk and reading stops at the first byte beyond the cap.
    """
    where = response.request.url.path
    announced = response.headers.get("content-length", "").strip()
    if announced.isdigit() and int(announced) > cap:
        raise BodyTooLargeError(
            f"response body of {announced} bytes exceeds the {cap}-byte cap", url=where
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise BodyTooLargeError(
                f"response body exceeds the {cap}-byte cap (reading stopped)", url=where
            )
        chunks.append(chunk)
    return b"".join(chunks)


_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def parse_set_cookie(header: str) -> tuple[str, str, bool, str] | None:
    """``(name, value, deleted, domain)`` of one ``Set-Cookie`` header, or None if unusable."""
    first, *attrs = header.split(";")
    name, sep, value = first.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name:
        return None
    deleted = value == ""
    domain = ""
    for attr in attrs:
        key, _, val = attr.strip().partition("=")
        key = key.strip().lower()
        if key == "max-age":
            try:
                deleted = deleted or int(val.strip()) <= 0
            except ValueError:
                pass
        elif key == "expires":
            try:
                expires = email.utils.parsedate_to_datetime(val.strip())
                deleted = deleted or expires.timestamp() < time.time()
            except (TypeError, ValueError):
                pass
        elif key == "domain":
            domain = val.strip().lstrip(".").lower()
    return name, value, deleted, domain


def request_kind(path: str) -> str:
    """The request kind counted in the stats (session, list, graphql, thread, spaces, …)."""
    if path.startswith("/api/auth/"):
        return "session"
    if path.startswith("/rest/thread/list_"):
        return "list"
    if path.startswith("/rest/perplexity_ask/graphql"):
        return "graphql"
    if path.startswith("/rest/thread/"):
        return "thread"
    if path.startswith(("/rest/collections/", "/rest/spaces")):
        return "spaces"
    if path.startswith("/rest/assets/"):
        return "asset"
    return "other"


# --------------------------------------------------------------------------- the client


@dataclasses.dataclass(frozen=True, slots=True)
class ClientStats:
    """Request counters of a run, for the progress bar and the summary."""

    requests_by_kind: Mapping[str, int]
    responses_by_status: Mapping[int, int]
    errors_by_kind: Mapping[str, int]
    retries: int
    rate_limited: int
    challenges: int
    cookie_rotations: int
    limiter: LimiterSnapshot

    @property
    def requests(self) -> int:
        """All requests sent, retries included."""
        return sum(self.requests_by_kind.values())


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
        self._max_body = settings.max_body_bytes
        if transport is None and settings.impersonate:
            from pplx_archiver.shell.net.transport_curl import CurlTransport

            transport = CurlTransport(settings.impersonate, timeout=settings.request_timeout)
        self._http = httpx.AsyncClient(
            transport=transport,
            limits=httpx.Limits(
                max_connections=settings.concurrency,
                max_keepalive_connections=settings.concurrency,
            ),
            timeout=httpx.Timeout(
                settings.request_timeout, connect=min(30.0, settings.request_timeout)
            ),
            follow_redirects=False,
            cookies=empty_cookie_jar(),
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
    ) -> tuple[Any, bytes]:
        """One API call through the rate limiter, the seam and the retry policy."""
        if not path.startswith("/"):
            raise ValueError(f"API path must start with '/', got {path!r}")
        label = kind or request_kind(path)

        async def attempt() -> tuple[Any, bytes]:
            await self.window.acquire()
            try:
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
                return await self.retrier.call(attempt, path=path, auth_fatal=auth_fatal)
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
        url = httpx.URL(self._base + path)
        headers = self._headers(url) | {"Accept": "text/event-stream"}
        request = self._http.build_request(
            "POST", url, params=self._query(path, None), json=json, headers=headers
        )
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

    def _query(self, path: str, params: Params | None) -> list[tuple[str, Any]]:
        pairs = list(params.items()) if isinstance(params, Mapping) else list(params or ())
        if path.startswith("/rest/"):
            present = {name for name, _ in pairs}
            pairs += [(k, v) for k, v in REST_PARAMS if k not in present]
        return pairs

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
        url = httpx.URL(self._base + path)
        request = self._http.build_request(
            method, url, params=self._query(path, params), json=json, headers=self._headers(url)
        )
        self._requests[kind] += 1
        try:
            # One deadline for the whole request: connect, headers and every body byte.
            with anyio.fail_after(self._deadline):
                streamed = await self._http.send(request, stream=True)
                try:
                    body = await read_capped(streamed, self._max_body)
                finally:
                    await streamed.aclose()
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
            return map_response(response)
        except FetchError as exc:
            self._errors[type(exc).__name__] += 1
            raise

    def _absorb_cookies(self, response: httpx.Response) -> None:
        """Apply ``Set-Cookie`` answers of the API origin; report session rotations."""
        if not self._is_api_origin(response.request.url):
            return
        host = (response.request.url.host or "").lower()
        rotated: list[str] = []
        for header in response.headers.get_list("set-cookie"):
            parsed = parse_set_cookie(header)
            if parsed is None:
                continue
            name, value, deleted, domain = parsed
            if domain and not (host == domain or host.endswith("." + domain)):
                continue
            if deleted:
                if not is_session_cookie(name):
                    self._cookies.pop(name, None)
                continue
            if self._cookies.get(name) == value:
                continue
            if name != LAST_ACTIVE_COOKIE:
                register_secret(value)
            self._cookies[name] = value
            if is_session_cookie(name):
                rotated.append(name)
        if rotated:
            self._rotations += 1
            self._log.info(
                SESSION_COOKIE_ROTATED, cookie_names=rotated, path=response.request.url.path
            )
            if self._on_cookie_rotated is not None:
                self._on_cookie_rotated(dict(self._cookies))
