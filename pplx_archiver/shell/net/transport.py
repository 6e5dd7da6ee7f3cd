"""A lean HTTP/1.1 transport: a stack of idle keep-alive connections per origin.

httpx's default transport (httpcore's ``AsyncConnectionPool``) scans every pooled connection
on every request and again on every response close, asking each idle one whether its socket
is readable (anyio builds a table of socket attributes, a ``getpeername`` included, for every
ask). With a pool sized to the run's concurrency that scan was about a tenth of the client's
CPU in a bulk run (docs/dev/performance.md).

:class:`LeanTransport` keeps, per origin, the idle connections on a stack: a request takes
the one used last and checks only that one (expired or closed by the server: closed and the
next one is taken), and a response puts its connection back when its body is closed.
Connections are :class:`~pplx_archiver.shell.net.http1.Http1Connection` (an asyncio protocol
and a small HTTP/1.1 parser; TLS through an :class:`ssl.SSLContext`, the request's timeouts,
httpx's exceptions). At most ``max_connections`` requests are in flight (others wait), at most
``max_keepalive`` idle connections are kept (the oldest is closed).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import anyio
import httpx

from pplx_archiver.shell.net.http1 import Http1Connection, Origin, connect
from pplx_archiver.shell.net.proxy import Mounts, proxy_mounts

_DEFAULT_PORTS = {b"http": 80, b"https": 443}


def client_transport(
    connections: int,
    *,
    proxy: str | None,
    transport: httpx.AsyncBaseTransport | None = None,
    impersonate: str | None = None,
    timeout: float = 60.0,
) -> tuple[httpx.AsyncBaseTransport, Mounts]:
    """A client's transport and proxy mounts: ``transport`` when given, else curl_cffi for
    ``impersonate`` (curl takes the proxy, and reads the environment's, itself), else a
    :class:`LeanTransport`; the mounts send proxied requests through httpcore's proxy pool."""
    if impersonate:
        if transport is None:
            from pplx_archiver.shell.net.transport_curl import CurlTransport

            transport = CurlTransport(impersonate, timeout=timeout, proxy=proxy)
        return transport, {}
    mounts = proxy_mounts(proxy, max_connections=connections)
    if transport is None:
        transport = LeanTransport(max_connections=connections, max_keepalive=connections)
    return transport, mounts


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over keep-alive connections reused last-in first-out (see module docstring)."""

    def __init__(
        self,
        *,
        max_connections: int,
        max_keepalive: int,
        keepalive_expiry: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self._slots = anyio.Semaphore(max_connections)
        self._max_keepalive = max(0, max_keepalive)
        self._keepalive_expiry = keepalive_expiry
        self._idle: dict[Origin, list[Http1Connection]] = {}
        self._idle_count = 0
        self._ssl = ssl_context
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
            connection = await self._checkout(origin, request)
            try:
                status, headers, extensions, body = await connection.send(request)
            except BaseException:
                connection.close()
                raise
        except BaseException:
            self._slots.release()
            raise
        return httpx.Response(
            status_code=status,
            headers=headers,
            stream=_Body(body, self, origin, connection),
            extensions=extensions,
        )

    async def _checkout(self, origin: Origin, request: httpx.Request) -> Http1Connection:
        stack = self._idle.get(origin)
        while stack:
            connection = stack.pop()
            self._idle_count -= 1
            if connection.is_idle() and not connection.has_expired(self._keepalive_expiry):
                return connection
            connection.close()
        if self._ssl is None and origin[0] == b"https":
            self._ssl = httpx.create_ssl_context(trust_env=False)
            self._ssl.set_alpn_protocols(["http/1.1"])
        timeout = request.extensions.get("timeout", {}).get("connect")
        return await connect(origin, self._ssl, timeout)

    def checkin(self, origin: Origin, connection: Http1Connection) -> None:
        """A response body was closed: its connection is idle again (or closed)."""
        self._slots.release()
        if self._closed or not self._max_keepalive or not connection.is_idle():
            connection.close()  # not reusable, or not wanted
            return
        self._idle.setdefault(origin, []).append(connection)
        self._idle_count += 1
        if self._idle_count > self._max_keepalive:
            # more origins than kept connections (CDN hosts): the oldest of the longest stack
            stack = max(self._idle.values(), key=len)
            self._idle_count -= 1
            stack.pop(0).close()

    async def aclose(self) -> None:
        """Close every idle connection; answers still open close theirs when closed."""
        self._closed = True
        idle = [connection for stack in self._idle.values() for connection in stack]
        self._idle.clear()
        self._idle_count = 0
        for connection in idle:
            connection.close()


class _Body(httpx.AsyncByteStream):
    """A response body that hands its connection back when it is closed."""

    def __init__(
        self,
        parts: AsyncIterator[bytes],
        transport: LeanTransport,
        origin: Origin,
        connection: Http1Connection,
    ) -> None:
        self._parts = parts
        self._transport: LeanTransport | None = transport
        self._origin = origin
        self._connection = connection

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._parts:
            yield part

    async def aclose(self) -> None:
        transport, self._transport = self._transport, None
        if transport is None:
            return
        try:
            closer = getattr(self._parts, "aclose", None)
            if closer is not None:
                await closer()
        finally:
            transport.checkin(self._origin, self._connection)


_SPENT = httpx.ByteStream(b"")


def release(response: httpx.Response) -> None:
    """Unbind a closed streamed response from its stream.

    httpx binds a streamed response's stream to the response itself (``BoundAsyncStream``
    refers back to it): a reference cycle that reference counting never frees, so every
    request's response, request, headers and URL waited for the cyclic garbage collector
    (most of what it found in a run). Call once the body has been read and closed.
    """
    response.stream = _SPENT
