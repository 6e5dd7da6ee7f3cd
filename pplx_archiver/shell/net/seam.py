"""The one error seam of the API client: HTTP answers and httpx exceptions become errors.

:func:`map_response` and :func:`map_transport_error` are the only places where HTTP
statuses, bodies and httpx exceptions become the error tree of :mod:`pplx_archiver.errors`;
the helpers beside them read what a response carries (``Retry-After``, ``Set-Cookie``, a
capped body). :mod:`pplx_archiver.shell.net.http` sends the requests.
"""

from __future__ import annotations

import email.utils
import re
import time
from typing import Any

import httpx
import orjson

from pplx_archiver.core.thread.budgets import body_values
from pplx_archiver.errors import (
    BodyTooLargeError,
    BudgetError,
    ChallengeError,
    ConnectionFailedError,
    FetchError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    SessionExpiredError,
    TerminalThreadError,
    TransientError,
)
from pplx_archiver.logconfig import register_secret
from pplx_archiver.shell.net.cookies import LAST_ACTIVE_COOKIE, is_session_cookie

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
    response: httpx.Response,
    *,
    expect_json: bool = True,
    now: float | None = None,
    max_values: int | None = None,
) -> tuple[Any, bytes]:
    """Return ``(decoded, raw bytes)`` of a good answer, or raise the matching FetchError.

    A good answer of more than ``max_values`` JSON objects and arrays (counted on the bytes)
    is not parsed: :class:`~pplx_archiver.errors.BudgetError` (issue 44)."""
    status = response.status_code
    raw = response.content
    where = response.request.url.path
    head = raw[:8192].lstrip().lower()
    html = _is_html(response, head)
    marked = _challenge(response, status, head, html, where)
    decoded: Any = None
    is_json = False
    if raw and not html:
        _check_values(raw, status, where, max_values)
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
    if status >= 300:
        _raise_for_status(response, status, code, raw, where)
    if marked:
        raise ChallengeError(f"Cloudflare challenge (HTTP {status})", status=status, url=where)
    if expect_json and not is_json:
        what = "an HTML page" if html else ("an empty body" if not raw else "a truncated body")
        raise TransientError(f"expected JSON, got {what} (HTTP {status})", status=status, url=where)
    return decoded, raw


def _check_values(raw: bytes, status: int, where: str, max_values: int | None) -> None:
    """Refuse to parse a good answer whose values would pass the budget (the bytes of a body
    of ``{}`` become ~30 times as many bytes of objects once parsed)."""
    if max_values is None or status >= 300:
        return
    values = body_values(raw)
    if values > max_values:
        raise BudgetError(
            where,
            "values",
            f"budget exceeded: values {values} > {max_values} (--max-thread-values); "
            "the body was not parsed, nothing of the thread written",
        )


def _challenge(response: httpx.Response, status: int, head: bytes, html: bool, where: str) -> bool:
    """Raise for a Cloudflare challenge; True when a challenge marker is in a good answer."""
    mitigated = response.headers.get("cf-mitigated", "").lower() == "challenge"
    # a 403 carrying a challenge page is one whatever its content type or first tag says
    marked = (html or status == 403) and any(marker in head for marker in _CHALLENGE_MARKERS)
    if mitigated or (html and status == 403) or (marked and status in (403, 429, 503)):
        raise ChallengeError(f"Cloudflare challenge (HTTP {status})", status=status, url=where)
    return marked


def _raise_for_status(
    response: httpx.Response, status: int, code: str, raw: bytes, where: str
) -> None:
    """Raise the FetchError of a redirect or an error status (the 429s are handled before)."""
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
    if status < 400:
        target = httpx.URL(response.headers.get("location", "")).host or "the same host"
        raise FetchError(
            f"unexpected redirect (HTTP {status}) to {target}; not followed",
            status=status,
            url=where,
        )
    if status >= 500 or status == 408:
        raise TransientError(f"server error (HTTP {status})", status=status, url=where)
    suffix = f": {code}" if code else ""
    raise FetchError(f"request refused (HTTP {status}){suffix}", status=status, url=where)


def map_transport_error(exc: httpx.HTTPError, where: str) -> FetchError:
    """The FetchError for an httpx exception (timeouts and broken connections are transient)."""
    if isinstance(exc, httpx.TimeoutException):
        return TransientError(f"timeout ({type(exc).__name__})", url=where)
    if isinstance(exc, httpx.UnsupportedProtocol):
        return FetchError(f"unsupported URL: {exc}", url=where)
    if isinstance(exc, httpx.ConnectError | httpx.ProxyError):  # a proxy refusing the tunnel too
        host = _host_of(exc)
        return ConnectionFailedError(
            f"cannot connect to {host} ({type(exc).__name__}: {exc or 'refused'})",
            url=where,
            host=host,
        )
    if isinstance(exc, httpx.TransportError | httpx.DecodingError):
        why = f"{type(exc).__name__}: {str(exc)[:160]}" if str(exc) else type(exc).__name__
        return TransientError(f"connection to {_host_of(exc)} failed ({why})", url=where)
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


def apply_set_cookies(cookies: dict[str, str], headers: list[str], host: str) -> list[str]:
    """Apply the ``Set-Cookie`` headers of an API answer to ``cookies`` (for ``host``).

    Cookies for another domain are ignored, session cookies are never deleted by an answer,
    and every new value is registered as a secret (the account-id cookie excepted). Returns
    the names of the session cookies that changed (a rotation when not empty).
    """
    rotated: list[str] = []
    for header in headers:
        parsed = parse_set_cookie(header)
        if parsed is None:
            continue
        name, value, deleted, domain = parsed
        if domain and not (host == domain or host.endswith("." + domain)):
            continue
        if deleted:
            if not is_session_cookie(name):
                cookies.pop(name, None)
            continue
        if cookies.get(name) == value:
            continue
        if name != LAST_ACTIVE_COOKIE:
            register_secret(value)
        cookies[name] = value
        if is_session_cookie(name):
            rotated.append(name)
    return rotated


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
