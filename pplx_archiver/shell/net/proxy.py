"""HTTP proxies: ``--proxy`` (or the ``proxy`` setting) and ``HTTPS_PROXY``/``HTTP_PROXY``/
``ALL_PROXY``/``NO_PROXY`` from the environment, as httpx's ``trust_env`` reads them.

:func:`proxy_mounts` gives an httpx client the transports of its proxied requests: an
:class:`httpx.AsyncHTTPTransport` with a proxy (httpcore's: an ``https://`` request goes
through a ``CONNECT`` tunnel, an ``http://`` one is forwarded), bounded like the client's own
transport (``max_connections``) and taking the request's timeouts. Requests that no proxy
applies to (no proxy set, or a host of ``NO_PROXY``) keep the client's own transport.

Which proxy: the explicit one (``--proxy``, ``PPLX_PROXY`` or ``proxy`` in the config file)
for every request, else ``HTTPS_PROXY`` for ``https://`` and ``HTTP_PROXY`` for ``http://``
requests, ``ALL_PROXY`` for both when those are unset (either case of the variable names;
the lower-case one wins, as in urllib). ``NO_PROXY`` (a comma-separated list of hosts, domains
— which cover their subdomains — IP addresses, or ``*`` for every host) applies
to both. Only ``http://`` and ``https://`` proxy URLs are taken; a proxy's user and password
(``http://user:password@host:port``) are sent to the proxy only and masked everywhere else.
"""

from __future__ import annotations

import ipaddress
import os
import re
import ssl
from collections.abc import Mapping

import httpx

from pplx_archiver.errors import ConfigError
from pplx_archiver.logconfig import register_secret

Mounts = dict[str, httpx.AsyncBaseTransport | None]

_SCHEMES = ("http", "https")
_KEYS = ("http", "https", "all", "no")
_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def mask_proxy(url: str) -> str:
    """``url`` with any user and password replaced by ``***`` (for messages and logs)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    if "@" in rest:  # up to the last "@": a password may hold "/" or "@"
        rest = "***@" + rest.rpartition("@")[2]
    return f"{scheme}{sep}{rest}"


def check_proxy_url(url: str, where: str = "proxy") -> str:
    """``url`` when it is a usable proxy URL; a one-line ConfigError naming ``where`` if not."""
    shown = mask_proxy(url)
    hint = f"{where} must be an http:// or https:// URL like http://host:3128, got {shown!r}"
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise ConfigError(hint) from None
    if parsed.scheme not in _SCHEMES or not _is_host(parsed.host):
        raise ConfigError(hint)
    if not 0 < (parsed.port or 1) < 65536:
        raise ConfigError(hint)
    if parsed.path not in ("", "/") or parsed.query or parsed.fragment:
        raise ConfigError(f"{where} must not have a path or query, got {shown!r}")
    register_secret(parsed.username)
    register_secret(parsed.password)
    return url


def _is_host(host: str) -> bool:
    """A host name (letters, digits, dots, hyphens) or an IP address: httpx percent-encodes
    anything else (``[bad`` becomes ``%5Bbad``) instead of refusing it."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return _HOST_NAME.fullmatch(host) is not None
    return True


def environment_proxies(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The proxy variables of ``environ`` (default ``os.environ``): ``http``, ``https``,
    ``all`` or ``no`` → value; of the two spellings of a name the lower-case one wins."""
    environ = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for key in _KEYS:
        value = environ.get(f"{key}_proxy") or environ.get(f"{key.upper()}_PROXY")
        if value and value.strip():
            found[key] = value.strip()
    return found


def proxy_mounts(
    explicit: str | None,
    *,
    max_connections: int,
    ssl_context: ssl.SSLContext | None = None,
    environ: Mapping[str, str] | None = None,
) -> Mounts:
    """httpx ``mounts`` routing requests through the proxy that applies to them (see above)."""
    found = environment_proxies(environ)
    if explicit:
        chosen = {"all": check_proxy_url(explicit)}
    else:
        chosen = {
            scheme: check_proxy_url(found[key], f"{key.upper()}_PROXY")
            for scheme, key in (("http", "http"), ("https", "https"), ("all", "all"))
            if key in found
        }
    if not chosen:
        return {}
    mounts: Mounts = {}
    for host in _no_proxy_patterns(found.get("no", "")):
        if host == "*":
            return {}
        mounts[host] = None  # the client's own transport: no proxy
    transports: dict[str, httpx.AsyncBaseTransport] = {}
    for scheme, url in chosen.items():
        if url not in transports:
            transports[url] = _proxied(url, max_connections, ssl_context)
        mounts[f"{scheme}://"] = transports[url]
    return mounts


def _proxied(
    url: str, max_connections: int, ssl_context: ssl.SSLContext | None
) -> httpx.AsyncHTTPTransport:
    return httpx.AsyncHTTPTransport(
        proxy=httpx.Proxy(url),
        verify=ssl_context if ssl_context is not None else True,
        limits=httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=5.0,
        ),
        trust_env=False,
    )


def _no_proxy_patterns(value: str) -> list[str]:
    """httpx mount patterns of the hosts in a ``NO_PROXY`` value."""
    patterns: list[str] = []
    for raw in value.split(","):
        host = raw.strip()
        if not host:
            continue
        if host == "*":
            return ["*"]
        if "://" in host:
            patterns.append(host)
            continue
        host = host.lstrip(".")
        try:
            address = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            patterns.append(f"all://*{host}")  # the domain and its subdomains
        else:
            patterns.append(f"all://[{address}]" if address.version == 6 else f"all://{address}")
    return patterns
