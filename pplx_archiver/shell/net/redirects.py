"""Where a CDN download may be redirected.

A signed asset URL answers with the file, or redirects to where it is stored: CloudFront to
S3, a Perplexity host to its CDN. A redirect anywhere else (a host an answer or a proxy
named) would store that host's body as the asset, so a hop is allowed only to the requested
host or to a host of the asset stores below, and never from https to http. The check runs
as the downloader client's request hook (:func:`check_hop`), before a refused hop is sent;
:func:`downloading` names the URL a download asked for. The client carries no credential.
"""

from __future__ import annotations

import contextvars

import httpx

from pplx_archiver.shell.net.download_errors import AssetDownloadError

# The hosts asset files are stored on (and their subdomains).
ASSET_STORES = ("amazonaws.com", "cloudfront.net", "perplexity.ai", "pplx.ai")

_REQUESTED: contextvars.ContextVar[httpx.URL | None] = contextvars.ContextVar(
    "pplx_download_requested", default=None
)


def downloading(url: str) -> None:
    """Name the URL the current download asks for (the start of its redirect chain)."""
    _REQUESTED.set(httpx.URL(url))


def refused_hop(url: httpx.URL, requested: httpx.URL) -> str | None:
    """Why a redirect from ``requested`` to ``url`` is refused, or None."""
    if requested.scheme == "https" and url.scheme != "https":
        return f"redirected from https to {url.scheme} ({url.host}): not stored"
    host = url.host.lower().rstrip(".")
    if host == requested.host.lower().rstrip("."):
        return None
    if any(host == store or host.endswith("." + store) for store in ASSET_STORES):
        return None
    return f"redirected to another host ({url.host}): not stored"


async def check_hop(request: httpx.Request) -> None:
    """The downloader's request hook: refuse a hop off the asset stores before it is sent."""
    requested = _REQUESTED.get()
    if requested is None or request.url == requested:
        return
    reason = refused_hop(request.url, requested)
    if reason is not None:
        raise AssetDownloadError(reason)
