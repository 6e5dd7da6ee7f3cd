"""The API client sends browser-like requests, guards the session cookie and maps every error."""

from __future__ import annotations

import email.utils
import gc

import anyio
import httpx
import pytest
import structlog

from pplx_archiver.errors import (
    ChallengeError,
    FetchError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    SessionExpiredError,
    TerminalThreadError,
    TransientError,
)
from pplx_archiver.shell.net.cookies import NEXT_AUTH_COOKIE
from pplx_archiver.shell.net.http import map_response, parse_retry_after, parse_set_cookie
from tests.shell.helpers import BASE, TOKEN, json_response, make_client

CHALLENGE_HTML = (
    b"<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
    b"<body>Verify you are human</body></html>"
)


def _response(status: int, body: bytes, **headers: str) -> httpx.Response:
    request = httpx.Request("GET", BASE + "/rest/thread/abc?version=2.18")
    return httpx.Response(status, content=body, headers=headers, request=request)


async def test_rest_calls_carry_version_params_session_probe_does_not() -> None:
    """`/rest/*` gets version=2.18&source=default merged in; `/api/auth/session` gets none."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response({})

    async with make_client(handler) as client:
        await client.get_json("/rest/thread/abc", [("cursor", "C1"), ("use", "a"), ("use", "b")])
        await client.get_json("/rest/x", {"version": "9"})
        await client.get_json("/api/auth/session")
    q0 = seen[0].url.params
    assert q0.get_list("use") == ["a", "b"]
    assert (q0["cursor"], q0["version"], q0["source"]) == ("C1", "2.18", "default")
    assert seen[1].url.params.get_list("version") == ["9"]
    assert "version" not in seen[2].url.params and "source" not in seen[2].url.params


async def test_browser_like_headers_and_fresh_request_ids() -> None:
    """Every request has the browser headers, a new x-request-id and x-pplx-account once known."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response([])

    async with make_client(handler) as client:
        await client.post_json("/rest/thread/list_ask_threads", {"limit": 1})
        client.account_id = "acct-1"
        await client.get_json("/rest/thread/abc")
    first, second = seen
    for req in seen:
        assert "Chrome/" in req.headers["user-agent"]
        assert req.headers["referer"] == BASE + "/"
        assert req.headers["origin"] == BASE
        assert req.headers["x-app-apiclient"] == "default"
        assert req.headers["x-app-apiversion"] == "2.18"
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert "x-pplx-account" not in first.headers
    assert second.headers["x-pplx-account"] == "acct-1"
    assert first.content == b'{"limit":1}'


async def test_redirect_to_foreign_host_is_not_followed_and_gets_no_cookie() -> None:
    """A redirect to another host is an error; the other host never sees a request or cookie."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "www.perplexity.ai":
            return httpx.Response(302, headers={"location": "https://evil.example/steal"})
        return json_response({})

    async with make_client(handler) as client:
        with pytest.raises(FetchError, match=r"redirect .*evil\.example"):
            await client.get_json("/rest/thread/abc")
    assert [r.url.host for r in seen] == ["www.perplexity.ai"]
    assert TOKEN in seen[0].headers["cookie"]


async def test_cookie_header_only_for_the_api_origin() -> None:
    """The Cookie header is built for the API origin only (same scheme, host and port)."""
    async with make_client(lambda r: json_response({})) as client:
        assert "Cookie" in client._headers(httpx.URL(BASE + "/rest/x"))
        for foreign in (
            "https://pplx-res.cloudinary.com/a.png",
            "http://www.perplexity.ai/x",
            "https://www.perplexity.ai:8443/x",
            "https://perplexity.ai.evil.com/",
        ):
            assert "Cookie" not in client._headers(httpx.URL(foreign)), foreign


async def test_httpx_cookie_jar_is_disabled() -> None:
    """Cookies set by the server for other domains are neither stored nor sent anywhere."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, json={}, headers=[("set-cookie", "tracker=x1; Domain=evil.example; Path=/")]
        )

    async with make_client(handler) as client:
        await client.get_json("/rest/a")
        await client.get_json("/rest/b")
        assert "tracker" not in client.cookies
        assert len(client._http.cookies) == 0
    assert "tracker" not in seen[1].headers["cookie"]


