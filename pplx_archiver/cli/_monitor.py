"""Around every archiving command: run history, ``--json``, ``--healthcheck``, ``--metrics-file``.

:func:`run_monitored` runs a command (``inner``, which ends by raising ``typer.Exit``) and
then records the process exit code and log file in the run history, prints the JSON summary
on stdout (``--json``; the command's human output goes to stderr meanwhile), pings the
health check and writes the metrics textfile. ``sync --retry-failed`` turns into a run over
exactly the threads the index lists as failed. Monitoring never changes the exit code: a ping
or metrics write that fails prints a warning on stderr.
"""

from __future__ import annotations

import contextvars
import dataclasses
import sqlite3
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext, redirect_stdout
from pathlib import Path
from typing import Any, NoReturn

import typer

from pplx_archiver import logconfig
from pplx_archiver.core.archive.writes import RunOutcome
from pplx_archiver.errors import EXIT_INTERRUPTED, EXIT_OK, PplxError, exit_code_for
from pplx_archiver.shell.archive.index import Index, RunRow
from pplx_archiver.shell.archive.store import INDEX_DIR, Archive
from pplx_archiver.shell.run import monitor

# A ping does not hold a run up: a dead monitoring host costs at most this per ping.
PING_TIMEOUT_S = monitor.PING_TIMEOUT_S
LISTING_COMMANDS = ("batch", "sync")


@dataclasses.dataclass(frozen=True, slots=True)
class MonitorOptions:
    """Reporting options of an archiving command (and ``sync --retry-failed``)."""

    json: bool = False
    healthcheck: str | None = None
    metrics_file: Path | None = None
    retry_failed: bool = False


def _index_path(opts: Any) -> Path | None:
    try:
        out_dir: Path = opts.settings().out_dir
    except PplxError:
        return None  # the command itself reports the bad setting
    return out_dir / INDEX_DIR / "archive.sqlite"


def _open_index(path: Path | None) -> Index | None:
    if path is None or not path.is_file():
        return None
    try:
        return Index(path, read_only=True)
    except PplxError:
        return None  # the command itself reports an unreadable index


def _warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def _error_of(done: typer.Exit) -> str | None:
    cause = done.__context__
    if isinstance(cause, PplxError):
        return logconfig.redact_text(str(cause))
    if isinstance(cause, KeyboardInterrupt):
        return "interrupted"
    if cause is not None and not isinstance(cause, typer.Exit):
        return f"unexpected {type(cause).__name__}"
    return None


def _failed_ids(index: Index | None) -> list[str]:
    if index is None:
        return []
    return [row.uuid for row in index.iter_threads("failed")]


def _finish_history(
    index_path: Path | None,
    before: int,
    command: str,
    outcome: tuple[int, str | None],
    log_file: Path | None,
    *,
    dry_run: bool = False,
) -> tuple[RunRow | None, dict[str, Any]]:
    """Record the outcome of this command's run; return its row and the archive's figures.

    A dry run recorded no run: the index is only read (an unwritable archive will do)."""
    index = _open_index(index_path)
    if index is None or index_path is None:
        return None, {}
    try:
        run: RunRow | None = None
        for row in reversed(index.runs(20)):
            if row.id > before and row.command == command:
                run = row
                break
        if run is not None:
            code, error = outcome
            shown = str(log_file.absolute()) if log_file else None  # from any folder
            if not dry_run:  # through the archive's writer
                with Archive(index_path.parent.parent) as archive:
                    archive.writer.apply(RunOutcome(run.id, code, shown, error))
            run = index.run(run.id)
        figures = {
            "state_counts": index.counts(),
            "degraded": index.degraded_count(),
            "variants": len(index.variants()),
            "last_success": index.last_success([command]),
        }
        return run, figures
    except (PplxError, sqlite3.Error, OSError) as exc:
        _warn(f"run history not updated: {logconfig.redact_text(str(exc))}")
        return None, {}
    finally:
        index.close()


