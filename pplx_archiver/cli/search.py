"""``pplx-export search``: find turns by what was asked and answered (offline, read-only).

Exit codes: 0 hits found; 1 nothing found (like grep); 2 usage error (no archive, a bad
date, an FTS5 syntax mistake in a ``--raw`` query); 6 the index needs a rebuild (or
``--rebuild``) while another command writes the archive.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import orjson
import typer

from pplx_archiver import logconfig
from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import OUT, bounded, require_archive
from pplx_archiver.cli._run import run_logging
from pplx_archiver.core.archive.writes import SearchRebuild
from pplx_archiver.core.thread import mode_table
from pplx_archiver.errors import (
    EXIT_FAILURES,
    EXIT_OK,
    ConfigError,
    IndexCorruptError,
    PplxError,
    exit_code_for,
)
from pplx_archiver.settings import load_settings
from pplx_archiver.shell.archive import search as search_mod
from pplx_archiver.shell.archive.lock import writer_lock
from pplx_archiver.shell.archive.store import INDEX_DIR, Archive


def _show(hit: search_mod.Hit, color: bool) -> str:
    snippet = hit.snippet
    if hit.match is not None and color:
        a, b = hit.match
        snippet = snippet[:a] + typer.style(snippet[a:b], bold=True, fg="yellow") + snippet[b:]
    where = f"turn {hit.turn}" if hit.turn else "thread"
    return f"  {where} ({hit.field}): {snippet}\n    {hit.path}"


@app.command("search")
def search(
    query: str = typer.Argument(
        "", help="Text to find (literal: any character is searched as itself)."
    ),
    out: Path | None = OUT,
    mode: str | None = typer.Option(
        None,
        "--mode",
        "-m",
        metavar="MODE",
        help=f"Only this mode: {', '.join(mode_table.VIEWS.names)}.",
    ),
    space: str | None = typer.Option(
        None, "--space", metavar="SLUG", help="Only threads of this space (title or slug)."
    ),
    since: str | None = typer.Option(
        None, "--since", metavar="DATE", help="Only turns on or after this date (2026-07-20)."
    ),
    until: str | None = typer.Option(
        None, "--until", metavar="DATE", help="Only turns on or before this date."
    ),
    account: str | None = typer.Option(
        None, "--account", metavar="NAME", help="Only this account folder."
    ),
    limit: int = bounded(
        "limit",
        search_mod.DEFAULT_LIMIT,
        "--limit",
        "-n",
        metavar="N",
        help="Show at most N turns.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per hit."),
    raw: bool = typer.Option(False, "--raw", help="Pass QUERY to SQLite FTS5 as query syntax."),
    exact: bool = typer.Option(
        False,
        "--exact",
        help="Match QUERY as written: no case, width (ＡＩ/AI) or script (查詢/查询) folding.",
    ),
    rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild the search index first."),
) -> None:
    """Search the archive's titles, queries, answers, sub-agent conclusions and sources.

    Matching is literal and folds case, widths and Chinese scripts: `c++`, `v1.2`, `a/b`,
    `"x"` or `NOT` are found as written, in English or Chinese, from one character up;
    `AI` finds ＡＩ, 查詢 finds 查询 and the other way round (`--exact` turns it off).
    Longer text ranks by bm25, a hit in the query above one in the title above one in the
    answer (text found in more than 300 turns: the 300 most recently archived of them are
    ranked); one- and two-character queries list newest first. A query starting with "-"
    goes after "--". Results are grouped by thread, with the turn file to open. The index lives in
    index/archive.sqlite, is kept up to date by every archiving run and is rebuilt from
    the raw files when missing or of an older version (holding the archive's writer lock:
    exit 6 while another command writes). Exit 1 when nothing is found.

    \b
    Examples:
      pplx-export search -o archive "rate limit" --mode search --since 2026-07-01
      pplx-export search -o archive 经济 --json | jq .path
    """
    try:
        if not query:
            raise ConfigError("search: give the text to find (QUERY)")
        names = mode_table.VIEWS.names
        if mode is not None and mode not in names:
            raise ConfigError(f"--mode {mode!r}: expected one of {', '.join(names)}")
        filters = search_mod.Filters(
            mode=mode,
            space=space,
            since=search_mod.check_date(since, "--since"),
            until=search_mod.check_date(until, "--until"),
            account=account,
        )
        settings = load_settings({"out_dir": out})
        require_archive(settings)
        db_path = settings.out_dir / INDEX_DIR / "archive.sqlite"
        db = search_mod.open_readonly(db_path)
        try:
            ready = search_mod.index_state(db) == "ready"
        finally:
            db.close()
        if rebuild or not ready:
            # A rebuild writes the index: it waits for no other writer (exit 6 when busy).
            with (
                writer_lock(settings.out_dir, "search"),
                Archive(settings.out_dir) as archive,
                run_logging(settings, "search-index"),
            ):
                if rebuild:
                    archive.writer.apply(SearchRebuild(search_mod.print_progress))
                else:
                    search_mod.ensure_ready(archive, progress=search_mod.print_progress)
        db = search_mod.open_readonly(db_path)
        try:
            hits = search_mod.search(db, query, filters, limit, raw=raw, exact=exact)
        except sqlite3.DatabaseError as exc:  # a damaged search table: no traceback
            raise IndexCorruptError(
                f"{db_path}: the search index is damaged ({exc}): run `pplx-export reindex "
                f"--out {settings.out_dir}` to rebuild it (`pplx-export verify` shows the damage)"
            ) from None
        finally:
            db.close()
    except (PplxError, OSError) as exc:
        text = str(exc) if isinstance(exc, PplxError) else f"{type(exc).__name__}: {exc}"
        sys.stderr.write(f"error: {logconfig.redact_text(text)}\n")
        raise typer.Exit(exit_code_for(exc)) from None
    if as_json:
        for hit in hits:
            typer.echo(orjson.dumps(hit.as_json()).decode("utf-8"))
    else:
        color = sys.stdout.isatty()
        for group in search_mod.grouped(hits):
            first = group[0]
            head = search_mod.printable(first.title) or "?"
            if color:
                head = typer.style(head, bold=True)
            typer.echo(f"{head}  [{first.mode} · {first.date or '?'} · {first.account}]")
            for hit in group:
                typer.echo(_show(hit, color))
    raise typer.Exit(EXIT_OK if hits else EXIT_FAILURES)
