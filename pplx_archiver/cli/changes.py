"""What changed: ``history``, ``diff``, ``alerts`` and ``audit models``. Offline, read-only.

Exit codes: 0 shown (also when empty); 2 no archive at ``--out``, an unknown thread or
version, or another usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson
import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import bounded, check_since
from pplx_archiver.cli.history import JSON, OUT, print_records, printable, read_archive
from pplx_archiver.core.findings.alerts import KINDS
from pplx_archiver.errors import ConfigError, PplxError
from pplx_archiver.shell.archive.files import check_relative
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care import changes

T = TypeVar("T")
THREAD = typer.Argument(..., metavar="THREAD", help="The thread: its uuid, a prefix, or folder.")


def _with(out: Path | None, work: Callable[[Archive], T]) -> T:
    archive = read_archive(out)
    try:
        return work(archive)
    except PplxError as exc:
        sys.stderr.write(f"error: {printable(str(exc))}\n")
        raise typer.Exit(exc.exit_code) from None
    finally:
        archive.close()


def _history_text(rec: dict[str, Any]) -> str:
    mark = "  (current)" if rec["current"] else ""
    run = f"run {rec['run_id']}" if rec["run_id"] is not None else "run unknown"
    return (
        f"v{rec['version']}  fetched {rec['fetched_at'] or 'unknown'}  {run}{mark}\n"
        f"    {changes.change_words(rec['changes'])}"
    )


@app.command()
def history(
    thread: str = THREAD,
    out: Path | None = OUT,
    render: int | None = bounded(
        "version", None, "--render", metavar="V", help="Render version V (with --to)."
    ),
    to: Path | None = typer.Option(
        None, "--to", metavar="DIR", help="Folder (outside the archive) for --render's files."
    ),
    json_output: bool = JSON,
) -> None:
    """List every server version of a thread kept in the archive, and what changed in each.

    A thread whose server version changed keeps the earlier ones in its folder
    (`history/`); `pplx-export diff` shows what changed between two of them, and
    `--render V --to DIR` renders version V's Markdown files into DIR (the archive itself
    always holds the newest version's).

    \b
    Examples:
      pplx-export history 3f2a9c1e -o ~/pplx-archive
      pplx-export history 3f2a9c1e -o ~/pplx-archive --json | jq '.[-1]'
      pplx-export history 3f2a9c1e -o ~/pplx-archive --render 1 --to /tmp/v1
    """
    if (render is None) != (to is None):
        sys.stderr.write("error: --render V and --to DIR go together\n")
        raise typer.Exit(2)
    if render is not None and to is not None:
        written = _with(out, lambda a: _render_to(a, thread, render, to))
        sys.stdout.write(f"version {render}: {written} files written under {to}\n")
        return
    records = _with(out, lambda a: changes.history_records(a, changes.find_thread(a, thread)))
    print_records(records, json_output, "no versions", _history_text)


def _render_to(archive: Archive, thread: str, version: int, to: Path) -> int:
    """Render one version into ``to`` (refused inside the archive); return the file count."""
    target = to.resolve()
    if target == archive.out.resolve() or archive.out.resolve() in target.parents:
        raise ConfigError(f"--to {to}: inside the archive; give a folder outside it")
    result = changes.render_version(archive, changes.find_thread(archive, thread), version, None)
    try:
        for rel, data in result.files.items():
            check_relative(rel)
            path = target.joinpath(*rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    except OSError as exc:
        raise ConfigError(f"--to {to}: cannot write: {exc.strerror or exc}") from None
    return len(result.files)


def _diff_text(rec: dict[str, Any]) -> str:
    lines = [f"thread {rec['thread_uuid']}: version {rec['from']} → {rec['to']}"]
    if rec["turns_added"]:
        lines.append(f"  {len(rec['turns_added'])} turn(s) added")
    if rec["turns_removed"]:
        lines.append(f"  {len(rec['turns_removed'])} turn(s) removed")
    for entry in rec["entries"]:
        lines.append(f"turn {entry['turn']} ({entry['entry_uuid']}): {printable(entry['query'])}")
        if "answer_diff" in entry:
            words = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
            text = "".join(words[op].format(part) for op, part in entry["answer_diff"])
            lines.append("  answer: " + printable(text))
        for url in entry.get("sources_added", []):
            lines.append(f"  + source {printable(url)}")
        for url in entry.get("sources_removed", []):
            lines.append(f"  - source {printable(url)}")
        if entry.get("model"):
            lines.append(f"  model: {entry['model'][0] or 'none'} → {entry['model'][1] or 'none'}")
        if entry.get("status"):
            lines.append(f"  status: {entry['status'][0]} → {entry['status'][1]}")
    if len(lines) == 1:
        lines.append("  no change a reader sees")
    return "\n".join(lines)


@app.command()
def diff(
    thread: str = THREAD,
    out: Path | None = OUT,
    v_from: int | None = bounded(
        "version", None, "--from", metavar="V", help="Older version [default: the one before --to]."
    ),
    v_to: int | None = bounded(
        "version", None, "--to", metavar="V", help="Newer version [default: current]."
    ),
    entry: int | None = bounded(
        "turn", None, "--entry", metavar="N", help="Only turn N (1-based)."
    ),
    json_output: bool = JSON,
) -> None:
    """Show what changed between two versions of a thread: answers word by word, sources
    added and removed, model and status changes.

    In the text output removed words are [-like this-] and added ones {+like this+}.

    \b
    Examples:
      pplx-export diff 3f2a9c1e -o ~/pplx-archive
      pplx-export diff 3f2a9c1e -o ~/pplx-archive --from 1 --to 3 --entry 2 --json
    """

    def work(archive: Archive) -> dict[str, Any]:
        row = changes.find_thread(archive, thread)
        return changes.diff_record(archive, row, v_from, v_to, entry)

    record = _with(out, work)
    if json_output:
        sys.stdout.write(orjson.dumps(record).decode("utf-8") + "\n")
    else:
        sys.stdout.write(_diff_text(record) + "\n")


def _since(value: str | None) -> str | None:
    """``--since`` checked as ``batch``/``sync`` check it (a usage error otherwise)."""
    try:
        return check_since(value)
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(2) from None


def _alert_text(rec: dict[str, Any]) -> str:
    fields = {k: v for k, v in rec["fields"].items() if k not in ("thread_uuid", "title")}
    details = ", ".join(f"{k}={printable(str(v))}" for k, v in sorted(fields.items()))
    thread = f" {rec['thread_uuid']}" if rec["thread_uuid"] else ""
    title = rec["fields"].get("title")
    thread += f" “{printable(str(title))[:60]}”" if title else ""
    return f"{rec['found_at']}  run {rec['run_id']}  {rec['kind']}{thread}\n    {details[:300]}"


@app.command()
def alerts(
    out: Path | None = OUT,
    since: str | None = typer.Option(
        None, "--since", metavar="DATE", help="Found on or after DATE."
    ),
    run: str | None = typer.Option(
        None, "--run", metavar="ID", help="Found by run ID (or `last`)."
    ),
    kind: list[str] | None = typer.Option(
        None, "--kind", metavar="K", help=f"Only kind K (repeatable): {', '.join(KINDS)}."
    ),
    limit: int = bounded("limit", 1000, "--limit", metavar="N", help="At most N alerts."),
    json_output: bool = JSON,
) -> None:
    """List what the runs found, each fact once: answer variants, rewrites, model
    substitutions, interruptions, incomplete threads, shrunken listings.

    Every finding is recorded once, by the run that found it first; a later refetch that
    finds it again adds nothing.

    \b
    Examples:
      pplx-export alerts -o ~/pplx-archive --run last
      pplx-export alerts -o ~/pplx-archive --since 2026-11-01 --kind ANSWER_REWRITTEN --json
    """
    kinds = list(kind or [])
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        sys.stderr.write(f"error: --kind {bad[0]}: unknown; known: {', '.join(KINDS)}\n")
        raise typer.Exit(2)
    day = _since(since)

    def work(archive: Archive) -> list[dict[str, Any]]:
        run_id = _run_id(archive, run)
        found = archive.alerts.list(since=day, run_id=run_id, kinds=kinds, limit=limit)
        return [a.as_json() for a in found]

    print_records(_with(out, work), json_output, "no alerts", _alert_text)


def _run_id(archive: Archive, run: str | None) -> int | None:
    if run is None:
        return None
    if run == "last":
        return archive.index.last_run_id()
    if run.isdigit() and len(run) <= 12:
        return int(run)
    sys.stderr.write(f"error: --run {run!r}: give a run number (see `pplx-export runs`) or last\n")
    raise typer.Exit(2)


audit_app = typer.Typer(no_args_is_help=True, help="Audits of what the service did.")
app.add_typer(audit_app, name="audit")


def _audit_text(rec: dict[str, Any]) -> str:
    mark = "  ← substituted" if rec["substituted"] else ""
    chosen, served = printable(rec["chosen"]), printable(rec["served"])
    return f"{rec['month']}  chosen {chosen:<28} served {served:<28} {rec['turns']:>6}{mark}"


@audit_app.command("models")
def audit_models(
    out: Path | None = OUT,
    since: str | None = typer.Option(None, "--since", metavar="DATE", help="Turns from DATE on."),
    json_output: bool = JSON,
) -> None:
    """Table the model that served each turn against the model chosen, per month.

    Both come from the turn's own fields; `unknown` where a field is absent (never guessed).

    \b
    Examples:
      pplx-export audit models -o ~/pplx-archive
      pplx-export audit models -o ~/pplx-archive --since 2026-06-01 --json
    """
    day = _since(since)
    records = _with(out, lambda a: changes.audit_models(a, day))
    print_records(records, json_output, "no turns", _audit_text)
