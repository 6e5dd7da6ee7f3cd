"""Archive-repair commands for unattended use: ``reindex`` and ``forget`` (offline).

Both write the index, so both hold the archive's writer lock (exit 6 while another command
writes). Exit codes: 0 done; 1 reindex found unreadable folders or duplicates (reported, the
rest rebuilt) or forget did not know an id; 2 usage error; 6 archive busy.
"""

from __future__ import annotations

from pathlib import Path

import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import (
    JSON_OUT,
    QUIET,
    VERBOSE,
    console_level,
    print_json,
    require_archive,
)
from pplx_archiver.cli._run import check_out_dir, command_scope, fail
from pplx_archiver.errors import EXIT_FAILURES, EXIT_OK, ConfigError, PplxError
from pplx_archiver.settings import load_settings

OUT = typer.Option(
    None, "--out", "-o", metavar="DIR", help="Archive root folder [default: ./archive]."
)


@app.command("reindex")
def reindex(
    out: Path | None = OUT,
    log_format: str | None = typer.Option(
        None,
        "--log-format",
        metavar="[auto|json|console]",
        help="stderr log format: auto, json or console.",
    ),
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    as_json: bool = JSON_OUT,
) -> None:
    """Rebuild index/archive.sqlite offline from the thread folders.

    Every folder becomes an archived thread (folders of threads deleted upstream included);
    variants come from the registry, deleted/expired/not-found states from
    index/terminal_states.jsonl, run history from the old index when it is readable; the
    search index is rebuilt from the raw files. Bad or
    duplicate registry lines are dropped (the original file is kept as a .bak copy). Run it
    when a command says the index is damaged, or after index/archive.sqlite was lost.

    \b
    Examples:
      pplx-export reindex --out ~/perplexity-archive
      pplx-export reindex -o archive && pplx-export verify -o archive
    """
    from pplx_archiver.shell.archive.search_rebuild import print_progress
    from pplx_archiver.shell.care.reindex import reindex as rebuild
    from pplx_archiver.shell.run.progress import Meter

    try:
        level = console_level(quiet, verbose)
        settings = load_settings({"out_dir": out, "log_format": log_format, "console_level": level})
        check_out_dir(settings.out_dir)
        if not settings.out_dir.is_dir():
            raise ConfigError(f"--out {settings.out_dir}: no such folder")
        meter = Meter("reindex: search index", enabled=False if quiet or as_json else None)
        with command_scope(settings, "reindex"), meter:
            # a terminal: counts, rate and ETA in place; elsewhere the plain progress lines
            plain = None if quiet or as_json else print_progress
            summary = rebuild(settings.out_dir, search_progress=meter if meter.enabled else plain)
    except (PplxError, OSError, KeyboardInterrupt) as exc:
        raise typer.Exit(fail(exc)) from None
    bad = summary.duplicates or summary.unreadable
    if as_json:
        print_json(summary.as_event())
        raise typer.Exit(EXIT_FAILURES if bad else EXIT_OK)
    typer.echo(summary.line())
    for path in summary.duplicates:
        typer.echo(f"  duplicate folder (not indexed): {path}")
    for item in summary.unreadable:
        typer.echo(f"  unreadable: {item['error']}")
    bad = summary.duplicates or summary.unreadable
    raise typer.Exit(EXIT_FAILURES if bad else EXIT_OK)


@app.command("forget")
def forget(
    thread: list[str] = typer.Argument(..., help="Thread uuid(s) to drop from the index."),
    out: Path | None = OUT,
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    as_json: bool = JSON_OUT,
) -> None:
    """Drop threads from the index so the next sync treats them as new.

    For a thread stuck as not found (or deleted/expired) that should be tried again, or an
    id that should never have been exported. Files and folders are left alone. `--json`
    prints `{"forgotten": [...], "unknown": [...]}`.

    \b
    Examples:
      pplx-export forget 9659918d-0000-4000-8000-000000000000 --out archive
    """
    from pplx_archiver.shell.archive.store import Archive
    from pplx_archiver.shell.run.runner import resolve_thread_arg

    forgotten: list[str] = []
    unknown: list[str] = []
    try:
        level = console_level(quiet, verbose)
        settings = load_settings({"out_dir": out, "console_level": level})
        check_out_dir(settings.out_dir)
        require_archive(settings)
        with command_scope(settings, "forget"), Archive(settings.out_dir) as archive:
            for arg in thread:
                try:
                    uuid = resolve_thread_arg(archive, arg)
                except ConfigError:
                    uuid = arg
                (forgotten if archive.forget(uuid) else unknown).append(uuid)
    except (PplxError, OSError, KeyboardInterrupt) as exc:
        raise typer.Exit(fail(exc)) from None
    if as_json:
        print_json({"forgotten": forgotten, "unknown": unknown})
    elif not quiet:
        for uuid in forgotten:
            typer.echo(f"forgot {uuid}")
    if not as_json:
        for arg in unknown:
            typer.echo(f"not in the index: {arg}")
    raise typer.Exit(EXIT_FAILURES if unknown else EXIT_OK)
