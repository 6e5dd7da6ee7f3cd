"""``pplx-export relations``: build the relation graph of an archive, offline.

Writes ``relations/edges.jsonl`` and ``relations/graph.md`` and stores the edges in the
index. Exit codes: 0 done; 1 some threads could not be read (the graph holds the others);
2 usage or config error (including "no archive at --out"); 6 another command is writing the
archive.
"""

from __future__ import annotations

from pathlib import Path

import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import (
    JSON_OUT,
    OUT,
    QUIET,
    VERBOSE,
    console_level,
    print_json,
    require_archive,
)
from pplx_archiver.cli._run import command_scope, fail, require_writable
from pplx_archiver.errors import EXIT_FAILURES, EXIT_OK, PplxError
from pplx_archiver.settings import load_settings
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care import relations as relations_mod
from pplx_archiver.shell.run.progress import Meter


@app.command("relations")
def relations(
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
    """Build the relation graph of the archive from its raw files: offline, byte-identical.

    Kinds: same_space, same_prompt (equal first queries; scheduled task or manual resend),
    references (an answer or citation links another archived thread) and subagent_of (a
    sub-agent run or council model slot). Writes relations/edges.jsonl and
    relations/graph.md and stores the edges in the index. Exit 1 when a thread could not be
    read.

    \b
    Examples:
      pplx-export relations --out ~/pplx-archive
      pplx-export relations -o archive && less archive/relations/graph.md
    """
    try:
        level = console_level(quiet, verbose)
        settings = load_settings({"out_dir": out, "log_format": log_format, "console_level": level})
        require_archive(settings)
        require_writable(settings.out_dir, "relations", "relations/ and the index's edges")
        with (
            command_scope(settings, "relations"),
            Archive(settings.out_dir) as archive,
            Meter("relations: threads read", enabled=False if quiet else None) as meter,
        ):
            summary = relations_mod.build(archive, progress=meter)
    except (PplxError, OSError, KeyboardInterrupt) as exc:
        raise typer.Exit(fail(exc)) from None
    code = EXIT_FAILURES if summary.failures else EXIT_OK
    if as_json:
        print_json(summary.as_event())
        raise typer.Exit(code)
    kinds = ", ".join(f"{kind} {n}" for kind, n in summary.by_kind.items())
    typer.echo(
        f"relations: {summary.threads} threads, {summary.edges} edges ({kinds}), "
        f"{summary.files_written} files written, {len(summary.failures)} failed"
    )
    for failure in summary.failures:
        typer.echo(f"  failed {failure['path']}: {failure['error']}")
    raise typer.Exit(EXIT_FAILURES if summary.failures else EXIT_OK)
