"""Glue between the archiving commands and the shell: settings, logs, anyio.run, exit codes."""

from __future__ import annotations

import contextvars
import dataclasses
import os
import shlex
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

import anyio
import structlog
import typer

from pplx_archiver import logconfig
from pplx_archiver.cli._help import program_name
from pplx_archiver.cli._monitor import MonitorOptions, run_monitored
from pplx_archiver.errors import (
    EXIT_FAILURES,
    EXIT_OK,
    ConfigError,
    InterruptedRun,
    LoggedOutError,
    PplxError,
    StoreError,
    exit_code_for,
)
from pplx_archiver.settings import Settings, load_settings

if TYPE_CHECKING:
    from pplx_archiver.shell.net.credentials import NamedCredential
    from pplx_archiver.shell.run.run_types import RunOptions

# The log file of the command being run (the run history records it).
CURRENT_LOG_FILE: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "CURRENT_LOG_FILE", default=None
)


@dataclasses.dataclass(frozen=True, slots=True)
class CommonOptions:
    """Options shared by the archiving commands (None = not given on the command line)."""

    out: Path | None = None
    modes: frozenset[str] = frozenset()
    since: str | None = None  # canonical UTC text (cli/_options.py check_since)
    limit: int | None = None
    concurrency: int | None = None
    rate: float | None = None
    burst: int | None = None
    lang: str | None = None
    log_format: str | None = None
    dry_run: bool = False
    force: bool = False
    full: bool = False
    early_stop: int | None = None
    lister: str | None = None
    include_spaces: bool = False
    check_deleted: bool = False
    online: bool = False
    accept_shrink: bool = False
    thread: list[str] | None = None
    base_url: str | None = None
    cookies: Path | None = None
    session_token: str | None = None
    cookies_from: str | None = None
    impersonate: str | None = None
    proxy: str | None = None
    account: list[str] | None = None
    asset_concurrency: int | None = None
    asset_rate: float | None = None
    max_asset_bytes: int | None = None
    page_limit: int | None = None
    request_deadline: float | None = None
    download_deadline: float | None = None
    total_deadline: float | None = None
    max_body_bytes: int | None = None
    max_thread_entries: int | None = None
    max_thread_turns: int | None = None
    max_thread_blocks: int | None = None
    max_thread_sources: int | None = None
    max_thread_depth: int | None = None
    max_thread_bytes: int | None = None
    max_thread_values: int | None = None
    verbose: bool = False
    quiet: bool = False
    monitor: MonitorOptions = dataclasses.field(default_factory=MonitorOptions)

    def run_options(self, command: str) -> RunOptions:
        """What the command line asks of the run, as the shell's typed options."""
        from pplx_archiver.shell.run.run_types import RunOptions

        return RunOptions(
            command=command,
            modes=self.modes,
            limit=self.limit,
            dry_run=self.dry_run,
            force=self.force,
            full=self.full,
            check_deleted=self.check_deleted,
            include_spaces=self.include_spaces,
            online=self.online,
            accept_shrink=self.accept_shrink,
            thread_ids=tuple(self.thread or ()),
            since=self.since,
        )

    def settings(self) -> Settings:
        return load_settings(
            {
                "out_dir": self.out,
                "concurrency": self.concurrency,
                "rate": self.rate,
                "burst": self.burst,
                "lang": self.lang,
                "log_format": self.log_format,
                "early_stop": self.early_stop,
                "lister": self.lister,
                "base_url": self.base_url,
                "cookies_file": self.cookies,
                "session_token": self.session_token,
                "cookies_from": self.cookies_from,
                "impersonate": self.impersonate,
                "proxy": self.proxy,
                "asset_concurrency": self.asset_concurrency,
                "asset_rate": self.asset_rate,
                "max_asset_bytes": self.max_asset_bytes,
                "page_limit": self.page_limit,
                "request_deadline": self.request_deadline,
                "download_deadline": self.download_deadline,
                "total_deadline": self.total_deadline,
                "max_body_bytes": self.max_body_bytes,
                "max_thread_entries": self.max_thread_entries,
                "max_thread_turns": self.max_thread_turns,
                "max_thread_blocks": self.max_thread_blocks,
                "max_thread_sources": self.max_thread_sources,
                "max_thread_depth": self.max_thread_depth,
                "max_thread_bytes": self.max_thread_bytes,
                "max_thread_values": self.max_thread_values,
                "console_level": "info" if self.verbose else ("error" if self.quiet else None),
            }
        )


