"""``pplx-export vault``: write the archive as an Obsidian or Logseq vault, and keep it in sync.

Exit codes: 0 done; 1 some threads could not be made into notes (the others were); 2 usage
or config error (no archive at --out, a --to that is a file, an archive, or inside --out).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import OUT, require_archive
from pplx_archiver.cli._run import fail
from pplx_archiver.core.vault.vault import FLAVORS
from pplx_archiver.errors import EXIT_FAILURES, EXIT_OK, ConfigError, PplxError
from pplx_archiver.settings import load_settings
from pplx_archiver.shell.care.vault import export_vault
from pplx_archiver.shell.care.vault_files import check_vault


@app.command("vault")
def vault(
    out: Path | None = OUT,
    to: Path = typer.Option(
        ..., "--to", metavar="DIR", help="The vault folder (created when missing)."
    ),
    flavor: str = typer.Option(
        "obsidian", "--flavor", metavar="[obsidian|logseq]", help="Note format: obsidian or logseq."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as one JSON object."),
) -> None:
    """Write the archive as notes of an Obsidian or Logseq vault; rerun to keep it in sync.

    One note per thread (properties: uuid, URL, mode, models, space, dates, credits from
    usage-backfill), its turns, answers and citations (footnotes in Obsidian), links to
    related threads, to a note per space and per source domain; reports and assets as vault
    files. Only changed notes are rewritten. Your text outside the pplx-archiver markers of
    a note is kept, also in a note you renamed or moved. The archive is only read.

    \b
    Examples:
      pplx-export vault --out ~/pplx-archive --to ~/Notes
      pplx-export vault -o archive --to ~/logseq-graph --flavor logseq
    """
    try:
        if flavor not in FLAVORS:
            raise ConfigError(f"--flavor {flavor!r}: expected one of {', '.join(FLAVORS)}")
        settings = load_settings({"out_dir": out})
        require_archive(settings)
        target = check_vault(to, settings.out_dir)
        summary = export_vault(settings.out_dir, target, flavor)
    except (PplxError, OSError, KeyboardInterrupt) as exc:
        raise typer.Exit(fail(exc)) from None
    if as_json:
        typer.echo(orjson.dumps(dataclasses.asdict(summary)).decode("utf-8"))
    else:
        typer.echo(summary.line())
        for failure in summary.failures:
            typer.echo(f"  failed {failure}")
    raise typer.Exit(EXIT_FAILURES if summary.failures else EXIT_OK)
