"""A small HTTP proxy on 127.0.0.1 for the tests: CONNECT tunnels and forwarded requests,
counting what passed through it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import AsyncIterator, Iterator


@dataclasses.dataclass
class LoopbackProxy:
    """What the proxy saw; ``refuse`` answers every request 407 (a proxy wanting a login)."""

    refuse: bool = False
    url: str = ""
    tunnels: list[str] = dataclasses.field(default_factory=list)
    forwarded: list[str] = dataclasses.field(default_factory=list)
    authorizations: list[str] = dataclasses.field(default_factory=list)
    refused: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            lines = head.decode("latin-1").split("\r\n")[1:]
            fields = [line.partition(":") for line in lines if line]
            headers = {name.strip().lower(): value.strip() for name, _, value in fields}
            if "proxy-authorization" in headers:
                self.authorizations.append(headers["proxy-authorization"])
            if self.refuse:
                self.refused += 1
                writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n")
                writer.write(b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
            elif method == "CONNECT":
                await self._tunnel(target, reader, writer)
            else:
                await self._forward(head, target, headers, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def _tunnel(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.tunnels.append(target)
        host, _, port = target.rpartition(":")
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()

    async def _forward(
        self,
        head: bytes,
        target: str,
        headers: dict[str, str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """One request per connection: sent on with ``Connection: close``, the answer (read to
        the server's end) relayed with ``Connection: close``."""
        self.forwarded.append(target)
        rest = target.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host, _, port = authority.rpartition(":")
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        first, fields = head.split(b"\r\n", 1)
        method = first.split(b" ", 1)[0]
        kept = [
            line
            for line in fields.split(b"\r\n")
            if line and not line.lower().startswith((b"connection:", b"proxy-"))
        ]
        request = b"%s /%s HTTP/1.1\r\n" % (method, path.encode("latin-1"))
        request += b"\r\n".join([*kept, b"Connection: close"]) + b"\r\n\r\n" + body
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        try:
            up_writer.write(request)
            await up_writer.drain()
            answer = await up_reader.read()
            status, _, tail = answer.partition(b"\r\n")
            writer.write(status + b"\r\nConnection: close\r\n" + tail)
            await writer.drain()
        finally:
            up_writer.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except ConnectionError:
        pass
    finally:
        sink.close()


@contextlib.asynccontextmanager
async def serving(proxy: LoopbackProxy, auth: str = "") -> AsyncIterator[LoopbackProxy]:
    """Serve ``proxy`` on this event loop; ``auth`` (``user:password@``) goes into its URL."""
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    proxy.url = f"http://{auth}127.0.0.1:{port}"
    try:
        yield proxy
    finally:
        server.close()


@contextlib.contextmanager
def serving_in_thread(proxy: LoopbackProxy, auth: str = "") -> Iterator[LoopbackProxy]:
    """Serve ``proxy`` on an event loop of its own thread (for commands run in-process)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop = asyncio.Event()

    async def main() -> None:
        async with serving(proxy, auth):
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield proxy
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()