async def test_rotated_session_cookie_is_used_and_reported() -> None:
    """A Set-Cookie rotating the session is sent on later requests and handed to the callback."""
    seen: list[httpx.Request] = []
    persisted: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        headers = []
        if len(seen) == 1:
            headers = [
                ("set-cookie", f"{NEXT_AUTH_COOKIE}=rotated-value-123; Path=/; Secure; HttpOnly"),
                ("set-cookie", "__cf_bm=bm-value-1; Path=/"),
            ]
        return httpx.Response(200, json={}, headers=headers)

    with structlog.testing.capture_logs() as logs:
        async with make_client(
            handler, on_cookie_rotated=lambda c: persisted.append(dict(c))
        ) as client:
            await client.get_json("/rest/a")
            await client.get_json("/rest/b")
            await client.get_json("/rest/c")
    assert f"{NEXT_AUTH_COOKIE}={TOKEN}" in seen[0].headers["cookie"]
    assert f"{NEXT_AUTH_COOKIE}=rotated-value-123" in seen[1].headers["cookie"]
    assert "__cf_bm=bm-value-1" in seen[2].headers["cookie"]
    assert persisted == [{NEXT_AUTH_COOKIE: "rotated-value-123", "__cf_bm": "bm-value-1"}]
    rotated = [e for e in logs if e["event"] == "SESSION_COOKIE_ROTATED"]
    assert len(rotated) == 1 and rotated[0]["cookie_names"] == [NEXT_AUTH_COOKIE]
    assert "rotated-value-123" not in repr(logs)
    assert client.stats().cookie_rotations == 1


