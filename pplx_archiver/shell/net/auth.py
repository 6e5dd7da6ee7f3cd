"""The user's session: where the credential comes from, where it is stored, and the probe.

Credentials, first match wins:

1. ``--cookies FILE`` (Netscape ``cookies.txt`` or a browser-extension JSON export);
2. ``--session-token`` / ``PPLX_SESSION_TOKEN`` (the ``__Secure-next-auth.session-token``
   value, or a whole copied ``Cookie`` header ``name=value; …``);
3. ``--cookies-from BROWSER`` (optional ``browser`` extra, browser-cookie3), an explicit
   request that beats the implicit stored credential;
4. the stored credential ``<config dir>/credentials.json`` written by ``auth save``
   (mode 0600, replaced atomically, updated when the server rotates the session cookie).

:func:`open_session` is what every command calls: it builds the run's
:class:`~pplx_archiver.shell.net.http.ApiClient`, probes ``/api/auth/session`` and refuses a
logged-out session (a logged-out account answers lists with 200 ``[]``, which must never be
archived as an empty account). The account id for ``x-pplx-account`` comes from
``--account-id``/``PPLX_ACCOUNT_ID``, else the probe's ``user.id``, else the cookie names.
Every cookie value is registered with :func:`~pplx_archiver.logconfig.register_secret`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import importlib
import json
import os
import random
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx

from pplx_archiver.errors import ConfigError, LoggedOutError, SessionExpiredError
from pplx_archiver.logconfig import get_logger, register_secret
from pplx_archiver.settings import DEFAULT_BASE_URL, Settings
from pplx_archiver.shell.net.cookies import (
    LAST_ACTIVE_COOKIE,
    NEXT_AUTH_COOKIE,
    SERVICE_DOMAIN,
    account_id_from_cookies,
    check_cookies,
    parse_cookie_header,
    read_cookie_file,
    session_era,
)
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.net.ratelimit import Clock, RateLimiter, Sleep

SESSION_PATH = "/api/auth/session"
SESSION_CHECKED = "SESSION_CHECKED"
CREDENTIAL_SAVED = "CREDENTIAL_SAVED"
CREDENTIAL_SAVE_FAILED = "CREDENTIAL_SAVE_FAILED"
BROWSERS = ("chrome", "chromium", "firefox", "edge", "brave", "opera", "vivaldi", "safari")

HOW_TO_CONNECT = (
    "Supply a logged-in session: export your perplexity.ai cookies from the browser and "
    "run `pplx-export auth save --cookies cookies.txt` (or pass `--cookies FILE` to each "
    "command), or pass the value of the __Secure-next-auth.session-token cookie with "
    "`--session-token` / PPLX_SESSION_TOKEN. See 'Quick start' in the README and "
    "docs/connecting.md."
)


@dataclasses.dataclass(frozen=True, slots=True)
class Credential:
    """The session cookies of a run and where they came from (``repr`` hides the values)."""

    cookies: Mapping[str, str] = dataclasses.field(repr=False)
    source: str
    persist_to: Path | None = None

    @property
    def era(self) -> str | None:
        """``"B"`` (NextAuth cookie), ``"C"`` (Sessions cookies) or None."""
        return session_era(self.cookies)

    @property
    def account_id(self) -> str | None:
        """The account uuid named by the cookies, if they name one."""
        return account_id_from_cookies(self.cookies)


@dataclasses.dataclass(frozen=True, slots=True)
class SessionInfo:
    """What the session probe found; ``email_masked`` is safe to print.

    ``username`` is the account's user name (``user.username``): the archive's account folder
    and the ``author_username`` of the account's own threads in space listings.
    """

    account_id: str | None
    email_masked: str
    plan: str
    era: str | None
    logged_in: bool
    expires: str | None = None
    username: str | None = None


def mask_email(email: str | None) -> str:
    """``alice@example.com`` → ``a***@example.com`` (empty string when unknown)."""
    if not email or "@" not in email:
        return ""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain}"


def register_cookies(cookies: Mapping[str, str]) -> None:
    """Register every cookie value (not the account id) as a secret the logs redact."""
    for name, value in cookies.items():
        if name != LAST_ACTIVE_COOKIE:  # an account id, not a secret
            register_secret(value)


def _extra_hosts(settings: Settings) -> tuple[str, ...]:
    host = httpx.URL(settings.base_url).host
    return () if not host or host.endswith(SERVICE_DOMAIN) else (host,)


def cookies_from_token(token: str) -> dict[str, str]:
    """Cookies from ``--session-token``: a bare token value, or a copied ``Cookie`` header."""
    text = token.strip()
    if not text:
        raise ConfigError("--session-token / PPLX_SESSION_TOKEN is empty")
    if "=" in text and (";" in text or text.startswith("__")):
        cookies = parse_cookie_header(text)
        if session_era(cookies) is None:
            raise ConfigError(
                "--session-token looks like a Cookie header but holds no session cookie "
                f"({NEXT_AUTH_COOKIE} or __Secure-pplx.session.<id>)"
            )
        return cookies
    return {NEXT_AUTH_COOKIE: text}


def cookies_from_browser(browser: str, *, module: Any = None) -> dict[str, str]:
    """Read the perplexity.ai cookies from a local browser's store (browser-cookie3)."""
    name = browser.strip().lower()
    if name not in BROWSERS:
        raise ConfigError(
            f"--cookies-from: unknown browser {browser!r}; choose one of {', '.join(BROWSERS)}"
        )
    if module is None:
        try:
            module = importlib.import_module("browser_cookie3")
        except ImportError:
            raise ConfigError(
                "--cookies-from needs the optional browser-cookie3 package: "
                "pip install 'pplx-archiver[browser]'"
            ) from None
    try:
        jar = getattr(module, name)(domain_name=SERVICE_DOMAIN)
    except Exception as exc:  # browser-cookie3 raises many kinds (locked DB, keyring, …)
        raise ConfigError(
            f"--cookies-from {name}: could not read the browser's cookies ({exc}); close the "
            "browser or export the cookies to a file and use --cookies FILE"
        ) from None
    cookies = {
        c.name: c.value or ""
        for c in jar
        if (c.domain or "").lstrip(".").endswith(SERVICE_DOMAIN) and c.value
    }
    if session_era(cookies) is None:
        raise ConfigError(
            f"--cookies-from {name}: no perplexity.ai session cookie in this browser profile; "
            "log in to perplexity.ai there first"
        )
    return cookies


