"""The lean transport reuses keep-alive connections, bounds requests in flight and maps errors."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.abc
import socket
import sys
from collections.abc import AsyncIterator

import httpx
import pytest

from pplx_archiver.shell.net.transport import LeanTransport


@dataclasses.dataclass
class Loopback:
    """A tiny HTTP/1.1 server on 127.0.0.1 counting connections and requests in flight."""

    url: str = ""
    connections: int = 0
    in_flight: int = 0
    peak: int = 0
    delay: float = 0.0
    close_after_each: bool = False
    writers: list[asyncio.StreamWriter] = dataclasses.field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1]
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
                await asyncio.sleep(self.delay)
                self.in_flight -= 1
                body = b"answer to " + path
                extra = b"Connection: close\r\n" if self.close_after_each else b""
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n" % (len(body), extra)
                )
                writer.write(body)
                await writer.drain()
                if self.close_after_each:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def drop_idle_connections(self) -> None:
        """Close every connection from the server's side (as a server's idle timeout does)."""
        for writer in self.writers:
            writer.close()
        self.writers.clear()


@contextlib.asynccontextmanager
async def loopback(**options: object) -> AsyncIterator[Loopback]:
    state = Loopback(**options)  # type: ignore[arg-type]
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    state.url = f"http://127.0.0.1:{port}"
    try:
        yield state
    finally:
        state.drop_idle_connections()
        server.close()
        await server.wait_closed()


def _client(transport: LeanTransport) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=transport, trust_env=False)


async def test_sequential_requests_reuse_one_connection() -> None:
    """Five requests one after another go over one keep-alive connection."""
    async with (
        loopback() as server,
        _client(LeanTransport(max_connections=4, max_keepalive=4)) as c,
    ):
        bodies = [(await c.get(f"{server.url}/r{i}")).content for i in range(5)]
    assert bodies == [b"answer to /r%d" % i for i in range(5)]
    assert server.connections == 1


async def test_requests_in_flight_are_bounded_and_connections_reused() -> None:
    """Ten requests at once with max_connections=3: never more than 3 at the server, 3 sockets."""
    transport = LeanTransport(max_connections=3, max_keepalive=3)
    async with loopback(delay=0.05) as server, _client(transport) as c:
        answers = await asyncio.gather(*(c.get(f"{server.url}/c{i}") for i in range(10)))
    assert [a.status_code for a in answers] == [200] * 10
    assert server.peak == 3
    assert server.connections == 3


async def test_a_connection_the_server_closed_is_replaced() -> None:
    """An idle connection closed by the server is noticed and a new one is opened."""
    async with (
        loopback() as server,
        _client(LeanTransport(max_connections=2, max_keepalive=2)) as c,
    ):
        assert (await c.get(f"{server.url}/a")).status_code == 200
        server.drop_idle_connections()
        await asyncio.sleep(0.05)
        assert (await c.get(f"{server.url}/b")).content == b"answer to /b"
    assert server.connections == 2


async def test_connection_close_answers_are_not_reused() -> None:
    """A server answering ``Connection: close`` gets a new connection per request."""
    transport = LeanTransport(max_connections=2, max_keepalive=2)
    async with loopback(close_after_each=True) as server, _client(transport) as c:
        for i in range(3):
            assert (await c.get(f"{server.url}/x{i}")).status_code == 200
    assert server.connections == 3
    assert transport._idle_count == 0


async def test_idle_connections_are_capped_across_origins() -> None:
    """With max_keepalive=1 and two origins only one idle connection is kept."""
    transport = LeanTransport(max_connections=4, max_keepalive=1)
    async with loopback() as one, loopback() as two, _client(transport) as c:
        await c.get(f"{one.url}/1")
        await c.get(f"{two.url}/2")
        assert transport._idle_count == 1
        await c.get(f"{two.url}/3")
    assert (one.connections, two.connections) == (1, 1)


async def test_a_refused_connection_is_an_httpx_connect_error() -> None:
    """httpcore's errors become httpx's (the API client's seam maps those)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    transport = LeanTransport(max_connections=1, max_keepalive=1)
    async with loopback() as server, _client(transport) as c:
        with pytest.raises(httpx.ConnectError):
            await c.get(f"http://127.0.0.1:{port}/")
        with pytest.raises(httpx.UnsupportedProtocol):
            await c.get("ftp://127.0.0.1/")
        # the failed request gave its one slot back: the transport is usable again
        assert (await c.get(f"{server.url}/ok")).status_code == 200


def test_max_connections_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        LeanTransport(max_connections=0, max_keepalive=0)


class _RecordingFinder(importlib.abc.MetaPathFinder):
    """Records every module the import system is asked to search for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        self.asked.append(fullname)


async def test_a_request_searches_for_no_module() -> None:
    """Once warm, a request through the client and the lean transport imports nothing.

    httpcore's pool asked for ``sniffio`` on every lock and request, and without it installed
    each ask was a failed import searching all of ``sys.path`` (docs/dev/performance.md)."""
    finder = _RecordingFinder()
    async with (
        loopback() as server,
        _client(LeanTransport(max_connections=2, max_keepalive=2)) as c,
    ):
        await c.get(f"{server.url}/warm")
        sys.meta_path.insert(0, finder)
        try:
            for i in range(3):
                assert (await c.get(f"{server.url}/r{i}")).status_code == 200
        finally:
            sys.meta_path.remove(finder)
    assert finder.asked == []
