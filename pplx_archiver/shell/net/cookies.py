"""Cookie files and cookie names: parsing exports, picking the session, telling the era.

Reads the two formats browsers and their extensions export:

- Netscape ``cookies.txt`` (``curl``, "Get cookies.txt" extensions): seven tab-separated
  fields per line ``domain, include_subdomains, path, secure, expiry, name, value``;
  ``#HttpOnly_`` prefixed lines are cookies, other ``#`` lines are comments.
- JSON (Cookie-Editor, EditThisCookie and similar): a list of ``{name, value, domain, ...}``
  objects, or ``{"cookies": [...]}`` around such a list.

Only cookies of ``perplexity.ai`` (and of any extra host given, e.g. a ``--base-url``
simulator) are kept. Era B sessions carry ``__Secure-next-auth.session-token``; Era C
sessions ``__Secure-pplx.session.<account-uuid>`` plus ``__Host-pplx-last-active-account``.
A bad file is a :class:`~pplx_archiver.errors.ConfigError` naming the file and line (or item).
"""

from __future__ import annotations

import http.cookiejar
import json
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx

from pplx_archiver.errors import ConfigError

NEXT_AUTH_COOKIE = "__Secure-next-auth.session-token"
PPLX_SESSION_PREFIX = "__Secure-pplx.session."
LAST_ACTIVE_COOKIE = "__Host-pplx-last-active-account"
SERVICE_DOMAIN = "perplexity.ai"


