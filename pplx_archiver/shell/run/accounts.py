"""Several accounts in one command: one run per account, one summary and exit code for all.

:func:`run_accounts` runs :func:`~pplx_archiver.shell.run.runner.run_command` once per
account, one after the other, each with its own session, API client (so its own rate
limiter and retry budget), listing and run record; each account's threads go to its own
account folder (the session's user name). A failing account (logged out, challenged, the
server unreachable, threads failing) does not stop the others; the command's exit code is
the highest code of the accounts. Ctrl-C, a busy archive and archive (disk, index) errors
stop the whole command.

The early stop of an incremental listing assumes the previous listing *of the same account*
archived its whole listing. The runs table does not say which account a run was for, so
``index/accounts.json`` records, per account name, the run id and whether its listing
completed; an account without a completed previous listing lists everything
(``EARLY_STOP_DISABLED``).

Events: ``ACCOUNT_STARTED`` (``account``, ``session_source``), ``ACCOUNT_FAILED``
(``account``, ``exit_code``, ``error_kind``, ``error``), ``ACCOUNTS_SUMMARY`` (``accounts``,
``failed``, ``exit_code``, ``codes``: account → exit code).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import orjson
import structlog

from pplx_archiver.errors import (
    EXIT_FAILURES,
    EXIT_OK,
    ArchiveBusyError,
    InterruptedRun,
    PplxError,
    StoreError,
    exit_code_for,
)
from pplx_archiver.logconfig import redact_text
from pplx_archiver.settings import Settings
from pplx_archiver.shell.archive.fsutil import safe_join, write_atomic
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.net.credentials import NamedCredential
from pplx_archiver.shell.net.ratelimit import Clock, Sleep
from pplx_archiver.shell.run.coverage import LISTING_COMMANDS, coverage_gap
from pplx_archiver.shell.run.runner import run_command
from pplx_archiver.shell.run.scheduler import RunOptions, RunSummary

ACCOUNTS_FILE = "accounts.json"
ACCOUNT_STARTED = "ACCOUNT_STARTED"
ACCOUNT_FAILED = "ACCOUNT_FAILED"
ACCOUNTS_SUMMARY = "ACCOUNTS_SUMMARY"

# Errors that concern the archive or the whole command, not one account.
_STOP_ALL = (InterruptedRun, StoreError, ArchiveBusyError)

log = structlog.get_logger()


@dataclasses.dataclass(frozen=True, slots=True)
class AccountResult:
    """How one account's run ended."""

    name: str
    exit_code: int
    summary: RunSummary | None = None
    error: str | None = None


@dataclasses.dataclass(slots=True)
class AccountsSummary:
    """Every account's result; ``exit_code`` is the worst (highest) of them."""

    results: list[AccountResult] = dataclasses.field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return max((r.exit_code for r in self.results), default=EXIT_OK)

    @property
    def failed(self) -> list[str]:
        return [r.name for r in self.results if r.exit_code != EXIT_OK]

    def text(self) -> str:
        """The closing line for people."""
        ok = len(self.results) - len(self.failed)
        tail = f"; failed: {', '.join(self.failed)}" if self.failed else ""
        return f"accounts: {len(self.results)} ({ok} ok){tail}"


# --------------------------------------------------------------------------- records


def _records_path(out_dir: Path) -> Path:
    return safe_join(out_dir, "index", ACCOUNTS_FILE)


