"""Proxies: which requests go through which proxy, CONNECT tunnels, NO_PROXY, bad and refusing
proxies (a loopback proxy counting what passed through it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import httpx
import pytest

from pplx_archiver.errors import ConfigError, ConnectionFailedError, TransientError
from pplx_archiver.logconfig import clear_secrets, redact_text
from pplx_archiver.settings import Settings
from pplx_archiver.shell.care.doctor import shown_value
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.net.proxy import (
    Mounts,
    check_proxy_url,
    environment_proxies,
    mask_proxy,
    proxy_mounts,
)
from pplx_archiver.shell.net.transport import LeanTransport
from tests.loopback_proxy import LoopbackProxy, serving
from tests.shell.net.test_http1 import Answer, certificate, ok, scripted, tls_contexts

__all__ = ["certificate"]  # the module-scoped fixture of the TLS tests


def test_credentials_in_a_proxy_url_are_masked() -> None:
    assert mask_proxy("http://user:hunter22@proxy.test:3128") == "http://***@proxy.test:3128"
    assert mask_proxy("http://proxy.test:3128/") == "http://proxy.test:3128/"
    assert mask_proxy("user:pw@host") == "***@host"
    assert mask_proxy("http://u:pa/ss@w0rd@proxy.test:1/") == "http://***@proxy.test:1/"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://user:hunter22@proxy.test:21", "must be an http:// or https:// URL"),
        ("socks5://proxy.test:1080", "must be an http:// or https:// URL"),
        ("proxy.test:3128", "must be an http:// or https:// URL"),
        ("http://", "must be an http:// or https:// URL"),
        ("http://user:hunter22@proxy.test:99999", "must be an http:// or https:// URL"),
        ("http://user:hunter22@proxy.test:3128/some/path", "must not have a path"),
        ("http://user:hunter22@[bad", "must be an http:// or https:// URL"),
        ("http://user:hunter22@bad host:3128", "must be an http:// or https:// URL"),
    ],
)
def test_a_bad_proxy_url_is_one_line_without_its_password(url: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_proxy_url(url, "--proxy")
    message = str(info.value)
    assert says in message and message.startswith("--proxy ")
    assert "\n" not in message and "hunter22" not in message


@pytest.mark.parametrize(
    "url", ["http://proxy.test:3128", "http://10.0.0.1:3128", "http://[::1]:3128"]
)
def test_host_names_and_addresses_are_accepted(url: str) -> None:
    assert check_proxy_url(url) == url


def test_a_proxy_password_is_masked_in_logs() -> None:
    clear_secrets()
    try:
        check_proxy_url("http://someone:hunter22secret@proxy.test:3128")
        assert "hunter22secret" not in redact_text("via http://someone:hunter22secret@proxy.test")
    finally:
        clear_secrets()


def test_environment_variables_lower_case_wins_and_blanks_are_ignored() -> None:
    found = environment_proxies(
        {
            "HTTPS_PROXY": "http://upper.test:1",
            "https_proxy": "http://lower.test:2",
            "HTTP_PROXY": "http://plain.test:3",
            "ALL_PROXY": "  ",
            "NO_PROXY": "localhost",
            "FTP_PROXY": "http://ftp.test:4",
        }
    )
    assert found == {
        "https": "http://lower.test:2",
        "http": "http://plain.test:3",
        "no": "localhost",
    }


def test_mounts_follow_the_scheme_no_proxy_and_an_explicit_proxy() -> None:
    env = {
        "HTTPS_PROXY": "http://secure.test:1",
        "HTTP_PROXY": "http://plain.test:2",
        "NO_PROXY": "internal.test, .corp.test,10.1.2.3,::1",
    }
    mounts = proxy_mounts(None, max_connections=2, environ=env)
    assert set(mounts) == {
        "https://",
        "http://",
        "all://*internal.test",
        "all://*corp.test",
        "all://10.1.2.3",
        "all://[::1]",
    }
    assert mounts["https://"] is not mounts["http://"]
    assert [mounts[k] for k in mounts if k.startswith("all://")] == [None] * 4
    # an explicit proxy serves both schemes; NO_PROXY still applies
    explicit = proxy_mounts("http://mine.test:3", max_connections=2, environ=env)
    assert set(explicit) - {"all://"} == {k for k in mounts if k.startswith("all://")}
    assert proxy_mounts(None, max_connections=2, environ={}) == {}
    assert proxy_mounts(None, max_connections=2, environ={**env, "no_proxy": "*"}) == {}


def test_a_bad_proxy_in_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"^HTTPS_PROXY must be an http"):
        proxy_mounts(None, max_connections=1, environ={"HTTPS_PROXY": "not a url"})


def _client(mounts: Mounts, **lean: object) -> httpx.AsyncClient:
    transport = LeanTransport(max_connections=2, max_keepalive=2, **lean)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, mounts=mounts, trust_env=False, timeout=5.0)


def _closing(answer: Answer) -> Answer:
    return dataclasses.replace(answer, close=True)


async def test_http_requests_are_forwarded_and_no_proxy_goes_direct() -> None:
    async with (
        serving(LoopbackProxy()) as proxy,
        scripted(*(_closing(ok(body)) for body in (b"one", b"two", b"three"))) as server,
    ):
        through = proxy_mounts(None, max_connections=2, environ={"HTTP_PROXY": proxy.url})
        async with _client(through) as c:
            assert (await c.get(server.url + "/a")).content == b"one"
            assert (await c.get(server.url + "/b")).content == b"two"
        assert proxy.forwarded == [server.url + "/a", server.url + "/b"]
        bypass = {"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"}
        async with _client(proxy_mounts(None, max_connections=2, environ=bypass)) as c:
            assert (await c.get(server.url + "/c")).content == b"three"
        assert len(proxy.forwarded) == 2  # the third went direct


async def test_https_goes_through_one_connect_tunnel_with_the_proxy_login(
    certificate: tuple[Path, Path],
) -> None:
    server_tls, client_tls = tls_contexts(certificate)
    chunked = Answer(
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntls\r\n0\r\n\r\n"]
    )
    async with (
        serving(LoopbackProxy(), auth="someone:hunter22@") as proxy,
        scripted(ok(b"secure"), chunked, tls=server_tls) as server,
    ):
        mounts = proxy_mounts(proxy.url, max_connections=2, ssl_context=client_tls, environ={})
        async with _client(mounts, ssl_context=client_tls) as c:
            first = await c.get(server.url + "/a")
            second = await c.get(server.url + "/b")
    assert (first.content, second.content) == (b"secure", b"tls")
    assert proxy.tunnels == [server.url.removeprefix("https://")]  # one tunnel, kept alive
    assert proxy.authorizations and proxy.authorizations[0].startswith("Basic ")
    assert server.connections == 1


def _settings(base_url: str, proxy: str) -> Settings:
    return Settings(base_url=base_url, proxy=proxy, max_attempts=2, max_retry_seconds=5.0)


async def test_a_refusing_proxy_is_retried_then_a_transient_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async with serving(LoopbackProxy(refuse=True), auth="someone:hunter22@") as proxy:
        settings = _settings("https://api.test", proxy.url)
        async with ApiClient(settings, cookies={}, sleep=sleep) as client:
            with pytest.raises(TransientError) as info:
                await client.get_json("/rest/thread/abc")
    assert proxy.refused == 2  # both attempts reached the proxy
    assert len(slept) == 1
    assert isinstance(info.value, ConnectionFailedError)  # exit 7, as an unreachable host
    message = str(info.value)
    assert "ProxyError" in message and "\n" not in message and "hunter22" not in message


async def test_a_closed_proxy_port_is_a_connection_failure() -> None:
    async with serving(LoopbackProxy()) as proxy:
        url = proxy.url
    async with ApiClient(_settings("http://api.test", url), cookies={}, sleep=_no_wait) as client:
        with pytest.raises(TransientError, match="cannot connect"):
            await client.get_json("/rest/thread/abc")


async def _no_wait(seconds: float) -> None:
    return None


def test_doctor_shows_a_proxy_without_its_login() -> None:
    assert shown_value("proxy", "http://someone:pw1@proxy.test:3128") == (
        "http://***@proxy.test:3128"
    )
