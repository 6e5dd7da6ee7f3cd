"""``pplx-export assets-backfill``: fill in the assets of an existing archive.

Offline (default): inline assets are written from the stored raw files, stored versions are
checked, downloadable ones not yet stored are recorded as missing. ``--online``: also
refreshes their URLs and downloads them (needs a session, as ``batch`` does). Idempotent.
Exit codes: 0 done; 1 a thread failed or (online) a version could not be downloaded; 2 usage
or config error (including "no archive at --out"); 3 no usable session.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import (
    JSON_OUT,
    QUIET,
    VERBOSE,
    bounded,
    console_level,
    print_json,
    require_archive,
)
from pplx_archiver.cli._run import command_scope, fail
from pplx_archiver.errors import EXIT_FAILURES, EXIT_OK, PplxError
from pplx_archiver.settings import Settings, load_settings
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.backfill import BackfillSummary, backfill


async def _run(settings: Settings, online: bool, limit: int | None) -> BackfillSummary:
    from pplx_archiver.shell.archive.assets import open_assets

    with Archive(settings.out_dir) as archive:
        if not online:
            async with open_assets(settings, None, archive, online=False) as session:
                return await backfill(archive, session, lang=settings.lang, limit=limit)
        from pplx_archiver.shell.net.auth import open_session

        async with (
            open_session(settings) as (client, _info),
            open_assets(settings, client, archive, shared=client.budget()) as session,
        ):
            return await backfill(archive, session, lang=settings.lang, limit=limit)


@app.command("assets-backfill")
def assets_backfill(
    out: Path | None = typer.Option(
        None, "--out", "-o", metavar="DIR", help="Archive root folder [default: ./archive]."
    ),
    online: bool = typer.Option(
        False, "--online", help="Refresh URLs and download missing versions (needs a session)."
    ),
    limit: int | None = bounded("limit", None, "--limit", metavar="N", help="At most N threads."),
    lang: str | None = typer.Option(
        None, "--lang", metavar="[en|zh]", help="Label language of the archive [default: en]."
    ),
    log_format: str | None = typer.Option(
        None,
        "--log-format",
        metavar="[auto|json|console]",
        help="stderr log format; auto = console lines on a terminal, JSON otherwise.",
    ),
    rate: float | None = bounded(
        "rate",
        None,
        "--rate",
        metavar="RATE",
        help="Ceiling of API requests per second (URL refreshes) [default: 2].",
    ),
    burst: int | None = bounded(
        "burst", None, "--burst", metavar="N", help="Token-bucket burst [default: 4]."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", metavar="URL", help="API origin (with --online)."
    ),
    cookies: Path | None = typer.Option(
        None, "--cookies", metavar="FILE", help="Cookie file (with --online)."
    ),
    session_token: str | None = typer.Option(
        None,
        "--session-token",
        metavar="TOKEN",
        help="Session token cookie value (with --online).",
    ),
    cookies_from: str | None = typer.Option(
        None,
        "--cookies-from",
        metavar="BROWSER",
        help="Read cookies from a browser (with --online).",
    ),
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    as_json: bool = JSON_OUT,
) -> None:
    """Write missing assets and manifests of an archive; --online downloads what is missing.

    Reports are re-rendered into report.md when their bytes arrive. A second run changes
    nothing. Threads whose assets stay incomplete are retried by the next sync.

    \b
    Examples:
      pplx-export assets-backfill -o ~/pplx-archive
      pplx-export assets-backfill -o ~/pplx-archive --online
    """
    try:
        settings = load_settings(
            {
                "out_dir": out,
                "lang": lang,
                "log_format": log_format,
                "rate": rate,
                "burst": burst,
                "base_url": base_url,
                "cookies_file": cookies,
                "session_token": session_token,
                "cookies_from": cookies_from,
                "console_level": console_level(quiet, verbose),
            }
        )
        require_archive(settings)
        with command_scope(settings, "assets-backfill"):
            summary = anyio.run(_run, settings, online, limit)
    except (PplxError, OSError, KeyboardInterrupt) as exc:
        raise typer.Exit(fail(exc)) from None
    bad = summary.failures or (online and summary.versions.get("failed", 0))
    if as_json:
        print_json(summary.as_event())
        raise typer.Exit(EXIT_FAILURES if bad else EXIT_OK)
    typer.echo(summary.line())
    for failure in summary.failures:
        typer.echo(f"  failed {failure['path']}: {failure['error']}")
    raise typer.Exit(EXIT_FAILURES if bad else EXIT_OK)
