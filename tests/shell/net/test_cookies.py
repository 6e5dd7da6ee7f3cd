"""Cookie exports are read in both formats, filtered to the service, and bad files are named."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from pplx_archiver.errors import ConfigError
from pplx_archiver.shell.net.cookies import (
    LAST_ACTIVE_COOKIE,
    NEXT_AUTH_COOKIE,
    JarlessClient,
    account_id_from_cookies,
    parse_cookie_header,
    read_cookie_file,
    session_era,
)

ACCOUNT = "0b7c9a2e-1111-4222-8333-444455556666"
ERA_C = f"__Secure-pplx.session.{ACCOUNT}"

NETSCAPE = f"""# Netscape HTTP Cookie File
# This is a generated file! Do not edit.

#HttpOnly_.perplexity.ai\tTRUE\t/\tTRUE\t1790000000\t{NEXT_AUTH_COOKIE}\teyJtoken.value
www.perplexity.ai\tFALSE\t/\tFALSE\t0\tpplx.visitor-id\tvisitor-1
.google.com\tTRUE\t/\tTRUE\t1790000000\tSID\tgoogle-secret
"""


def _write(tmp_path: Path, text: str, name: str = "cookies.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_netscape_with_httponly_lines(tmp_path: Path) -> None:
    """#HttpOnly_ lines are cookies, comments are skipped, other domains are dropped."""
    cookies = read_cookie_file(_write(tmp_path, NETSCAPE))
    assert cookies == {NEXT_AUTH_COOKIE: "eyJtoken.value", "pplx.visitor-id": "visitor-1"}


def test_json_list_export(tmp_path: Path) -> None:
    """A Cookie-Editor style list of objects is read; foreign domains are dropped."""
    text = f"""[
      {{"name": "{ERA_C}", "value": "sess-c", "domain": ".perplexity.ai", "httpOnly": true}},
      {{"name": "{LAST_ACTIVE_COOKIE}", "value": "{ACCOUNT}", "domain": "www.perplexity.ai"}},
      {{"name": "other", "value": "x", "domain": "example.com"}}
    ]"""
    cookies = read_cookie_file(_write(tmp_path, text, "c.json"))
    assert cookies == {ERA_C: "sess-c", LAST_ACTIVE_COOKIE: ACCOUNT}


def test_json_object_with_cookies_key(tmp_path: Path) -> None:
    """`{"cookies": [...]}` wrappers are unwrapped."""
    item = f'{{"name": "{NEXT_AUTH_COOKIE}", "value": "t", "domain": "perplexity.ai"}}'
    text = f'{{"cookies": [{item}]}}'
    assert read_cookie_file(_write(tmp_path, text, "c.json")) == {NEXT_AUTH_COOKIE: "t"}


def test_extra_host_is_accepted(tmp_path: Path) -> None:
    """Cookies of the configured base-URL host (a local simulator) are kept too."""
    text = f"127.0.0.1\tFALSE\t/\tFALSE\t0\t{NEXT_AUTH_COOKIE}\tlocal\n"
    path = _write(tmp_path, text)
    assert read_cookie_file(path, extra_hosts=("127.0.0.1",)) == {NEXT_AUTH_COOKIE: "local"}
    with pytest.raises(ConfigError, match=r"no cookies for perplexity\.ai"):
        read_cookie_file(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# header\n\n.perplexity.ai TRUE / TRUE 0 name value\n", r"line 3: not a Netscape"),
        (f".perplexity.ai\tTRUE\t/\tTRUE\tsoon\t{NEXT_AUTH_COOKIE}\tv\n", r"line 1: expiry"),
        ('[{"name": "a", "value": "b", "domain": "perplexity.ai"},\n  {"name": 3}\n', r"line 3"),
        ('[{"name": "a", "value": "b", "domain": "perplexity.ai"}, {"value": "x"}]', r"cookie #2"),
        ('{"not": "cookies"}', r"list of cookie objects"),
        ('[{"name": "a", "value": 5, "domain": "perplexity.ai"}]', r"cookie #1 \(a\)"),
    ],
)
def test_bad_files_name_file_and_place(tmp_path: Path, text: str, message: str) -> None:
    """A malformed export is a ConfigError naming the file and the line or item."""
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        read_cookie_file(path)
    assert str(path) in str(info.value)


def test_missing_file_and_missing_session(tmp_path: Path) -> None:
    """No file, or a file without a session cookie, are explained."""
    with pytest.raises(ConfigError, match="not found"):
        read_cookie_file(tmp_path / "nope.txt")
    path = _write(tmp_path, "www.perplexity.ai\tFALSE\t/\tFALSE\t0\tpplx.visitor-id\tv\n")
    with pytest.raises(ConfigError, match="no session cookie"):
        read_cookie_file(path)


def test_era_and_account_from_cookie_names() -> None:
    """Era C is told by its cookies, and the account id read from them."""
    assert session_era({NEXT_AUTH_COOKIE: "t"}) == "B"
    assert session_era({ERA_C: "s", LAST_ACTIVE_COOKIE: ACCOUNT}) == "C"
    assert session_era({ERA_C: "s"}) == "C"
    assert session_era({ERA_C: "s", NEXT_AUTH_COOKIE: "s"}) == "B"
    assert session_era({"pplx.visitor-id": "v"}) is None
    assert account_id_from_cookies({ERA_C: "s"}) == ACCOUNT
    assert account_id_from_cookies({LAST_ACTIVE_COOKIE: "other", ERA_C: "s"}) == "other"
    assert account_id_from_cookies({NEXT_AUTH_COOKIE: "t"}) is None


def test_cookie_header_parsing() -> None:
    """A copied Cookie header becomes a mapping."""
    assert parse_cookie_header(f" {NEXT_AUTH_COOKIE}=a.b; x=1;bad ; y=") == {
        NEXT_AUTH_COOKIE: "a.b",
        "x": "1",
        "y": "",
    }


async def test_jarless_client_keeps_and_sends_no_cookie() -> None:
    """Set-Cookie answers are not stored; the cookie set cannot be replaced."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers=[("set-cookie", "planted=1; Path=/")])

    async with JarlessClient(transport=httpx.MockTransport(handler)) as client:
        await client.get("https://cdn.example/a")
        await client.get("https://cdn.example/b")
        assert len(client.cookies) == 0
        with pytest.raises(TypeError):
            client.cookies = {"x": "1"}
    assert [r.headers.get("cookie") for r in seen] == [None, None]
