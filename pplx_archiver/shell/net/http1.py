"""One HTTP/1.1 client connection: an asyncio protocol for the socket, h11 for the protocol.

:class:`Http1Connection` sends one request at a time over a TCP (or TLS, through an
:class:`ssl.SSLContext`) connection. The messages are written and read by h11 (the HTTP/1.1
state machine httpcore uses): request framing and header validation, the answer's status
line, headers and body framing (``Content-Length``, ``Transfer-Encoding: chunked``, the end
of the connection; none for HEAD, 1xx, 204 and 304), and whether the connection may carry
another request (not after ``Connection: close`` either way, an HTTP/1.0 answer, a body read
to the connection's end or a body not read to its end). 1xx answers are skipped; a 101 is
refused. An answer head longer than :data:`MAX_HEAD` is refused (h11's
``max_incomplete_event_size``; it is fed at most one byte more at a time while a head is read).

The event loop reads eagerly into the protocol's buffer (reading pauses above
:data:`READ_HIGH` buffered bytes until the body's reader catches up), and bytes are handed to
h11 only when it needs them, so an idle connection the server closed is known as soon as the
loop sees it, without a readability check.

Timeouts come from the request's ``timeout`` extension (httpx's): ``connect`` for the TCP and
TLS handshake, ``read`` for every wait for the server's bytes, ``write`` for every wait for the
socket to take the request. Errors are httpx's, as httpx's own transport raises them:
``ConnectError``/``ConnectTimeout``, ``ReadTimeout``/``WriteTimeout``, ``ReadError`` (a reset
connection), ``RemoteProtocolError`` (a closed connection or a malformed answer),
``LocalProtocolError`` (a request h11 refuses to write, e.g. a header with a line break).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any

import h11
import httpx

Origin = tuple[bytes, bytes, int]
Headers = list[tuple[bytes, bytes]]

MAX_HEAD = 64 * 1024
READ_HIGH = 1024 * 1024
WRITE_BATCH = 64 * 1024
_HEAD_FEED = MAX_HEAD + 1


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
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self._idle = True
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
            event = await self._next("Server disconnected without sending a response.")
            if isinstance(event, h11.Response):
                break
            if isinstance(event, h11.InformationalResponse) and event.status_code == 101:
                raise httpx.RemoteProtocolError("protocol switch (101) not supported")
        extensions = {"http_version": b"HTTP/" + event.http_version, "reason_phrase": event.reason}
        first = _protocol(self._h11.next_event)  # the end at once when there is no body
        if isinstance(first, h11.EndOfMessage):
            self._done()
            return event.status_code, list(event.headers.raw_items()), extensions, _empty()
        body = self._body(first)
        return event.status_code, list(event.headers.raw_items()), extensions, body

    # ------------------------------------------------------------------- writing

    async def _write_request(self, request: httpx.Request) -> None:
        transport = self._wire.transport
        if transport is None or transport.is_closing():
            raise httpx.WriteError("connection closed")
        conn = self._h11
        try:
            head = conn.send(
                h11.Request(
                    method=request.method,
                    target=request.url.raw_path,
                    headers=request.headers.raw,
                )
            )
            pending = [head] if head else []
            size = len(head or b"")
            async for part in request.stream:  # type: ignore[union-attr]
                if not part:
                    continue
                data = conn.send(h11.Data(data=part)) or b""
                pending.append(data)
                size += len(data)
                if size >= WRITE_BATCH:
                    await self._write(b"".join(pending))
                    pending, size = [], 0
            pending.append(conn.send(h11.EndOfMessage()) or b"")
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(str(exc)) from exc
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

    async def _next(self, nothing: str) -> Any:
        """h11's next event, feeding it the wire's bytes (or its end) while it needs more.

        ``nothing``: the error's text when the connection ends before any answer."""
        conn, wire = self._h11, self._wire
        while True:
            event = _protocol(conn.next_event)
            if event is not h11.NEED_DATA:
                if isinstance(event, h11.ConnectionClosed):
                    raise httpx.RemoteProtocolError(nothing)
                return event
            if len(wire.buffer) > _HEAD_FEED and conn.their_state is h11.SEND_RESPONSE:
                # h11 checks its limit only while an event is incomplete, so a long head
                # given whole would pass: one byte more than the limit at a time
                conn.receive_data(bytes(wire.buffer[:_HEAD_FEED]))
                del wire.buffer[:_HEAD_FEED]
                wire.consumed()
            elif wire.buffer:
                conn.receive_data(wire.buffer)  # type: ignore[arg-type]  # copied by h11
                wire.buffer.clear()
                wire.consumed()
            elif wire.eof:
                if isinstance(wire.error, OSError):
                    raise httpx.ReadError(str(wire.error) or type(wire.error).__name__)
                conn.receive_data(b"")
            else:
                await wire.wait(self._read_s, httpx.ReadTimeout)

    async def _body(self, first: Any) -> AsyncIterator[bytes]:
        event = first
        while True:
            if event is h11.NEED_DATA:
                event = await self._next("peer closed connection in the middle of the body")
            if isinstance(event, h11.EndOfMessage):
                break
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            event = h11.NEED_DATA
        self._done()

    def _done(self) -> None:
        """The answer was read to its end: idle again, or closed when not reusable."""
        conn = self._h11
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
            if not conn.trailing_data[0] and not self._wire.eof and not self._wire.buffer:
                self._idle = True
                self._idle_since = time.monotonic()
                return
        self.close()


def _protocol(next_event: Any) -> Any:
    """h11's next event, its protocol errors as httpx's."""
    try:
        return next_event()
    except h11.RemoteProtocolError as exc:
        raise httpx.RemoteProtocolError(str(exc)) from exc


async def _empty() -> AsyncIterator[bytes]:
    nothing: tuple[bytes, ...] = ()
    for part in nothing:  # pragma: no cover - an async generator that yields nothing
        yield part
