"""Options shared by several commands: where the API is, how the session is supplied, and
numeric options bounded by the shared table of ``limits.py``."""

from __future__ import annotations

from typing import Any

import typer

from pplx_archiver.limits import BOUNDS

BASE_URL = typer.Option(
    None,
    "--base-url",
    metavar="URL",
    help="API origin (default https://www.perplexity.ai; env PPLX_BASE_URL).",
)
COOKIES = typer.Option(
    None,
    "--cookies",
    metavar="FILE",
    help="Netscape cookies.txt or a JSON cookie export holding your session.",
)
TOKEN = typer.Option(
    None,
    "--session-token",
    metavar="TOKEN",
    help="The __Secure-next-auth.session-token value, or a copied Cookie header "
    "(env PPLX_SESSION_TOKEN).",
)
COOKIES_FROM = typer.Option(
    None,
    "--cookies-from",
    metavar="BROWSER",
    help="Read cookies from a browser: chrome, chromium, firefox, edge, brave, opera, vivaldi "
    "or safari (needs browser-cookie3).",
)
IMPERSONATE = typer.Option(
    None,
    "--impersonate",
    metavar="BROWSER",
    help="Send requests with a browser TLS fingerprint (needs curl_cffi).",
)
LOG_FORMAT = typer.Option(
    None,
    "--log-format",
    metavar="[auto|json|console]",
    help="stderr log format; auto = console lines on a terminal, JSON otherwise [default: auto].",
)
ACCOUNT = typer.Option(
    None,
    "--account",
    metavar="NAME",
    help="Only this account (repeatable): a name given to `auth save --account`, or an "
    "account id of a multi-account cookie export [default: every account].",
)


def bounded(key: str, default: Any, *decls: str, metavar: str, help: str) -> Any:
    """A numeric option whose range is the row ``key`` of ``limits.BOUNDS``: typer refuses a
    value outside it (``nan`` and ``inf`` included) and ``--help`` shows the range."""
    bound = BOUNDS[key]
    low: float = int(bound.low) if bound.integer else bound.low
    high: float = int(bound.high) if bound.integer else bound.high
    return typer.Option(default, *decls, min=low, max=high, metavar=metavar, help=help)


QUIET = typer.Option(
    False, "--quiet", "-q", help="Only errors on stderr: no progress, no warnings."
)
VERBOSE = typer.Option(False, "--verbose", "-v", help="Also show every log event on stderr.")
JSON_OUT = typer.Option(False, "--json", help="Print the result as one JSON object on stdout.")


def console_level(quiet: bool, verbose: bool) -> str | None:
    """The ``console_level`` setting of ``-q``/``-v`` (None: the configured one)."""
    if quiet and verbose:
        from pplx_archiver.errors import ConfigError

        raise ConfigError("--verbose and --quiet exclude each other")
    return "info" if verbose else ("error" if quiet else None)


def print_json(value: Any) -> None:
    """One JSON object (or array) on stdout, on one line."""
    import orjson

    typer.echo(orjson.dumps(value, default=str).decode("utf-8"))
