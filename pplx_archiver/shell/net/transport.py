"""A lean HTTP/1.1 transport: a stack of idle keep-alive connections per origin.

httpx's default transport (httpcore's ``AsyncConnectionPool``) scans every pooled connection
on every request and again on every response close, asking each idle one whether its socket
is readable (anyio builds a table of socket attributes, a ``getpeername`` included, for every
ask). With a pool sized to the run's concurrency that scan was about a tenth of the client's
CPU in a bulk run (docs/dev/performance.md).

:class:`LeanTransport` keeps, per origin, the idle connections on a stack: a request takes
the one used last and checks only that one (expired or closed by the server: closed and the
next one is taken), and a response puts its connection back when its body is closed.
Connections are httpcore's own (``AsyncHTTPConnection``: connect, TLS, HTTP/1.1, timeouts from
the request's extensions) and httpcore's exceptions become httpx's, as in httpx's transport.
At most ``max_connections`` requests are in flight (others wait), at most
``max_keepalive`` idle connections are kept (the oldest is closed).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import cast

import anyio
import httpcore
import httpx
from httpx._transports.default import map_httpcore_exceptions

Origin = tuple[bytes, bytes, int]
_DEFAULT_PORTS = {b"http": 80, b"https": 443}


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over keep-alive connections reused last-in first-out (see module docstring)."""

    def __init__(
        self, *, max_connections: int, max_keepalive: int, keepalive_expiry: float = 5.0
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self._slots = anyio.Semaphore(max_connections)
        self._max_keepalive = max(0, max_keepalive)
        self._keepalive_expiry = keepalive_expiry
        self._idle: dict[Origin, list[httpcore.AsyncHTTPConnection]] = {}
        self._idle_count = 0
        self._ssl: ssl.SSLContext | None = None
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` on an idle connection of its origin (or a new one)."""
        if self._closed:
            raise RuntimeError("the transport is closed")
        url = request.url
        scheme = url.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}")
        origin = (scheme, url.raw_host, url.port or _DEFAULT_PORTS[scheme])
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            await self._slots.acquire()
        try:
            connection = await self._checkout(origin)
            core = httpcore.Request(
                method=request.method,
                url=httpcore.URL(
                    scheme=scheme, host=url.raw_host, port=url.port, target=url.raw_path
                ),
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            )
            try:
                with map_httpcore_exceptions():
                    answer = await connection.handle_async_request(core)
            except BaseException:
                await _close_shielded(connection)
                raise
        except BaseException:
            self._slots.release()
            raise

        async def checkin() -> None:
            await self._checkin(origin, connection)

        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(cast(AsyncIterator[bytes], answer.stream), checkin),
            extensions=answer.extensions,
        )

    async def _checkout(self, origin: Origin) -> httpcore.AsyncHTTPConnection:
        stack = self._idle.get(origin)
        while stack:
            connection = stack.pop()
            self._idle_count -= 1
            if connection.is_idle() and not connection.has_expired():
                return connection
            await _close_shielded(connection)
        if self._ssl is None and origin[0] == b"https":
            self._ssl = httpx.create_ssl_context(trust_env=False)
        return httpcore.AsyncHTTPConnection(
            httpcore.Origin(*origin),
            ssl_context=self._ssl,
            keepalive_expiry=self._keepalive_expiry,
        )

    async def _checkin(self, origin: Origin, connection: httpcore.AsyncHTTPConnection) -> None:
        """A response body was closed: its connection is idle again (or closed by httpcore)."""
        self._slots.release()
        if not connection.is_idle():
            await _close_shielded(connection)  # not reusable: httpcore has closed it or will
            return
        if self._closed or not self._max_keepalive:
            await _close_shielded(connection)
            return
        self._idle.setdefault(origin, []).append(connection)
        self._idle_count += 1
        if self._idle_count > self._max_keepalive:
            # more origins than kept connections (CDN hosts): the oldest of the longest stack
            stack = max(self._idle.values(), key=len)
            self._idle_count -= 1
            await _close_shielded(stack.pop(0))

    async def aclose(self) -> None:
        """Close every idle connection; answers still open close theirs when closed."""
        self._closed = True
        idle = [connection for stack in self._idle.values() for connection in stack]
        self._idle.clear()
        self._idle_count = 0
        for connection in idle:
            await _close_shielded(connection)


class _Body(httpx.AsyncByteStream):
    """A response body that hands its connection back when it is closed."""

    def __init__(
        self, stream: AsyncIterator[bytes], on_close: Callable[[], Awaitable[None]]
    ) -> None:
        self._stream = stream
        self._on_close: Callable[[], Awaitable[None]] | None = on_close

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with map_httpcore_exceptions():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        on_close, self._on_close = self._on_close, None
        if on_close is None:
            return
        try:
            closer = getattr(self._stream, "aclose", None)
            if closer is not None:
                with map_httpcore_exceptions():
                    await closer()
        finally:
            await on_close()


async def _close_shielded(connection: httpcore.AsyncHTTPConnection) -> None:
    with anyio.CancelScope(shield=True):
        await connection.aclose()