class _KeepNothing(http.cookiejar.DefaultCookiePolicy):
    """A jar policy that stores and returns nothing."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: urllib.request.Request) -> bool:
        return False

    def return_ok(self, cookie: http.cookiejar.Cookie, request: urllib.request.Request) -> bool:
        return False


def empty_cookie_jar() -> http.cookiejar.CookieJar:
    """A cookie jar that never keeps a cookie, for every HTTP client of the project.

    The API client sends the session's cookies itself (and only to the API host); the CDN
    downloader sends none. Neither lets a response plant a cookie for a later request.
    """
    return http.cookiejar.CookieJar(policy=_KeepNothing())


class _NoCookies(httpx.Cookies):
    """httpx's cookie set over a jar that keeps nothing, without parsing every answer.

    httpx wraps each answer and its request in urllib objects for the jar to look at its
    ``Set-Cookie`` headers; the jar would keep nothing, so that work is skipped.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class JarlessClient(httpx.AsyncClient):
    """An :class:`httpx.AsyncClient` whose cookie set is always empty (see
    :func:`empty_cookie_jar`): a response never plants a cookie for a later request."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cookies=empty_cookie_jar(), **kwargs)
        self._no_cookies = _NoCookies(empty_cookie_jar())

    @property
    def cookies(self) -> httpx.Cookies:
        """The empty cookie set (nothing is ever stored in it)."""
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        raise TypeError("this client keeps no cookies")


def is_session_cookie(name: str) -> bool:
    """True for the cookies that carry the login itself (Era B and Era C)."""
    return name == NEXT_AUTH_COOKIE or name.startswith(PPLX_SESSION_PREFIX)


def session_era(cookies: Mapping[str, str]) -> str | None:
    """``"C"`` for a Sessions (Era C) cookie set, ``"B"`` for NextAuth, ``None`` without a session.

    Multi-account browsers of Era B hold per-account ``__Secure-pplx.session.*`` cookies
    *and* the NextAuth token; the set is Era C once the last-active-account cookie is
    present or the NextAuth token is gone.
    """
    has_next_auth = bool(cookies.get(NEXT_AUTH_COOKIE))
    has_pplx = any(name.startswith(PPLX_SESSION_PREFIX) and v for name, v in cookies.items())
    if has_pplx and (LAST_ACTIVE_COOKIE in cookies or not has_next_auth):
        return "C"
    if has_next_auth:
        return "B"
    return None


def account_id_from_cookies(cookies: Mapping[str, str]) -> str | None:
    """The account uuid named by the cookies: last-active account, else a lone session suffix."""
    last = cookies.get(LAST_ACTIVE_COOKIE, "").strip()
    if last:
        return last
    suffixes = [
        name[len(PPLX_SESSION_PREFIX) :]
        for name, value in cookies.items()
        if name.startswith(PPLX_SESSION_PREFIX) and value
    ]
    return suffixes[0] if len(suffixes) == 1 and suffixes[0] else None


def cookie_header(cookies: Mapping[str, str]) -> str:
    """The ``Cookie`` request header value for a name → value mapping."""
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


def check_cookies(cookies: Mapping[str, str], source: str) -> None:
    """Refuse, at once and in one line, a cookie no HTTP header can carry: a non-ASCII
    character, or a line break or other control character (which would otherwise fail every
    request as a connection error, retried for half a minute)."""
    for name, value in cookies.items():
        for what, text in (("name", name), ("value", value)):
            if not text.isascii():
                raise ConfigError(
                    f"{source}: cookie {name!r}: its {what} contains non-ASCII characters; "
                    "copy the cookie exactly (HTTP headers carry ASCII only)"
                )
            if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
                raise ConfigError(
                    f"{source}: cookie {name!r}: its {what} contains a line break or another "
                    "control character; copy the cookie exactly"
                )
            if what == "name" and any(c in text for c in ' =;,"'):
                raise ConfigError(f"{source}: cookie name {name!r} is not a valid cookie name")


def parse_cookie_header(text: str) -> dict[str, str]:
    """Parse ``name=value; name2=value2`` (a copied ``Cookie`` header) into a mapping."""
    out: dict[str, str] = {}
    for part in text.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name.strip():
            out[name.strip()] = value.strip()
    return out


def _domain_ok(domain: str, hosts: Iterable[str]) -> bool:
    d = domain.strip().lstrip(".").lower()
    if d.startswith("#httponly_"):
        d = d[len("#httponly_") :].lstrip(".")
    for host in hosts:
        h = host.lower()
        if d == h or d.endswith("." + h) or h.endswith("." + d):
            return True
    return False


def parse_netscape(text: str, *, source: str, hosts: Iterable[str]) -> dict[str, str]:
    """Cookies of the given hosts from Netscape ``cookies.txt`` text; errors name the line."""
    allowed = tuple(hosts)
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#HttpOnly_"):
            line = line.lstrip()[len("#HttpOnly_") :]
        elif stripped.startswith("#"):
            continue
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) == 6:  # some exporters drop the tab before an empty value
            fields.append("")
        if len(fields) != 7:
            raise ConfigError(
                f"{source}, line {lineno}: not a Netscape cookie line (expected 7 "
                f"tab-separated fields: domain, flag, path, secure, expiry, name, value; "
                f"found {len(fields)})"
            )
        domain, _flag, _path, _secure, expiry, name, value = fields
        if expiry.strip() and not expiry.strip().lstrip("-").isdigit():
            raise ConfigError(
                f"{source}, line {lineno}: expiry must be a number of seconds, got {expiry!r}"
            )
        if not name:
            raise ConfigError(f"{source}, line {lineno}: cookie without a name")
        if _domain_ok(domain, allowed):
            out[name] = value
    return out


def _json_items(data: Any, source: str) -> list[Any]:
    if isinstance(data, dict) and isinstance(data.get("cookies"), list):
        return list(data["cookies"])
    if isinstance(data, list):
        return data
    raise ConfigError(
        f"{source}: JSON cookie export must be a list of cookie objects or "
        '{"cookies": [...]}, got ' + type(data).__name__
    )


def parse_json_cookies(text: str, *, source: str, hosts: Iterable[str]) -> dict[str, str]:
    """Cookies of the given hosts from a browser-extension JSON export; errors name the item."""
    allowed = tuple(hosts)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise ConfigError(f"{source}: JSON nested too deeply to be a cookie export") from None
    out: dict[str, str] = {}
    for index, item in enumerate(_json_items(data, source)):
        where = f"{source}, cookie #{index + 1}"
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: expected an object, got {type(item).__name__}")
        name, value = item.get("name"), item.get("value")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}: missing or empty 'name'")
        if not isinstance(value, str):
            raise ConfigError(f"{where} ({name}): 'value' must be a string")
        domain = item.get("domain") or item.get("host") or ""
        if not isinstance(domain, str):
            raise ConfigError(f"{where} ({name}): 'domain' must be a string")
        if _domain_ok(domain, allowed):
            out[name] = value
    return out


def read_cookie_file(path: Path, *, extra_hosts: Iterable[str] = ()) -> dict[str, str]:
    """Read a cookie export (Netscape or JSON, detected) and keep the service's cookies.

    Raises :class:`ConfigError` when the file is unreadable, malformed, holds no cookie of
    the service, or holds no session cookie.
    """
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{source}: cookie file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: cannot read cookie file: {exc}") from None
    hosts = (SERVICE_DOMAIN, *extra_hosts)
    if text.lstrip().startswith(("[", "{")):
        cookies = parse_json_cookies(text, source=source, hosts=hosts)
    else:
        cookies = parse_netscape(text, source=source, hosts=hosts)
    if not cookies:
        raise ConfigError(
            f"{source}: no cookies for {SERVICE_DOMAIN} in this file; export the cookies "
            "while a perplexity.ai tab is open and you are logged in"
        )
    if session_era(cookies) is None:
        raise ConfigError(
            f"{source}: no session cookie ({NEXT_AUTH_COOKIE} or {PPLX_SESSION_PREFIX}<id>); "
            "log in to perplexity.ai in the browser and export the cookies again"
        )
    return cookies


def session_accounts(cookies: Mapping[str, str]) -> list[str]:
    """The account uuids of the per-account session cookies, in the order they appear."""
    return [
        name[len(PPLX_SESSION_PREFIX) :]
        for name, value in cookies.items()
        if name.startswith(PPLX_SESSION_PREFIX) and value and len(name) > len(PPLX_SESSION_PREFIX)
    ]


def split_sessions(cookies: Mapping[str, str]) -> list[tuple[str | None, dict[str, str]]]:
    """One cookie set per logged-in account of a (multi-account) browser export.

    A browser logged in to several accounts holds one ``__Secure-pplx.session.<uuid>`` cookie
    per account. Each account's set keeps the shared cookies, that account's session cookie
    and ``__Host-pplx-last-active-account=<uuid>`` (the NextAuth token, which only ever equals
    the active account's cookie, and the other accounts' cookies are left out), so each set
    is an Era C session of one account. Fewer than two such cookies: the set as it is.
    """
    accounts = session_accounts(cookies)
    if len(accounts) < 2:
        return [(account_id_from_cookies(cookies), dict(cookies))]
    shared = {
        name: value
        for name, value in cookies.items()
        if not is_session_cookie(name) and name != LAST_ACTIVE_COOKIE
    }
    out: list[tuple[str | None, dict[str, str]]] = []
    for account in dict.fromkeys(accounts):
        own = {**shared, PPLX_SESSION_PREFIX + account: cookies[PPLX_SESSION_PREFIX + account]}
        own[LAST_ACTIVE_COOKIE] = account
        out.append((account, own))
    return out