def read_records(out_dir: Path) -> dict[str, Any]:
    """``index/accounts.json``: account name → ``{run_id, listing_complete}`` (``{}`` if none)."""
    try:
        data = orjson.loads(_records_path(out_dir).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    accounts = data.get("accounts") if isinstance(data, dict) else None
    return dict(accounts) if isinstance(accounts, dict) else {}


def _record(
    out_dir: Path, name: str, run_id: int | None, complete: bool, coverage: Any = None
) -> None:
    records = read_records(out_dir)
    records[name] = {"listing_complete": complete, "run_id": run_id, **(coverage or {})}
    doc = {"format": 1, "accounts": records}
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    write_atomic(_records_path(out_dir), data)


def _last_run(out_dir: Path) -> tuple[int | None, bool, dict[str, Any]]:
    """The newest run's id, whether its listing completed, and what it looked at
    (``modes``, ``since``: :meth:`~pplx_archiver.shell.run.run_types.RunOptions.coverage`)."""
    path = out_dir / "index" / "archive.sqlite"
    if not path.is_file():
        return None, False, {}
    index = Index(path)
    try:
        runs = index.runs(1)
    finally:
        index.close()
    if not runs:
        return None, False, {}
    summary = runs[0].summary or {}
    coverage = {"modes": summary.get("modes") or [], "since": summary.get("since")}
    return runs[0].id, bool(summary.get("listing_complete")), coverage


def _settings_for(settings: Settings, name: str, options: RunOptions) -> Settings:
    """The account's settings: no early stop unless its previous listing completed and
    looked at every thread this run looks at (``--mode``, ``--since``)."""
    if options.command not in LISTING_COMMANDS or settings.early_stop <= 0:
        return settings
    record = read_records(settings.out_dir).get(name)
    reason = "no complete listing of this account"
    if isinstance(record, dict) and record.get("listing_complete"):
        gap = coverage_gap(record, options.coverage())
        if gap is None:
            return settings
        reason = gap
    log.info("EARLY_STOP_DISABLED", account=name, reason=reason)
    return dataclasses.replace(settings, early_stop=0)


# --------------------------------------------------------------------------- the loop


async def _one(
    settings: Settings, options: RunOptions, named: NamedCredential, **kw: Any
) -> AccountResult:
    log.info(ACCOUNT_STARTED, account=named.name, session_source=named.credential.source)
    try:
        summary = await run_command(
            _settings_for(settings, named.name, options),
            options,
            credential=named.credential,
            **kw,
        )
    except _STOP_ALL:
        raise
    except PplxError as exc:
        code = exit_code_for(exc)
        message = redact_text(str(exc)) or type(exc).__name__
        log.error(ACCOUNT_FAILED, account=named.name, exit_code=code,
                  error_kind=type(exc).__name__, error=message)  # fmt: skip
        if not options.dry_run:  # a dry run writes nothing
            run_id, _complete, _coverage = _last_run(settings.out_dir)
            _record(settings.out_dir, named.name, run_id, False)
        return AccountResult(named.name, code, None, message)
    if not options.dry_run:
        run_id, complete, coverage = _last_run(settings.out_dir)
        _record(settings.out_dir, named.name, run_id, complete, coverage)
    code = EXIT_FAILURES if summary.failed or summary.incomplete else EXIT_OK
    return AccountResult(named.name, code, summary)


async def run_accounts(
    settings: Settings,
    options: RunOptions,
    accounts: Sequence[NamedCredential],
    log_path: Path | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    stdout: IO[str] | None = None,
    handle_signals: bool = True,
    sleep: Sleep = anyio.sleep,
    clock: Clock = time.monotonic,
) -> AccountsSummary:
    """Run ``options.command`` for every account in turn (see the module docstring)."""
    out = stdout or sys.stdout
    result = AccountsSummary()
    kw = {"transport": transport, "stdout": out, "handle_signals": handle_signals,
          "sleep": sleep, "clock": clock, "log_path": log_path}  # fmt: skip
    for named in accounts:
        out.write(f"account {named.name}:\n")
        out.flush()
        done = await _one(settings, options, named, **kw)
        if done.error is not None:
            out.write(f"account {named.name}: error: {done.error}\n")
        result.results.append(done)
    codes = {r.name: r.exit_code for r in result.results}
    log.info(ACCOUNTS_SUMMARY, accounts=len(codes), failed=len(result.failed),
             exit_code=result.exit_code, codes=codes)  # fmt: skip
    out.write(result.text() + "\n")
    return result
