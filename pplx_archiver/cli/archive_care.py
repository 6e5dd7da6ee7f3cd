"""Offline archive-care commands: ``re-render``, ``status`` and ``verify`` (no network).

``re-render`` rebuilds derived files from the stored raw files, ``status`` reports the
archive's state from its index, ``verify`` audits it. None of them builds an HTTP client.
Exit codes: 0 fine; 1 some threads failed to re-render or verify found problems; 2 usage
or config error (including "no archive at --out").
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import orjson
import typer

from pplx_archiver import logconfig
from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import (
    JSON_OUT,
    OUT,
    QUIET,
    VERBOSE,
    bounded,
    console_level,
    open_archive,
    print_json,
    require_archive_folder,
)
from pplx_archiver.cli._run import command_scope, project_error
from pplx_archiver.core.archive.writes import VerifyRotation
from pplx_archiver.errors import (
    EXIT_FAILURES,
    EXIT_OK,
    EXIT_USAGE,
    PplxError,
    exit_code_for,
)
from pplx_archiver.settings import Settings, load_settings
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care import rerender as rerender_mod
from pplx_archiver.shell.care import status as status_mod
from pplx_archiver.shell.care import verify as verify_mod
from pplx_archiver.shell.care import verify_sample
from pplx_archiver.shell.run.progress import Meter


def care_settings(
    out: Path | None,
    lang: str | None = None,
    log_format: str | None = None,
    level: str | None = None,
) -> Settings:
    return load_settings(
        {"out_dir": out, "lang": lang, "log_format": log_format, "console_level": level}
    )


def exit_with(exc: BaseException, code: int | None = None) -> None:
    """Print an error for a person and exit with its code (or ``code``)."""
    exc = project_error(exc)
    if isinstance(exc, PplxError):
        sys.stderr.write(f"error: {logconfig.redact_text(str(exc))}\n")
    else:
        sys.stderr.write(f"error: unexpected {type(exc).__name__}: {exc}\n")
    raise typer.Exit(exit_code_for(exc) if code is None else code)


@app.command("re-render")
def re_render(
    out: Path | None = OUT,
    thread_json: bool = typer.Option(
        False, "--thread-json", help="Also rewrite thread.json (left alone by default)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Render and compare, write nothing; report what would change."
    ),
    limit: int | None = bounded(
        "limit", None, "--limit", metavar="N", help="Re-render at most N threads."
    ),
    jobs: int | None = bounded(
        "jobs",
        None,
        "--jobs",
        metavar="N",
        help="Worker processes (default: the number of CPU cores).",
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        metavar="[en|zh]",
        help="Label language (default: the one each thread was archived with).",
    ),
    log_format: str | None = typer.Option(
        None,
        "--log-format",
        metavar="[auto|json|console]",
        help="stderr log format; auto = console lines on a terminal, JSON otherwise.",
    ),
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    as_json: bool = JSON_OUT,
) -> None:
    """Rebuild every derived file from the stored raw files, offline and byte-identical.

    Unchanged files are not rewritten; answer variants are re-registered and warned about
    (ANSWER_VARIANT_DETECTED, source offline) only when new or changed. Exit 1 when a
    thread could not be re-rendered.

    \b
    Examples:
      pplx-export re-render -o ~/pplx-archive --dry-run
      pplx-export re-render -o ~/pplx-archive --lang zh --jobs 2
    """
    try:
        settings = care_settings(out, lang, log_format, console_level(quiet, verbose))
        require_archive_folder(settings)
        with (
            command_scope(settings, "re-render", lock=not dry_run),
            open_archive(settings, read_only=dry_run) as archive,
        ):
            summary = rerender_mod.rerender(
                archive,
                lang=lang,  # None: each thread's recorded language
                thread_json=thread_json,
                dry_run=dry_run,
                limit=limit,
                jobs=jobs or os.cpu_count() or 1,
            )
    except (PplxError, OSError, sqlite3.Error) as exc:
        exit_with(exc)
        return
    if as_json:
        print_json(summary.as_event() | {"dry_run": dry_run})
        raise typer.Exit(EXIT_FAILURES if summary.failures else EXIT_OK)
    verb = "would rewrite" if dry_run else "rewrote"
    typer.echo(
        f"re-render: {summary.threads} threads, {verb} {summary.rewritten_files} files "
        f"in {summary.changed_threads} threads, {summary.unchanged_files} unchanged, "
        f"{summary.removed_files} stale removed, {len(summary.failures)} failed"
    )
    if summary.variant_changes:
        typer.echo(f"⚠ answer variants new or changed: {summary.variant_changes}")
    for failure in summary.failures:
        where = f" at {failure['json_path']}" if "json_path" in failure else ""
        typer.echo(f"  failed {failure['path']}: {failure['error']}{where}")
    raise typer.Exit(EXIT_FAILURES if summary.failures else EXIT_OK)


@app.command("status")
def status(
    out: Path | None = OUT,
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """Report the archive's state from its index: local and read-only.

    Counts by state and mode, the last run, failures with reasons, threads pending retry,
    answer-variant hits and interruptions.

    \b
    Examples:
      pplx-export status -o ~/pplx-archive
      pplx-export status -o ~/pplx-archive --json
    """
    try:
        settings = care_settings(out)
        with open_archive(settings, read_only=True) as archive:
            report = status_mod.collect(archive)
    except (PplxError, OSError, sqlite3.Error) as exc:
        exit_with(exc, EXIT_USAGE)  # no archive, or an index it cannot read: 2 (docs)
        return
    if as_json:
        typer.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode("utf-8"))
    else:
        typer.echo(status_mod.render_text(report), nl=False)


@app.command("verify")
def verify(
    out: Path | None = OUT,
    jobs: int | None = bounded(
        "jobs",
        None,
        "--jobs",
        metavar="N",
        help="Worker processes for the re-render check (default: cores).",
    ),
    sample: float | None = bounded(
        "sample_percent",
        None,
        "--sample",
        metavar="PERCENT",
        help="Check only PERCENT % of the threads (at least one): the next ones in a rotation "
        "recorded in the index, so successive runs cover the whole archive; e.g. --sample 5.",
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        metavar="[en|zh]",
        help="Check against this label language (default: the one each thread records).",
    ),
    quiet: bool = QUIET,
    as_json: bool = JSON_OUT,
) -> None:
    """Audit the archive; print each problem with its path; exit 1 when there is any.

    Checks files of every done thread, thread.json against the index, completeness (no
    cursor gap), byte-identical re-render, leftover temp files, duplicate registry lines
    and asset hashes. Also prints how many turns are degraded (partly unreadable payloads,
    rendered with a note); they are not problems. With --sample only that share of the
    threads is checked (the archive-wide checks still run) and the report says how much was
    covered and when the whole archive last was.

    \b
    Examples:
      pplx-export verify -o ~/pplx-archive
      pplx-export verify -o ~/pplx-archive --jobs 1
      pplx-export verify -o ~/pplx-archive --sample 5
    """
    try:
        settings = care_settings(out, lang)
        with open_archive(settings, read_only=True) as archive:
            picked = None if sample is None else verify_sample.choose(archive, sample)
            threads = archive.index.counts().get("done", 0) if picked is None else len(picked.rows)
            with Meter("verify", enabled=False if quiet else None) as meter:
                problems = verify_mod.verify(
                    archive,
                    lang=lang,
                    jobs=jobs or os.cpu_count() or 1,
                    progress=meter,
                    rows=None if picked is None else picked.rows,
                )
            turns, with_degraded = verify_mod.degraded_summary(archive)
            cover = None if picked is None else verify_sample.report(archive, picked)
        if picked is not None and cover is not None:
            cover["recorded"] = _record_rotation(settings, picked.rotation)
    except (PplxError, OSError, sqlite3.Error) as exc:
        exit_with(exc)
        return
    _verify_output(problems, threads, (turns, with_degraded), cover, as_json=as_json)


def _record_rotation(settings: Settings, rotation: VerifyRotation) -> bool:
    """Record where the sample rotation stands, through the writer; False (with a warning)
    when the archive cannot be written now: the next run then checks the same threads."""
    from pplx_archiver.shell.archive.lock import writer_lock

    try:
        with writer_lock(settings.out_dir, "verify"), Archive(settings.out_dir) as archive:
            archive.writer.apply(rotation)
    except (PplxError, OSError, sqlite3.Error) as exc:
        reason = logconfig.redact_text(str(project_error(exc)))
        sys.stderr.write(f"warning: the sample's rotation position is not recorded: {reason}\n")
        return False
    return True


def _verify_output(
    problems: list[verify_mod.Problem],
    threads: int,
    degraded: tuple[int, int],
    cover: dict[str, Any] | None,
    *,
    as_json: bool,
) -> None:
    turns, with_degraded = degraded
    code = EXIT_FAILURES if problems else EXIT_OK
    if as_json:
        print_json(
            {
                "ok": not problems,
                "threads": threads,
                "problems": [dataclasses.asdict(p) for p in problems],
                "degraded_turns": turns,
                "degraded_threads": with_degraded,
                "sample": cover,
            }
        )
        raise typer.Exit(code)
    for problem in problems:
        typer.echo(problem.line())
    if turns:
        typer.echo(f"verify: {turns} degraded turns in {with_degraded} threads (not a problem)")
    if cover is not None:
        typer.echo(verify_sample.line(cover))
    if problems:
        typer.echo(f"verify: {len(problems)} problems in an archive of {threads} threads")
        raise typer.Exit(code)
    typer.echo(f"verify: ok ({threads} threads)")