def _checked_targets(
    command: str, mon: MonitorOptions, stdout: Any
) -> tuple[str | None, Path | None]:
    """The checked health-check URL and metrics path; a bad one ends the command (exit 2)."""
    try:
        hc_url = monitor.check_ping_url(mon.healthcheck) if mon.healthcheck is not None else None
        metrics_path = (
            monitor.check_metrics_path(mon.metrics_file) if mon.metrics_file is not None else None
        )
    except PplxError as exc:
        sys.stderr.write(f"error: {exc}\n")
        code = exit_code_for(exc)
        if mon.json:
            summary = monitor.build_summary(
                command, None, exit_code=code, duration_s=0.0, out_dir=None, log_file=None,
                error=str(exc),
            )  # fmt: skip
            stdout.write(monitor.summary_json(summary).decode("utf-8") + "\n")
        raise typer.Exit(code) from None
    return hc_url, metrics_path


def _run_inner(
    command: str, opts: Any, inner: Callable[[str, Any], None], failed: list[str]
) -> tuple[int, str | None]:
    """Run the command itself (human output to stderr under --json); its exit code and error."""
    mon: MonitorOptions = opts.monitor
    quiet: AbstractContextManager[Any] = redirect_stdout(sys.stderr) if mon.json else nullcontext()
    try:
        with quiet:
            if mon.retry_failed and not failed:
                sys.stdout.write("nothing to retry: no thread is failing\n")
            else:
                if mon.retry_failed:
                    sys.stdout.write(f"retrying {len(failed)} failed thread(s)\n")
                    opts = dataclasses.replace(opts, thread=failed)
                inner(command, opts)
    except typer.Exit as done:
        return int(done.exit_code or 0), _error_of(done)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED, "interrupted"
    return EXIT_OK, None


def run_monitored(
    command: str,
    opts: Any,
    inner: Callable[[str, Any], None],
    log_var: contextvars.ContextVar[Path | None],
) -> NoReturn:
    """Run ``inner(command, opts)`` with history, summary, pings and metrics; exit its code."""
    mon: MonitorOptions = opts.monitor
    stdout = sys.stdout
    started = time.monotonic()
    index_path = _index_path(opts)
    hc_url, metrics_path = _checked_targets(command, mon, stdout)
    logconfig.register_secret(hc_url)  # masked in every log event, should one ever hold it

    index = _open_index(index_path)
    before = index.last_run_id() if index is not None else 0
    failed = _failed_ids(index) if mon.retry_failed else []
    if index is not None:
        index.close()

    rid = str(uuid.uuid4())
    if hc_url is not None:
        _ping(hc_url, "start", 0, b"", rid)

    log_var.set(None)
    code, error = _run_inner(command, opts, inner, failed)
    duration = time.monotonic() - started
    log_file = log_var.get()

    dry_run = bool(getattr(opts, "dry_run", False))
    run, figures = _finish_history(
        index_path, before, command, (code, error), log_file, dry_run=dry_run
    )
    extra: dict[str, Any] = {}
    if command == "sync-deleted" or getattr(opts, "check_deleted", False):
        extra["deletions"] = monitor.deletion_report(log_file)
    if mon.retry_failed:
        extra["retried"] = len(failed)
    summary = monitor.build_summary(
        command,
        run,
        exit_code=code,
        duration_s=duration,
        out_dir=index_path.parent.parent if index_path else None,
        log_file=log_file,
        error=error,
        extra=extra,
    )
    body = monitor.summary_json(summary)
    if mon.json:
        stdout.write(body.decode("utf-8") + "\n")
        stdout.flush()
    if hc_url is not None:
        _ping(hc_url, "end", code, body, rid)
    if metrics_path is not None and figures:
        try:
            monitor.write_metrics(metrics_path, monitor.metrics_text(summary, **figures))
        except (PplxError, OSError) as exc:
            _warn(f"metrics file not written: {exc}")
    elif metrics_path is not None:
        _warn(f"metrics file not written: no archive index at {index_path}")
    raise typer.Exit(code)


def _ping(url: str, stage: str, code: int, body: bytes, rid: str) -> None:
    suffix = monitor.ping_suffix(stage, code)
    problem = monitor.ping(url, suffix, body, run_id=rid, timeout=PING_TIMEOUT_S)
    if problem is not None:
        _warn(f"health-check ping {monitor.shown_url(url)}{suffix} failed: {problem}")
