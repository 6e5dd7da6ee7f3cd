"""Credentials load by precedence, are stored 0600, and every run starts with a session probe."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import structlog

from pplx_archiver.errors import ConfigError, LoggedOutError, SessionExpiredError
from pplx_archiver.shell.net.auth import (
    Credential,
    cookies_from_browser,
    cookies_from_token,
    load_credential,
    mask_email,
    open_session,
    read_stored_credential,
    save_credential,
)
from pplx_archiver.shell.net.cookies import LAST_ACTIVE_COOKIE, NEXT_AUTH_COOKIE
from tests.shell.fake_time import StepTime
from tests.shell.helpers import settings

ACCOUNT = "0b7c9a2e-1111-4222-8333-444455556666"
ERA_C = f"__Secure-pplx.session.{ACCOUNT}"
USER = {"user": {"id": ACCOUNT, "email": "alice@example.com", "subscription_tier": "pro"},
        "expires": "2026-10-01T00:00:00Z"}  # fmt: skip


def _netscape(tmp_path: Path, value: str = "file-token") -> Path:
    path = tmp_path / "cookies.txt"
    path.write_text(f".perplexity.ai\tTRUE\t/\tTRUE\t0\t{NEXT_AUTH_COOKIE}\t{value}\n")
    return path


def test_precedence_file_over_token_over_stored(tmp_path: Path) -> None:
    """--cookies beats --session-token, which beats the stored credential."""
    save_credential(tmp_path / "credentials.json", {NEXT_AUTH_COOKIE: "stored-token"})
    base = {"config_dir": tmp_path}
    both = settings(cookies_file=_netscape(tmp_path), session_token="cli-token", **base)
    assert load_credential(both).cookies == {NEXT_AUTH_COOKIE: "file-token"}
    token = settings(session_token="cli-token", **base)
    assert load_credential(token).cookies == {NEXT_AUTH_COOKIE: "cli-token"}
    stored = load_credential(settings(**base))
    assert stored.cookies == {NEXT_AUTH_COOKIE: "stored-token"}
    assert stored.persist_to == tmp_path / "credentials.json"


def test_no_credential_at_all_says_how_to_connect(tmp_path: Path) -> None:
    """Without any credential the error is an auth failure explaining the options."""
    with pytest.raises(LoggedOutError, match="auth save --cookies"):
        load_credential(settings(config_dir=tmp_path))


def test_session_token_bare_or_cookie_header() -> None:
    """A bare token is the NextAuth cookie; a copied Cookie header is parsed."""
    assert cookies_from_token(" tok ") == {NEXT_AUTH_COOKIE: "tok"}
    header = f"{ERA_C}=s1; {LAST_ACTIVE_COOKIE}={ACCOUNT}"
    assert cookies_from_token(header) == {ERA_C: "s1", LAST_ACTIVE_COOKIE: ACCOUNT}
    with pytest.raises(ConfigError, match="no session cookie"):
        cookies_from_token("a=1; b=2")


def test_stored_credential_is_private_and_atomic(tmp_path: Path) -> None:
    """The credential file is mode 0600, round-trips, and no temp file is left behind."""
    path = tmp_path / "cfg" / "credentials.json"
    save_credential(path, {NEXT_AUTH_COOKIE: "v1"})
    save_credential(path, {NEXT_AUTH_COOKIE: "v2"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_stored_credential(path) == {NEXT_AUTH_COOKIE: "v2"}
    assert [p.name for p in path.parent.iterdir()] == ["credentials.json"]


def test_corrupt_stored_credential_is_named(tmp_path: Path) -> None:
    """A damaged credential file is a ConfigError naming it."""
    path = tmp_path / "credentials.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"credentials\.json"):
        read_stored_credential(path)


def test_browser_extra_missing_is_a_clear_error() -> None:
    """--cookies-from without browser-cookie3 installed explains how to install it."""
    with pytest.raises(ConfigError, match=r"pplx-archiver\[browser\]"):
        cookies_from_browser("chrome")
    with pytest.raises(ConfigError, match="unknown browser"):
        cookies_from_browser("netscape-navigator", module=object())


def test_browser_cookies_are_filtered() -> None:
    """Cookies read from a browser store keep only perplexity.ai ones."""
    jar = [SimpleNamespace(name=NEXT_AUTH_COOKIE, value="b-tok", domain=".perplexity.ai"),
           SimpleNamespace(name="SID", value="g", domain=".google.com")]  # fmt: skip
    module = SimpleNamespace(firefox=lambda domain_name: jar)
    assert cookies_from_browser("Firefox", module=module) == {NEXT_AUTH_COOKIE: "b-tok"}


def test_mask_email() -> None:
    """Only the first letter of the local part survives."""
    assert mask_email("alice@example.com") == "a***@example.com"
    assert mask_email(None) == "" and mask_email("nope") == ""


def _server(answers: dict[str, Any], seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers[request.url.path]
        return answer(request) if callable(answer) else httpx.Response(200, json=answer)

    return httpx.MockTransport(handler)


async def test_logged_out_probe_stops_before_anything_else() -> None:
    """`{}` from the probe raises LoggedOutError with advice; no other request is made."""
    seen: list[httpx.Request] = []
    t = StepTime()
    cred = Credential({NEXT_AUTH_COOKIE: "dead"}, "test")
    with pytest.raises(LoggedOutError, match="--session-token"):
        async with open_session(settings(), credential=cred,
                                transport=_server({"/api/auth/session": {}}, seen),
                                sleep=t.sleep, clock=t.clock):  # fmt: skip
            pytest.fail("a logged-out session must not be opened")
    assert [r.url.path for r in seen] == ["/api/auth/session"]


async def test_expired_probe_is_an_auth_error() -> None:
    """A 401 on the probe is SessionExpiredError at once, not retried."""
    seen: list[httpx.Request] = []
    t = StepTime()
    cred = Credential({NEXT_AUTH_COOKIE: "dead"}, "test")
    transport = _server({"/api/auth/session": lambda r: httpx.Response(401)}, seen)
    with pytest.raises(SessionExpiredError, match="auth save"):
        async with open_session(settings(), credential=cred, transport=transport,
                                sleep=t.sleep, clock=t.clock):  # fmt: skip
            pass
    assert len(seen) == 1


async def test_probe_gives_account_id_for_later_requests() -> None:
    """The probe's user.id becomes x-pplx-account; the session info masks the e-mail."""
    seen: list[httpx.Request] = []
    t = StepTime()
    cred = Credential({NEXT_AUTH_COOKIE: "tok-123456"}, "test")
    transport = _server({"/api/auth/session": USER, "/rest/thread/list_ask_threads": []}, seen)
    with structlog.testing.capture_logs() as logs:
        async with open_session(settings(), credential=cred, transport=transport,
                                sleep=t.sleep, clock=t.clock) as (client, info):  # fmt: skip
            await client.post_json("/rest/thread/list_ask_threads", {"limit": 1})
    assert (info.account_id, info.email_masked, info.plan, info.era) == (
        ACCOUNT,
        "a***@example.com",
        "pro",
        "B",
    )
    assert "x-pplx-account" not in seen[0].headers
    assert seen[1].headers["x-pplx-account"] == ACCOUNT
    checked = next(e for e in logs if e["event"] == "SESSION_CHECKED")
    assert checked["email"] == "a***@example.com" and "alice" not in repr(logs)


