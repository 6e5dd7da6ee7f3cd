"""One HTTP/1.1 client connection on an asyncio protocol (the lean transport's connections).

:class:`Http1Connection` sends one request at a time over a TCP (or TLS, through an
:class:`ssl.SSLContext`) connection and reads the answer with a small parser: status line,
headers, and a body framed by ``Content-Length``, ``Transfer-Encoding: chunked`` or the end of
the connection (RFC 9112 §6.3); no body for HEAD, 1xx, 204 and 304; 1xx answers other than 101
are skipped. The connection is kept for the next request unless the answer or the request
said ``Connection: close``, the answer was HTTP/1.0 or read to the connection's end, or its
body was not read to its end.

The event loop reads eagerly into the protocol's buffer (reading pauses above
:data:`READ_HIGH` buffered bytes until the body's reader catches up), so an idle connection
the server closed is known as soon as the loop sees it, without a readability check.

Timeouts come from the request's ``timeout`` extension (httpx's): ``connect`` for the TCP and
TLS handshake, ``read`` for every wait for the server's bytes, ``write`` for every wait for the
socket to take the request. Errors are httpx's, as httpx's own transport raises them:
``ConnectError``/``ConnectTimeout``, ``ReadTimeout``/``WriteTimeout``, ``ReadError`` (a reset
connection), ``RemoteProtocolError`` (a closed connection or a malformed answer),
``LocalProtocolError`` (a header with a line break).
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

Origin = tuple[bytes, bytes, int]
Headers = list[tuple[bytes, bytes]]

MAX_HEAD = 64 * 1024
READ_HIGH = 1024 * 1024
WRITE_BATCH = 64 * 1024
_NO_BODY_STATUSES = frozenset({204, 304})
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: (.*))?")
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")


class _Wire(asyncio.Protocol):
    """The socket's side: bytes received, end of stream, write flow control, one waiter."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[bool] | None = None
        self.paused_writing = False
        self.paused_reading = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > READ_HIGH and self.transport is not None:
            self.paused_reading = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self.paused_writing = False
        self._wake()

    def pause_writing(self) -> None:
        self.paused_writing = True

    def resume_writing(self) -> None:
        self.paused_writing = False
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(False)

    def consumed(self) -> None:
        """The reader took bytes: read from the socket again once the buffer is small."""
        if self.paused_reading and len(self.buffer) <= READ_HIGH // 2:
            self.paused_reading = False
            if self.transport is not None:
                self.transport.resume_reading()

    async def wait(self, seconds: float | None, expired: type[httpx.TimeoutException]) -> None:
        """Wait for the next event (bytes, end, writable); ``expired`` after ``seconds``."""
        waiter: asyncio.Future[bool] = self.loop.create_future()
        self.waiter = waiter
        timer = None if seconds is None else self.loop.call_later(seconds, _expire, waiter)
        try:
            timed_out = await waiter
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()
        if timed_out:
            raise expired(f"no progress within {seconds:g} s")


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(True)


async def connect(
    origin: Origin, ssl_context: ssl.SSLContext | None, connect_s: float | None
) -> Http1Connection:
    """Open a connection to ``origin`` (TLS when its scheme is https)."""
    loop = asyncio.get_running_loop()
    scheme, raw_host, port = origin
    host = raw_host.decode("ascii")
    wire = _Wire(loop)
    tls = ssl_context if scheme == b"https" else None
    try:
        async with asyncio.timeout(connect_s):
            await loop.create_connection(
                lambda: wire, host, port, ssl=tls, server_hostname=host if tls else None
            )
    except TimeoutError:
        raise httpx.ConnectTimeout(f"connect to {host}:{port} timed out") from None
    except (OSError, ssl.SSLError) as exc:
        raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
    return Http1Connection(wire)