def read_stored_credential(path: Path) -> dict[str, str] | None:
    """The cookies of the stored credential, None when there is none."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the stored credential: {exc}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path}: stored credential is not valid JSON ({exc}); run `pplx-export auth save`"
        ) from None
    cookies = data.get("cookies") if isinstance(data, dict) else None
    if not isinstance(cookies, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in cookies.items()
    ):
        raise ConfigError(f"{path}: stored credential has no 'cookies' object of strings")
    return dict(cookies)


def save_credential(path: Path, cookies: Mapping[str, str], *, source: str = "") -> None:
    """Store cookies as the credential: mode 0600, written to a temp file then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    payload = {
        "format": 1,
        "saved_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "source": source,
        "cookies": dict(cookies),
    }
    data = json.dumps(payload, indent=2, sort_keys=True).encode() + b"\n"
    fd, tmp = tempfile.mkstemp(prefix=".credentials-", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise


def load_credential(settings: Settings, *, browser_module: Any = None) -> Credential:
    """The run's credential by precedence; ConfigError naming what is missing or wrong."""
    if settings.cookies_file is not None:
        cookies = read_cookie_file(settings.cookies_file, extra_hosts=_extra_hosts(settings))
        cred = Credential(cookies, f"cookie file {settings.cookies_file}")
    elif settings.session_token:
        cred = Credential(cookies_from_token(settings.session_token), "session token")
    elif settings.cookies_from:
        cookies = cookies_from_browser(settings.cookies_from, module=browser_module)
        cred = Credential(cookies, f"browser {settings.cookies_from}")
    else:
        stored = read_stored_credential(settings.credential_path)
        if stored is None:
            raise LoggedOutError("No session configured. " + HOW_TO_CONNECT)
        cred = Credential(
            stored,
            f"stored credential {settings.credential_path}",
            persist_to=settings.credential_path,
        )
    check_cookies(cred.cookies, cred.source)
    register_cookies(cred.cookies)
    return cred


def session_info(decoded: Any, era: str | None) -> SessionInfo:
    """Read the ``/api/auth/session`` answer; ``{}`` (or no user) means logged out."""
    user = decoded.get("user") if isinstance(decoded, dict) else None
    if not isinstance(user, dict) or not user:
        return SessionInfo(None, "", "", era, logged_in=False)
    plan = ""
    for key in ("subscription_tier", "payment_tier", "subscription_status"):
        value = user.get(key)
        if isinstance(value, str) and value:
            plan = value
            break
    account = user.get("id")
    expires = decoded.get("expires")
    username = user.get("username")
    return SessionInfo(
        account_id=str(account) if account else None,
        email_masked=mask_email(user.get("email") if isinstance(user.get("email"), str) else ""),
        plan=plan or "unknown",
        era=era,
        logged_in=True,
        expires=expires if isinstance(expires, str) else None,
        username=username if isinstance(username, str) and username else None,
    )


async def probe_session(client: ApiClient, *, era: str | None = None) -> SessionInfo:
    """Ask ``/api/auth/session`` who we are; LoggedOutError when the answer is ``{}``."""
    try:
        decoded, _ = await client.get_json(SESSION_PATH, kind="session", auth_fatal=True)
    except SessionExpiredError as exc:
        raise SessionExpiredError(
            f"{exc}: the session cookie is no longer valid. " + HOW_TO_CONNECT
        ) from exc
    info = session_info(decoded, era)
    if not info.logged_in:
        get_logger().error("AUTH_FAILED", path=SESSION_PATH, reason="logged_out")
        raise LoggedOutError(
            "The session is logged out: the server does not recognise these cookies (they "
            "may have expired or been copied from a logged-out tab). " + HOW_TO_CONNECT
        )
    return info


def _persist_callback(path: Path) -> Any:
    def persist(cookies: Mapping[str, str]) -> None:
        log = get_logger()
        try:
            save_credential(path, cookies, source="rotated by the server")
        except OSError as exc:
            log.warning(CREDENTIAL_SAVE_FAILED, path=str(path), reason=str(exc))
        else:
            log.info(CREDENTIAL_SAVED, path=str(path), reason="rotation")

    return persist


@contextlib.asynccontextmanager
async def open_session(
    settings: Settings,
    *,
    credential: Credential | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    limiter: RateLimiter | None = None,
    sleep: Sleep = anyio.sleep,
    clock: Clock = time.monotonic,
    rand: Any = random.random,
) -> AsyncIterator[tuple[ApiClient, SessionInfo]]:
    """The run's client with a probed, logged-in session; closes the client on exit.

    Raises ConfigError (bad credential input), LoggedOutError / SessionExpiredError (no
    usable session) before any other request is made.
    """
    cred = credential or load_credential(settings)
    client = ApiClient(
        settings,
        cookies=cred.cookies,
        account_id=settings.account_id or cred.account_id,
        limiter=limiter,
        transport=transport,
        sleep=sleep,
        clock=clock,
        rand=rand,
        on_cookie_rotated=_persist_callback(cred.persist_to) if cred.persist_to else None,
    )
    async with client:
        info = await probe_session(client, era=cred.era)
        account = settings.account_id or info.account_id or cred.account_id
        client.account_id = account
        info = dataclasses.replace(info, account_id=account)
        get_logger().info(
            SESSION_CHECKED,
            account_id=account,
            era=info.era,
            plan=info.plan,
            email=info.email_masked,
            base_url=settings.base_url if settings.base_url != DEFAULT_BASE_URL else None,
            session_source=cred.source,
        )
        yield client, info
