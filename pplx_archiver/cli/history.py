"""History commands: ``runs`` (the run history) and ``failed`` (threads failing now). Offline.

Both read the archive's index only. Exit codes: 0 listed (also when empty); 2 no archive at
``--out`` or another usage error.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import bounded, require_archive
from pplx_archiver.errors import PplxError
from pplx_archiver.settings import load_settings
from pplx_archiver.shell.archive.index import RunRow
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.changes import incomplete_reason, incomplete_records
from pplx_archiver.shell.run.monitor import failed_titles

OUT = typer.Option(
    None, "--out", "-o", metavar="DIR", help="Archive folder [default: $PPLX_OUT or ./archive]."
)
JSON = typer.Option(False, "--json", help="Print JSON instead of text.")


def printable(text: str) -> str:
    """``text`` on one line with control and format characters shown as spaces."""
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)


def read_archive(out: Path | None) -> Archive:
    """The archive at ``--out``, read-only; a usage error (exit 2) when there is none."""
    try:
        settings = load_settings({"out_dir": out})
        require_archive(settings)
        return Archive(settings.out_dir, read_only=True)
    except PplxError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(exc.exit_code) from None


def run_record(run: RunRow) -> dict[str, Any]:
    """One run of the history as JSON: command, start, end, exit code, counts, log file."""
    summary = run.summary or {}
    counts = ("listed", "archived", "unchanged", "failed", "terminal", "total", "variant_hits")
    return {
        "id": run.id,
        "command": run.command,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "exit_code": run.exit_code,
        **{key: summary.get(key) for key in counts},
        "elapsed_s": summary.get("elapsed_s"),
        "log_file": run.log_file,
    }


def _run_line(rec: dict[str, Any]) -> str:
    code = "running or crashed" if rec["finished_at"] is None else f"exit {rec['exit_code']}"
    counts = ", ".join(
        f"{rec[k]} {k}" for k in ("archived", "unchanged", "failed") if rec[k] is not None
    )
    return (
        f"#{rec['id']} {rec['command']:<12} {rec['started_at']}  {code}"
        + (f"  ({counts})" if counts else "")
        + (f"\n    log: {rec['log_file']}" if rec["log_file"] else "")
    )


@app.command()
def runs(
    out: Path | None = OUT,
    limit: int = bounded("limit", 20, "--limit", metavar="N", help="Show the newest N runs."),
    json_output: bool = JSON,
) -> None:
    """List the archive's run history, newest first: command, start, exit code, counts, log.

    \b
    Examples:
      pplx-export runs -o ~/pplx-archive
      pplx-export runs -o ~/pplx-archive --json --limit 1
    """
    archive = read_archive(out)
    try:
        records = [run_record(run) for run in archive.index.runs(limit)]
    finally:
        archive.close()
    print_records(records, json_output, "no runs recorded yet", _run_line)


def failed_records(archive: Archive) -> list[dict[str, Any]]:
    """The threads the index lists as failed, oldest first failure first."""
    titles = failed_titles(archive.index.runs(20))
    records = [
        {
            "thread_uuid": row.uuid,
            "title": row.title or titles.get(row.uuid),
            "reason": row.error,
            "json_path": row.error_path,
            "first_failure": row.first_failed_at,
            "last_failure": row.last_failed_at,
            "attempts": row.attempts,
        }
        for row in archive.iter_threads("failed")
    ]
    records.sort(key=lambda r: (r["first_failure"] or "", r["thread_uuid"]))
    for item in incomplete_records(archive):
        records.append(
            {
                "thread_uuid": item["thread_uuid"],
                "title": item["title"],
                "reason": incomplete_reason(item),
                "json_path": None,
                "first_failure": None,
                "last_failure": None,
                "attempts": 0,
                "incomplete": True,
            }
        )
    return records


@app.command()
def failed(out: Path | None = OUT, json_output: bool = JSON) -> None:
    """List the threads that fail now: title, reason, first and last failure, attempts;
    and the incomplete ones (a report or asset could not be fetched).

    Every run retries them; `pplx-export sync --retry-failed` retries exactly these.

    \b
    Examples:
      pplx-export failed -o ~/pplx-archive
      pplx-export failed -o ~/pplx-archive --json | jq -r '.[].thread_uuid'
    """
    archive = read_archive(out)
    try:
        records = failed_records(archive)
    finally:
        archive.close()
    print_records(records, json_output, "no thread is failing", _failed_text)


def _failed_text(rec: dict[str, Any]) -> str:
    where = f" at {rec['json_path']}" if rec["json_path"] else ""
    title = printable(rec["title"] or "untitled")
    return (
        f"{rec['thread_uuid']}  {title}\n"
        f"    {rec['attempts']} attempt(s), first {rec['first_failure'] or 'unknown'}, "
        f"last {rec['last_failure'] or 'unknown'}\n"
        f"    {printable(rec['reason'] or '')}{where}"
    )


def print_records(
    records: list[dict[str, Any]],
    json_output: bool,
    empty: str,
    text: Callable[[dict[str, Any]], str],
) -> None:
    """The records as one JSON array, or a text block each (``empty`` when there are none)."""
    if json_output:
        sys.stdout.write(orjson.dumps(records).decode("utf-8") + "\n")
        return
    if not records:
        sys.stdout.write(empty + "\n")
    for rec in records:
        sys.stdout.write(text(rec) + "\n")