class Http1Connection:
    """One request at a time; reusable once an answer's body was read to its end."""

    def __init__(self, wire: _Wire) -> None:
        self._wire = wire
        self._idle = True
        self._reusable = True
        self._idle_since = time.monotonic()
        self._read_s: float | None = None
        self._write_s: float | None = None

    def is_idle(self) -> bool:
        """Free for a request: no answer in progress and not closed or written to by the server."""
        wire = self._wire
        return self._idle and not wire.eof and not wire.buffer

    def has_expired(self, keepalive_expiry: float) -> bool:
        """Idle for longer than ``keepalive_expiry`` seconds."""
        return time.monotonic() - self._idle_since > keepalive_expiry

    def close(self) -> None:
        """Close the socket (at once, no TLS goodbye awaited)."""
        self._idle = False
        transport = self._wire.transport
        if transport is not None and not transport.is_closing():
            transport.close()

    async def send(
        self, request: httpx.Request
    ) -> tuple[int, Headers, dict[str, Any], AsyncIterator[bytes]]:
        """Send ``request``; status, headers, extensions and body iterator of its answer."""
        if not self.is_idle():
            raise httpx.RemoteProtocolError("connection is not idle")
        self._idle = False
        timeouts = request.extensions.get("timeout", {})
        self._read_s = timeouts.get("read")
        self._write_s = timeouts.get("write")
        await self._write_request(request)
        while True:
            version, status, reason, headers = await self._read_head()
            if status >= 200 or status == 101:
                break
        if status == 101:
            raise httpx.RemoteProtocolError("protocol switch (101) not supported")
        self._reusable = version == b"1" and not _says_close(headers)
        if _says_close(request.headers.raw):
            self._reusable = False
        if request.method == "HEAD" or status in _NO_BODY_STATUSES:
            self._done()
            body = _empty()
        else:
            body = self._body(headers)
        extensions = {"http_version": b"HTTP/1." + version, "reason_phrase": reason}
        return status, headers, extensions, body

    # ------------------------------------------------------------------- writing

    async def _write_request(self, request: httpx.Request) -> None:
        transport = self._wire.transport
        if transport is None or transport.is_closing():
            raise httpx.WriteError("connection closed")
        head = _request_head(request)
        chunked = _is_chunked(request.headers.raw)
        pending = [head]
        size = len(head)
        async for part in request.stream:  # type: ignore[union-attr]
            if not part:
                continue
            if chunked:
                part = b"%x\r\n%b\r\n" % (len(part), part)
            pending.append(part)
            size += len(part)
            if size >= WRITE_BATCH:
                await self._write(b"".join(pending))
                pending, size = [], 0
        if chunked:
            pending.append(b"0\r\n\r\n")
        await self._write(b"".join(pending))

    async def _write(self, data: bytes) -> None:
        wire = self._wire
        if not data:
            return
        if wire.transport is None or wire.eof:
            raise httpx.WriteError("connection closed by the server")
        wire.transport.write(data)
        while wire.paused_writing and not wire.eof:
            await wire.wait(self._write_s, httpx.WriteTimeout)

    # ------------------------------------------------------------------- reading

    async def _more(self, what: str) -> None:
        """Wait for more bytes; a connection that ended is an error (``what`` was expected)."""
        wire = self._wire
        if wire.eof:
            if isinstance(wire.error, OSError):
                raise httpx.ReadError(str(wire.error) or type(wire.error).__name__)
            raise httpx.RemoteProtocolError(what)
        await wire.wait(self._read_s, httpx.ReadTimeout)

    async def _read_head(self) -> tuple[bytes, int, bytes, Headers]:
        buffer = self._wire.buffer
        start = 0
        while (end := buffer.find(b"\r\n\r\n", start)) < 0:
            if len(buffer) > MAX_HEAD:
                raise httpx.RemoteProtocolError("answer head too long")
            start = max(0, len(buffer) - 3)
            what = (
                "Server disconnected without sending a response."
                if not buffer
                else "peer closed connection in the middle of the answer head"
            )
            await self._more(what)
        head = bytes(buffer[:end])
        del buffer[: end + 4]
        self._wire.consumed()
        return _parse_head(head)

    def _take(self, limit: int) -> bytes:
        buffer = self._wire.buffer
        if len(buffer) <= limit:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:limit])
            del buffer[:limit]
        self._wire.consumed()
        return data

    async def _line(self) -> bytes:
        buffer = self._wire.buffer
        while (end := buffer.find(b"\r\n")) < 0:
            if len(buffer) > MAX_HEAD:
                raise httpx.RemoteProtocolError("chunk line too long")
            await self._more("peer closed connection in the middle of a chunked body")
        line = bytes(buffer[:end])
        del buffer[: end + 2]
        return line

    def _body(self, headers: Headers) -> AsyncIterator[bytes]:
        codings = [v for k, v in headers if k.lower() == b"transfer-encoding"]
        if codings:
            if codings[-1].rsplit(b",", 1)[-1].strip().lower() == b"chunked":
                return self._chunked()
            self._reusable = False
            return self._until_end()
        lengths = {v.strip() for k, v in headers if k.lower() == b"content-length"}
        if not lengths:
            self._reusable = False
            return self._until_end()
        if len(lengths) > 1 or not (value := lengths.pop()).isdigit():
            raise httpx.RemoteProtocolError("invalid Content-Length")
        if value.strip(b"0") == b"":
            self._done()
            return _empty()
        return self._sized(int(value))

    async def _sized(self, length: int) -> AsyncIterator[bytes]:
        remaining = length
        while remaining:
            if not self._wire.buffer:
                await self._more(
                    "peer closed connection without sending complete message body: "
                    f"received {length - remaining} bytes, expected {length}",
                )
                continue
            data = self._take(remaining)
            remaining -= len(data)
            yield data
        self._done()

    async def _chunked(self) -> AsyncIterator[bytes]:
        while True:
            size_text = (await self._line()).split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size_text):
                raise httpx.RemoteProtocolError("invalid chunk size")
            remaining = int(size_text, 16)
            if not remaining:
                break
            while remaining:
                if not self._wire.buffer:
                    await self._more("peer closed connection in the middle of a chunk")
                    continue
                data = self._take(remaining)
                remaining -= len(data)
                yield data
            if await self._line() != b"":
                raise httpx.RemoteProtocolError("chunk not followed by CRLF")
        while await self._line() != b"":  # trailer fields: ignored
            pass
        self._done()

    async def _until_end(self) -> AsyncIterator[bytes]:
        wire = self._wire
        while True:
            if wire.buffer:
                yield self._take(len(wire.buffer))
            elif wire.eof:
                if isinstance(wire.error, OSError):
                    raise httpx.ReadError(str(wire.error) or type(wire.error).__name__)
                break
            else:
                await wire.wait(self._read_s, httpx.ReadTimeout)
        self._done()

    def _done(self) -> None:
        """The answer was read to its end: idle again, or closed when not reusable."""
        if self._reusable and not self._wire.eof and not self._wire.buffer:
            self._idle = True
            self._idle_since = time.monotonic()
        else:
            self.close()