def utc_stamp() -> str:
    """A UTC timestamp usable in a file name, to the microsecond: ``20261130T121500.123456Z``."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


@contextmanager
def run_logging(
    settings: Settings, command: str, *, required: bool = True, in_archive: bool = True
) -> Iterator[Path]:
    """Configure logs for one command: its JSON log file plus stderr.

    A command that changes the archive logs into ``<out>/index/logs`` (``required``: a
    folder it cannot create there is an error). One that does not (``in_archive=False``:
    status-like commands, dry runs, a site written elsewhere) logs into the user's log
    folder (``settings.log_dir``) and writes nothing into the archive; when that folder
    cannot be written either it logs to stderr only, and the yielded path does not exist.
    """
    logs = settings.out_dir.absolute() / "index" / "logs" if in_archive else settings.log_dir
    path = logs.absolute() / f"{command}-{utc_stamp()}.jsonl"
    CURRENT_LOG_FILE.set(path)
    logconfig.register_secret(settings.session_token)
    from pplx_archiver.core.archive.writes import RunLog
    from pplx_archiver.shell.archive.writer import ArchiveWriter

    try:  # opened by the archive's writer (the folder made first)
        fh: IO[bytes] | None = ArchiveWriter.open_log(RunLog(str(logs.absolute()), path.name))
    except OSError:
        if required and in_archive:
            raise
        fh = None
    with ExitStack() as stack:
        if fh is not None:
            stack.enter_context(fh)
        logconfig.configure(
            log_format=settings.log_format,
            json_files=[fh] if fh is not None else [],
            console_level=settings.console_level,
        )
        try:
            yield path
        finally:
            structlog.reset_defaults()  # the log file closes here: no sink may outlive it


def check_out_dir(out: Path) -> None:
    """Refuse an ``--out`` that cannot hold an archive, before anything is created.

    A regular file, a folder that cannot be written, or a path under a regular file is a
    usage error (exit 2); a missing folder is fine (the writing command creates it).
    """
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"--out {path}: not a folder (a file of that name exists)")
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ConfigError(f"--out {path}: {probe} is a file, not a folder")
    target = path / "index" if (path / "index").is_dir() else probe
    if not os.access(target, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {path}: {target} is not writable by this user")


def require_writable(out: Path, command: str, what: str) -> None:
    """Stop in one line when a command that must write ``what`` into the archive cannot."""
    folders = [Path(out), Path(out) / "index", Path(out) / "index" / "archive.sqlite"]
    stuck = next((p for p in folders if p.exists() and not os.access(p, os.W_OK)), None)
    if stuck is not None:
        raise ConfigError(
            f"{command} writes {what} into the archive, and {stuck} is not writable by this "
            "user; run it as the archive's owner (status, search, verify and site --to only read)"
        )


def project_error(exc: BaseException) -> BaseException:
    """An OS or SQLite error as the project's StoreError (with the path and a hint)."""
    if isinstance(exc, PplxError):
        return exc
    if isinstance(exc, OSError):
        where = exc.filename or "the archive"
        reason = exc.strerror or str(exc)
        hint = "check free disk space and permissions of the archive folder"
        return StoreError(f"{where}: {reason}; {hint}")
    if isinstance(exc, sqlite3.Error):
        return StoreError(f"index: {exc}; run `pplx-export reindex` if the index is damaged")
    return exc


@contextmanager
def command_scope(settings: Settings, command: str, *, lock: bool = True) -> Iterator[Path]:
    """One command's run: its log file, the archive's writer lock, its failure event.

    A command that takes the lock changes the archive and logs into it; one that does not
    (``lock=False``: a dry run) writes nothing into the archive, its log included (see
    :func:`run_logging`). Every non-zero exit (an error, Ctrl-C, a busy archive) is logged to
    the run's log file as ``RUN_FAILED`` with the exit code and reason before it propagates.
    """
    from pplx_archiver.shell.archive.lock import writer_lock

    with run_logging(settings, command, in_archive=lock) as path:
        try:
            with ExitStack() as stack:
                if lock:
                    stack.enter_context(writer_lock(settings.out_dir, command))
                yield path
        except (PplxError, OSError, sqlite3.Error, KeyboardInterrupt) as exc:
            error = project_error(exc)
            structlog.get_logger().error(
                "RUN_FAILED",
                command=command,
                exit_code=exit_code_for(error),
                error_kind=type(error).__name__,
                error=logconfig.redact_text(str(error)) or type(error).__name__,
            )
            raise error from None


def fail(exc: BaseException, err: IO[str] | None = None) -> int:
    """Print an error for a person and return its exit code."""
    stream = err or sys.stderr
    exc = project_error(exc)
    code = exit_code_for(exc)
    if isinstance(exc, InterruptedRun) and exc.reported:
        pass  # the summary said it already: one message
    elif isinstance(exc, KeyboardInterrupt):
        stream.write("error: interrupted; the archive is consistent, rerun to continue\n")
    elif isinstance(exc, PplxError):
        stream.write(f"error: {logconfig.redact_text(str(exc))}\n")
    else:
        stream.write(f"error: unexpected {type(exc).__name__}: {exc}\n")
    return code


