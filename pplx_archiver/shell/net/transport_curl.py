"""The optional browser-fingerprint transport: httpx requests sent through curl_cffi.

``--impersonate chrome`` makes :class:`~pplx_archiver.shell.net.http.ApiClient` use
:class:`CurlTransport`, an :class:`httpx.AsyncBaseTransport`; everything above the transport
(headers, cookies, the error seam, retries) is unchanged. curl_cffi is in the
``impersonate`` extra (``pip install 'pplx-archiver[impersonate]'``); without it the
transport raises a :class:`~pplx_archiver.errors.ConfigError` saying so. Errors of curl are
raised as httpx transport errors, so the seam maps them like any other. A ``--proxy`` is given
to curl; without one, curl reads ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` itself.
"""

from __future__ import annotations

import importlib
from typing import Any

import httpx

from pplx_archiver.errors import ConfigError
from pplx_archiver.shell.net.proxy import check_proxy_url

INSTALL_HINT = (
    "--impersonate needs the optional curl_cffi package: "
    "pip install 'pplx-archiver[impersonate]' (or pip install curl_cffi)"
)


def load_curl_requests() -> Any:
    """Import ``curl_cffi.requests`` or raise a ConfigError explaining how to install it."""
    try:
        return importlib.import_module("curl_cffi.requests")
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None


class CurlTransport(httpx.AsyncBaseTransport):
    """Sends each httpx request with curl_cffi impersonating a browser's TLS fingerprint."""

    def __init__(
        self,
        impersonate: str = "chrome",
        *,
        timeout: float = 60.0,
        proxy: str | None = None,
        module: Any = None,
    ) -> None:
        curl = module if module is not None else load_curl_requests()
        self._timeout = timeout
        self._impersonate = impersonate
        if proxy:  # otherwise curl reads HTTPS_PROXY/HTTP_PROXY/NO_PROXY itself
            check_proxy_url(proxy)
            self._session = curl.AsyncSession(
                impersonate=impersonate, proxies={"http": proxy, "https": proxy}
            )
        else:
            self._session = curl.AsyncSession(impersonate=impersonate)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        headers = [
            (k, v) for k, v in request.headers.multi_items() if k.lower() != "accept-encoding"
        ]
        try:
            response = await self._session.request(
                request.method,
                str(request.url),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=self._timeout,
            )
        except Exception as exc:  # curl_cffi raises its own RequestException family
            if "timeout" in type(exc).__name__.lower() or "timed out" in str(exc).lower():
                raise httpx.ReadTimeout(str(exc), request=request) from exc
            raise httpx.ConnectError(f"{type(exc).__name__}: {exc}", request=request) from exc
        raw_headers = getattr(response.headers, "multi_items", response.headers.items)()
        out_headers = [
            (k, v)
            for k, v in raw_headers
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx.Response(
            response.status_code, headers=out_headers, content=response.content, request=request
        )

    async def aclose(self) -> None:
        await self._session.close()