async def _empty() -> AsyncIterator[bytes]:
    nothing: tuple[bytes, ...] = ()
    for part in nothing:  # pragma: no cover - an async generator that yields nothing
        yield part


def _request_head(request: httpx.Request) -> bytes:
    parts = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        if b"\r" in value or b"\n" in value or not _TOKEN.fullmatch(name):
            raise httpx.LocalProtocolError(f"invalid request header {name!r}")
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def _parse_head(head: bytes) -> tuple[bytes, int, bytes, Headers]:
    lines = head.split(b"\r\n")
    match = _STATUS.fullmatch(lines[0])
    if match is None:
        raise httpx.RemoteProtocolError(f"invalid status line {lines[0][:80]!r}")
    headers: Headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.fullmatch(name):
            raise httpx.RemoteProtocolError(f"invalid header line {line[:80]!r}")
        headers.append((name, value.strip(b" \t")))
    return match[1], int(match[2]), match[3] or b"", headers


def _says_close(headers: Headers) -> bool:
    return any(
        k.lower() == b"connection" and b"close" in v.lower().replace(b" ", b"").split(b",")
        for k, v in headers
    )


def _is_chunked(headers: Headers) -> bool:
    return any(k.lower() == b"transfer-encoding" and b"chunked" in v.lower() for k, v in headers)
