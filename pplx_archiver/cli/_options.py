"""Options shared by several commands: where the API is, how the session is supplied, and
numeric options bounded by the shared table of ``limits.py``."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from pplx_archiver.errors import ConfigError
from pplx_archiver.limits import BOUNDS
from pplx_archiver.settings import Settings

if TYPE_CHECKING:
    from pplx_archiver.shell.archive.store import Archive

OUT_HELP = "Archive folder (default: $PPLX_OUT, the config file, or ./archive)."
OUT = typer.Option(None, "--out", "-o", metavar="DIR", help=OUT_HELP)

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


def require_archive(settings: Settings) -> None:
    """The one check that ``--out`` holds an archive: a usage error (exit 2) naming it."""
    from pplx_archiver.shell.archive.files import INDEX_DIR

    if not (settings.out_dir / INDEX_DIR / "archive.sqlite").is_file():
        raise ConfigError(
            f"no archive at {settings.out_dir} (no {INDEX_DIR}/archive.sqlite); "
            "pass --out or set PPLX_OUT"
        )


def require_archive_folder(settings: Settings) -> None:
    """:func:`require_archive`, and first a usage error for an ``--out`` that is a file."""
    if settings.out_dir.exists() and not settings.out_dir.is_dir():
        raise ConfigError(f"--out {settings.out_dir}: not a folder")
    require_archive(settings)


def open_archive(settings: Settings, *, read_only: bool) -> Archive:
    """The archive at ``settings.out_dir`` (:func:`require_archive_folder` first).

    Read-only opens use SQLite's read-only mode and never start a write transaction: they
    work on a read-only archive and beside a writer.
    """
    from pplx_archiver.shell.archive.store import Archive

    require_archive_folder(settings)
    return Archive(settings.out_dir, read_only=read_only)


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


Command = TypeVar("Command", bound=Callable[..., Any])
# An option declared once: its parameter name → (its type, its typer.Option).
OptionTable = Mapping[str, tuple[Any, Any]]

SESSION_OPTIONS: OptionTable = {
    "base_url": (str | None, BASE_URL),
    "cookies": (Path | None, COOKIES),
    "session_token": (str | None, TOKEN),
    "cookies_from": (str | None, COOKIES_FROM),
    "impersonate": (str | None, IMPERSONATE),
    "proxy": (str | None, PROXY),
}


def shared_options(table: OptionTable, names: Sequence[str]) -> Callable[[Command], Command]:
    """Give a command the parameters ``names``, in that order (the order ``--help`` shows):
    each taken from ``table`` when it is there, else the command's own. The shared options
    are declared once, in their table; the command receives them as keywords."""

    def with_options(command: Command) -> Command:
        own = inspect.signature(command).parameters
        keyword = inspect.Parameter.KEYWORD_ONLY
        params = [
            inspect.Parameter(name, keyword, default=table[name][1], annotation=table[name][0])
            if name in table
            else own[name].replace(kind=keyword)
            for name in names
        ]
        missing = [n for n, p in own.items() if p.kind is not p.VAR_KEYWORD and n not in names]
        if missing:
            raise TypeError(f"{command.__name__}: parameters {missing} are not in its names")
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return command

    return with_options