async def test_request_rejected_with_a_cookie_rotated_in_flight_is_sent_again() -> None:
    """A request sent before another's answer rotated the session, and rejected for the old
    cookie, is sent once more with the new one; a rejection of the newest cookie is not."""
    rotated = anyio.Event()
    seen: list[tuple[str, str]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        token = request.headers["cookie"].split(f"{NEXT_AUTH_COOKIE}=")[1].split(";")[0]
        seen.append((request.url.path, token))
        if request.url.path == "/rest/fast":
            rotated.set()
            cookie = f"{NEXT_AUTH_COOKIE}=new-token; Path=/; Secure; HttpOnly"
            return httpx.Response(200, json={}, headers=[("set-cookie", cookie)])
        if request.url.path == "/rest/slow":
            await rotated.wait()
        return json_response({"ok": token}, 200 if token == "new-token" else 401)

    with structlog.testing.capture_logs() as logs:
        async with make_client(handler, concurrency=2) as client:
            answers: dict[str, object] = {}

            async def get(path: str) -> None:
                answers[path] = (await client.get_json(path))[0]

            async with anyio.create_task_group() as tg:
                tg.start_soon(get, "/rest/slow")
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(get, "/rest/fast")
            with pytest.raises(ForbiddenError, match="401"):
                client._cookies[NEXT_AUTH_COOKIE] = "revoked"
                await client.get_json("/rest/other")
    assert answers["/rest/slow"] == {"ok": "new-token"}
    assert seen[:3] == [("/rest/slow", TOKEN), ("/rest/fast", TOKEN), ("/rest/slow", "new-token")]
    assert seen[3:] == [("/rest/other", "revoked")]  # no rotation since: not sent again
    assert [e["path"] for e in logs if e["event"] == "STALE_COOKIE_RESENT"] == ["/rest/slow"]


async def test_session_cookie_deletion_is_ignored() -> None:
    """A Set-Cookie deleting the session cookie does not drop the session mid-run."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json={}, headers=[("set-cookie", f"{NEXT_AUTH_COOKIE}=; Max-Age=0; Path=/")]
        )

    async with make_client(handler) as client:
        await client.get_json("/rest/a")
        assert client.cookies[NEXT_AUTH_COOKIE] == TOKEN


@pytest.mark.parametrize(
    ("status", "body", "headers", "error", "attrs"),
    [
        (403, CHALLENGE_HTML, {"content-type": "text/html"}, ChallengeError, {"status": 403}),
        (503, CHALLENGE_HTML, {"content-type": "text/html"}, ChallengeError, {"status": 503}),
        (503, b"{}", {"cf-mitigated": "challenge"}, ChallengeError, {}),
        (200, b"<html>Just a moment...</html>", {}, ChallengeError, {"status": 200}),
        (403, b"<html><body>blocked</body></html>", {}, ChallengeError, {}),
        (503, b"<html>maintenance</html>", {"content-type": "text/html"}, TransientError, {}),
        (401, b"", {}, SessionExpiredError, {}),
        (403, b"{}", {}, SessionExpiredError, {}),
        (403, b'{"detail": "Not authenticated"}', {}, SessionExpiredError, {}),
        (
            403,
            b'{"detail": {"error_code": "VIEW_THREAD_NOT_ALLOWED"}}',
            {},
            ForbiddenError,
            {"code": "VIEW_THREAD_NOT_ALLOWED"},
        ),
        (429, b"", {"retry-after": "7"}, RateLimitedError, {"retry_after": 7.0}),
        (429, b"{}", {}, RateLimitedError, {"retry_after": None}),
        (200, b'{"error_code": "RATE_LIMITED"}', {}, RateLimitedError, {"status": 200}),
        (
            400,
            b'{"detail": {"error_code": "ENTRY_DELETED"}}',
            {},
            TerminalThreadError,
            {"state": "deleted"},
        ),
        (
            400,
            b'{"detail": "ENTRY_EXPIRED: purged"}',
            {},
            TerminalThreadError,
            {"state": "expired"},
        ),
        (404, b'{"detail": "THREAD_NOT_FOUND"}', {}, NotFoundError, {"status": 404}),
        (500, b"oops", {}, TransientError, {"status": 500}),
        (502, b"", {}, TransientError, {"status": 502}),
        (504, b"", {}, TransientError, {"status": 504}),
        (200, b'{"entries": [1, 2', {}, TransientError, {"status": 200}),
        (200, b"", {}, TransientError, {}),
        (200, b"<html><body>app shell</body></html>", {}, TransientError, {}),
    ],
)
def test_error_seam(
    status: int,
    body: bytes,
    headers: dict[str, str],
    error: type[Exception],
    attrs: dict[str, object],
) -> None:
    """Each status/body shape becomes exactly one error class of the tree."""
    with pytest.raises(error) as info:
        map_response(_response(status, body, **headers))
    assert type(info.value) is error
    for name, value in attrs.items():
        assert getattr(info.value, name) == value


@pytest.mark.parametrize("status", [400, 409, 422])
def test_other_client_errors_are_plain_fetch_errors(status: int) -> None:
    """Other 4xx answers are not retried: a plain FetchError naming the status."""
    with pytest.raises(FetchError) as info:
        map_response(_response(status, b'{"detail": "bad"}'))
    assert type(info.value) is FetchError and info.value.status == status


def test_good_json_returns_decoded_and_verbatim_bytes() -> None:
    """A JSON 200 gives the decoded value and the exact body bytes."""
    body = b'{"b": 1,  "a": [1.50, "\\u00e9"]}'
    decoded, raw = map_response(_response(200, body))
    assert decoded == {"b": 1, "a": [1.5, "é"]}
    assert raw is not None and raw == body


def test_retry_after_forms() -> None:
    """Retry-After is read as seconds or as an HTTP date relative to now."""
    now = 1_800_000_000.0
    assert parse_retry_after("12", now) == 12.0
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now) == 30.0
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_set_cookie_parsing() -> None:
    """Set-Cookie gives name, value, deletion and domain."""
    assert parse_set_cookie("a=b=c; Path=/; Domain=.perplexity.ai") == (
        "a",
        "b=c",
        False,
        "perplexity.ai",
    )
    assert parse_set_cookie("a=x; Max-Age=0")[2] is True  # type: ignore[index]
    assert parse_set_cookie("a=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT")[2] is True  # type: ignore[index]
    assert parse_set_cookie("garbage") is None


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("peer closed connection without sending complete message body"),
        httpx.ReadError("reset"),
    ],
)
async def test_transport_errors_are_transient(exc: httpx.HTTPError) -> None:
    """Connection failures, timeouts and truncated transfers become TransientError."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    async with make_client(handler, max_attempts=1) as client:
        with pytest.raises(TransientError) as info:
            await client.get_json("/rest/thread/abc")
    assert info.value.url == "/rest/thread/abc"
    assert client.stats().requests_by_kind == {"thread": 1}


async def test_a_broken_answer_names_the_host_and_what_was_wrong() -> None:
    """A server that does not speak HTTP: the error line says which host and why."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("invalid status line b'garbage'", request=request)

    async with make_client(handler, max_attempts=1) as client:
        with pytest.raises(TransientError) as info:
            await client.get_json("/rest/thread/abc")
    message = str(info.value)
    assert "connection to www.perplexity.ai failed" in message
    assert "invalid status line b'garbage'" in message
    assert "RemoteProtocolError" in message


async def test_counters_by_kind_and_status() -> None:
    """Requests are counted by kind and responses by status, retries included."""
    calls = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return httpx.Response(502)
        return json_response([])

    async with make_client(handler) as client:
        await client.get_json("/rest/thread/abc")
        await client.post_json("/rest/thread/list_ask_threads", {})
        await client.get_json("/api/auth/session")
        stats = client.stats()
    assert stats.requests_by_kind == {"thread": 2, "list": 1, "session": 1}
    assert stats.responses_by_status == {502: 1, 200: 3}
    assert stats.retries == 1 and stats.requests == 4


class _FakeCurlResponse:
    status_code = 200
    content = b'{"ok": true}'
    headers = httpx.Headers([("content-type", "application/json"), ("set-cookie", "a=1"),
                             ("content-encoding", "gzip")])  # fmt: skip


class _FakeCurlSession:
    def __init__(self, impersonate: str) -> None:
        self.impersonate = impersonate
        self.calls: list[dict[str, object]] = []
        self.fail: Exception | None = None

    async def request(self, method: str, url: str, **kwargs: object) -> _FakeCurlResponse:
        self.calls.append({"method": method, "url": url, **kwargs})
        if self.fail is not None:
            raise self.fail
        return _FakeCurlResponse()

    async def close(self) -> None:
        return None


async def test_curl_transport_adapts_requests_and_errors() -> None:
    """The impersonating transport sends the same request and maps curl failures to httpx."""
    from types import SimpleNamespace

    from pplx_archiver.shell.net.transport_curl import CurlTransport

    sessions: list[_FakeCurlSession] = []

    def make(impersonate: str) -> _FakeCurlSession:
        sessions.append(_FakeCurlSession(impersonate))
        return sessions[-1]

    transport = CurlTransport("chrome", module=SimpleNamespace(AsyncSession=make))
    request = httpx.Request("POST", BASE + "/rest/x?version=2.18", json={"a": 1},
                            headers={"Cookie": "c=1"})  # fmt: skip
    response = await transport.handle_async_request(request)
    call = sessions[0].calls[0]
    assert sessions[0].impersonate == "chrome"
    assert (call["method"], call["url"], call["allow_redirects"]) == (
        "POST",
        BASE + "/rest/x?version=2.18",
        False,
    )
    assert call["data"] == b'{"a":1}'
    assert response.headers.get_list("set-cookie") == ["a=1"]
    assert "content-encoding" not in response.headers
    assert await response.aread() == b'{"ok": true}'
    sessions[0].fail = RuntimeError("Operation timed out after 60000 ms")
    with pytest.raises(httpx.ReadTimeout):
        await transport.handle_async_request(request)
    sessions[0].fail = RuntimeError("Could not resolve host")
    with pytest.raises(httpx.ConnectError):
        await transport.handle_async_request(request)
    await transport.aclose()


def test_403_challenge_page_without_html_type_or_leading_tag() -> None:
    """A 403 whose body is a challenge page is a challenge even as JSON, behind a comment."""
    body = b"<!-- edge --><div id='cf-chl-widget'>Just a moment...</div>"
    request = httpx.Request("GET", "https://www.perplexity.ai/rest/thread/x")
    for ctype in ("application/json", "text/plain", ""):
        headers = {"content-type": ctype} if ctype else {}
        response = httpx.Response(403, content=body, headers=headers, request=request)
        with pytest.raises(ChallengeError):
            map_response(response)


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/rest/thread/abc", None),
        ("/rest/thread/abc", [("limit", "100"), ("cursor", "a b/c+d=é&?#")]),
        ("/rest/thread/abc", {"with_schematized_response": True, "limit": 5, "x": None}),
        ("/rest/thread/abc", [("version", "9"), ("k", "1"), ("k", "2")]),
        ("/rest/thread/%E2%9C%93-slug", [("q", "✓")]),
        ("/rest/thread/abc?already=1", [("limit", "2")]),
        ("/api/auth/session", None),
        ("/api/auth/session", [("a", "")]),
    ],
)
async def test_request_urls_are_those_httpx_would_merge(path: str, params: object) -> None:
    """The URL parsed once with its query is byte for byte the URL httpx's merge builds."""
    async with make_client(lambda r: json_response({})) as client:
        query = client._query(path, params)  # type: ignore[arg-type]
        merged = client._http.build_request(
            "GET", httpx.URL(client.base_url + path), params=query
        ).url
        built = client._url(path, params)  # type: ignore[arg-type]
    assert (built.raw_scheme, built.raw_host, built.port) == (
        merged.raw_scheme,
        merged.raw_host,
        merged.port,
    )
    assert built.raw_path == merged.raw_path
    assert str(built) == str(merged)


async def test_a_finished_request_leaves_no_cyclic_garbage() -> None:
    """Each response is freed by reference counting once read (httpx binds a streamed
    response and its stream in a cycle; the client unbinds them), so a run's requests
    leave the garbage collector nothing to find."""
    async with make_client(lambda _request: json_response({"a": [1, 2]})) as client:
        await client.get_json("/rest/warm")  # one-time objects of the first request
        gc.collect()
        gc.disable()
        try:
            for n in range(20):
                await client.get_json(f"/rest/thread/{n}")
            found = gc.collect()
        finally:
            gc.enable()
    assert found < 20  # one response's cycle alone held ~30 objects
