"""The lean transport's HTTP/1.1 connections against scripted servers: framing, reuse, errors."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from pplx_archiver.shell.net import http1
from pplx_archiver.shell.net.transport import LeanTransport


@dataclasses.dataclass
class Answer:
    """What the server writes for one request: pieces (a pause between), then maybe close."""

    pieces: list[bytes]
    close: bool = False
    pause: float = 0.0


@dataclasses.dataclass
class Scripted:
    """A loopback server answering each request with the next scripted :class:`Answer`."""

    answers: list[Answer]
    url: str = ""
    connections: int = 0
    requests: list[tuple[bytes, bytes]] = dataclasses.field(default_factory=list)
    writers: list[asyncio.StreamWriter] = dataclasses.field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append((head, await _request_body(reader, head)))
                answer = self.answers.pop(0)
                for n, piece in enumerate(answer.pieces):
                    if n and answer.pause:
                        await asyncio.sleep(answer.pause)
                    writer.write(piece)
                    await writer.drain()
                if answer.close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _request_body(reader: asyncio.StreamReader, head: bytes) -> bytes:
    lowered = head.lower()
    if b"transfer-encoding: chunked" in lowered:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            body += (await reader.readexactly(size + 2))[:size]
            if not size:
                return body
    for line in lowered.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return await reader.readexactly(int(line.split(b":")[1]))
    return b""


@contextlib.asynccontextmanager
async def scripted(*answers: Answer, tls: ssl.SSLContext | None = None) -> AsyncIterator[Scripted]:
    state = Scripted(list(answers))
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    state.url = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    try:
        yield state
    finally:
        for writer in state.writers:
            writer.close()
        server.close()
        await server.wait_closed()


def ok(body: bytes, *extra: bytes) -> Answer:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(body) + b"".join(extra)
    return Answer([head + b"\r\n" + body])


def _client(transport: LeanTransport | None = None, timeout: float = 5.0) -> httpx.AsyncClient:
    transport = transport or LeanTransport(max_connections=4, max_keepalive=4)
    return httpx.AsyncClient(transport=transport, trust_env=False, timeout=timeout)


async def test_content_length_bodies_on_one_kept_connection() -> None:
    async with scripted(ok(b"one"), ok(b"two", b"X-Two: 2\r\n")) as server, _client() as c:
        first = await c.get(server.url + "/a")
        second = await c.get(server.url + "/b?q=1")
    assert (first.content, second.content) == (b"one", b"two")
    assert second.headers["x-two"] == "2"
    assert (first.http_version, first.reason_phrase) == ("HTTP/1.1", "OK")
    assert server.connections == 1
    assert server.requests[1][0].startswith(b"GET /b?q=1 HTTP/1.1\r\n")


async def test_a_chunked_body_arriving_in_pieces_then_the_connection_is_reused() -> None:
    """Chunk sizes in hex, an extension, a trailer; every piece split across writes."""
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\nA\r\n, chunked!\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    trickled = Answer([raw[i : i + 7] for i in range(0, len(raw), 7)], pause=0.002)
    async with scripted(trickled, ok(b"next")) as server, _client() as c:
        first = await c.get(server.url + "/chunked")
        second = await c.get(server.url + "/next")
    assert first.content == b"hello, chunked!"
    assert second.content == b"next"
    assert server.connections == 1


async def test_a_large_body_read_slowly_is_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    """More than the read buffer's high mark: reading pauses and resumes, nothing is lost."""
    monkeypatch.setattr(http1, "READ_HIGH", 64 * 1024)
    pauses = 0
    pause = http1._Wire.data_received

    def counting(wire: http1._Wire, data: bytes) -> None:
        nonlocal pauses
        was = wire.paused_reading
        pause(wire, data)
        pauses += wire.paused_reading and not was

    monkeypatch.setattr(http1._Wire, "data_received", counting)
    body = os.urandom(8 * 1024 * 1024 + 12345)
    async with scripted(ok(body), ok(b"after")) as server, _client() as c:
        async with c.stream("GET", server.url + "/big") as response:
            parts = []
            async for part in response.aiter_raw():
                parts.append(part)
                await asyncio.sleep(0.001)  # a slow reader
        assert b"".join(parts) == body
        assert (await c.get(server.url + "/after")).content == b"after"
    assert pauses > 1
    assert server.connections == 1


async def test_a_body_up_to_the_connection_end_is_not_reused() -> None:
    until_end = Answer([b"HTTP/1.1 200 OK\r\n\r\n", b"all of it"], close=True, pause=0.01)
    async with scripted(until_end, ok(b"new")) as server, _client() as c:
        assert (await c.get(server.url + "/a")).content == b"all of it"
        assert (await c.get(server.url + "/b")).content == b"new"
    assert server.connections == 2


