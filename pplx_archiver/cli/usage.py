"""``pplx-export usage-backfill``: record each archived thread's credit usage in the index.

Needs a session, as ``batch`` does. Idempotent and resumable. Exit codes: 0 done (403s are
recorded, not failures); 1 some threads could not be asked (asked again next run); 2 usage
or config error (including "no archive at --out"); 3 no usable session; 5 stopped by
Cloudflare challenges; 6 another command is writing the archive.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import (
    JSON_OUT,
    OUT,
    QUIET,
    VERBOSE,
    bounded,
    console_level,
    print_json,
    require_archive,
)
from pplx_archiver.cli._run import command_scope, fail, require_writable
from pplx_archiver.errors import EXIT_FAILURES, EXIT_OK, PplxError
from pplx_archiver.settings import Settings, load_settings
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.usage import DEFAULT_USAGE_RATE, UsageSummary, backfill_usage
from pplx_archiver.shell.run.progress import Meter


async def _run(
    settings: Settings, rate: float, limit: int | None, quiet: bool = False
) -> UsageSummary:
    from pplx_archiver.shell.net.auth import open_session
    from pplx_archiver.shell.net.ratelimit import RateLimiter

    limiter = RateLimiter(rate, 1, floor=min(0.05, rate))
    with Archive(settings.out_dir) as archive:
        async with open_session(settings, limiter=limiter) as (client, _info):
            with Meter("usage-backfill: threads asked", enabled=False if quiet else None) as meter:
                return await backfill_usage(archive, client, limit=limit, progress=meter)


@app.command("usage-backfill")
def usage_backfill(
    out: Path | None = OUT,
    usage_rate: float = bounded(
        "usage_rate",
        DEFAULT_USAGE_RATE,
        "--usage-rate",
        metavar="RATE",
        help="Ceiling of usage requests per second (its own budget) [default: 0.5].",
    ),
    limit: int | None = bounded(
        "limit", None, "--limit", metavar="N", help="Ask for at most N threads."
    ),
    log_format: str | None = typer.Option(
        None,
        "--log-format",
        metavar="[auto|json|console]",
        help="stderr log format: auto, json or console.",
    ),
    base_url: str | None = typer.Option(None, "--base-url", metavar="URL", help="API origin."),
    cookies: Path | None = typer.Option(None, "--cookies", metavar="FILE", help="Cookie file."),
    session_token: str | None = typer.Option(
        None, "--session-token", metavar="TOKEN", help="Session token cookie value."
    ),
    cookies_from: str | None = typer.Option(
        None, "--cookies-from", metavar="BROWSER", help="Read cookies from a browser."
    ),
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    as_json: bool = JSON_OUT,
) -> None:
    """Fetch the credit usage of every archived thread not yet recorded, slowly.

    One request per thread, paced by its own rate limiter; a thread the service refuses
    (403) is recorded as forbidden and never asked again; other failures are asked again by
    the next run. `status` then shows the totals by mode.

    \b
    Examples:
      pplx-export usage-backfill --out ~/pplx-archive
      pplx-export usage-backfill -o archive --limit 50 --usage-rate 0.2
    """
    try:
        settings = load_settings(
            {
                "out_dir": out,
                "log_format": log_format,
                "base_url": base_url,
                "cookies_file": cookies,
                "session_token": session_token,
                "cookies_from": cookies_from,
                "console_level": console_level(quiet, verbose),
            }
        )
        require_archive(settings)
        require_writable(settings.out_dir, "usage-backfill", "each thread's usage (the index)")
        with command_scope(settings, "usage-backfill"):
            summary = anyio.run(_run, settings, usage_rate, limit, quiet)
    except (PplxError, OSError, KeyboardInterrupt) as exc:
        raise typer.Exit(fail(exc)) from None
    if as_json:
        print_json(summary.as_event())
    else:
        typer.echo(summary.line())
    raise typer.Exit(EXIT_FAILURES if summary.failed else EXIT_OK)
