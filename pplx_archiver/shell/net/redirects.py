"""Where a CDN download may be redirected (issue 44).

A signed asset URL answers with the file, or redirects to where it is stored: CloudFront to
S3, a Perplexity host to its CDN. A redirect anywhere else (a host an answer or a proxy
named) would store that host's body as the asset, so :func:`refused_redirect` allows a hop
only to the requested host or to a host of the asset stores below, and never from https to
http. The downloader follows redirects with a client that carries no credential at all.
"""

from __future__ import annotations

import httpx

# The hosts asset files are stored on (and their subdomains).
ASSET_STORES = ("amazonaws.com", "cloudfront.net", "perplexity.ai", "pplx.ai")


def _allowed(host: str, requested: str) -> bool:
    host = host.lower().rstrip(".")
    if host == requested.lower().rstrip("."):
        return True
    return any(host == store or host.endswith("." + store) for store in ASSET_STORES)


def refused_redirect(response: httpx.Response) -> str | None:
    """Why the redirects that led to ``response`` are refused, or None (none, or allowed)."""
    hops = [*response.history, response]
    if len(hops) == 1:
        return None
    first = hops[0].request.url
    for hop in hops[1:]:
        url = hop.request.url
        if first.scheme == "https" and url.scheme != "https":
            return f"redirected from https to {url.scheme} ({url.host}): not stored"
        if not _allowed(url.host, first.host):
            return f"redirected to another host ({url.host}): not stored"
    return None
