"""The ``site`` command: a static HTML copy of the archive that works from a folder."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import (
    JSON_OUT,
    LOG_FORMAT,
    OUT,
    QUIET,
    VERBOSE,
    bounded,
    console_level,
    open_archive,
    print_json,
)
from pplx_archiver.cli._run import command_scope
from pplx_archiver.cli.archive_care import care_settings, exit_with
from pplx_archiver.errors import EXIT_FAILURES, EXIT_LISTING_SHRANK, EXIT_OK, PplxError
from pplx_archiver.settings import Settings
from pplx_archiver.shell.run.progress import Meter


def build_for(
    settings: Settings,
    to: Path | None,
    *,
    full: bool,
    jobs: int | None,
    quiet: bool = False,
    as_json: bool = False,
) -> int:
    """Build or update the site of the archive in ``settings``; print a line; the exit code.

    A site written outside the archive (``--to``) changes nothing in it: the archive is read
    read-only (an archive the user cannot write will do), without its writer lock, and the log
    goes to the user's log folder. The default ``<archive>/site`` is written under the lock.
    """
    from pplx_archiver.site.build import build_site

    outside = to is not None and not _inside(to, settings.out_dir)
    with (
        open_archive(settings, read_only=outside) as archive,
        command_scope(settings, "site", lock=not outside),
        Meter("site: pages", enabled=False if quiet else None) as meter,
    ):
        summary = build_site(
            archive, to, full=full, jobs=jobs or os.cpu_count() or 1, progress=meter
        )
    code = EXIT_FAILURES if summary.failed else EXIT_OK
    if as_json:
        print_json(summary.as_event())
        return code
    typer.echo(
        f"site: {summary.threads} threads, {summary.built} pages built, "
        f"{summary.unchanged} unchanged, {summary.removed} removed, {summary.failed} failed "
        f"→ {summary.site}/index.html"
    )
    return code


def _inside(path: Path, folder: Path) -> bool:
    return path.expanduser().resolve().is_relative_to(folder.expanduser().resolve())


def after_sync(run_sync: Callable[[], None], out: Path | None, log_format: str | None) -> None:
    """Run a sync, then (unless it stopped on auth, a challenge or an interruption) update the
    site; exit with the worse of the two codes."""
    try:
        run_sync()
        code = EXIT_OK
    except typer.Exit as done:
        code = int(done.exit_code or 0)
    if code in (EXIT_OK, EXIT_FAILURES, EXIT_LISTING_SHRANK):  # the archive was written
        try:
            code = max(
                code, build_for(care_settings(out, None, log_format), None, full=False, jobs=None)
            )
        except (PplxError, OSError) as exc:
            exit_with(exc)
    raise typer.Exit(code)


@app.command("site")
def site(
    out: Path | None = OUT,
    to: Path | None = typer.Option(
        None, "--to", metavar="DIR", help="Write the site here instead of <archive>/site."
    ),
    full: bool = typer.Option(
        False, "--full", help="Rebuild every page (default: only threads whose files changed)."
    ),
    jobs: int | None = bounded(
        "jobs",
        None,
        "--jobs",
        metavar="N",
        help="Worker processes (default: the number of CPU cores).",
    ),
    log_format: str | None = LOG_FORMAT,
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    as_json: bool = JSON_OUT,
) -> None:
    """Write a static HTML site of the archive: open its index.html in a browser, no server.

    An index of every thread (sortable, filterable by mode, space and flags), a page per
    space and per thread (citations linked to sources, work steps and sub-agents folded,
    math as MathML, code highlighted) and a search that works from file:// (words and 1- or
    2-character Chinese). Nothing is loaded from the network. A rebuild only rewrites the
    pages of threads whose files changed. Exit 1 when a thread could not be decoded (its
    page says so).

    \b
    Examples:
      pplx-export site --out archive            # then open archive/site/index.html
      pplx-export site --out archive --to /srv/www/pplx --full
    """
    try:
        settings = care_settings(out, None, log_format, console_level(quiet, verbose))
        code = build_for(settings, to, full=full, jobs=jobs, quiet=quiet, as_json=as_json)
    except (PplxError, OSError) as exc:
        exit_with(exc)
        return
    raise typer.Exit(code)