@pytest.mark.parametrize("status", [204, 304])
async def test_no_body_statuses_and_head_keep_the_connection(status: int) -> None:
    """204/304 and HEAD have no body even with a Content-Length; the connection stays usable."""
    no_body = Answer([b"HTTP/1.1 %d Nothing\r\nContent-Length: 99\r\n\r\n" % status])
    head = Answer([b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"])
    async with scripted(no_body, head, ok(b"body")) as server, _client() as c:
        empty = await c.get(server.url + "/none")
        headed = await c.head(server.url + "/head")
        after = await c.get(server.url + "/after")
    assert (empty.status_code, empty.content) == (status, b"")
    assert (headed.headers["content-length"], headed.content) == ("5", b"")
    assert after.content == b"body"
    assert server.connections == 1


async def test_informational_answers_are_skipped() -> None:
    early = Answer(
        [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"]
    )
    async with scripted(early) as server, _client() as c:
        answer = await c.get(server.url + "/")
    assert (answer.status_code, answer.content) == (201, b"ok")


async def test_connection_close_from_either_side_is_not_reused() -> None:
    closing = ok(b"bye", b"Connection: close\r\n")
    async with scripted(closing, ok(b"x"), ok(b"y")) as server, _client() as c:
        assert (await c.get(server.url + "/1")).content == b"bye"
        asked = await c.get(server.url + "/2", headers={"Connection": "close"})
        assert asked.content == b"x"
        assert (await c.get(server.url + "/3")).content == b"y"
    assert server.connections == 3


async def test_http_1_0_answers_are_not_reused() -> None:
    old = Answer([b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold"])
    async with scripted(old, ok(b"new")) as server, _client() as c:
        assert (await c.get(server.url + "/1")).content == b"old"
        assert (await c.get(server.url + "/2")).content == b"new"
    assert server.connections == 2


@pytest.mark.parametrize(
    "pieces",
    [
        [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part"],
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort"],
        [b"HTTP/1.1 200 OK\r\nContent-Le"],
        [],
    ],
    ids=["content-length", "chunked", "head", "nothing"],
)
async def test_a_server_closing_early_is_a_remote_protocol_error(pieces: list[bytes]) -> None:
    async with scripted(Answer(pieces, close=True), ok(b"again")) as server, _client() as c:
        with pytest.raises(httpx.RemoteProtocolError):
            await c.get(server.url + "/cut")
        assert (await c.get(server.url + "/again")).content == b"again"
    assert server.connections == 2


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 2OO OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"SPDY/3 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx",
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (http1.MAX_HEAD + 10) + b"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-Nul: a\x00b\r\nContent-Length: 0\r\n\r\n",
    ],
    ids=[
        *("status", "two-lengths", "negative-length", "header-name", "chunk-size", "protocol"),
        *("conflicting-list", "unknown-coding", "head-too-long", "control-character"),
    ],
)
async def test_malformed_answers_are_remote_protocol_errors(raw: bytes) -> None:
    async with scripted(Answer([raw])) as server, _client() as c:
        with pytest.raises(httpx.RemoteProtocolError):
            await c.get(server.url + "/bad")


async def test_a_silent_server_is_a_read_timeout_and_the_connection_is_dropped() -> None:
    slow = Answer([b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n", b"late"], pause=1.0)
    async with scripted(slow, ok(b"fresh")) as server, _client(timeout=0.2) as c:
        with pytest.raises(httpx.ReadTimeout):
            await c.get(server.url + "/slow")
        assert (await c.get(server.url + "/fresh")).content == b"fresh"
    assert server.connections == 2


async def test_a_cancelled_read_does_not_leave_the_connection_in_the_pool() -> None:
    slow = Answer([b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n", b"late"], pause=1.0)
    transport = LeanTransport(max_connections=1, max_keepalive=1)
    async with scripted(slow, ok(b"fresh")) as server, _client(transport) as c:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await c.get(server.url + "/slow")
        assert (await c.get(server.url + "/fresh")).content == b"fresh"
    assert server.connections == 2


async def test_request_bodies_sized_and_streamed() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"strea"
        yield b"med"

    async with scripted(ok(b"1"), ok(b"2")) as server, _client() as c:
        await c.post(server.url + "/json", json={"a": 1})
        await c.post(server.url + "/stream", content=parts())
    (json_head, json_body), (stream_head, stream_body) = server.requests
    assert json_body == b'{"a":1}'
    assert b"content-length: 7" in json_head.lower()
    assert stream_body == b"streamed"
    assert b"transfer-encoding: chunked" in stream_head.lower()


async def test_a_header_with_a_line_break_is_refused_before_sending() -> None:
    async with scripted(ok(b"unused")) as server, _client() as c:
        with pytest.raises(httpx.LocalProtocolError):
            await c.get(server.url + "/", headers={"X-Evil": "a\r\nInjected: 1"})
    assert server.requests == []


async def test_a_connect_timeout_is_an_httpx_connect_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.get_running_loop()

    async def hang(*args: object, **kwargs: object) -> None:
        await asyncio.sleep(10)

    monkeypatch.setattr(loop, "create_connection", hang)
    with pytest.raises(httpx.ConnectTimeout):
        await http1.connect((b"http", b"127.0.0.1", 9), None, 0.05)


# ----------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the openssl command line."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "the https tests need the openssl command"
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def tls_contexts(certificate: tuple[Path, Path]) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """The loopback server's TLS context and a client's that trusts its certificate."""
    cert, key = certificate
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    return server_tls, ssl.create_default_context(cafile=str(cert))


async def test_https_with_a_trusted_self_signed_certificate(certificate: tuple[Path, Path]) -> None:
    server_tls, client_tls = tls_contexts(certificate)
    transport = LeanTransport(max_connections=2, max_keepalive=2, ssl_context=client_tls)
    chunked = Answer(
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntls\r\n0\r\n\r\n"]
    )
    async with scripted(ok(b"secure"), chunked, tls=server_tls) as server, _client(transport) as c:
        first = await c.get(server.url + "/a")
        second = await c.get(server.url + "/b")
    assert (first.content, second.content) == (b"secure", b"tls")
    assert server.connections == 1


async def test_https_with_an_unknown_certificate_is_a_connect_error(
    certificate: tuple[Path, Path],
) -> None:
    server_tls, _ = tls_contexts(certificate)
    async with scripted(ok(b"never"), tls=server_tls) as server, _client() as c:
        with pytest.raises(httpx.ConnectError):
            await c.get(server.url + "/")
