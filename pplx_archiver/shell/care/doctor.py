"""The checks behind ``pplx-export doctor``: one line each, ok / warning / error with a hint.

Python and SQLite (FTS5 with the trigram tokenizer, which search needs), the configuration and
where each setting came from (secrets masked), the stored session (against the server unless
offline), the archive (index, writer lock holder, last run and its exit code), the schedule,
and the browser `site`'s tests drive. Nothing is written anywhere.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pplx_archiver.errors import PplxError
from pplx_archiver.logconfig import MASK, redact_text
from pplx_archiver.settings import Settings, config_file_path
from pplx_archiver.shell.net.proxy import mask_proxy

OK, WARNING, ERROR = "ok", "warning", "error"
MIN_PYTHON = (3, 11)
MIN_SQLITE = (3, 34, 0)  # the trigram tokenizer
SECRET_SETTINGS = frozenset({"session_token"})
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


@dataclasses.dataclass(frozen=True, slots=True)
class Check:
    """One line of the report."""

    name: str
    status: str
    detail: str
    hint: str = ""

    def line(self) -> str:
        """``ok       python    3.11.7`` with `` — hint`` when there is one."""
        tail = f" — {self.hint}" if self.hint else ""
        return f"{self.status:<8} {self.name:<10} {self.detail}{tail}"


def check_python() -> Check:
    version = ".".join(str(n) for n in sys.version_info[:3])
    if sys.version_info[:2] < MIN_PYTHON:
        return Check("python", ERROR, version, "pplx-archiver needs Python 3.11 or newer")
    return Check("python", OK, f"{version} ({sys.executable})")


def check_sqlite() -> Check:
    version = sqlite3.sqlite_version
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    except sqlite3.Error as exc:
        hint = f"search needs SQLite ≥ {'.'.join(map(str, MIN_SQLITE))} with FTS5 ({exc})"
        return Check("sqlite", ERROR, version, hint)
    finally:
        db.close()
    return Check("sqlite", OK, f"{version}, FTS5 with trigram")


def shown_value(name: str, value: Any) -> str:
    """A setting's value for the report: secrets masked."""
    if value is None or value == "" or value == {}:
        return "-"
    if name in SECRET_SETTINGS:
        return MASK
    if name == "proxy":  # its user and password, if any
        return redact_text(mask_proxy(str(value)))
    return redact_text(str(value))


def config_checks(settings: Settings, sources: Mapping[str, str]) -> list[Check]:
    """The config file, then each setting not at its default and where it came from."""
    path = config_file_path(os.environ)
    found = "found" if path.is_file() else "none (defaults, environment and options)"
    checks = [Check("config", OK, f"{path}: {found}")]
    for name in sorted(sources):
        value = shown_value(name, getattr(settings, name, None))
        checks.append(Check("setting", OK, f"{name} = {value} (from {sources[name]})"))
    return checks


def archive_checks(out: Path) -> list[Check]:
    """The archive at ``out``: its index, the writer lock holder and the last run."""
    from pplx_archiver.shell.archive.index import Index
    from pplx_archiver.shell.archive.lock import holder, pid_alive

    db = out / "index" / "archive.sqlite"
    if not db.is_file():
        hint = "pass -o DIR, or run `pplx-export batch -o DIR` to start one"
        return [Check("archive", WARNING, f"no archive at {out}", hint)]
    try:
        index = Index(db, read_only=True)
    except PplxError as exc:
        return [Check("archive", ERROR, redact_text(str(exc)))]  # the error names the fix
    try:
        threads = sum(index.counts().values())
        runs = index.runs(1)
    finally:
        index.close()
    writable = "" if os.access(out / "index", os.W_OK) else ", read-only for this user"
    checks = [Check("archive", OK, f"{out}: index opens, {threads} threads{writable}")]
    lock = holder(out)
    pid = lock.get("pid")
    if isinstance(pid, int) and pid_alive(pid):
        detail = f"held by PID {pid} ({lock.get('command', '?')}): a writer is running"
        checks.append(Check("lock", WARNING, detail, "writing commands wait for it to end"))
    else:
        checks.append(Check("lock", OK, "free"))
    checks.append(_last_run(runs[0] if runs else None))
    return checks


def _last_run(run: Any) -> Check:
    if run is None:
        return Check("last run", WARNING, "none yet", "run `pplx-export batch`")
    code = run.exit_code
    detail = f"#{run.id} {run.command} started {run.started_at}, exit {code}"
    error = (run.summary or {}).get("error")
    if run.finished_at is None and code is None:
        return Check("last run", WARNING, f"#{run.id} {run.command} did not finish", "")
    if code not in (0, None):
        why = f": {error}" if error else ""
        return Check("last run", WARNING, detail + why, "see `pplx-export runs` and its log")
    return Check("last run", OK, detail)


def schedule_check(name: str = "pplx-export") -> Check:
    """Whether a schedule of this name is installed (systemd units or a crontab entry)."""
    from pplx_archiver.shell.timers import schedule as sched

    host = sched.ScheduleHost(unit_dir=sched.default_unit_dir(os.environ), systemctl=None)
    found: list[str] = []
    if sched.show_systemd(host, name):
        found.append("systemd timer")
    if shutil.which(host.crontab[0]) is not None:
        try:
            if sched.show_cron(host, name):
                found.append("crontab entry")
        except PplxError as exc:
            return Check("schedule", WARNING, f"crontab not read: {exc}")
    if not found:
        hint = "`pplx-export schedule install -o DIR` runs sync daily"
        return Check("schedule", WARNING, "none installed", hint)
    return Check("schedule", OK, f"{name}: " + ", ".join(found))


def browser_check() -> Check:
    """The browser `site`'s tests drive (the site itself needs none)."""
    named = os.environ.get("PPLX_TEST_CHROMIUM")
    found = named if named and Path(named).is_file() else None
    found = found or next((p for b in BROWSERS if (p := shutil.which(b))), None)
    if found is None:
        hint = "only `site`'s browser tests need it: `make browser` (apt-get install chromium)"
        return Check("browser", WARNING, "no chromium found", hint)
    return Check("browser", OK, found)


def exit_code(checks: list[Check]) -> int:
    """0 when no check is an error, else 1."""
    return 1 if any(c.status == ERROR for c in checks) else 0
