"""Options shared by several commands: where the API is, how the session is supplied, and
numeric options bounded by the shared table of ``limits.py``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import typer

from pplx_archiver.errors import ConfigError
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
PROXY = typer.Option(
    None,
    "--proxy",
    metavar="URL",
    help="Reach the service through this http:// or https:// proxy (env PPLX_PROXY; "
    "else HTTPS_PROXY/HTTP_PROXY/NO_PROXY are honoured).",
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
        raise ConfigError("--verbose and --quiet exclude each other")
    return "info" if verbose else ("error" if quiet else None)


def print_json(value: Any) -> None:
    """One JSON object (or array) on stdout, on one line."""
    import orjson

    typer.echo(orjson.dumps(value, default=str).decode("utf-8"))


_SINCE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?(?:Z|\+00:?00)?")
SINCE_EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)


def check_since(value: str | None, now: datetime | None = None) -> str | None:
    """``--since`` as canonical UTC text (``2026-07-20T00:00:00Z``); a usage error when it is
    not a date (or date and time) from 2000 to tomorrow."""
    if value is None:
        return None
    text = value.strip()
    wanted = "expected a date like 2026-07-20 or 2026-07-20T08:30 (UTC)"
    if not _SINCE.fullmatch(text):
        raise ConfigError(f"--since {value!r}: {wanted}")
    try:
        when = datetime.fromisoformat(text.replace(" ", "T").removesuffix("Z"))
    except ValueError:
        raise ConfigError(f"--since {value!r}: not a real date; {wanted}") from None
    when = when.replace(tzinfo=UTC)
    latest = (now or datetime.now(UTC)) + timedelta(days=1)
    if not SINCE_EARLIEST <= when <= latest:
        raise ConfigError(f"--since {value!r}: must lie between 2000-01-01 and tomorrow")
    return when.isoformat().replace("+00:00", "Z")