async def test_era_c_account_from_cookie_names_is_sent_on_the_probe() -> None:
    """Era C cookies name the account, so even the probe carries x-pplx-account."""
    seen: list[httpx.Request] = []
    t = StepTime()
    cred = Credential({ERA_C: "sess-c-1", LAST_ACTIVE_COOKIE: ACCOUNT}, "test")
    async with open_session(settings(), credential=cred,
                            transport=_server({"/api/auth/session": USER}, seen),
                            sleep=t.sleep, clock=t.clock) as (_, info):  # fmt: skip
        assert info.era == "C"
    assert seen[0].headers["x-pplx-account"] == ACCOUNT


async def test_rotation_is_written_back_to_the_stored_credential(tmp_path: Path) -> None:
    """A session cookie rotated mid-run is persisted to the stored credential (0600)."""
    store = tmp_path / "credentials.json"
    save_credential(store, {NEXT_AUTH_COOKIE: "old-token"})
    seen: list[httpx.Request] = []

    def rotate(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json=[], headers=[("set-cookie", f"{NEXT_AUTH_COOKIE}=new-token; Path=/")]
        )

    t = StepTime()
    transport = _server({"/api/auth/session": USER, "/rest/thread/list_ask_threads": rotate}, seen)
    with structlog.testing.capture_logs() as logs:
        async with open_session(settings(config_dir=tmp_path), transport=transport,
                                sleep=t.sleep, clock=t.clock) as (client, _):  # fmt: skip
            await client.post_json("/rest/thread/list_ask_threads", {})
            await client.get_json("/api/auth/session")
    assert json.loads(store.read_text())["cookies"] == {NEXT_AUTH_COOKIE: "new-token"}
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert f"{NEXT_AUTH_COOKIE}=new-token" in seen[-1].headers["cookie"]
    assert "new-token" not in repr(logs) and "old-token" not in repr(logs)
    assert any(e["event"] == "CREDENTIAL_SAVED" for e in logs)


async def test_cookie_file_credentials_are_not_rewritten(tmp_path: Path) -> None:
    """A credential read from the user's cookie file has nowhere to persist rotations."""
    cred = load_credential(settings(cookies_file=_netscape(tmp_path), config_dir=tmp_path))
    assert cred.persist_to is None
    assert "file-token" not in repr(cred)
