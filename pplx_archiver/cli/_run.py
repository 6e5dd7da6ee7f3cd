"""Glue between the archiving commands and the shell: settings, logs, anyio.run, exit codes."""

from __future__ import annotations

import contextvars
import dataclasses
import shlex
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import anyio
import structlog
import typer

from pplx_archiver import logconfig
from pplx_archiver.cli._help import program_name
from pplx_archiver.cli._monitor import MonitorOptions, run_monitored
from pplx_archiver.errors import EXIT_FAILURES, EXIT_OK, ConfigError, PplxError, exit_code_for
from pplx_archiver.settings import Settings, load_settings

# The log file of the command being run (the run history records it).
CURRENT_LOG_FILE: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "CURRENT_LOG_FILE", default=None
)


@dataclasses.dataclass(frozen=True, slots=True)
class CommonOptions:
    """Options shared by the archiving commands (None = not given on the command line)."""

    out: Path | None = None
    modes: frozenset[str] = frozenset()
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
    thread: list[str] | None = None
    base_url: str | None = None
    cookies: Path | None = None
    session_token: str | None = None
    cookies_from: str | None = None
    impersonate: str | None = None
    asset_concurrency: int | None = None
    asset_rate: float | None = None
    max_asset_bytes: int | None = None
    page_limit: int | None = None
    monitor: MonitorOptions = dataclasses.field(default_factory=MonitorOptions)

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
                "asset_concurrency": self.asset_concurrency,
                "asset_rate": self.asset_rate,
                "max_asset_bytes": self.max_asset_bytes,
                "page_limit": self.page_limit,
            }
        )


def utc_stamp() -> str:
    """A UTC timestamp usable in a file name, to the microsecond: ``20261130T121500.123456Z``."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


@contextmanager
def run_logging(settings: Settings, command: str) -> Iterator[Path]:
    """Configure logs for one command: the run's JSON log file plus stderr."""
    logs = settings.out_dir / "index" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    path = logs / f"{command}-{utc_stamp()}.jsonl"
    CURRENT_LOG_FILE.set(path)
    with path.open("ab") as fh:
        logconfig.register_secret(settings.session_token)
        logconfig.configure(log_format=settings.log_format, json_files=[fh])
        try:
            yield path
        finally:
            structlog.reset_defaults()  # the log file closes here: no sink may outlive it


def fail(exc: BaseException, err: IO[str] | None = None) -> int:
    """Print an error for a person and return its exit code."""
    stream = err or sys.stderr
    code = exit_code_for(exc)
    if isinstance(exc, PplxError):
        stream.write(f"error: {logconfig.redact_text(str(exc))}\n")
    else:
        stream.write(f"error: unexpected {type(exc).__name__}: {exc}\n")
    return code


def run_cli(command: str, opts: CommonOptions) -> None:
    """Run one archiving command, record it in the run history, report it; exit with its code."""
    run_monitored(command, opts, _run_cli, CURRENT_LOG_FILE)


def _run_cli(command: str, opts: CommonOptions) -> None:
    """Run one archiving command and exit with its code."""
    from pplx_archiver.shell.runner import run_command

    try:
        settings = opts.settings()
    except PplxError as exc:
        raise typer.Exit(fail(exc)) from None
    try:
        with run_logging(settings, command):
            summary = anyio.run(run_command, settings, command, opts)
    except (PplxError, KeyboardInterrupt) as exc:
        raise typer.Exit(fail(exc)) from None
    raise typer.Exit(EXIT_FAILURES if summary.failed else EXIT_OK)


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
        f"  {program} verify --out {where}",
        f"  {program} re-render --out {where} --dry-run",
    ]