def run_cli(command: str, opts: CommonOptions) -> None:
    """Run one archiving command, record it in the run history, report it; exit with its code."""
    run_monitored(command, opts, _run_cli, CURRENT_LOG_FILE)


def _run_cli(command: str, opts: CommonOptions) -> None:
    """Run one archiving command and exit with its code."""
    from pplx_archiver.shell.run.runner import run_command

    try:
        settings = opts.settings()
        if not opts.dry_run:  # a dry run writes nothing: a read-only archive will do
            check_out_dir(settings.out_dir)
    except PplxError as exc:
        raise typer.Exit(fail(exc)) from None
    if opts.verbose and opts.quiet:
        raise typer.Exit(fail(ConfigError("--verbose and --quiet exclude each other")))
    try:
        options = opts.run_options(command)
        with command_scope(settings, command, lock=not opts.dry_run) as log_path:
            accounts = _accounts(settings, command, opts)
            if accounts is not None:
                from pplx_archiver.shell.run.accounts import run_accounts

                several = anyio.run(run_accounts, settings, options, accounts, log_path)
                code = several.exit_code
            else:
                summary = anyio.run(run_command, settings, options, log_path)
                code = EXIT_FAILURES if summary.failed or summary.incomplete else EXIT_OK
    except (PplxError, KeyboardInterrupt, OSError, sqlite3.Error) as exc:
        raise typer.Exit(fail(exc)) from None
    raise typer.Exit(code)


def _accounts(
    settings: Settings, command: str, opts: CommonOptions
) -> list[NamedCredential] | None:
    """The accounts of a ``batch``/``sync`` run, or None for the one-session run.

    Several accounts (or any ``--account``) make it a run per account
    (``shell/run/accounts.py``); a single session runs as it always has.
    """
    from pplx_archiver.shell.net.credentials import resolve_credentials

    picks = list(opts.account or ())
    if command not in ("batch", "sync"):
        if picks:
            raise ConfigError(f"--account is not an option of {command}")
        return None
    try:
        accounts = resolve_credentials(settings, picks)
    except LoggedOutError:
        if picks:
            raise
        return None  # the run itself says that no session is configured
    if opts.thread and len(accounts) > 1:
        raise ConfigError(
            f"--retry-failed fetches threads of one account, and {len(accounts)} accounts "
            "are configured; pick one with --account NAME"
        )
    return list(accounts) if picks or len(accounts) > 1 else None


SIM_HINT = (
    "the simulated Perplexity needs the optional sim packages: "
    "pip install 'pplx-archiver[sim]' (make demo installs them)"
)


def require_simulator() -> None:
    """Stop with a usage error naming the extra when the simulator's server is not installed."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise typer.Exit(fail(ConfigError(f"{SIM_HINT} ({exc.name} is missing)"))) from None


def run_demo(
    *,
    out: Path,
    threads: int,
    seed: int,
    concurrency: int,
    lang: str | None,
    log_format: str | None,
) -> None:
    """Archive a simulated account and say what to look at next."""
    require_simulator()
    from pplx_archiver.sim.config import SimConfig
    from pplx_archiver.sim.runner import serve_in_thread

    config = SimConfig(threads=threads, seed=seed)
    with serve_in_thread(config) as sim:
        typer.echo(f"simulator: {sim.base_url} ({threads} threads, seed {seed})")
        opts = CommonOptions(
            out=out,
            concurrency=concurrency,
            rate=1000.0,
            burst=200,
            asset_concurrency=8,
            asset_rate=1000.0,
            lang=lang,
            log_format=log_format,
            base_url=sim.base_url,
            session_token=sim.session_token,
        )
        code = EXIT_OK
        try:
            run_cli("batch", opts)
        except typer.Exit as done:
            code = int(done.exit_code or 0)
    if code in (EXIT_OK, EXIT_FAILURES):  # an archive was written (some threads may have failed)
        _demo_next_steps(out)
    raise typer.Exit(code)


def _demo_next_steps(out: Path) -> None:
    program = program_name(sys.argv[0], shutil.which("pplx-export"), sys.executable)
    typer.echo("\n".join(demo_hints(out, program)))


def demo_hints(out: Path, program: str) -> list[str]:
    """The lines printed after the demo: commands that work as typed in a fresh shell."""
    where = shlex.quote(str(out))
    return [
        "",
        f"Archive written to {out}/. Try:",
        f"  ls {where}/*/                  # <account>/: one folder per mode",
        f"  ls {where}/*/computer/ | head -3",
        f"  cat {where}/*/computer/*/conversation.md | head -40",
        f"  grep -h ANSWER_VARIANT_DETECTED {where}/index/logs/*.jsonl | head -3",
        f"  head -3 {where}/index/answer_variants_log.jsonl",
        f"  {program} status --out {where}",
        f"  {program} alerts --out {where} --run last",
        f"  {program} verify --out {where}",
        f"  {program} re-render --out {where} --dry-run",
    ]
